#include "clock_sync.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include <mpi.h>

namespace encore::dump {
namespace {

constexpr int kMinRounds = 8;
constexpr int kMaxRounds = 64;
constexpr std::uint64_t kSlowTripNs = 50'000;  // more trips while the best is slower
constexpr std::int64_t kDone = std::numeric_limits<std::int64_t>::min();  // ends a peer's trips
constexpr int kTag = 0x3e7c;  // on MPI_COMM_WORLD, before or after the program's traffic

// Which kernel's CLOCK_MONOTONIC this process reads: the boot id, else the host name.
std::uint64_t clock_domain() {
  std::string id;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  if (!(boot >> id)) {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    id.assign(name, static_cast<std::size_t>(std::max(len, 0)));
  }
  return std::hash<std::string>{}(id);
}

// This rank's timeline against CLOCK_MONOTONIC: timestamp, monotonic, uncertainty (ns).
struct Anchor {
  std::int64_t t_ns, mono_ns, width_ns;
  std::int64_t domain;
};

Anchor anchor(const Clock& clock, std::uint64_t domain) {
  const ClockPair p = clock.pair();
  const std::uint64_t t = clock.to_ns(p.ticks);
  const std::uint64_t width = clock.to_ns(p.ticks + p.width_ticks) - t;
  return {static_cast<std::int64_t>(t), static_cast<std::int64_t>(p.mono_ns),
          static_cast<std::int64_t>(width), static_cast<std::int64_t>(domain)};
}

// A peer's answer to a ping: its time now, and its anchor (taken once, at the first ping).
struct Answer {
  std::int64_t now_ns;
  Anchor anchor;
};
constexpr int kAnswerWords = 5;

// Rank 0's side with one peer: round trips, then the result sent back.
void measure_peer(const Clock& clock, MPI_Comm comm, int peer, const Anchor& mine,
                  bool shared_clock) {
  std::uint64_t best_rtt = std::numeric_limits<std::uint64_t>::max();
  ClockOffset out;
  out.method = ClockOffset::Method::round_trips;
  Answer answer{};
  // More trips while slow, unless the shared clock will answer: there the trips only check
  // it, and on a node with more ranks than cores each trip waits for a time slice.
  const auto more_trips = [&] {
    return best_rtt > kSlowTripNs && !(shared_clock && answer.anchor.domain == mine.domain);
  };
  for (int i = 0; i < kMaxRounds && (i < kMinRounds || more_trips()); ++i) {
    std::int64_t ping[4] = {static_cast<std::int64_t>(clock.to_ns(clock.ticks())), 0, 0, 0};
    PMPI_Send(ping, 4, MPI_INT64_T, peer, kTag, comm);
    PMPI_Recv(&answer, kAnswerWords, MPI_INT64_T, peer, kTag, comm, MPI_STATUS_IGNORE);
    const auto t0 = static_cast<std::uint64_t>(ping[0]);
    const std::uint64_t t1 = clock.to_ns(clock.ticks());
    if (t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      out.offset_ns = static_cast<std::int64_t>(t0 + (t1 - t0) / 2) - answer.now_ns;
    }
  }
  out.error_ns = best_rtt / 2 + 1;
  const Anchor& theirs = answer.anchor;
  if (shared_clock && theirs.domain == mine.domain) {
    // Same monotonic clock: (t0 - mono0) - (tr - monor) is the offset, give or take the pairs'
    // widths and the rates' calibration error over the time between the two pairs.
    const std::int64_t shared = (mine.t_ns - mine.mono_ns) - (theirs.t_ns - theirs.mono_ns);
    const std::int64_t apart = std::abs(mine.mono_ns - theirs.mono_ns);
    const auto error = static_cast<std::uint64_t>((mine.width_ns + theirs.width_ns) / 2 + 1 +
                                                  apart / 10'000);  // 100 ppm
    const auto gap = static_cast<std::uint64_t>(std::abs(shared - out.offset_ns));
    if (gap <= out.error_ns + error && error < out.error_ns) {
      out.offset_ns = shared;
      out.error_ns = error;
      out.method = ClockOffset::Method::shared_clock;
    }
  }
  const std::int64_t done[4] = {kDone, out.offset_ns, static_cast<std::int64_t>(out.error_ns),
                                static_cast<std::int64_t>(out.method)};
  PMPI_Send(done, 4, MPI_INT64_T, peer, kTag, comm);
}

}  // namespace

ClockOffset estimate_clock_offset(const Clock& clock, MPI_Comm comm, int rank, int nprocs,
                                  bool shared_clock) {
  const std::uint64_t domain = clock_domain();
  if (rank == 0) {
    for (int peer = 1; peer < nprocs; ++peer)
      measure_peer(clock, comm, peer, anchor(clock, domain), shared_clock);
    return {0, clock.to_ns(clock.ticks()), 0, ClockOffset::Method::self};
  }
  std::optional<Anchor> mine;
  ClockOffset out;
  for (;;) {
    std::int64_t msg[4] = {};
    PMPI_Recv(msg, 4, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
    if (msg[0] == kDone) {
      out.offset_ns = msg[1];
      out.error_ns = static_cast<std::uint64_t>(msg[2]);
      out.method = msg[3] == static_cast<std::int64_t>(ClockOffset::Method::shared_clock)
                       ? ClockOffset::Method::shared_clock
                       : ClockOffset::Method::round_trips;
      break;
    }
    if (!mine) mine = anchor(clock, domain);
    const Answer answer{static_cast<std::int64_t>(clock.to_ns(clock.ticks())), *mine};
    PMPI_Send(&answer, kAnswerWords, MPI_INT64_T, 0, kTag, comm);
  }
  out.at_ns = mine ? static_cast<std::uint64_t>(mine->t_ns) : clock.to_ns(clock.ticks());
  return out;
}

ClockSync to_manifest(const ClockOffset& o) {
  static constexpr const char* kNames[] = {"self", "shared clock", "round trips"};
  return {o.offset_ns, o.at_ns, o.error_ns, kNames[static_cast<int>(o.method)]};
}

}  // namespace encore::dump
