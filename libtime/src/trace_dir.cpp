#include "encore/trace_dir.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "encore/error.hpp"

namespace encore {

namespace {
constexpr std::string_view kPrefix = "rank-";
constexpr std::size_t kMinDigits = 5;
}  // namespace

std::string rank_file_name(std::uint32_t rank, StreamKind kind) {
  std::string digits = std::to_string(rank);
  if (digits.size() < kMinDigits) digits.insert(0, kMinDigits - digits.size(), '0');
  return std::string(kPrefix) + digits + "." + std::string(to_string(kind));
}

std::optional<RankFileName> parse_rank_file_name(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view digits = name.substr(0, dot);
  const std::string_view suffix = name.substr(dot + 1);

  RankFileName out{};
  if (suffix == to_string(StreamKind::events))
    out.kind = StreamKind::events;
  else if (suffix == to_string(StreamKind::payload))
    out.kind = StreamKind::payload;
  else
    return std::nullopt;

  if (digits.size() < kMinDigits ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out.rank);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  // Exactly one spelling per rank, so two files can never claim the same one.
  if (rank_file_name(out.rank, out.kind) != std::string("rank-").append(name)) return std::nullopt;
  return out;
}

std::vector<RankFileName> TraceDir::list_rank_files() const {
  std::error_code ec;
  std::filesystem::directory_iterator it(root_, ec);
  if (ec) throw Error(format_in(root_.string(), "cannot list trace directory: " + ec.message()));
  std::vector<RankFileName> out;
  for (const auto end = std::filesystem::directory_iterator(); it != end; it.increment(ec)) {
    if (const auto parsed = parse_rank_file_name(it->path().filename().string()))
      out.push_back(*parsed);
  }
  if (ec) throw Error(format_in(root_.string(), "cannot list trace directory: " + ec.message()));
  std::sort(out.begin(), out.end(), [](const RankFileName& a, const RankFileName& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.kind < b.kind;
  });
  return out;
}

namespace {

void require(const std::filesystem::path& p, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec))
    throw Error(format_in(p.string(), std::string("missing ") + std::string(what)));
}

}  // namespace

void TraceDir::require_files(std::uint32_t nprocs) const {
  std::error_code ec;
  if (!std::filesystem::is_directory(root_, ec))
    throw Error(format_in(root_.string(), "not a trace directory (missing or not a directory)"));
  require(manifest_path(), "manifest");
  for (std::uint32_t rank = 0; rank < nprocs; ++rank) require_rank_files(rank);
}

void TraceDir::require_rank_files(std::uint32_t rank) const {
  require(events_path(rank), "events stream of rank " + std::to_string(rank));
  require(payload_path(rank), "payload stream of rank " + std::to_string(rank));
}

}  // namespace encore
