// encore replay: run one rank of a recorded run alone, with libreplay preloaded in place of MPI.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "launch.hpp"
#include "neighbour_load.hpp"
#include "replay_status.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::tool {
namespace {

namespace fs = std::filesystem;

// libreplay under MPICH's soname, in a directory of its own (see libreplay/CMakeLists.txt).
constexpr const char* kReplayLibName = "encore/mpich-abi/libmpich.so.12";
#ifdef ENCORE_REPLAY_BUILD_PATH
constexpr const char* kReplayBuildPath = ENCORE_REPLAY_BUILD_PATH;
#else
constexpr const char* kReplayBuildPath = nullptr;
#endif

// --neighbours N: a count from 0 to 4096.
std::uint32_t parse_count(const std::string& text) {
  std::uint32_t n = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc() || at != end || n > 4096)
    throw ExitError(kExitUsage, "--neighbours " + text + ": give auto or a number of ranks");
  return n;
}

struct ReplayOptions {
  std::string trace;
  std::int64_t rank = -1;
  std::string profile;
  std::string wtime = "machine";
  std::string data = "warn";
  std::string papi;
  bool quiet = false;
  std::string neighbours;  // "" none, "auto", or a count
  std::string neighbours_pace = "recorded";
  std::vector<std::string> command;
};

int replay(const ReplayOptions& o) {
  if (o.command.empty())
    throw ExitError(kExitUsage,
                    "replay: no command given (encore replay --rank R TRACE -- ./app ...)");
  const Trace t = open_trace(o.trace);
  check_rank_option(t, o.rank);
  require_rank_files(t, static_cast<std::uint32_t>(o.rank));
  if (!records_payload_of(t.manifest, static_cast<std::uint32_t>(o.rank)))
    throw ExitError(kExitUsage,
                    fmt::format("--rank {}: the trace holds no received data of rank "
                                "{} (recorded with --payload-ranks {}); it can be "
                                "shown and summarised, not replayed",
                                o.rank, o.rank, t.manifest.options.value("payload_ranks", "")));
  if (!o.profile.empty()) {
    const fs::path out(o.profile);
    if (fs::exists(out / kManifestFileName))
      throw ExitError(kExitUsage,
                      "-o " + o.profile + ": a trace is already there; give a new directory");
    set_env("ENCORE_REPLAY_PROFILE", fs::absolute(out).lexically_normal().string());
    if (!o.papi.empty()) set_env("ENCORE_PAPI_EVENTS", o.papi);
  } else {
    if (!o.papi.empty())
      throw ExitError(kExitUsage, "--papi " + o.papi +
                                      ": the counts go into the replay profile; give -o DIR too");
    unsetenv("ENCORE_REPLAY_PROFILE");
  }
  const fs::path lib = find_library(kReplayLibName, "ENCORE_REPLAY_LIB", kReplayBuildPath);
  set_env("ENCORE_REPLAY_TRACE", fs::absolute(o.trace).lexically_normal().string());
  set_env("ENCORE_REPLAY_RANK", std::to_string(o.rank));
  set_env("ENCORE_REPLAY_WTIME", o.wtime);
  set_env("ENCORE_REPLAY_DATA", o.data);
  if (o.quiet) set_env("ENCORE_QUIET", "1");
  // First on the library path, so a program linked against MPICH loads the replay in its place
  // (and MPICH need not be installed); preloaded too, for programs that link MPI otherwise.
  std::string path = lib.parent_path().string();
  if (const char* old = std::getenv("LD_LIBRARY_PATH"); old && *old) path += std::string(":") + old;
  set_env("LD_LIBRARY_PATH", path);
  prepend_preload(lib);
  std::optional<NeighbourLoad> load;
  std::optional<std::uint32_t> count;  // nullopt: auto
  if (!o.neighbours.empty() && o.neighbours != "auto") count = parse_count(o.neighbours);
  if (!o.neighbours.empty() && count != 0u) {
    const std::vector<int> cpus = usable_cpus();
    const std::vector<std::uint32_t> ranks =
        neighbour_ranks(t, static_cast<std::uint32_t>(o.rank), count, cpus.size());
    if (!ranks.empty()) {
      bind_to_cpu(cpus[0]);
      if (!o.quiet) {
        std::string list;
        for (std::size_t i = 0; i < ranks.size(); ++i)
          list += fmt::format("{}rank {} on CPU {}", i ? ", " : "", ranks[i], cpus[i + 1]);
        std::fprintf(stderr, "encore: rank %lld on CPU %d; replayed beside it as load: %s\n",
                     static_cast<long long>(o.rank), cpus[0], list.c_str());
      }
      load.emplace(ranks, std::vector<int>(cpus.begin() + 1, cpus.end()), o.command,
                   o.neighbours_pace == "recorded");
    } else if (!o.quiet) {
      std::fprintf(stderr,
                   "encore: --neighbours auto: no other rank ran on rank %lld's host, or "
                   "no spare CPU: replayed alone\n",
                   static_cast<long long>(o.rank));
    }
  }
  ReplayStatusFile status;
  set_env("ENCORE_REPLAY_STATUS", status.path());
  const int rc = run_command(o.command);
  if (load) load->stop();
  return replay_exit_code(rc, status.read());
}

}  // namespace

