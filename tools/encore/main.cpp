// encore: record MPI programs and inspect their traces. Each subcommand lives in its own
// cmd_*.cpp; this file wires them to the command line and maps failures to exit codes.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "common.hpp"
#include <CLI/CLI.hpp>

#include "encore/error.hpp"
#include "encore/stream_header.hpp"

#ifndef ENCORE_VERSION
#define ENCORE_VERSION "unknown"
#endif

namespace {

int run(int argc, char** argv) {
  using namespace encore::tool;
  CLI::App app{
      "Encore: record an MPI program, replay any one rank alone, predict the whole run; inspect "
      "and export the traces.",
      "encore"};
  app.set_version_flag("--version", std::string("encore ") + ENCORE_VERSION + " (trace format " +
                                        std::to_string(encore::kFormatMajor) + "." +
                                        std::to_string(encore::kFormatMinor) + ")");
  app.require_subcommand(1);
  app.footer(std::string(kExitCodesFooter) +
             " For record: the exit code of the recorded command.\n"
             "Run 'encore <command> --help' for the options of a command.");

  const std::vector<Subcommand> commands = {
      add_record(app), add_replay(app),  add_show(app),   add_stats(app),    add_check(app),
      add_digest(app), add_predict(app), add_export(app), add_simulate(app), add_pack(app)};
  // `encore [options] record [options] -- COMMAND ARGS...`: everything after "--" is the
  // command, whatever it looks like, so it is split off before CLI11 sees it.
  std::vector<std::string> args(argv + 1, argv + argc);
  int sub = 0;
  while (sub < static_cast<int>(args.size()) && !args[static_cast<std::size_t>(sub)].empty() &&
         args[static_cast<std::size_t>(sub)][0] == '-')
    ++sub;
  if (sub < static_cast<int>(args.size()) && (args[static_cast<std::size_t>(sub)] == "record" ||
                                              args[static_cast<std::size_t>(sub)] == "replay")) {
    const auto dashes = std::find(args.begin() + sub, args.end(), std::string("--"));
    if (dashes != args.end()) {
      record_command() = std::vector<std::string>(dashes + 1, args.end());
      args.erase(dashes, args.end());
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where = "encore";
    for (const auto* s : app.get_subcommands()) where += " " + s->get_name();
    print_error(std::string(e.what()) + " (see '" + where + " --help')");
    return kExitUsage;
  }
  for (const Subcommand& c : commands)
    if (c.app->parsed()) return c.run();
  print_error("no command given (see 'encore --help')");
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace encore::tool;
  try {
    return run(argc, argv);
  } catch (const ExitError& e) {
    print_error(e.what());
    return e.code();
  } catch (const encore::Error& e) {
    print_error(e.what());
    return kExitUnreadable;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return kExitUnreadable;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitUnreadable;
  } catch (...) {
    print_error("unexpected error");
    return kExitUnreadable;
  }
}
