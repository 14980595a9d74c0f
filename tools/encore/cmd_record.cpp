// encore record: run a command with the capture library preloaded and its options set.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "launch.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/rank_list.hpp"

namespace encore::tool {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDumpLibName = "libencore-dump.so";
#ifdef ENCORE_DUMP_BUILD_PATH
constexpr const char* kDumpBuildPath = ENCORE_DUMP_BUILD_PATH;
#else
constexpr const char* kDumpBuildPath = nullptr;
#endif

struct RecordOptions {
  std::string output;
  bool force = false;
  std::string payload_ranks;
  bool callsites = false;
  std::optional<int> callsite_depth;
  std::string papi_events;
  std::string payload_order;
  std::optional<int> zstd_level;
  std::string compress;
  std::string clock_sync;
  std::string clock;
  std::optional<long long> memory_mb;
  std::optional<long long> flush_ms;
  bool no_send_hash = false;
  bool quiet = false;
  std::vector<std::string> command;
};

[[noreturn]] void setup_error(const std::string& message) { throw ExitError(kExitUsage, message); }

bool is_trace_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name == kManifestFileName ||
         name.rfind(std::string(kManifestFileName) + ".tmp.", 0) == 0 ||
         parse_rank_file_name(name).has_value();
}

// -o: made absolute; must be missing, an empty directory, or (with --force) a directory
// whose previous trace files are removed.
fs::path prepare_output(const std::string& output, bool force) {
  fs::path dir = fs::absolute(output).lexically_normal();
  if (dir.has_filename() == false && dir.has_parent_path()) dir = dir.parent_path();
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      setup_error(format_in(dir.string(), "exists and is not a directory"));
    if (!fs::is_empty(dir, ec)) {
      if (!force)
        setup_error(format_in(dir.string(),
                              "exists and is not empty (use --force to record into it anyway)"));
      for (const auto& entry : fs::directory_iterator(dir, ec))
        if (is_trace_file(entry.path())) fs::remove(entry.path(), ec);
    }
    return dir;
  }
  fs::create_directories(dir, ec);
  if (ec) setup_error(format_in(dir.string(), "cannot create: " + ec.message()));
  return dir;
}

// encore-trace-YYYYmmdd-HHMMSS in the current directory, with -2, -3... if taken.
fs::path make_dated_dir() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  const fs::path cwd = fs::current_path();
  for (int i = 1; i < 10000; ++i) {
    fs::path dir =
        cwd / (std::string("encore-trace-") + stamp + (i > 1 ? "-" + std::to_string(i) : ""));
    if (::mkdir(dir.c_str(), 0777) == 0) return dir;
    if (errno != EEXIST)
      setup_error(format_in(dir.string(), "cannot create: " + errno_text(errno)));
  }
  setup_error("cannot find a free encore-trace-* directory name in " + cwd.string());
}

// The command's exit code, unless it said 0 and its trace is not whole (a full disk: the
// capture named the file; a rank that never reached MPI_Finalize): then 1, with a line.
// A command that ran no MPI program leaves no rank files: a warning only.
int capture_outcome(const fs::path& dir, int code, bool quiet) {
  std::error_code ec;
  const TraceDir trace(dir);
  if (!fs::exists(trace.manifest_path(), ec)) {
    if (!fs::exists(trace.events_path(0), ec)) {
      if (!quiet)
        print_error(
            format_in(dir.string(), "no trace was written (did the command run an MPI program?)"));
      return code;
    }
    print_error(format_in(dir.string(),
                          "the capture could not finish its trace (no manifest; "
                          "see the lines above)"));
    return code == 0 ? kExitTraceProblem : code;
  }
  if (code != 0) return code;
  try {
    const Manifest m = load_manifest(trace.manifest_path());
    std::string cut;
    for (const RankInfo& r : m.ranks)
      if (r.status != RankStatus::complete)
        cut += (cut.empty() ? "" : ",") + std::to_string(r.rank);
    if (cut.empty()) return code;
    print_error(format_in(dir.string(), "the trace of rank(s) " + cut +
                                            " is not complete (see the lines above); `encore "
                                            "check` shows where"));
  } catch (const Error& e) {
    print_error(e.what());
  }
  return kExitTraceProblem;
}

