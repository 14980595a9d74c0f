// A replayed rank's stalled time: what its replay profile measured of the time the replaying
// thread was not running (a CPU-quota cgroup's throttling, preemption), per compute segment
// (the events' stall extra) and inside the replayed calls (the manifest's
// replay.stall.calls_ns). A quota throttles in whole periods (10 ms pieces at 50 % of a 20 ms
// period), so a few segments carry all of it and the others none; a peer that synchronises
// with the rank then waits for the lumps, where a machine slower by the same factor is slower
// everywhere. Spreading gives each segment its running time (its time less its stall; a sleep
// in it counts as running) times the rank's measured slow-down (all its wall time over all of
// it less the stalls, the replay's own calls included, since a throttle lands wherever the
// quota runs out). Where the profile names its CPU quota q < 1 (replay.stall.cpu_quota), the
// factor is 1/q instead: the machine the quota stands for. What the replay measured departs
// from it by the throttling's granularity (a period whose quota is not used up is not
// throttled, so a 0.3 s replay at 50 % of a core ran 1.93-1.97x, where a CPU-bound loop in
// the same cgroup setting ran 2.01x) and by other work on the machine; a real CPU slower by
// that factor is slower in every segment. Stalls of a replay that ran without a CPU quota are no
// slower machine but other work on this one (another process, or the replay's own payload
// read-ahead thread woken on the program's core): they are dropped, each segment its time less its
// stall.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace encore::predict {

enum class StallTime : std::uint8_t {
  spread,  // each segment: its time less its stall x (all wall time / all of it less stalls)
  keep,    // each segment as measured, stalls where they fell
  drop,    // each segment: its time less its stall
  // Per profile: drop where it says the replay ran without a CPU quota
  // (replay.stall.cpu_quota 0), else spread (a quota, or a profile that does not say).
  automatic,
};

// "spread", "keep", "drop" or "auto"; nullopt otherwise.
std::optional<StallTime> parse_stall_time(std::string_view s);
std::string_view to_string(StallTime t);

// One replayed rank's stalls and what spreading them does.
struct StallSpread {
  StallTime mode = StallTime::spread;  // spread, keep or drop (never automatic)
  std::uint64_t segments_ns = 0;       // stalls measured in compute segments (summed extras)
  std::uint64_t calls_ns = 0;          // stalls measured inside the replayed calls
  std::uint64_t compute_ns = 0;        // the segments' measured (wall) time, stalls included
  std::uint64_t overhead_ns = 0;       // the replay's own time in the calls, stalls included
  // The thread's CPU time over the interval the stalls were measured in, when the profile says
  // (0: not known). Better than wall time less stalls, which counts blocking I/O and sleeps.
  std::uint64_t ran_ns = 0;
  // The replay's CPU quota in CPUs, where the profile says (0: none, or not said).
  double cpu_quota = 0;
  bool measured = false;  // the profile says it measured stalls (replay.stall)
  // The replay's own slow-down: (CPU time + stalls) / CPU time, the CPU time being ran_ns where
  // known, else all wall time less the stalls; 1 without stalls.
  double measured_factor = 1.0;
  // Each segment's running time is multiplied by this in spread mode: 1 / cpu_quota under a
  // quota below one CPU, else measured_factor.
  double factor = 1.0;

  // Sets the factors from the totals (`factor` 1 in keep or drop mode).
  void finish();
  // Whether spreading uses 1 / cpu_quota rather than the measured factor.
  bool by_quota() const { return cpu_quota > 0 && cpu_quota < 1; }
  // The segments' running time (their time less their stalls).
  std::uint64_t cpu_ns() const { return compute_ns - std::min(segments_ns, compute_ns); }
  // The segments' total after spreading (== compute_ns in keep mode, cpu_ns() in drop mode).
  std::uint64_t spread_compute_ns() const;
  // Whether segments are given other than their measured time.
  bool active() const {
    return (mode == StallTime::spread && factor != 1.0) ||
           (mode == StallTime::drop && segments_ns > 0);
  }
};

// Applies a StallSpread to one rank's segments in order; the rounding error is carried from
// segment to segment, so the total is the spread total to within a nanosecond.
class StallSpreader {
 public:
  explicit StallSpreader(const StallSpread* s = nullptr)
      : factor_(s && s->active() ? s->factor : 1.0), active_(s && s->active()) {}
  std::int64_t operator()(std::int64_t gap, std::uint64_t stall_ns) {
    if (!active_) return gap;
    const auto stall = static_cast<std::int64_t>(std::min<std::uint64_t>(
        stall_ns, static_cast<std::uint64_t>(std::max<std::int64_t>(gap, 0))));
    exact_ += static_cast<double>(gap - stall) * factor_;
    const std::int64_t out = std::llround(exact_) - given_;
    given_ += out;
    return out;
  }

 private:
  double factor_;
  bool active_;
  double exact_ = 0;
  std::int64_t given_ = 0;
};

}  // namespace encore::predict
