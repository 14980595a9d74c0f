#include "neighbour_load.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "launch.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::tool {

std::vector<int> usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<std::uint32_t> neighbour_ranks(const Trace& t, std::uint32_t rank,
                                           std::optional<std::uint32_t> count, std::size_t cpus) {
  const RankInfo* self = t.manifest.rank_info(rank);
  const std::string host = self ? self->host : std::string();
  std::vector<std::uint32_t> same, other;
  for (std::uint32_t r = 0; r < t.manifest.nprocs; ++r) {
    if (r == rank) continue;
    const RankInfo* info = t.manifest.rank_info(r);
    (info && info->host == host ? same : other).push_back(r);
  }
  const auto nearest = [rank](std::uint32_t a, std::uint32_t b) {
    const auto da = a > rank ? a - rank : rank - a, db = b > rank ? b - rank : rank - b;
    return da != db ? da < db : a < b;
  };
  std::sort(same.begin(), same.end(), nearest);
  std::sort(other.begin(), other.end(), nearest);
  const std::size_t spare = cpus > 0 ? cpus - 1 : 0;
  const std::size_t want = count ? *count : std::min(same.size(), spare);
  if (want > same.size() + other.size())
    throw ExitError(kExitUsage, fmt::format("--neighbours {}: the trace has {} other rank(s)", want,
                                            same.size() + other.size()));
  if (want > spare)
    throw ExitError(kExitUsage,
                    fmt::format("--neighbours {}: encore may use {} CPU(s) here, one of them for "
                                "rank {}, so at most {} neighbour(s)",
                                want, cpus, rank, spare));
  same.insert(same.end(), other.begin(), other.end());
  same.resize(want);
  return same;
}

namespace {

bool bind_to(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace

void bind_to_cpu(int cpu) {
  if (!bind_to(cpu))
    throw ExitError(kExitUsage, fmt::format("cannot bind to CPU {}: {}", cpu, errno_text(errno)));
}

namespace {

// The load loop, in its own process (group): replays `rank` again and again, each replay
// dying with the loop (and the loop with encore). Never returns.
[[noreturn]] void run_loop(std::uint32_t rank, int cpu, const std::vector<std::string>& command,
                           bool paced, pid_t encore) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != encore) ::_exit(0);  // encore ended before the line above
  ::setpgid(0, 0);
  bind_to(cpu);
  ::setenv("ENCORE_REPLAY_RANK", std::to_string(rank).c_str(), 1);
  ::unsetenv("ENCORE_REPLAY_PROFILE");
  ::unsetenv("ENCORE_REPLAY_STATUS");  // the measured rank's
  ::setenv("ENCORE_QUIET", "1", 1);
  // One thread per core, as a rank of the real run: no payload read-ahead thread.
  ::setenv("ENCORE_REPLAY_READ_AHEAD", "0", 1);
  ::setenv("ENCORE_REPLAY_PACE", paced ? "recorded" : "none", 1);
  if (const int null = ::open("/dev/null", O_RDWR); null >= 0) {
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    if (null > 2) ::close(null);
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGQUIT, SIG_DFL);
  std::vector<char*> argv = exec_argv(command);
  const pid_t loop = ::getpid();
  for (;;) {
    const pid_t pid = ::fork();
    if (pid < 0) ::_exit(126);
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != loop) ::_exit(0);
      ::execvp(argv[0], argv.data());
      ::_exit(errno == ENOENT ? 127 : 126);
    }
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r < 0) ::_exit(126);
    if (WIFSIGNALED(status)) ::_exit(std::min(128 + WTERMSIG(status), 255));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ::_exit(WEXITSTATUS(status));
  }
}

}  // namespace

NeighbourLoad::NeighbourLoad(const std::vector<std::uint32_t>& ranks, const std::vector<int>& cpus,
                             const std::vector<std::string>& command, bool paced) {
  const pid_t encore = ::getpid();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      stop();
      throw ExitError(kExitUsage, "cannot start the neighbours' replays: fork: " + errno_text(err));
    }
    if (pid == 0) run_loop(ranks[i], cpus.at(i), command, paced, encore);
    ::setpgid(pid, pid);  // also here: stop() may come before the loop's own call
    loops_.push_back({ranks[i], pid});
  }
}

NeighbourLoad::~NeighbourLoad() { stop(); }

void NeighbourLoad::stop() noexcept {
  for (const Loop& l : loops_) {
    int status = 0;
    if (::waitpid(l.pid, &status, WNOHANG) == l.pid) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::fprintf(stderr,
                   "encore: the neighbour replay of rank %u stopped early (exit code %d): the "
                   "measured rank had less load than asked for part of its run\n",
                   l.rank, code);
      continue;
    }
    ::kill(-l.pid, SIGKILL);
    ::kill(l.pid, SIGKILL);
    while (::waitpid(l.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  loops_.clear();
}

}  // namespace encore::tool
