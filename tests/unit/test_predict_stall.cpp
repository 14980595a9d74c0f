// A replayed rank's stalls (the profile's stall extras and replay.stall.calls_ns): spread over
// its segments in proportion to their CPU time where the replay ran under a CPU quota, left out
// where it ran without one, kept where measured on request, and what the inferred ranks and
// the summary see of them.
#include <fstream>
#include <optional>
#include <vector>

#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "encore/error.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/stall_spread.hpp"
#include "encore/predict/trace_feed.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

struct Seg {
  Event ev;
  std::uint64_t gap, stall = 0, overhead = 0;
};

void write_rank(const std::filesystem::path& dir, std::uint32_t rank, std::vector<Seg> segs,
                std::uint64_t t0) {
  const TraceDir d(dir);
  RankTraceWriter w(d.events_path(rank), d.payload_path(rank), rank);
  std::uint64_t t = t0;
  for (auto& s : segs) {
    const std::uint64_t dur = s.ev.end_ns - s.ev.start_ns;
    s.ev.start_ns = t + s.gap;
    s.ev.end_ns = s.ev.start_ns + dur;
    s.ev.stall_ns = s.stall;
    s.ev.overhead_ns = s.overhead;
    t = s.ev.end_ns;
    w.write(s.ev);
  }
  w.close();
}

// Rank 0's calls; `gaps` before Send, Recv, Send, Finalize.
std::vector<Seg> rank0(std::vector<std::uint64_t> gaps, std::vector<std::uint64_t> stalls = {},
                       std::uint64_t overhead = 0) {
  stalls.resize(4, 0);
  return {{call(fn::Init, 500), 0},
          {send(fn::Send, 1, 0, 8), gaps[0], stalls[0], overhead},
          {recv(fn::Recv, 1, 0, 1, 8), gaps[1], stalls[1], overhead},
          {send(fn::Send, 1, 0, 8), gaps[2], stalls[2], overhead},
          {call(fn::Finalize, 100), gaps[3], stalls[3], overhead}};
}

std::vector<Seg> rank1() {
  return {{call(fn::Init, 500), 0},
          {recv(fn::Recv, 0, 0, 0, 8), 10000},
          {send(fn::Send, 0, 0, 8), 30000},
          {recv(fn::Recv, 0, 0, 0, 8), 20000},
          {call(fn::Finalize, 100), 1000}};
}

class PredictStall : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    cap_ = dir_ / "capture";
    prof_ = dir_ / "profile";
    std::filesystem::create_directories(cap_);
    std::filesystem::create_directories(prof_);
    write_rank(cap_, 0, rank0({10000, 30000, 20000, 1000}), 1'000'000);
    write_rank(cap_, 1, rank1(), 1'000'000);
    save_manifest(manifest(TraceKind::capture, {0, 1}), TraceDir(cap_).manifest_path());
  }

  // The profile of rank 0: one 10 us stall in the 70 us segment; `replay` the manifest's
  // replay object (none: a replay that was killed).
  void write_profile(std::vector<Seg> segs, std::optional<nlohmann::json> replay) {
    write_rank(prof_, 0, std::move(segs), 7'000'000);
    nlohmann::json doc = manifest_to_json(manifest(TraceKind::replay, {0}));
    if (replay) doc["replay"] = *replay;
    std::ofstream(TraceDir(prof_).manifest_path()) << doc.dump(2);
  }
  // `quota`: replay.stall.cpu_quota (none: a profile older than the key). Replaces any profile.
  void write_profile(std::optional<double> quota = std::nullopt) {
    std::filesystem::remove_all(prof_);
    std::filesystem::create_directories(prof_);
    nlohmann::json stall = {{"source", "run_delay"}, {"calls_ns", 2000}};
    if (quota) stall["cpu_quota"] = *quota;
    write_profile(
        rank0({20000, 70000, 40000, 2000}, {0, 10000, 0, 0}),
        nlohmann::json{{"compute_ns", 132000}, {"replay_overhead_ns", 8000}, {"stall", stall}});
  }

  // The compute before each of rank `r`'s calls (the first: its start offset).
  std::vector<std::int64_t> feed(std::uint32_t r, predict::StallTime mode) {
    const TraceDir cap(cap_);
    scale_ = predict::measure_scale(cap, {predict::open_profile(prof_, 2)}, mode);
    std::optional<std::filesystem::path> p;
    if (r == 0) p = TraceDir(prof_).events_path(0);
    predict::TraceRankFeed f(cap, r, nullptr, 2, p, &scale_, nullptr);
    f.set_base(1'000'000);
    std::vector<std::int64_t> out;
    Event ev;
    std::int64_t c = 0;
    while (f.next(ev, c)) out.push_back(c);
    return out;
  }

  std::filesystem::path cap_, prof_;
  predict::ComputeScale scale_;
};

