// Shared pieces of the encore subcommands: exit codes, errors, opening a trace, formatting.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "encore/event_text.hpp"
#include "encore/manifest.hpp"
#include "encore/trace_dir.hpp"

namespace encore::tool {

// Exit codes (also in every --help footer and doc/user-guide.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitTraceProblem = 1;  // damage found, or the trace is incomplete
inline constexpr int kExitUsage = 2;         // bad command line
inline constexpr int kExitUnreadable = 3;    // the trace cannot be read at all

inline constexpr std::string_view kExitCodesFooter =
    "Exit codes: 0 ok; 1 trace problem (damage found, or the trace is incomplete); "
    "2 usage error; 3 cannot read the trace (missing or corrupt manifest, unsupported format "
    "version, missing rank file).";

// An error with the exit code it should end the program with. The message is printed as
// "encore: <message>" on one line.
class ExitError : public std::runtime_error {
 public:
  ExitError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// Prints "encore: <message>" on stderr, on one line (newlines become spaces), after flushing
// stdout so the two streams appear in order.
void print_error(std::string_view message);

// A subcommand: registered on the parent app, run after a successful parse.
using Runner = std::function<int()>;
struct Subcommand {
  CLI::App* app = nullptr;
  Runner run;
};

Subcommand add_record(CLI::App& parent);
// The command after "--" of `encore record|replay ... -- COMMAND ARGS` (main.cpp splits it
// off before parsing); unset without "--" (then the command starts at the first non-option).
std::optional<std::vector<std::string>>& record_command();
Subcommand add_replay(CLI::App& parent);
Subcommand add_show(CLI::App& parent);
Subcommand add_stats(CLI::App& parent);
Subcommand add_check(CLI::App& parent);
Subcommand add_digest(CLI::App& parent);
Subcommand add_export(CLI::App& parent);
Subcommand add_simulate(CLI::App& parent);
Subcommand add_predict(CLI::App& parent);
Subcommand add_pack(CLI::App& parent);

// A trace directory with its manifest loaded and checked against this build's function table.
struct Trace {
  TraceDir dir{std::filesystem::path{}};
  Manifest manifest;
};

// Throws ExitError(kExitUnreadable) if the directory or its manifest cannot be used.
Trace open_trace(const std::filesystem::path& root);
// Throws ExitError(kExitUnreadable) naming the first missing rank file of `ranks`.
void require_rank_files(const Trace& t, std::uint32_t rank);
// Throws ExitError(kExitUsage) if rank is out of range.
void check_rank_option(const Trace& t, std::int64_t rank);
// The ranks a command walks: `rank` alone if given (checked), else every rank the trace holds
// (all of them, or the replayed ones of a replay profile).
std::vector<std::uint32_t> selected_ranks(const Trace& t, std::optional<std::int64_t> rank);

}  // namespace encore::tool
