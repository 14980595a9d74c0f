#include "common.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/mpi_table.hpp"
#include "encore/stream_file.hpp"

namespace encore::tool {

void print_error(std::string_view message) {
  std::fflush(stdout);
  std::string line(message);
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "encore: %s\n", line.c_str());
  std::fflush(stderr);
}

Trace open_trace(const std::filesystem::path& root) {
  Trace t;
  t.dir = TraceDir(root);
  std::error_code ec;
  const auto status = std::filesystem::status(root, ec);
  if (!std::filesystem::exists(status))
    throw ExitError(kExitUnreadable, format_in(root.string(), "no such trace directory"));
  if (!std::filesystem::is_directory(status))
    throw ExitError(kExitUnreadable, format_in(root.string(), "not a trace directory"));
  const auto manifest = t.dir.manifest_path();
  if (!std::filesystem::exists(manifest, ec))
    throw ExitError(kExitUnreadable,
                    format_in(manifest.string(), "missing manifest (not a trace directory?)"));
  try {
    t.manifest = load_manifest(manifest);
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  } catch (const std::exception& e) {
    throw ExitError(kExitUnreadable, format_in(manifest.string(), e.what()));
  }
  if (t.manifest.function_table.hash != kFunctionTableHash) {
    throw ExitError(kExitUnreadable,
                    format_in(manifest.string(),
                              "function_table.hash: the trace was recorded with MPI function "
                              "table " +
                                  t.manifest.function_table.hash + ", this encore decodes table " +
                                  std::string(kFunctionTableHash) +
                                  " (recorded with another MPI library or Encore build)"));
  }
  return t;
}

void require_rank_files(const Trace& t, std::uint32_t rank) {
  try {
    t.dir.require_rank_files(rank);
    // Their file headers too: a stream that cannot even be opened is unreadable (exit 3), for
    // every command alike, not damage found later (for replay, inside the program).
    StreamFileReader events(t.dir.events_path(rank));
    StreamFileReader payload(t.dir.payload_path(rank));
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  }
}

void check_rank_option(const Trace& t, std::int64_t rank) {
  if (rank < 0 || rank >= static_cast<std::int64_t>(t.manifest.nprocs)) {
    throw ExitError(kExitUsage, fmt::format("--rank {}: the trace has ranks 0..{}", rank,
                                            static_cast<std::int64_t>(t.manifest.nprocs) - 1));
  }
  if (!t.manifest.rank_info(static_cast<std::uint32_t>(rank))) {
    std::string held;
    for (const auto& r : t.manifest.ranks)
      held += (held.empty() ? "" : ", ") + std::to_string(r.rank);
    throw ExitError(kExitUsage, fmt::format("--rank {}: this {} holds rank(s) {} only", rank,
                                            to_string(t.manifest.kind), held));
  }
}

std::vector<std::uint32_t> selected_ranks(const Trace& t, std::optional<std::int64_t> rank) {
  if (rank) {
    check_rank_option(t, *rank);
    return {static_cast<std::uint32_t>(*rank)};
  }
  std::vector<std::uint32_t> out;
  for (const auto& r : t.manifest.ranks) out.push_back(r.rank);
  return out;
}

}  // namespace encore::tool