TEST_F(PredictStall, SpreadByCpuTimeWithTheCallsStallsCounted) {
  write_profile();
  const auto c = feed(0, predict::StallTime::spread);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_TRUE(s.measured);
  EXPECT_EQ(s.segments_ns, 10000u);
  EXPECT_EQ(s.calls_ns, 2000u);
  EXPECT_EQ(s.compute_ns, 132000u);
  EXPECT_EQ(s.overhead_ns, 8000u);
  // All wall time over all CPU time: (132000 + 8000) / (132000 + 8000 - 12000).
  EXPECT_DOUBLE_EQ(s.factor, 140000.0 / 128000.0);
  // Each segment's CPU time (70 us less its 10 us stall for the second) times the factor; the
  // last takes the rounding carried (133437.5 in all).
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 21875, 65625, 43750, 2188}));
  EXPECT_EQ(s.spread_compute_ns(), 133438u);
  EXPECT_EQ(s.cpu_ns(), 122000u);
  // The inferred rank follows the spread total: (133437.5) / 61000 captured.
  EXPECT_DOUBLE_EQ(scale_.overall, 122000.0 * 140000.0 / 128000.0 / 61000.0);
}

TEST_F(PredictStall, TheThreadsCpuTimeGivesTheFactorWhereKnown) {
  // Wall time less stalls would count blocking I/O in the replay's calls as running: 100 us of
  // CPU time measured, 12 us stalled, so 1.12 (not 140/128).
  write_profile(rank0({20000, 70000, 40000, 2000}, {0, 10000, 0, 0}),
                nlohmann::json{{"replay_overhead_ns", 8000},
                               {"stall", {{"calls_ns", 2000}, {"cpu_ns", 100000}}}});
  const auto c = feed(0, predict::StallTime::spread);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_EQ(s.ran_ns, 100000u);
  EXPECT_DOUBLE_EQ(s.factor, 1.12);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 22400, 67200, 44800, 2240}));
}

TEST_F(PredictStall, KeepLeavesEachSegmentAsMeasured) {
  write_profile();
  const auto c = feed(0, predict::StallTime::keep);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_TRUE(s.measured);
  EXPECT_EQ(s.segments_ns, 10000u);
  EXPECT_FALSE(s.active());
  EXPECT_DOUBLE_EQ(s.factor, 1.0);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 20000, 70000, 40000, 2000}));
  EXPECT_EQ(s.spread_compute_ns(), 132000u);
  EXPECT_DOUBLE_EQ(scale_.overall, 132000.0 / 61000.0);
}

TEST_F(PredictStall, DropLeavesEachSegmentLessItsStall) {
  write_profile();
  const auto c = feed(0, predict::StallTime::drop);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_TRUE(s.active());
  EXPECT_DOUBLE_EQ(s.factor, 1.0);
  // The 70 us segment less its 10 us stall; the others as measured.
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 20000, 60000, 40000, 2000}));
  EXPECT_EQ(s.spread_compute_ns(), 122000u);
  // The inferred rank follows: 122000 replayed over 61000 captured.
  EXPECT_DOUBLE_EQ(scale_.overall, 2.0);
  EXPECT_EQ(feed(1, predict::StallTime::drop)[1], 20000);
}

