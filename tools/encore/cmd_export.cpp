// encore export --to FORMAT TRACE OUT: write a trace in another tool's format.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "common.hpp"
#include "exporters.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::tool {

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
            return kExitOk;
          }};
}

}  // namespace encore::tool
