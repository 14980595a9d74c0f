// encore pack: compress the streams that capture left uncompressed. With compression after
// the run (`--compress after`), each rank packs its own files in MPI_Finalize; a rank that never
// got there (killed, crashed, aborted) leaves them raw: readable, only larger. This packs them
// afterwards, keeping what a reader finds: the same chunks, the same cut.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include <fmt/format.h>

#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"
#include "encore/stream_file.hpp"
#include "encore/stream_repack.hpp"

namespace encore::tool {
namespace {

struct PackOptions {
  std::string trace;
  std::optional<std::int64_t> rank;
  std::optional<int> level;
  bool force = false;
};

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  return gethostname(name, sizeof name) == 0 ? std::string(name) : std::string();
}

// Why a rank's files must not be touched yet ("" if they may): a rank still running writes them.
std::string still_writing(const RankInfo& info, bool force) {
  if (info.status != RankStatus::running || force) return "";
  if (info.host != this_host())
    return fmt::format(
        "rank {} is marked running and ran on {}, so this host cannot tell whether "
        "it still writes its files (--force if it has ended)",
        info.rank, info.host);
  if (info.pid > 0 && (kill(static_cast<pid_t>(info.pid), 0) == 0 || errno == EPERM))
    return fmt::format(
        "rank {} (pid {}) is still running: its files are being written "
        "(--force if that pid is another process now)",
        info.rank, info.pid);
  return "";
}

// Whether the stream has a data chunk stored raw (headers only: nothing is decompressed).
bool has_raw_chunks(const std::filesystem::path& path) {
  StreamFileReader in(path);
  ChunkHeader h;
  while (in.skip(h) == ReadResult::chunk)
    if (h.kind != ChunkKind::trailer && h.codec == Codec::raw && h.raw_size > 0) return true;
  return false;
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20));
}

int pack(const PackOptions& o) {
  const Trace t = open_trace(o.trace);
  if (t.manifest.kind != TraceKind::capture)
    throw ExitError(kExitUsage, fmt::format("{}: a {}, not a capture: nothing to pack", o.trace,
                                            to_string(t.manifest.kind)));
  // The levels capture uses (events; payload at most 1), unless --level says otherwise.
  int events_level = kDefaultZstdLevel;
  if (const auto it = t.manifest.options.find("zstd_level");
      it != t.manifest.options.end() && it->is_number_integer())
    events_level = it->get<int>();
  if (o.level) events_level = *o.level;
  if (events_level == kNoCompression)
    throw ExitError(kExitUsage,
                    "the trace was recorded with --zstd-level 0 (no compression): "
                    "give --level N to pack it");
  const int payload_level = o.level ? *o.level : std::min(events_level, 1);
  bool left_alone = false;
  for (const std::uint32_t rank : selected_ranks(t, o.rank)) {
    require_rank_files(t, rank);
    if (const std::string why = still_writing(*t.manifest.rank_info(rank), o.force); !why.empty()) {
      print_error(why);
      left_alone = true;
      continue;
    }
    const std::pair<std::filesystem::path, int> files[] = {
        {t.dir.events_path(rank), events_level}, {t.dir.payload_path(rank), payload_level}};
    for (const auto& [path, level] : files) {
      const std::string name = path.filename().string();
      try {
        if (!has_raw_chunks(path)) {
          std::printf("%s: already compressed\n", name.c_str());
          continue;
        }
        const RepackStats s = repack_stream(path, level, RepackScope::salvage);
        if (s.shrunk == 0) {  // its raw chunks are ones zstd cannot shrink
          std::printf("%s: already compressed\n", name.c_str());
          continue;
        }
        std::string note;
        if (!s.trailer) note += "; no end-of-stream trailer (the rank did not finish)";
        if (s.tail_bytes)
          note += fmt::format("; its cut last chunk ({} bytes) kept as it was", s.tail_bytes);
        std::printf("%s: %llu chunks, %s -> %s%s\n", name.c_str(),
                    static_cast<unsigned long long>(s.chunks), mib(s.bytes_before).c_str(),
                    mib(s.bytes_after).c_str(), note.c_str());
      } catch (const Error& e) {
        print_error(e.what());
        left_alone = true;
      }
    }
  }
  return left_alone ? kExitTraceProblem : kExitOk;
}

}  // namespace

Subcommand add_pack(CLI::App& parent) {
  auto o = std::make_shared<PackOptions>();
  CLI::App* app = parent.add_subcommand(
      "pack",
      "Compress the stream files of ranks that did not compress their own: with compression "
      "after the run, a rank that never reached MPI_Finalize leaves its chunks raw.");
  app->add_option("trace", o->trace, "Trace directory.")->required();
  app->add_option("--rank", o->rank, "Only this rank.");
  app->add_option("--level", o->level,
                  "zstd level (1..19; default: the trace's, payload at most 1).")
      ->check(CLI::Range(1, 19));
  app->add_flag("--force", o->force,
                "Pack ranks marked running even where it cannot be checked that they ended.");
  app->footer(std::string(kExitCodesFooter) +
              "\npack prints one line per stream file. Files are rewritten through FILE.packing "
              "and a rename, so an interrupted pack leaves them as they were. A file damaged "
              "before its last chunk, or of a rank still running, is left alone: exit 1.");
  return {app, [o] { return pack(*o); }};
}

}  // namespace encore::tool
