// encore simulate TRACE --topology SPEC... | --platform FILE: exports the trace as SimGrid
// time-independent traces, runs `smpirun -replay` once per platform and prints the simulated
// times side by side. SimGrid's exit code is not trusted: a run counts only if it printed
// "Simulation time".
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "exporters.hpp"
#include "simgrid_platform.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::tool {
namespace {

struct Args {
  std::string trace;
  std::vector<std::string> topologies;
  std::string platform;
  std::string hostfile;
  std::string map;
  exporter::LinkSpec links;
  bool sleep = false;
  std::vector<std::string> cfg;
  std::string smpirun = "smpirun";
  std::string work;
  double timeout_s = 600;
};

// Runs `argv` in `dir` with stdout and stderr into `log`; its exit status, or -1 on timeout.
int run_logged(const std::vector<std::string>& argv, const std::filesystem::path& dir,
               const std::filesystem::path& log, double timeout_s) {
  const pid_t pid = fork();
  if (pid < 0) throw ExitError(kExitTraceProblem, "cannot start smpirun: " + errno_text(errno));
  if (pid == 0) {
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || chdir(dir.c_str()) != 0) _exit(126);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

struct Outcome {
  bool ok = false;
  double seconds = 0;
  std::string problem;
};

// Whether a line of SimGrid's output reports a failure: an xbt log line at level ERROR or
// CRITICAL, a dying replay (xbt_die, assertions, a C++ exception), or a deadlock.
bool is_error_line(const std::string& line) {
  static const std::regex re(
      R"(/(ERROR|CRITICAL)\]|Deadlock|Assertion|terminate called|xbt_die|Segmentation|Aborted|^Error|[^/]rror: )");
  return std::regex_search(line, re);
}

// Reads SimGrid's log: the simulated time, or the first line that says what went wrong.
Outcome read_outcome(const std::filesystem::path& log, int code, double timeout_s) {
  std::ifstream in(log);
  std::string line;
  std::string error;
  Outcome o;
  static const std::regex time_re(R"(Simulation time ([0-9.eE+-]+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, time_re)) {
      o.seconds = std::stod(m[1]);
      o.ok = true;
    } else if (error.empty() && is_error_line(line)) {
      error = line;
    }
  }
  if (code == -1) {
    o.ok = false;
    o.problem = fmt::format("no result after {} s (killed)", timeout_s);
  } else if (!error.empty()) {
    o.ok = false;  // even after a time was printed (e.g. a deadlock reported after it)
    o.problem = error;
  } else if (!o.ok || code != 0) {
    o.problem =
        fmt::format("exited {}{}", code, o.ok ? "" : " without printing \"Simulation time\"");
    o.ok = false;
  }
  return o;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) throw ExitError(kExitTraceProblem, format_in(path.string(), "cannot write"));
}

