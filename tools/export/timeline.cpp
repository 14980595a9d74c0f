#include "timeline.hpp"

#include <system_error>

#include "encore/error.hpp"
#include "encore/mpi_table.hpp"
#include "encore/trace_dir.hpp"

namespace encore::exporter {

TraceInput open_trace_input(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    throw Error(format_in(root.string(), "no such trace directory"));
  TraceInput in{root, load_manifest(TraceDir(root).manifest_path())};
  if (in.manifest.function_table.hash != kFunctionTableHash)
    throw Error(format_in(TraceDir(root).manifest_path().string(),
                          "function_table.hash: recorded with MPI function table " +
                              in.manifest.function_table.hash + ", this encore decodes " +
                              std::string(kFunctionTableHash)));
  TraceDir(root).require_listed_ranks(in.manifest.ranks);
  return in;
}

RankTimeline::RankTimeline(const TraceInput& trace, std::uint32_t rank)
    : reader_(TraceDir(trace.root).events_path(rank)),
      rank_(rank),
      info_(trace.manifest.rank_info(rank)),
      path_(TraceDir(trace.root).events_path(rank).string()) {}

bool RankTimeline::next(TimelineCall& out) {
  if (!reader_.next(event_)) return false;
  // Each time with the offset at that time: t + offset_at(t) never goes backwards.
  const auto shifted = [this](std::uint64_t ns) {
    const auto t = static_cast<std::int64_t>(ns);
    return t + (info_ ? info_->offset_at(t) : 0);
  };
  const std::int64_t start = shifted(event_.start_ns);
  const std::int64_t end = shifted(event_.end_ns);
  auto [it, first] = last_end_.try_emplace(event_.thread, start);
  out.event = &event_;
  out.start_ns = start;
  out.end_ns = end;
  out.compute_start_ns = it->second;
  out.compute_ns = start > it->second ? static_cast<std::uint64_t>(start - it->second) : 0;
  it->second = end;
  return true;
}

std::string RankTimeline::end_note() const {
  if (reader_.complete()) return {};
  if (!reader_.problem().empty()) return reader_.problem();
  return path_ + ": stream ends without its trailer (the run was cut short)";
}

}  // namespace encore::exporter