int record(const RecordOptions& o) {
  if (o.command.empty())
    setup_error("record: no command given (encore record [options] -- COMMAND ...)");
  if (RankList ranks; !o.payload_ranks.empty()) {
    if (const std::string why = RankList::parse(o.payload_ranks, ranks); !why.empty())
      setup_error("--payload-ranks " + o.payload_ranks + ": " + why);
  }
  const fs::path lib = find_library(kDumpLibName, "ENCORE_DUMP_LIB", kDumpBuildPath);
  const bool dated = o.output.empty();
  const fs::path dir = dated ? make_dated_dir() : prepare_output(o.output, o.force);

  set_env("ENCORE_TRACE_DIR", dir.string());
  if (!o.payload_ranks.empty()) set_env("ENCORE_PAYLOAD_RANKS", o.payload_ranks);
  if (o.callsites) set_env("ENCORE_CALLSITES", "1");
  if (o.callsite_depth) set_env("ENCORE_CALLSITE_DEPTH", std::to_string(*o.callsite_depth));
  if (!o.papi_events.empty()) set_env("ENCORE_PAPI_EVENTS", o.papi_events);
  if (!o.payload_order.empty()) set_env("ENCORE_PAYLOAD_ORDER", o.payload_order);
  if (o.zstd_level) set_env("ENCORE_ZSTD_LEVEL", std::to_string(*o.zstd_level));
  if (!o.compress.empty()) set_env("ENCORE_COMPRESS", o.compress);
  if (!o.clock_sync.empty()) set_env("ENCORE_CLOCK_SYNC", o.clock_sync);
  if (!o.clock.empty()) set_env("ENCORE_CLOCK", o.clock);
  if (o.memory_mb) set_env("ENCORE_MEMORY_MB", std::to_string(*o.memory_mb));
  if (o.flush_ms) set_env("ENCORE_FLUSH_MS", std::to_string(*o.flush_ms));
  if (o.no_send_hash) set_env("ENCORE_SEND_HASH", "0");
  if (o.quiet) set_env("ENCORE_QUIET", "1");
  prepend_preload(lib);

  const int code = run_command(o.command);
  if (dated) print_error("trace in " + dir.string());
  return capture_outcome(dir, code, o.quiet);
}

}  // namespace

std::optional<std::vector<std::string>>& record_command() {
  static std::optional<std::vector<std::string>> command;
  return command;
}

Subcommand add_record(CLI::App& parent) {
  auto o = std::make_shared<RecordOptions>();
  CLI::App* app = parent.add_subcommand(
      "record",
      "Run an MPI program with the capture library preloaded and record a trace.\n"
      "Usage: encore record [OPTIONS] -- COMMAND [ARGS...]\n"
      "e.g.   encore record -o trace -- mpiexec -n 4 ./app");
  app->add_option("-o,--output", o->output,
                  "Trace directory (default: a new encore-trace-YYYYmmdd-HHMMSS in the current "
                  "directory). Must not be a non-empty directory unless --force.");
  app->add_flag("--force", o->force,
                "Record into a non-empty -o directory, deleting the trace files already there.");
  app->add_option("--payload-ranks", o->payload_ranks,
                  "Ranks whose received bytes are recorded: all (default), none, or a list such "
                  "as 0,2-5.");
  app->add_flag("--callsites", o->callsites, "Record the call site of every MPI call.");
  app->add_option("--callsite-depth", o->callsite_depth, "Stack frames per call site (1-64).")
      ->check(CLI::Range(1, 64));
  app->add_option("--papi-events", o->papi_events,
                  "Hardware counters to record between MPI calls, e.g. PAPI_TOT_INS,PAPI_TOT_CYC.");
  app->add_option("--payload-order", o->payload_order,
                  "Byte order of recorded payloads: native (default), little or big.")
      ->check(CLI::IsMember({"native", "little", "big"}));
  app->add_option("--zstd-level", o->zstd_level, "zstd compression level (-7..19, 0 = none).")
      ->check(CLI::Range(-7, 19));
  app->add_option("--compress", o->compress,
                  "When to compress: during the run (on each rank's writer thread), after it (raw "
                  "chunks packed at MPI_Finalize, so compression takes no time from the ranks), or "
                  "auto (default: after where the node's ranks leave no core free).")
      ->check(CLI::IsMember({"auto", "during", "after"}));
  app->add_option("--clock-sync", o->clock_sync,
                  "How clock offsets between ranks are measured at MPI_Init and MPI_Finalize: "
                  "auto (default: from the shared monotonic clock for ranks on rank 0's kernel, "
                  "checked against round trips; round trips for the others) or round-trips.")
      ->check(CLI::IsMember({"auto", "round-trips"}));
  app->add_option("--clock", o->clock,
                  "Which clock timestamps the calls: auto (default: the TSC where the kernel uses "
                  "it, or where it is invariant and found in step with CLOCK_MONOTONIC on every "
                  "CPU the rank may run on, as in most virtual machines; else CLOCK_MONOTONIC), "
                  "tsc (unchecked) or monotonic. The manifest's clock.why says what chose it.")
      ->check(CLI::IsMember({"auto", "tsc", "monotonic"}));
  app->add_option("--memory-mb", o->memory_mb, "Trace buffer memory per rank in MiB (>= 16).")
      ->check(CLI::Range(16LL, 1LL << 20));
  app->add_option("--flush-ms", o->flush_ms, "Flush buffers to disk at least this often (ms).")
      ->check(CLI::Range(10LL, 3'600'000LL));
  app->add_flag("--no-send-hash", o->no_send_hash, "Do not hash sent data.");
  app->add_flag("--quiet", o->quiet, "No summary line from the capture library.");
  // Everything from the first argument that is not an option of record on (or after "--")
  // is the command, its own options included.
  app->prefix_command();
  app->footer(
      "Exit code: that of the recorded command (128+N if a signal N killed it); 2 if encore "
      "could not start it (bad options, -o not empty, capture library not found); 127/126 "
      "if the command cannot be found/executed.\n"
      "Without -o, the trace directory's name is printed on stderr as 'encore: trace in DIR'.");
  return {app, [o, app] {
            if (!record_command().has_value())
              o->command = app->remaining();
            else
              o->command = *record_command();
            return record(*o);
          }};
}

}  // namespace encore::tool
