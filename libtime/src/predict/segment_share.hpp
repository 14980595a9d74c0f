// How much longer one rank's captured segments of a kind are than another rank's: the median
// of the ratios of segments paired in order (the i-th of the kind on each rank), not the ratio
// of their sums. A capture stretches single segments by milliseconds where it records payloads
// (ring 100x200000 at 2 ranks: six 1.6 ms segments of one rank at 7.6 ms; none stretched with
// --payload-ranks none), on one rank or the other, so a sum's ratio moved 10 % on such a run and
// made the inferred rank's every segment of the kind 10 % long; the median of the pairs' ratios
// does not see a few stretched pairs. Memory per kind is bounded: past kMaxKept ratios every other
// one is dropped and from then on only every stride-th pair is kept, so the ratios stay spread over
// the whole run. Internal to libtime's predict code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace encore::predict {

class SegmentShare {
 public:
  static constexpr std::size_t kMaxKept = 4096;

  // One pair: this rank's captured segment and the source rank's. A pair whose source segment
  // took no time says nothing of a ratio and is left out.
  void add(std::int64_t rank_ns, std::int64_t source_ns);

  // The median ratio (for an even number, the geometric mean of the middle two, ratios being
  // factors); nullopt without a pair.
  std::optional<double> median() const;

 private:
  std::vector<double> kept_;
  std::uint64_t seen_ = 0, stride_ = 1;
};

}  // namespace encore::predict
