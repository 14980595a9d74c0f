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

// A peer's answer to a ping: its time now, and its anchor taken just before it answered.
struct Answer {
  std::int64_t now_ns;
  Anchor anchor;
};
constexpr int kAnswerWords = 5;

// The shared monotonic clock's answer from one pair of anchors: (t0 - mono0) - (tr - monor) is
// the offset, give or take the pairs' widths and the rates' calibration error (100 ppm) over
// the time between the two anchors.
ClockOffset from_shared_clock(const Anchor& mine, const Anchor& theirs) {
  ClockOffset out;
  out.method = ClockOffset::Method::shared_clock;
  out.offset_ns = (mine.t_ns - mine.mono_ns) - (theirs.t_ns - theirs.mono_ns);
  const std::int64_t apart = std::abs(mine.mono_ns - theirs.mono_ns);
  out.error_ns =
      static_cast<std::uint64_t>((mine.width_ns + theirs.width_ns) / 2 + 1 + apart / 10'000);
  return out;
}

// Rank 0's side with one peer: round trips, then the result sent back. Each trip carries fresh
// anchors from both sides, so on one kernel the pair taken closest together in time (a trip
// that no time slice interrupted) bounds the shared clock's error, however loaded the node.
void measure_peer(const Clock& clock, MPI_Comm comm, int peer, std::uint64_t domain,
                  bool shared_clock) {
  std::uint64_t best_rtt = std::numeric_limits<std::uint64_t>::max();
  ClockOffset out;
  out.method = ClockOffset::Method::round_trips;
  std::optional<ClockOffset> shared;
  bool same_kernel = false;
  // More trips while slow, unless the shared clock will answer: there the trips only check
  // it, and on a node with more ranks than cores each trip waits for a time slice.
  const auto more_trips = [&] { return best_rtt > kSlowTripNs && !(shared_clock && same_kernel); };
  for (int i = 0; i < kMaxRounds && (i < kMinRounds || more_trips()); ++i) {
    const Anchor mine = anchor(clock, domain);
    std::int64_t ping[4] = {static_cast<std::int64_t>(clock.to_ns(clock.ticks())), 0, 0, 0};
    PMPI_Send(ping, 4, MPI_INT64_T, peer, kTag, comm);
    Answer answer{};
    PMPI_Recv(&answer, kAnswerWords, MPI_INT64_T, peer, kTag, comm, MPI_STATUS_IGNORE);
    const auto t0 = static_cast<std::uint64_t>(ping[0]);
    const std::uint64_t t1 = clock.to_ns(clock.ticks());
    if (t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      out.offset_ns = static_cast<std::int64_t>(t0 + (t1 - t0) / 2) - answer.now_ns;
    }
    same_kernel = answer.anchor.domain == mine.domain;
    if (shared_clock && same_kernel) {
      const ClockOffset s = from_shared_clock(mine, answer.anchor);
      if (!shared || s.error_ns < shared->error_ns) shared = s;
    }
  }
  out.error_ns = best_rtt / 2 + 1;
  // The shared clock's estimate must agree with the trips' bound, and be the tighter one.
  if (shared) {
    const auto gap = static_cast<std::uint64_t>(std::abs(shared->offset_ns - out.offset_ns));
    if (gap <= out.error_ns + shared->error_ns && shared->error_ns < out.error_ns) {
      out.offset_ns = shared->offset_ns;
      out.error_ns = shared->error_ns;
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
    for (int peer = 1; peer < nprocs; ++peer) measure_peer(clock, comm, peer, domain, shared_clock);
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
    const Anchor now = anchor(clock, domain);
    if (!mine) mine = now;  // the first one dates the estimate
    const Answer answer{static_cast<std::int64_t>(clock.to_ns(clock.ticks())), now};
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
