// Collective operations re-timed in LogGPS terms by the algorithm MPICH would pick: each
// algorithm is a sequence of point-to-point rounds, a message of n bytes costing the sender
// o + (n-1)G and reaching its receiver L later, where it costs o more.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "encore/predict/loggps_params.hpp"

namespace encore::predict {

enum class CollKind : std::uint8_t {
  barrier,
  bcast,
  reduce,
  allreduce,
  allgather,
  gather,
  scatter,
  alltoall,
  reduce_scatter,
  scan
};

std::string_view to_string(CollKind kind) noexcept;

// Size crossovers (bytes), MPICH 4.0's defaults for the algorithms we model.
inline constexpr std::uint64_t kBcastShort = 12288;      // binomial below, scatter+ring above
inline constexpr std::uint64_t kAllreduceShort = 2048;   // recursive doubling below, ring above
inline constexpr std::uint64_t kAllgatherShort = 81920;  // total bytes: doubling below, ring above

// Which algorithm a collective of `bytes` (per-rank block, see engine) on p ranks uses.
std::string_view algorithm_name(CollKind kind, std::uint64_t bytes, std::size_t p);

// End time of each member (by rank in the communicator) given when each arrived.
std::vector<std::int64_t> collective_end_times(CollKind kind, std::span<const std::int64_t> arrive,
                                               std::size_t root, std::uint64_t bytes,
                                               const LogGPSParams& params);

}  // namespace encore::predict
