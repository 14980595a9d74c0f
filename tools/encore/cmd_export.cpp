// encore export --to FORMAT TRACE OUT: write a trace in another tool's format.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common.hpp"
#include "exporters.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/stream_file.hpp"

namespace encore::tool {
namespace {

// Whether every rank's events stream ends with its trailer and no damage (chunk headers and
// checksums only): an export of a cut or damaged trace is written but exits 1, as stats does.
bool trace_complete(const Trace& t) {
  for (const RankInfo& r : t.manifest.ranks) {
    StreamFileReader f(t.dir.events_path(r.rank));
    ChunkHeader h;
    ReadResult res = ReadResult::chunk;
    while ((res = f.skip(h, true)) == ReadResult::chunk) {
    }
    if (res == ReadResult::damage || !f.saw_trailer()) return false;
  }
  return true;
}

}  // namespace

Subcommand add_export(CLI::App& parent) {
  struct Args {
    std::string format;
    std::string trace;
    std::string out;
    exporter::ExportOptions options;
  };
  auto args = std::make_shared<Args>();
  std::string names;
  std::string help = "Output format:";
  for (const auto& f : exporter::formats()) {
    names += (names.empty() ? "" : ", ") + std::string(f.name);
    help += fmt::format("\n  {:8} {}", f.name, f.description);
  }
  CLI::App* app = parent.add_subcommand(
      "export",
      "Write a captured, replayed or predicted trace in another tool's format (" + names + ").");
  app->add_option("--to", args->format, help)->required();
  app->add_option("TRACE", args->trace, "Trace directory")->required();
  app->add_option("OUT", args->out, "Output: a directory (simgrid, otf2, dumpi) or a file (chrome)")
      ->required();
  app->add_option("--host-speed", args->options.host_flops,
                  "simgrid: flop/s of the recorded hosts; compute time x speed = flops")
      ->capture_default_str();
  app->add_flag("--sleep", args->options.compute_as_sleep,
                "simgrid: write compute segments as `sleep SECONDS` instead of flops");
  app->footer(std::string(kExitCodesFooter));
  return {app, [args] {
            const exporter::Format* format = nullptr;
            for (const auto& f : exporter::formats())
              if (f.name == args->format) format = &f;
            if (!format)
              throw ExitError(kExitUsage, "unknown export format '" + args->format +
                                              "' (see 'encore export --help')");
            if (!(args->options.host_flops > 0))
              throw ExitError(kExitUsage, "--host-speed must be positive");
            args->options.progress = isatty(STDERR_FILENO) != 0;
            const auto stats = format->run(args->trace, args->out, args->options);
            std::printf("%s: %llu events -> %llu records in %s\n", args->format.c_str(),
                        static_cast<unsigned long long>(stats.events),
                        static_cast<unsigned long long>(stats.records), args->out.c_str());
            for (const auto& note : stats.notes) std::printf("note: %s\n", note.c_str());
            // The readers see damage inside a chunk's body, which the chunk walk below cannot.
            for (const auto& problem : stats.problems) print_error(problem);
            if (!stats.problems.empty()) return kExitTraceProblem;
            if (!trace_complete(open_trace(args->trace))) {
              print_error(args->trace +
                          ": the trace is cut or damaged; exported what it holds "
                          "(see 'encore check')");
              return kExitTraceProblem;
            }
            return kExitOk;
          }};
}

}  // namespace encore::tool
