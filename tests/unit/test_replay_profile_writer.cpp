// The replay profile's batches (libreplay/src/replay_profile.cpp, compiled into this binary):
// written on the profile's writer thread or by the calls that fill them, the profile holds the
// same events in the same order, events that leave the batch (a thread change, a body the
// writer re-encodes) included.
#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "../../libreplay/src/replay_profile.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_reader.hpp"
#include "encore/manifest.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore::replay {
namespace {

using Call = std::tuple<std::uint16_t, std::uint16_t, std::int64_t>;  // thread, function, arg 0

class ReplayProfileWriterTest : public TempDirTest {
 protected:
  // 5000 calls: barriers with their encoded bodies (the batched path), every 700th without a
  // body (written by the writer from the event), and calls 2000 to 2099 from thread 1.
  std::vector<Call> profile(const std::filesystem::path& out, bool writer_thread) {
    Manifest recorded;
    recorded.nprocs = 2;
    ReplayProfile p(out, dir_ / "recorded", recorded, 0, {}, writer_thread);
    EXPECT_EQ(p.writer_thread(), writer_thread);
    std::vector<Call> calls;
    std::vector<std::byte> body;
    for (int i = 0; i < 5000; ++i) {
      Event e;
      e.function = fn::Barrier;
      e.thread = i >= 2000 && i < 2100 ? 1 : 0;
      e.args.resize(e.info().params.size());
      e.args[0].present = true;
      e.args[0].scalar = (i * 37) % 5000;
      body.clear();
      if (i % 700 != 699) encode_event_body(e, body);
      const std::uint64_t enter = p.enter();
      EXPECT_TRUE(p.record(e, body, 0, enter));
      calls.emplace_back(e.thread, fn::Barrier, (i * 37) % 5000);
    }
    p.close(RankStatus::complete);
    return calls;
  }

  // The profile's calls per thread, in order, as a reader gets them.
  static std::vector<Call> read_back(const std::filesystem::path& out) {
    RankEventReader r(TraceDir(out).events_path(0));
    std::vector<Call> by_thread[2];
    Event e;
    while (r.next(e)) by_thread[e.thread].emplace_back(e.thread, e.function, e.args[0].scalar);
    EXPECT_EQ(r.problem(), "");
    std::vector<Call> all = by_thread[0];
    all.insert(all.end(), by_thread[1].begin(), by_thread[1].end());
    return all;
  }

  static std::vector<Call> grouped(std::vector<Call> calls) {
    std::stable_sort(calls.begin(), calls.end(),
                     [](const Call& a, const Call& b) { return std::get<0>(a) < std::get<0>(b); });
    return calls;
  }
};

TEST(ReplayProfileGap, OneClockReadGoesToTheOverhead) {
  // A gap of 100 ticks with a 30-tick clock read is 70 ticks of the program's compute; a gap
  // no longer than the read (a polling loop with nothing between its calls) is none. Before,
  // the whole distance between the two reads was compute.
  EXPECT_EQ(gap_less_clock_read(100, 30), 70u);
  EXPECT_EQ(gap_less_clock_read(30, 30), 0u);
  EXPECT_EQ(gap_less_clock_read(20, 30), 0u);
  EXPECT_EQ(gap_less_clock_read(20, 0), 20u);
}

TEST_F(ReplayProfileWriterTest, SameEventsWithAndWithoutTheWriterThread) {
  const std::vector<Call> made = profile(dir_ / "thread", true);
  EXPECT_EQ(profile(dir_ / "calls", false), made);
  const std::vector<Call> want = grouped(made);
  EXPECT_EQ(read_back(dir_ / "thread"), want);
  EXPECT_EQ(read_back(dir_ / "calls"), want);
  for (const char* name : {"thread", "calls"}) {
    const Manifest m = load_manifest(TraceDir(dir_ / name).manifest_path());
    ASSERT_EQ(m.ranks.size(), 1u) << name;
    EXPECT_EQ(m.ranks[0].status, RankStatus::complete) << name;
    EXPECT_EQ(m.ranks[0].events, 5000u) << name;
  }
}

// 1100 calls: two full batches and a partial one, which close() writes, on the thread or not.
TEST_F(ReplayProfileWriterTest, CloseWritesThePartialBatch) {
  for (const bool writer_thread : {true, false}) {
    const auto out = dir_ / (writer_thread ? "thread" : "calls");
    {
      Manifest recorded;
      recorded.nprocs = 1;
      ReplayProfile p(out, dir_ / "recorded", recorded, 0, {}, writer_thread);
      Event e;
      e.function = fn::Barrier;
      e.args.resize(e.info().params.size());
      e.args[0].present = true;
      std::vector<std::byte> body;
      encode_event_body(e, body);
      for (int i = 0; i < 1100; ++i) EXPECT_TRUE(p.record(e, body, 0, p.enter()));
      p.close(RankStatus::aborted);
    }
    EXPECT_EQ(read_back(out).size(), 1100u) << writer_thread;
    EXPECT_EQ(load_manifest(TraceDir(out).manifest_path()).ranks[0].status, RankStatus::aborted);
  }
}

}  // namespace
}  // namespace encore::replay
