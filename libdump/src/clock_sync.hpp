// Offsets between the ranks' clocks, estimated at MPI_Init and MPI_Finalize by ping-pong with
// rank 0 (the reply's time against the midpoint of the round trip, keeping the shortest of
// several trips). Adding a rank's offset to its timestamps puts them on rank 0's timeline.
#pragma once

#include <cstdint>

#include "encore/clock.hpp"

namespace encore::dump {

std::int64_t estimate_clock_offset(const Clock& clock, int rank, int nprocs);

}  // namespace encore::dump