TEST_F(PredictStall, AutoDropsWithoutAQuotaAndSpreadsUnderOne) {
  write_profile(0.0);  // ran without a CPU quota: the stall was other work on the machine
  auto c = feed(0, predict::StallTime::automatic);
  EXPECT_EQ(scale_.stalls.at(0).mode, predict::StallTime::drop);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 20000, 60000, 40000, 2000}));
  write_profile(0.5);  // half a core: the stall is the slower machine, twice as slow
  c = feed(0, predict::StallTime::automatic);
  EXPECT_EQ(scale_.stalls.at(0).mode, predict::StallTime::spread);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 40000, 120000, 80000, 4000}));
  write_profile();  // a profile that does not say: spread by the measured factor
  c = feed(0, predict::StallTime::automatic);
  EXPECT_EQ(scale_.stalls.at(0).mode, predict::StallTime::spread);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 21875, 65625, 43750, 2188}));
  // An explicit mode wins over the profile's quota.
  write_profile(0.0);
  c = feed(0, predict::StallTime::spread);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 21875, 65625, 43750, 2188}));
}

// Under a quota below one CPU the slower machine is the quota's: each segment's CPU time over
// the quota, whatever the throttling's granularity made of the replay's own slow-down (here
// 140/128 measured); a quota of a CPU or more slows one thread by nothing it defines.
TEST_F(PredictStall, AQuotaBelowOneCpuSpreadsByItsInverse) {
  write_profile(0.25);
  auto c = feed(0, predict::StallTime::spread);
  const predict::StallSpread* s = &scale_.stalls.at(0);
  EXPECT_DOUBLE_EQ(s->cpu_quota, 0.25);
  EXPECT_DOUBLE_EQ(s->factor, 4.0);
  EXPECT_DOUBLE_EQ(s->measured_factor, 140000.0 / 128000.0);
  // CPU times 20, 60 (70 less its 10 us stall), 40 and 2 us, four times each.
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 80000, 240000, 160000, 8000}));
  EXPECT_EQ(s->spread_compute_ns(), 488000u);
  EXPECT_DOUBLE_EQ(scale_.overall, 488000.0 / 61000.0);  // the inferred rank follows
  write_profile(1.5);
  c = feed(0, predict::StallTime::spread);
  s = &scale_.stalls.at(0);
  EXPECT_DOUBLE_EQ(s->factor, 140000.0 / 128000.0);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 21875, 65625, 43750, 2188}));
  write_profile(0.25);  // keep and drop ignore the quota
  EXPECT_EQ(feed(0, predict::StallTime::keep),
            (std::vector<std::int64_t>{0, 20000, 70000, 40000, 2000}));
  EXPECT_DOUBLE_EQ(scale_.stalls.at(0).measured_factor, 140000.0 / 128000.0);
}

TEST_F(PredictStall, BadCpuQuotaIsRefusedNamingTheKey) {
  write_profile(rank0({20000, 70000, 40000, 2000}),
                nlohmann::json{{"stall", {{"calls_ns", 0}, {"cpu_quota", -1}}}});
  try {
    predict::open_profile(prof_, 2);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("replay.stall.cpu_quota"), std::string::npos) << e.what();
  }
}

TEST_F(PredictStall, InferredRankScalesByTheSpreadCompute) {
  write_profile();
  const auto spread = feed(1, predict::StallTime::spread);
  const auto kept = feed(1, predict::StallTime::keep);
  const double f = 122000.0 * 140000.0 / 128000.0 / 61000.0;
  EXPECT_EQ(spread[1], std::llround(10000 * f));
  EXPECT_EQ(kept[1], std::llround(10000 * 132000.0 / 61000.0));
}