int simulate(const Args& a) {
  const Trace trace = open_trace(a.trace);
  const std::uint32_t nprocs = trace.manifest.nprocs;
  if (trace.manifest.ranks.size() < nprocs)
    throw ExitError(kExitUsage, a.trace + ": holds " + std::to_string(trace.manifest.ranks.size()) +
                                    " of " + std::to_string(nprocs) +
                                    " ranks (a replay profile); simulate needs every rank: give "
                                    "the capture or a predicted trace (encore predict -o)");
  if (a.topologies.empty() && a.platform.empty())
    throw ExitError(kExitUsage, "give --platform FILE or one or more --topology SPEC");
  if (!a.platform.empty() && a.hostfile.empty())
    throw ExitError(kExitUsage, "--platform needs --hostfile (the hosts of ranks 0, 1, ...)");
  if (!a.map.empty() && !a.platform.empty())
    throw ExitError(kExitUsage,
                    "--map applies to --topology clusters; with --platform, order "
                    "the --hostfile instead");
  std::vector<exporter::Topology> topologies;
  std::vector<std::vector<std::uint64_t>> maps;
  try {
    exporter::check_unit("--bandwidth", a.links.bandwidth);
    exporter::check_unit("--latency", a.links.latency);
    for (const auto& spec : a.topologies) {
      topologies.push_back(exporter::parse_topology(spec, nprocs));
      maps.push_back(exporter::parse_map(a.map, nprocs, topologies.back().hosts));
    }
  } catch (const Error& e) {
    throw ExitError(kExitUsage, e.what());
  }

  std::filesystem::path work = a.work;
  bool remove_work = false;
  if (work.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "encore-simulate-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw ExitError(kExitTraceProblem,
                      "cannot create a temporary directory: " + errno_text(errno));
    work = tmpl;
    remove_work = true;
  }
  // A temporary directory goes if anything below throws (it is kept on purpose only after a
  // failed simulation, to be read).
  struct Cleanup {
    std::filesystem::path dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{remove_work ? work : std::filesystem::path()};
  work = std::filesystem::absolute(work);
  exporter::ExportOptions options;
  options.host_flops = a.links.host_flops;
  options.compute_as_sleep = a.sleep;
  options.progress = isatty(STDERR_FILENO) != 0;
  const auto stats = exporter::export_simgrid(trace.dir.root(), work / "traces", options);
  for (const auto& note : stats.notes) std::printf("note: %s\n", note.c_str());

  struct Run {
    std::string name;
    std::filesystem::path platform, hostfile;
  };
  std::vector<Run> runs;
  if (!a.platform.empty()) {
    runs.push_back(
        {a.platform, std::filesystem::absolute(a.platform), std::filesystem::absolute(a.hostfile)});
  }
  for (std::size_t i = 0; i < topologies.size(); ++i) {
    const auto& t = topologies[i];
    Run r{t.spec, work / fmt::format("platform-{}.xml", i), work / fmt::format("hosts-{}.txt", i)};
    write_text(r.platform, exporter::platform_xml(t, a.links));
    std::string hosts;
    for (const auto h : maps[i]) hosts += exporter::host_name(h) + "\n";
    write_text(r.hostfile, hosts);
    runs.push_back(r);
  }

  std::printf("%-32s %s\n", "platform", "simulated time (s)");
  int failures = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    std::vector<std::string> argv = {
        a.smpirun,
        "-np",
        std::to_string(nprocs),
        "-platform",
        r.platform.string(),
        "-hostfile",
        r.hostfile.string(),
        "-replay",
        (work / "traces" / "index.txt").string(),
        "--cfg=smpi/host-speed:" + fmt::format("{}", a.links.host_flops)};
    for (const auto& c : a.cfg) argv.push_back("--cfg=" + c);
    const auto log = work / fmt::format("smpirun-{}.log", i);
    const int code = run_logged(argv, work, log, a.timeout_s);
    const Outcome o = read_outcome(log, code, a.timeout_s);
    if (o.ok) {
      std::printf("%-32s %.6f\n", r.name.c_str(), o.seconds);
    } else {
      ++failures;
      std::printf("%-32s failed: %s\n", r.name.c_str(), o.problem.c_str());
      if (code == 127)
        std::printf("%-32s (cannot run '%s': install SimGrid, e.g. libsimgrid-dev)\n", "",
                    a.smpirun.c_str());
      else if (!remove_work)
        std::printf("%-32s (see %s)\n", "", log.c_str());
    }
    std::fflush(stdout);
  }
  if (remove_work && failures != 0) {
    cleanup.dir.clear();
    std::printf("SimGrid's inputs and logs kept in %s\n", work.c_str());
  }
  return failures ? kExitTraceProblem : kExitOk;
}

}  // namespace

Subcommand add_simulate(CLI::App& parent) {
  auto args = std::make_shared<Args>();
  CLI::App* app = parent.add_subcommand(
      "simulate",
      "Replay a trace in SimGrid (smpirun -replay) on generated or given platforms and print "
      "the simulated time of each side by side.");
  app->add_option("TRACE", args->trace, "Trace directory")->required();
  app->add_option("--topology", args->topologies,
                  "A cluster to simulate (repeatable): flat[:HOSTS], torus:AxBxC, "
                  "fat-tree:LEVELS;DOWN,..;UP,..;PARALLEL,.. or "
                  "dragonfly:GROUPS,L;CHASSIS,L;ROUTERS,L;NODES (SimGrid's topo_parameters)");
  app->add_option("--platform", args->platform, "A SimGrid platform XML of your own");
  app->add_option("--hostfile", args->hostfile,
                  "With --platform: host names, one per line, rank 0 first");
  app->add_option("--map", args->map,
                  "With --topology: host index of each rank, comma-separated (default: rank i on "
                  "host i)");
  app->add_option("--bandwidth", args->links.bandwidth, "Link bandwidth (SimGrid units)")
      ->capture_default_str();
  app->add_option("--latency", args->links.latency, "Link latency (SimGrid units)")
      ->capture_default_str();
  app->add_option("--host-speed", args->links.host_flops,
                  "flop/s of the recorded and of the simulated hosts: compute time x speed = "
                  "flops")
      ->capture_default_str();
  app->add_flag("--sleep", args->sleep, "Replay compute segments as sleeps (speed-independent)");
  app->add_option("--cfg", args->cfg,
                  "A SimGrid setting passed on as --cfg=KEY:VALUE (repeatable), e.g. "
                  "network/model:CM02");
  app->add_option("--smpirun", args->smpirun, "SimGrid's launcher")->capture_default_str();
  app->add_option("--keep", args->work,
                  "Write the traces, platforms, hostfiles and SimGrid logs in this directory "
                  "and keep them");
  app->add_option("--timeout", args->timeout_s, "Seconds allowed per simulation")
      ->capture_default_str();
  app->footer(std::string(kExitCodesFooter) + " Exit code 1 also when a simulation fails.");
  return {app, [args] {
            if (!(args->links.host_flops > 0))
              throw ExitError(kExitUsage, "--host-speed must be positive");
            try {
              return simulate(*args);
            } catch (const Error& e) {
              throw ExitError(kExitUnreadable, e.what());
            }
          }};
}

}  // namespace encore::tool
