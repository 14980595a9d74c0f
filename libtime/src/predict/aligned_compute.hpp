// Compute of a rank without a replay profile, segment by segment from a replayed rank that
// made the same calls (SPMD): where the two ranks' captures agree on the calls around a
// segment, the replayed rank's replayed segment, times how much longer this rank's captured
// segments of that kind (calls before and after) were than the replayed rank's: the median
// over the run of the ratios of the kind's segments paired in order (segment_share.hpp), which
// the capture's one-off stretches of single segments on either rank do not move. Scaling this
// rank's own captured segment instead (the overall ratio) keeps whatever the capture added to that
// one segment (the writer thread taking the core for a few ms), which no replay measured and which
// a two-rank exchange turns into the other rank's wait. Each inferred segment takes the source's
// segment of its kind one occurrence earlier: the same gaps (sum and spread), but not the same
// draw at the same step, so that an exchange waits for the longer of the two ranks' segments as
// in a real run (a copy never waits: halo2d's one-rank predictions ran 2-3 % under the
// all-replayed ones); only where the two are within kMinLag-kMaxLag of each other. Unsuccessful
// polls (Test*, Iprobe) may differ in number between the ranks: they are skipped when lining the
// calls up, and the segments around them are not aligned. Used by `encore predict --infer aligned`
// (the default). Internal to libtime's predict code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "encore/event.hpp"
#include "encore/event_reader.hpp"
#include "encore/predict/stall_spread.hpp"
#include "encore/trace_dir.hpp"

namespace encore::predict {

class AlignedCompute {
 public:
  // A kind of segment follows the source only where this rank's captured share of it (the
  // median ratio) is within these factors.
  static constexpr double kMinShare = 0.5, kMaxShare = 2.0;
  // The source's previous segment of a kind stands in for the current one only where the
  // source's captured gaps at the two steps are within these factors of each other: noise
  // (halo2d's 350 us segments, replayed: 98-99 % of consecutive pairs within), not phases of
  // different work between the same calls.
  static constexpr double kMinLag = 0.8, kMaxLag = 1.25;

  // `rank` inferred from `source`, whose replay profile's events are `source_profile`. Reads
  // both captures once to sum each kind of aligned segment (what next() then scales by).
  // `source_stalls`: how the source's segments are given its stalls (nullptr: as measured).
  AlignedCompute(const TraceDir& capture, std::uint32_t rank, std::uint32_t source,
                 const std::filesystem::path& source_profile,
                 const StallSpread* source_stalls = nullptr);

  // For each event of `rank` in file order: the compute before it, or nullopt where the
  // segment is not aligned (or its kind took no captured time on the source rank).
  std::optional<std::int64_t> next(const Event& ev);

  // Segments of `rank` aligned so far (by next()).
  std::uint64_t aligned() const { return aligned_; }

  using Kind = std::pair<std::uint16_t, std::uint16_t>;  // functions before and after

  // The line-up of one rank's calls with the source's, call by call.
  class LineUp {
   public:
    LineUp(const std::filesystem::path& source_capture,
           const std::optional<std::filesystem::path>& source_profile,
           const StallSpread* stalls = nullptr);
    struct Step {
      bool aligned = false;
      Kind kind{};
      std::int64_t source_gap = 0, source_replayed = 0;
    };
    Step step(const Event& ev);

   private:
    RankEventReader cap_;
    std::optional<RankEventReader> rep_;
    Event a_, b_;
    std::int64_t prev_a_ = 0, prev_b_ = 0;
    std::uint16_t prev_fn_ = 0;
    bool prev_matched_ = false, first_ = true, source_ended_ = false;
    StallSpreader spread_;
  };

 private:
  std::map<Kind, double> shares_;  // kinds with at least one pair whose source gap took time
  struct Previous {
    std::int64_t captured = 0, replayed = 0;
  };
  std::map<Kind, Previous> previous_;  // the source's last gap of each kind
  LineUp line_;
  std::uint64_t aligned_ = 0;
};

}  // namespace encore::predict
