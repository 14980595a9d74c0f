// Each rank's offset to rank 0's clock at a given time of that rank, for the models and the
// fit: RankInfo::offset_at (interpolated between the MPI_Init and MPI_Finalize estimates, as
// the exporters use it), or one constant per rank (hand-made traces, a manifest without both
// estimates). Their rates differ by some ppm: on a long run the MPI_Init offset alone puts one
// rank's late calls microseconds off the others', more than a message's latency.
#pragma once

#include <cstdint>
#include <vector>

#include "encore/manifest.hpp"

namespace encore::predict {

class ClockOffsets {
 public:
  ClockOffsets() = default;
  // A constant per rank; ranks past the end get 0. (Implicit: a plain list of offsets is one.)
  ClockOffsets(const std::vector<std::int64_t>& constant);  // NOLINT(google-explicit-constructor)
  // The manifest's estimates; it must outlive this object (ranks that drift point into it).
  explicit ClockOffsets(const Manifest& manifest);

  // Offset to add to rank `rank`'s time `local_ns` to put it on rank 0's clock.
  std::int64_t at(std::uint32_t rank, std::int64_t local_ns) const noexcept {
    if (rank >= ranks_.size()) return 0;
    const Entry& e = ranks_[rank];
    return e.drifting ? e.drifting->offset_at(local_ns) : e.constant;
  }

 private:
  struct Entry {
    std::int64_t constant = 0;
    const RankInfo* drifting = nullptr;  // set where the two estimates differ
  };
  std::vector<Entry> ranks_;
};

}  // namespace encore::predict
