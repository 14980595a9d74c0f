// manifest.json: what was run, where, and what each rank's stream files hold.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "encore/byte_order.hpp"
#include "encore/stream_header.hpp"

namespace encore {

enum class TraceKind : std::uint8_t { capture, replay, predicted };
enum class RankStatus : std::uint8_t { running, complete, aborted };

std::string_view to_string(TraceKind kind) noexcept;
std::string_view to_string(RankStatus status) noexcept;

struct FormatVersion {
  std::uint16_t major = kFormatMajor;
  std::uint16_t minor = kFormatMinor;
};

struct FunctionTable {
  std::string hash;                    // hex digest identifying the table
  std::vector<std::string> functions;  // index = function id in event streams
};

struct PapiInfo {
  std::vector<std::string> requested;
  bool available = false;
  std::string reason;  // why counters are unavailable, if they are
  std::string cpu_model;
  double cpu_mhz = 0;
};

struct ClockInfo {
  std::string source;
  double resolution_ns = 0;
  std::string why;  // what chose it (ClockDecision::why); empty in older traces
};

// Sizes in bytes of the writing rank's C / MPI types.
struct TypeSizes {
  std::uint32_t int_size = 0;
  std::uint32_t long_size = 0;
  std::uint32_t pointer_size = 0;
  std::uint32_t aint_size = 0;
  std::uint32_t offset_size = 0;
  std::uint32_t count_size = 0;
};

// One estimate of a rank's clock offset to rank 0 (trace-format.md, "Clocks").
struct ClockSync {
  std::int64_t offset_ns = 0;  // the rank's time + offset = rank 0's time
  std::uint64_t at_ns = 0;     // the rank's own time when it was measured
  std::uint64_t error_ns = 0;  // bound on the estimate's error
  std::string method;          // "self", "shared clock" or "round trips"
};

struct RankInfo {
  std::uint32_t rank = 0;
  std::string host;
  std::int64_t pid = 0;
  ByteOrder byte_order = host_byte_order();
  TypeSizes sizes;
  std::int64_t clock_offset_ns = 0;
  // The estimates at MPI_Init and MPI_Finalize where the trace has them (clock_sync).
  std::optional<ClockSync> sync_init, sync_end;
  RankStatus status = RankStatus::running;
  std::uint64_t events = 0;
  std::uint64_t payload_bytes = 0;
  nlohmann::json raw;  // this rank's object as loaded; unknown keys survive a save

  // The offset for a time `local_ns` of this rank: interpolated between the MPI_Init and
  // MPI_Finalize estimates (the rates the ranks calibrated differ by some ppm, which adds up
  // over a long run), held at the nearer one outside them, clock_offset_ns without both.
  std::int64_t offset_at(std::int64_t local_ns) const noexcept;
  // The smallest offset_at() gives (what keeps every rank's times >= 0 when shifted by it).
  std::int64_t lowest_offset() const noexcept;
};

struct ReplayOf {
  std::string trace;
  std::uint32_t rank = 0;
  // The recording's start_time_unix_ns: which recording this replays, wherever it was moved
  // (0: not recorded, profiles before session 26).
  std::int64_t recording_start_ns = 0;
};

// The most ranks a manifest may name: readers size per-rank tables by nprocs, so an
// untrusted manifest must not name billions (a replay profile lists only some of them).
inline constexpr std::uint32_t kMaxProcs = 1u << 24;

struct Manifest {
  FormatVersion format_version;
  TraceKind kind = TraceKind::capture;
  std::string tool_version;
  std::uint32_t nprocs = 0;  // at most kMaxProcs
  std::vector<std::string> command;
  std::int64_t start_time_unix_ns = 0;
  std::string start_time_iso;
  std::string mpi_library_version;
  FunctionTable function_table;
  nlohmann::json options = nlohmann::json::object();  // free-form
  PapiInfo papi;
  ClockInfo clock;
  std::vector<RankInfo> ranks;
  std::optional<ReplayOf> replay_of;  // kind replay only
  nlohmann::json raw;                 // the document as loaded; unknown keys survive a save

  // The entry of `rank`, or nullptr if the trace does not hold it (a replay profile holds only
  // the ranks it replayed).
  const RankInfo* rank_info(std::uint32_t rank) const noexcept {
    for (const RankInfo& r : ranks)
      if (r.rank == rank) return &r;
    return nullptr;
  }
};

// Validates and converts. `source` (usually the file path) prefixes error
// messages, which also name the offending key, e.g.
// "t/manifest.json: ranks[2].byte_order: expected \"little\" or \"big\"".
// Throws Error; an unknown major format version is rejected before anything else.
Manifest manifest_from_json(const nlohmann::json& doc, std::string_view source);

// Known fields laid over `raw`, so keys this version does not know are kept.
nlohmann::json manifest_to_json(const Manifest& m);

Manifest load_manifest(const std::filesystem::path& path);

// Whether the capture recorded the received data of `rank` (options.payload_ranks; a trace
// without it, or with a list this version cannot read, is taken to hold everything).
bool records_payload_of(const Manifest& m, std::uint32_t rank);

// For writers filling in "command" and the start time: this process's command line
// (/proc/self/cmdline), the wall clock now, and its ISO 8601 UTC form.
std::vector<std::string> process_command_line();
std::int64_t unix_time_ns() noexcept;
std::string iso_utc(std::int64_t unix_ns);

// Validates, then writes a temporary file next to `path` and renames it over
// `path`, so readers see the old or the new manifest, never a partial one.
void save_manifest(const Manifest& m, const std::filesystem::path& path);

}  // namespace encore
