// Offsets between the ranks' clocks, estimated at MPI_Init and MPI_Finalize with rank 0.
// Adding a rank's offset to its timestamps puts them on rank 0's timeline.
//
// Two estimates per rank. Round trips: the reply's time against the midpoint of the trip,
// keeping the shortest trip (its half is a hard bound on the error); trips go on past the first
// 8 while the best one is still slow (a loaded machine or a slow network), up to 64, unless
// the shared clock below answers for the peer. The shared clock: ranks on one kernel (same boot id)
// read the same CLOCK_MONOTONIC, so each rank's (timestamp, monotonic) pair gives the offset to
// within the pairs' widths, tens of nanoseconds, however late the messages are. It is used when it
// lies inside the round trips' bound (a time namespace or a reused host name would not).
#pragma once

#include <cstdint>

#include <mpi.h>

#include "encore/clock.hpp"
#include "encore/manifest.hpp"

namespace encore::dump {

struct ClockOffset {
  std::int64_t offset_ns = 0;  // this rank's time + offset = rank 0's time
  std::uint64_t at_ns = 0;     // this rank's time when it was measured
  std::uint64_t error_ns = 0;  // bound on |estimate - truth|
  enum class Method : std::uint8_t { self, shared_clock, round_trips } method = Method::self;
};

// As the manifest records it.
ClockSync to_manifest(const ClockOffset& o);

// Collective over `comm`, a duplicate of MPI_COMM_WORLD that the tool keeps to itself (PMPI
// calls only): on MPI_COMM_WORLD, a rank still in the program could take the tool's messages
// in an MPI_ANY_SOURCE / MPI_ANY_TAG receive. Peers only answer rank 0, never speak first.
// `shared_clock` false: round trips only (ENCORE_CLOCK_SYNC=round-trips).
ClockOffset estimate_clock_offset(const Clock& clock, MPI_Comm comm, int rank, int nprocs,
                                  bool shared_clock);

}  // namespace encore::dump
