#include "rank_walk.hpp"

#include <cstdio>

#include "encore/error.hpp"
#include "encore/event_reader.hpp"
#include "encore/trace_dir.hpp"

namespace encore::exporter {
namespace {

// "\r[#####     ]  50%  1234567 events" on stderr, redrawn every 64 Ki events.
class Progress {
 public:
  Progress(bool enabled, std::uint64_t total) : enabled_(enabled), total_(total) {}
  void tick(std::uint64_t done) {
    if (enabled_ && (done & 0xffff) == 0) draw(done);
  }
  void finish(std::uint64_t done) {
    if (!enabled_) return;
    draw(done);
    std::fputc('\n', stderr);
  }

 private:
  void draw(std::uint64_t done) const {
    constexpr int kWidth = 30;
    const double f =
        total_ ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 1.0;
    const int filled = static_cast<int>(f * kWidth);
    std::fprintf(stderr, "\r[%s%s] %3d%%  %llu events", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), static_cast<int>(f * 100),
                 static_cast<unsigned long long>(done));
    std::fflush(stderr);
  }
  bool enabled_;
  std::uint64_t total_;
};

}  // namespace

Manifest load_trace(const std::filesystem::path& trace) {
  const TraceDir dir(trace);
  dir.require_files(0);  // the directory and its manifest
  Manifest m = load_manifest(dir.manifest_path());
  dir.require_listed_ranks(m.ranks);
  return m;
}

std::uint64_t walk_ranks(const std::filesystem::path& trace, const Manifest& manifest,
                         bool progress, const RankWalk& walk, std::vector<std::string>& problems) {
  const TraceDir dir(trace);
  std::uint64_t total = 0;
  for (const auto& r : manifest.ranks) total += r.events;
  Progress bar(progress, total);
  std::uint64_t done = 0;
  Event ev;
  for (const auto& info : manifest.ranks) {
    const std::uint32_t rank = info.rank;
    RankEventReader reader(dir.events_path(rank));
    RankContext ctx(rank, manifest.nprocs);
    walk.begin_rank(rank);
    while (reader.next(ev)) {
      ctx.observe(ev);
      walk.event(rank, ev, ctx);
      bar.tick(++done);
    }
    walk.end_rank(rank);
    if (!reader.problem().empty())
      problems.push_back(reader.problem() + "; exported up to there");
    else if (!reader.complete())
      problems.push_back(dir.events_path(rank).string() +
                         ": stream ends without its trailer (the run was cut short); exported "
                         "up to there");
  }
  bar.finish(done);
  return done;
}

void prepare_output_dir(const std::filesystem::path& out) {
  std::error_code ec;
  if (std::filesystem::exists(out, ec)) {
    if (!std::filesystem::is_directory(out, ec) || !std::filesystem::is_empty(out, ec))
      throw Error(format_in(out.string(), "exists and is not an empty directory"));
    return;
  }
  if (!std::filesystem::create_directories(out, ec) || ec)
    throw Error(format_in(out.string(), "cannot create directory: " + ec.message()));
}

}  // namespace encore::exporter
