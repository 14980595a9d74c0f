// The exporters' timeline walk: times moved onto rank 0's clock, compute segments per thread,
// and the note for a stream cut short.
#include <tuple>
#include <vector>

#include "temp_dir_test.hpp"
#include "timeline.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/manifest.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore::exporter {
namespace {

class ExportTimelineTest : public TempDirTest {
 protected:
  void write_manifest(std::int64_t offset1) {
    Manifest m;
    m.nprocs = 2;
    m.start_time_iso = "1970-01-01T00:00:00Z";
    m.function_table.hash = std::string(kFunctionTableHash);
    for (const auto& f : function_table()) m.function_table.functions.emplace_back(f.name);
    for (std::uint32_t r = 0; r < 2; ++r) {
      RankInfo info;
      info.rank = r;
      info.sizes = {4, 8, 8, 8, 8, 8};
      info.clock_offset_ns = r == 1 ? offset1 : 0;
      m.ranks.push_back(info);
    }
    save_manifest(m, TraceDir(dir_).manifest_path());
  }
  static Event call(fn::Id f, std::uint16_t thread, std::uint64_t start, std::uint64_t end) {
    Event e;
    e.function = f;
    e.thread = thread;
    e.args.resize(e.info().params.size());
    for (auto& a : e.args) a.present = true;
    e.start_ns = start;
    e.end_ns = end;
    return e;
  }
};

TEST_F(ExportTimelineTest, AlignsTimesAndMeasuresComputePerThread) {
  write_manifest(-300);
  for (std::uint32_t r = 0; r < 2; ++r) {
    RankTraceWriter w(TraceDir(dir_).events_path(r), TraceDir(dir_).payload_path(r), r);
    w.write(call(fn::Init, 0, 1000, 1100));
    w.write(call(fn::Barrier, 1, 1500, 1600));  // another thread: its own first call
    w.write(call(fn::Barrier, 0, 2100, 2300));  // 1000 ns after thread 0's Init ended
    w.close();
  }
  const TraceInput in = open_trace_input(dir_);
  RankTimeline t(in, 1);
  TimelineCall c;
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>> got;
  while (t.next(c)) got.emplace_back(c.start_ns, c.end_ns, c.compute_start_ns, c.compute_ns);
  EXPECT_EQ(got, (std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>>{
                     // In file order: each thread's chunk as a whole, thread 0 first.
                     {700, 800, 700, 0},
                     {1800, 2000, 800, 1000},
                     {1200, 1300, 1200, 0}}));
  EXPECT_EQ(t.end_note(), "");
}

TEST_F(ExportTimelineTest, CutStreamAndWrongTable) {
  write_manifest(0);
  for (std::uint32_t r = 0; r < 2; ++r) {
    RankTraceWriter w(TraceDir(dir_).events_path(r), TraceDir(dir_).payload_path(r), r);
    w.write(call(fn::Init, 0, 1000, 1100));
    if (r == 0) w.close();  // rank 1 is left without its trailer
  }
  const TraceInput in = open_trace_input(dir_);
  RankTimeline t(in, 1);
  TimelineCall c;
  while (t.next(c)) {
  }
  EXPECT_NE(t.end_note().find("rank-00001.events: stream ends after chunk 0 without its trailer"),
            std::string::npos)
      << t.end_note();
  Manifest m = load_manifest(TraceDir(dir_).manifest_path());
  m.function_table.hash = "0000";
  save_manifest(m, TraceDir(dir_).manifest_path());
  EXPECT_THROW(open_trace_input(dir_), Error);
  EXPECT_THROW(open_trace_input(dir_ / "nowhere"), Error);
}

}  // namespace
}  // namespace encore::exporter
