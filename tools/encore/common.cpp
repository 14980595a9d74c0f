#include "common.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/mpi_table.hpp"

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
                              "table " + t.manifest.function_table.hash +
                                  ", this encore decodes table " +
                                  std::string(kFunctionTableHash) +
                                  " (recorded with another MPI library or Encore build)"));
  }
  return t;
}

void require_rank_files(const Trace& t, std::uint32_t rank) {
  std::error_code ec;
  for (const auto kind : {StreamKind::events, StreamKind::payload}) {
    const auto p = t.dir.stream_path(rank, kind);
    if (!std::filesystem::is_regular_file(p, ec)) {
      throw ExitError(kExitUnreadable,
                      format_in(p.string(), "missing " + std::string(to_string(kind)) +
                                                " stream of rank " + std::to_string(rank)));
    }
  }
}

void check_rank_option(const Trace& t, std::int64_t rank) {
  if (rank < 0 || rank >= static_cast<std::int64_t>(t.manifest.nprocs)) {
    throw ExitError(kExitUsage, fmt::format("--rank {}: the trace has ranks 0..{}", rank,
                                            static_cast<std::int64_t>(t.manifest.nprocs) - 1));
  }
}

std::string format_duration(std::uint64_t ns) {
  const auto d = static_cast<double>(ns);
  if (ns < 1000) return fmt::format("{}ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.{}f}us", d / 1e3, d < 1e4 ? 2 : d < 1e5 ? 1 : 0);
  if (ns < 1'000'000'000)
    return fmt::format("{:.{}f}ms", d / 1e6, d < 1e7 ? 2 : d < 1e8 ? 1 : 0);
  return fmt::format("{:.3f}s", d / 1e9);
}

std::string format_bytes(std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (bytes < 10'000) return fmt::format("{}B", bytes);
  if (bytes < 10'000ull << 10) return fmt::format("{:.1f}KiB", b / 1024);
  if (bytes < 10'000ull << 20) return fmt::format("{:.1f}MiB", b / (1024.0 * 1024));
  return fmt::format("{:.1f}GiB", b / (1024.0 * 1024 * 1024));
}

}  // namespace encore::tool
