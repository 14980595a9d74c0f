// File names inside a trace directory: manifest.json plus one events and one
// payload stream file per rank (rank-00000.events, rank-00000.payload, ...).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "encore/stream_header.hpp"

namespace encore {

inline constexpr std::string_view kManifestFileName = "manifest.json";

// "rank-00003.events": at least 5 digits, more for ranks above 99999.
std::string rank_file_name(std::uint32_t rank, StreamKind kind);

struct RankFileName {
  std::uint32_t rank;
  StreamKind kind;
};
// Inverse of rank_file_name; nullopt for any other name (including
// non-canonical ones such as "rank-3.events" or "rank-000003.events").
std::optional<RankFileName> parse_rank_file_name(std::string_view name);

class TraceDir {
 public:
  explicit TraceDir(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const noexcept { return root_; }
  std::filesystem::path manifest_path() const { return root_ / kManifestFileName; }
  std::filesystem::path stream_path(std::uint32_t rank, StreamKind kind) const {
    return root_ / rank_file_name(rank, kind);
  }
  std::filesystem::path events_path(std::uint32_t rank) const {
    return stream_path(rank, StreamKind::events);
  }
  std::filesystem::path payload_path(std::uint32_t rank) const {
    return stream_path(rank, StreamKind::payload);
  }

  // Rank stream files present in the directory, sorted by rank then kind.
  // Throws Error if the directory cannot be read.
  std::vector<RankFileName> list_rank_files() const;

  // Throws Error naming the first missing file among manifest.json and the
  // events and payload files of ranks 0..nprocs-1.
  void require_files(std::uint32_t nprocs) const;
  // Throws Error naming the first missing stream file of `rank`.
  void require_rank_files(std::uint32_t rank) const;
  // The same for every rank the manifest lists (all of them, or a replay profile's replayed
  // ones); the directory and manifest are not checked.
  template <class Ranks>
  void require_listed_ranks(const Ranks& ranks) const {
    for (const auto& r : ranks) require_rank_files(r.rank);
  }

 private:
  std::filesystem::path root_;
};

}  // namespace encore