TEST_F(PredictStall, WithoutStallsNothingChanges) {
  write_profile(rank0({20000, 70000, 40000, 2000}), nlohmann::json{{"replay_overhead_ns", 8000}});
  const auto c = feed(0, predict::StallTime::spread);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_FALSE(s.measured);
  EXPECT_FALSE(s.active());
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 20000, 70000, 40000, 2000}));
}

TEST_F(PredictStall, KilledReplayTakesItsOverheadFromTheEvents) {
  // No replay object in the manifest: no calls' stall, the events' overheads (4 x 1000).
  write_profile(rank0({20000, 70000, 40000, 2000}, {0, 10000, 0, 0}, 1000), std::nullopt);
  const auto c = feed(0, predict::StallTime::spread);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_TRUE(s.measured);  // the events say so
  EXPECT_EQ(s.calls_ns, 0u);
  EXPECT_EQ(s.overhead_ns, 4000u);
  EXPECT_DOUBLE_EQ(s.factor, 136000.0 / 126000.0);
  std::int64_t sum = 0;
  for (std::size_t i = 1; i < c.size(); ++i) sum += c[i];
  EXPECT_EQ(sum, std::llround(122000.0 * 136000.0 / 126000.0));
}

TEST_F(PredictStall, StallLongerThanItsSegmentEmptiesThatSegmentOnly) {
  // The read after a long call covers part of it: the segment cannot go below 0.
  write_profile(rank0({20000, 70000, 40000, 2000}, {0, 0, 50000, 0}),
                nlohmann::json{{"replay_overhead_ns", 8000}, {"stall", {{"calls_ns", 0}}}});
  const auto c = feed(0, predict::StallTime::spread);
  const predict::StallSpread& s = scale_.stalls.at(0);
  EXPECT_EQ(s.segments_ns, 40000u);
  EXPECT_EQ(c[3], 0);
  EXPECT_DOUBLE_EQ(s.factor, 140000.0 / 100000.0);
  EXPECT_EQ(c[1], 28000);
}

TEST_F(PredictStall, BadStallTotalIsRefusedNamingTheKey) {
  write_profile(rank0({20000, 70000, 40000, 2000}),
                nlohmann::json{{"stall", {{"calls_ns", "lots"}}}});
  try {
    predict::open_profile(prof_, 2);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("replay.stall.calls_ns"), std::string::npos) << e.what();
  }
}

TEST(PredictStallSpreader, CarriesTheRoundingAndNamesTheModes) {
  predict::StallSpread s;
  s.segments_ns = 1;
  s.compute_ns = 2;
  s.finish();  // factor 2
  predict::StallSpreader f(&s);
  s.factor = 1.5;
  predict::StallSpreader g(&s);
  std::int64_t sum = 0;
  for (int i = 0; i < 5; ++i) sum += g(1, 0);  // 1.5 each
  EXPECT_EQ(sum, 8);                           // llround(7.5)
  EXPECT_EQ(f(10, 4), 12);
  EXPECT_EQ(predict::parse_stall_time("spread"), predict::StallTime::spread);
  EXPECT_EQ(predict::parse_stall_time("keep"), predict::StallTime::keep);
  EXPECT_EQ(predict::parse_stall_time("drop"), predict::StallTime::drop);
  EXPECT_EQ(predict::parse_stall_time("auto"), predict::StallTime::automatic);
  EXPECT_FALSE(predict::parse_stall_time("sometimes"));
  for (const auto m : {predict::StallTime::spread, predict::StallTime::keep,
                       predict::StallTime::drop, predict::StallTime::automatic})
    EXPECT_EQ(predict::parse_stall_time(predict::to_string(m)), m);
  EXPECT_EQ(predict::StallSpreader()(123, 100), 123);
}

}  // namespace
}  // namespace encore
