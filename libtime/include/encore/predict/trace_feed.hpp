// Feeding the models from trace directories, one streaming reader per rank: the capture gives
// each call and its recorded duration; a replay profile of the rank, when there is one, gives
// the compute between calls as measured on the replay machine; ranks without one get the
// compute of the lowest replayed rank segment by segment where their calls line up with its
// calls (aligned_compute.hpp), else their captured compute scaled by what the replayed ranks
// showed (per call site where the call sites match, else overall: the "representative PU"
// idea of VIPPES). Both traces hold
// overhead-corrected times, so the correction applies alike to capture and replay. Clock
// offsets from the capture (at each time, clock_offsets.hpp) align the ranks' timelines.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "encore/event_reader.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/clock_offsets.hpp"
#include "encore/predict/feed.hpp"
#include "encore/predict/loggps_params.hpp"
#include "encore/predict/stall_spread.hpp"
#include "encore/rank_context.hpp"
#include "encore/trace_dir.hpp"

namespace encore::predict {

// How replayed compute compares with captured compute (replayed / captured).
struct ComputeScale {
  // Over the replayed ranks' segments of at least 1 us (all of them if none is that long):
  // shorter ones are mostly the corrections' residue (trace_feed.cpp).
  double overall = 1.0;
  std::unordered_map<std::uint64_t, double> by_callsite;  // call site ending the segment
  std::uint64_t replayed_ranks = 0;
  double captured_ns = 0, replayed_ns = 0;  // the sums `overall` is taken over
  // The replayed rank (the lowest) whose segments the others follow where their calls line
  // up with its calls (see aligned_compute.hpp).
  std::optional<std::uint32_t> source_rank;
  std::filesystem::path source_events;  // its profile's events
  // Per replayed rank, its stalls and how its segments are given them (the ratios above
  // already use the segments as given).
  std::map<std::uint32_t, StallSpread> stalls;
};

// A replay profile of one rank of the capture.
struct ReplayProfile {
  std::filesystem::path dir;
  std::uint32_t rank = 0;
  // From its manifest's replay object, when the replay closed it: stalls inside the replayed
  // calls (replay.stall.calls_ns, written by replays that measure stalls) and the replay's
  // own time (replay.replay_overhead_ns).
  std::optional<std::uint64_t> call_stall_ns, overhead_ns;
  // The thread's CPU time over the interval the stalls were measured in (replay.stall.cpu_ns).
  std::optional<std::uint64_t> stall_cpu_ns;
  // The CPU quota the replay ran under, in CPUs, 0 for none (replay.stall.cpu_quota).
  std::optional<double> cpu_quota;
};

// Loads a profile directory's manifest and checks it replays a rank of a run of `nprocs`
// ranks, and of the recording that started at `recording_start_ns` where both say (0: not
// checked). Throws Error naming the directory.
ReplayProfile open_profile(const std::filesystem::path& dir, std::uint32_t nprocs,
                           std::int64_t recording_start_ns = 0);

// One pass over the replayed ranks (capture and profile side by side), which also sums each
// profile's stalls (`stalls` says what the feeds then do with them; automatic is resolved per
// profile into the StallSpread's mode). Throws Error if a
// profile does not follow its capture call for call.
ComputeScale measure_scale(const TraceDir& capture, const std::vector<ReplayProfile>& profiles,
                           StallTime stalls = StallTime::spread);

// What the capture itself says about a rank: compute (gaps, from the aligned start), MPI time
// split into communication and wait by solo_cost(), and the aligned end.
struct RankTotals {
  std::int64_t compute_ns = 0, comm_ns = 0, wait_ns = 0, end_ns = 0;
  std::uint64_t events = 0;
};

class AlignedCompute;

class TraceRankFeed : public RankFeed {
 public:
  // `profile` empty: compute inferred through `scale`. A replayed rank's segments get the
  // stalls as scale->stalls says for the rank (as measured where it has no entry). `clocks`
  // null: no offsets (every rank on one clock).
  TraceRankFeed(const TraceDir& capture, std::uint32_t rank, const ClockOffsets* clocks,
                std::uint32_t nprocs, std::optional<std::filesystem::path> profile_events,
                const ComputeScale* scale, const LogGPSParams* params);
  ~TraceRankFeed() override;
  // Corrected start of the first call on the common time base (offset applied).
  std::int64_t first_start() const { return first_start_; }
  bool empty() const { return !have_first_; }
  void set_base(std::int64_t base_ns) { base_ = base_ns; }
  bool next(Event& ev, std::int64_t& compute_ns) override;
  const RankTotals& recorded() const { return recorded_; }
  bool replayed() const { return replay_.has_value(); }
  // Segments whose compute followed the source rank's (ComputeScale::source_rank) so far.
  std::uint64_t aligned_segments() const;
  // After the end: the capture's problem (cut stream), or empty.
  std::string problem() const;
  // Damage found in the capture's stream so far (empty: none, whether or not it was read to
  // its end).
  std::string damage() const;

 private:
  std::int64_t offset(std::int64_t local_ns) const {
    return clocks_ ? clocks_->at(rank_, local_ns) : 0;
  }
  RankEventReader capture_;
  std::optional<RankEventReader> replay_;
  std::uint32_t rank_;
  const ClockOffsets* clocks_;
  const ComputeScale* scale_;
  const LogGPSParams* params_;
  RankContext ctx_;
  Event first_, replay_ev_;
  bool have_first_ = false, started_ = false;
  std::int64_t first_start_ = 0, base_ = 0, prev_capture_end_ = 0, prev_replay_end_ = 0;
  RankTotals recorded_;
  std::unique_ptr<AlignedCompute> aligned_;  // without a profile, when a rank was replayed
  StallSpreader spread_;                     // the profile's stalls
};

}  // namespace encore::predict