Subcommand add_replay(CLI::App& parent) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* app = parent.add_subcommand(
      "replay",
      "Run one rank of a recorded run alone: its MPI calls are answered from the trace.\n"
      "Usage: encore replay --rank R TRACE -- COMMAND [ARGS...]\n"
      "e.g.   encore replay --rank 3 trace -- ./app args   (no mpiexec)");
  app->add_option("trace", o->trace, "Trace directory.")->required();
  app->add_option("--rank", o->rank, "The rank to replay.")->required();
  app->add_option("-o,--output", o->profile,
                  "Write the replay profile (this machine's compute timeline of the rank, an "
                  "Encore trace of kind replay) to this new directory.");
  app->add_option("--papi", o->papi,
                  "PAPI events to count per replayed compute segment into the profile (-o), "
                  "comma-separated, as `encore record --papi-events` (e.g. "
                  "PAPI_TOT_INS,PAPI_TOT_CYC); or set ENCORE_PAPI_EVENTS.");
  app->add_option("--wtime", o->wtime,
                  "MPI_Wtime returns this machine's clock (machine, default) or the recorded "
                  "values (recorded: programs that print timings print the same).")
      ->check(CLI::IsMember({"machine", "recorded"}));
  app->add_option("--data-differs", o->data,
                  "When the program sends or hands a collective other data than the recorded "
                  "run did (compared by hash): warn (default: the first one reported, all "
                  "counted at the end, the replay goes on) or stop (exit 86 there, with the "
                  "same line: a check that tuned code still computes what it did).")
      ->check(CLI::IsMember({"warn", "stop"}));
  app->add_flag("--quiet", o->quiet, "No summary from the replay library.");
  app->add_option(
      "--neighbours", o->neighbours,
      "Replay other ranks of the recording beside this one, as load, each on a CPU of its own "
      "and again each time it ends, until this rank's program exits (not measured, no "
      "profile): the caches and memory bandwidth the real run's neighbours shared with it. "
      "auto: as many as ran on this rank's host, at most one per spare CPU; N: that many, "
      "nearest rank numbers on this rank's host first. The replayed rank is bound to the "
      "first CPU encore may use.");
  app->add_option("--neighbours-pace", o->neighbours_pace,
                  "How the loads of --neighbours run: recorded (default: each of their MPI calls "
                  "lasts as long as in the recording, spinning out the rest, so a load computes "
                  "and waits as that rank did in the real run) or none (their calls answered at "
                  "once: they compute without a pause, a heavier load than the real run's).")
      ->check(CLI::IsMember({"recorded", "none"}));
  app->prefix_command();
  app->footer(
      "Exit code: that of the program; 86 if the replay stopped (the program diverged from the "
      "trace, sent other data with --data-differs stop, called an MPI function the replay does not "
      "support, or went past the end of a "
      "trace cut short), with one line on stderr saying where; 2 or 3 for bad options or an "
      "unreadable trace.");
  return {app, [o, app] {
            if (!record_command().has_value())
              o->command = app->remaining();
            else
              o->command = *record_command();
            return replay(*o);
          }};
}

}  // namespace encore::tool
