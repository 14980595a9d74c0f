// `encore replay --neighbours`: while one rank replays, other ranks of the same recording replay
// beside it on the other cores, as load. A rank replayed alone has the machine to itself, where
// in the real run its neighbours computed or busy-polled beside it, sharing the caches and the
// memory bandwidth (halo2d's sweep ran about 6 % slower beside a copy of itself): the loads put
// that sharing back into the measured rank's compute. Their own replays are not measured.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"

namespace encore::tool {

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> usable_cpus();

// The ranks to replay as load beside `rank`: those the recording ran on `rank`'s host, nearest
// rank numbers first, then the others; `count` of them (nullopt: as many as ran on its host,
// at most `cpus - 1`). Throws ExitError(usage) if the trace has not that many other ranks or
// the machine not that many more CPUs.
std::vector<std::uint32_t> neighbour_ranks(const Trace& t, std::uint32_t rank,
                                           std::optional<std::uint32_t> count, std::size_t cpus);

class NeighbourLoad {
 public:
  // Starts one loop per rank of `ranks`, the i-th bound to `cpus[i]`: it runs `command` as a
  // replay of that rank (environment as set for the measured rank, but its own rank, no
  // profile, quiet, output to /dev/null), and again each time it ends, until stop(). With
  // `paced`, each call of a load lasts as long as it did in the recording (ENCORE_REPLAY_PACE):
  // the load computes and waits as the neighbour did, rather than computing without a pause.
  // A loop whose replay fails (non-zero exit) stops there; stop() says so on stderr.
  NeighbourLoad(const std::vector<std::uint32_t>& ranks, const std::vector<int>& cpus,
                const std::vector<std::string>& command, bool paced);
  NeighbourLoad(const NeighbourLoad&) = delete;
  NeighbourLoad& operator=(const NeighbourLoad&) = delete;
  ~NeighbourLoad();
  // Ends every loop and its replay (SIGKILL to each loop's process group) and reaps them.
  void stop() noexcept;

 private:
  struct Loop {
    std::uint32_t rank;
    pid_t pid;
  };
  std::vector<Loop> loops_;
};

// Binds this process (and so the command it starts next) to `cpu`. Throws ExitError(usage).
void bind_to_cpu(int cpu);

}  // namespace encore::tool
