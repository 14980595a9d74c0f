// Collective operations re-timed in LogGPS terms by the algorithm MPICH would pick: each
// algorithm is a sequence of point-to-point rounds, a message of n bytes costing the sender
// o + (n-1)G and reaching its receiver L later, where it costs o more (and n gamma more where a
// reduction combines it: Reduce, Allreduce, Reduce_scatter, Scan). Above S a message is a
// rendezvous, as in the engine: it moves once its receiver is there, and its sender waits.
#pragma once

#include <cstdint>
#include <optional>
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
inline constexpr std::uint64_t kBcastShort = 12288;  // binomial below, scatter+ring above
inline constexpr std::uint64_t kAllreduceShort =
    2048;                                            // recursive doubling below, Rabenseifner above
inline constexpr std::uint64_t kReduceShort = 2048;  // binomial below, reduce-scatter + gather
inline constexpr std::uint64_t kAllgatherShort = 81920;  // total bytes: doubling below, ring above

// Which algorithm a collective of `bytes` (per-rank block, see engine) on p ranks uses.
std::string_view algorithm_name(CollKind kind, std::uint64_t bytes, std::size_t p);

// Per-rank block size of a collective (what `bytes` means below) from what the calling rank
// sent and received, p members.
std::uint64_t collective_block(CollKind kind, std::uint64_t sent, std::uint64_t received,
                               std::size_t p);

// End time of each member (by rank in the communicator) given when each arrived; a
// `nonblocking` one (Iallreduce...) combines at params.gamma_for(true).
std::vector<std::int64_t> collective_end_times(CollKind kind, std::span<const std::int64_t> arrive,
                                               std::size_t root, std::uint64_t bytes,
                                               const LogGPSParams& params,
                                               bool nonblocking = false);

// A G fitted from a recorded collective (see collective_G): ns per byte, and the largest
// message its algorithm sends, whose size class the G is for.
struct CollectiveG {
  double G = 0;
  std::uint64_t message = 0;
};
inline constexpr double kMaxFittedG = 1000;  // ns per byte: a megabyte in a second, no less

// The one G (every size class alike) with which the algorithm's last member ends at
// `last_end`, the members arriving at `arrive` (L and o from `params`): how fast the machine
// moved this collective's bytes. 0 when even G = 0 ends later; nullopt for an empty or
// one-member collective or when no G up to kMaxFittedG gets there.
std::optional<CollectiveG> collective_G(CollKind kind, std::span<const std::int64_t> arrive,
                                        std::size_t root, std::uint64_t bytes,
                                        const LogGPSParams& params, std::int64_t last_end);

// Whether the collective combines what it receives (its receivers spend gamma per byte).
bool reduces(CollKind kind) noexcept;

// The gamma (ns per byte combined) with which a reducing collective's last member ends at
// `last_end`, G, L and o from `params`: what the reduction's arithmetic cost. 0 when even
// gamma = 0 ends later; nullopt for a collective that does not reduce, an empty or one-member
// one, or when no gamma up to kMaxFittedG gets there.
std::optional<double> collective_gamma(CollKind kind, std::span<const std::int64_t> arrive,
                                       std::size_t root, std::uint64_t bytes,
                                       const LogGPSParams& params, std::int64_t last_end);

}  // namespace encore::predict
