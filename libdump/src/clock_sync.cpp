#include "clock_sync.hpp"

#include <mpi.h>

#include <limits>

namespace encore::dump {
namespace {
constexpr int kRounds = 8;
constexpr int kTag = 0x3e7c;  // on MPI_COMM_WORLD, before or after the program's traffic
}  // namespace

std::int64_t estimate_clock_offset(const Clock& clock, int rank, int nprocs) {
  std::int64_t offset = 0;
  if (rank == 0) {
    for (int peer = 1; peer < nprocs; ++peer) {
      std::uint64_t best_rtt = std::numeric_limits<std::uint64_t>::max();
      std::int64_t best = 0;
      for (int i = 0; i < kRounds; ++i) {
        std::uint64_t remote = 0;
        const std::uint64_t t0 = clock.to_ns(clock.ticks());
        PMPI_Send(&t0, 1, MPI_UINT64_T, peer, kTag, MPI_COMM_WORLD);
        PMPI_Recv(&remote, 1, MPI_UINT64_T, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const std::uint64_t t1 = clock.to_ns(clock.ticks());
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          best = static_cast<std::int64_t>(t0 + (t1 - t0) / 2) - static_cast<std::int64_t>(remote);
        }
      }
      PMPI_Send(&best, 1, MPI_INT64_T, peer, kTag, MPI_COMM_WORLD);
    }
  } else {
    for (int i = 0; i < kRounds; ++i) {
      std::uint64_t ping = 0;
      PMPI_Recv(&ping, 1, MPI_UINT64_T, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const std::uint64_t now = clock.to_ns(clock.ticks());
      PMPI_Send(&now, 1, MPI_UINT64_T, 0, kTag, MPI_COMM_WORLD);
    }
    PMPI_Recv(&offset, 1, MPI_INT64_T, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return offset;
}

}  // namespace encore::dump
