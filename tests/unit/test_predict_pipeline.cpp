// The prediction pipeline on hand-made trace directories: a capture of two ranks, a replay
// profile of rank 0 whose compute is twice as fast, the inference of rank 1 from it (overall
// and per call site), the predicted trace written and read back.
#include <cmath>
#include <fstream>
#include <optional>
#include <vector>

#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/event_reader.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/predict/predicted_trace.hpp"
#include "encore/predict/trace_feed.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

struct Call {
  Event ev;
  std::uint64_t gap;  // compute before it
  std::uint64_t dur;
  std::optional<std::uint64_t> site;
};

// Writes `calls` as rank `rank`'s stream, times laid out from `t0`.
void write_rank(const std::filesystem::path& dir, std::uint32_t rank, std::vector<Call> calls,
                std::uint64_t t0) {
  const TraceDir d(dir);
  RankTraceWriter w(d.events_path(rank), d.payload_path(rank), rank);
  std::uint64_t t = t0;
  for (auto& c : calls) {
    c.ev.start_ns = t + c.gap;
    c.ev.end_ns = c.ev.start_ns + c.dur;
    c.ev.callsite = c.site;
    t = c.ev.end_ns;
    w.write(c.ev);
  }
  w.close();
}

// A profile's manifest lists one rank of an nprocs-rank run (which save_manifest refuses).
void save_profile_manifest(const Manifest& m, const std::filesystem::path& dir) {
  std::ofstream(TraceDir(dir).manifest_path()) << manifest_to_json(m).dump(2);
}

// Rank 0: compute, Send, compute, Recv. Rank 1: compute, Recv, compute, Send. The compute
// before each call is `scale` times the captured one.
std::vector<Call> rank0(double scale) {
  const auto g = [&](std::uint64_t ns) {
    return static_cast<std::uint64_t>(static_cast<double>(ns) * scale);
  };
  return {{call(fn::Init), 0, 500, {}},
          {send(fn::Send, 1, 0, 8), g(10000), 200, 1},
          {recv(fn::Recv, 1, 0, 1, 8), g(30000), 5000, 2},
          {call(fn::Finalize), g(1000), 100, {}}};
}
std::vector<Call> rank1() {
  return {{call(fn::Init), 0, 500, {}},
          {recv(fn::Recv, 0, 0, 0, 8), 20000, 300, 1},
          {send(fn::Send, 0, 0, 8), 40000, 200, 2},
          {call(fn::Finalize), 1000, 100, {}}};
}

class PredictPipeline : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    cap_ = dir_ / "capture";
    prof_ = dir_ / "profile";
    std::filesystem::create_directories(cap_);
    std::filesystem::create_directories(prof_);
    write_rank(cap_, 0, rank0(1.0), 1'000'000);
    write_rank(cap_, 1, rank1(), 1'000'000);
    save_manifest(manifest(TraceKind::capture, {0, 1}, 2), TraceDir(cap_).manifest_path());
    write_rank(prof_, 0, rank0(0.5), 7'000'000);  // another machine's clock: any origin
    save_profile_manifest(manifest(TraceKind::replay, {0}, 2), prof_);
  }

  // Runs the seed's logged model (ranks independent), or the loggps one; returns the sink.
  KeepSink predict(bool with_profile, predict::ComputeScale* scale_out = nullptr,
                   bool loggps = false) {
    const TraceDir cap(cap_);
    std::vector<predict::ReplayProfile> profiles;
    if (with_profile) profiles.push_back(predict::open_profile(prof_, 2));
    scale_ = predict::measure_scale(cap, profiles);
    if (scale_out) *scale_out = scale_;
    std::vector<std::unique_ptr<predict::RankFeed>> feeds;
    for (std::uint32_t r = 0; r < 2; ++r) {
      std::optional<std::filesystem::path> p;
      if (with_profile && r == 0) p = TraceDir(prof_).events_path(0);
      auto f = std::make_unique<predict::TraceRankFeed>(cap, r, nullptr, 2, p, &scale_, &params_);
      f->set_base(1'000'000);
      feeds.push_back(std::move(f));
    }
    KeepSink sink;
    if (loggps)
      predict::run_loggps(feeds, params_, sink);
    else
      predict::run_logged(feeds, params_, sink);
    return sink;
  }

  std::filesystem::path cap_, prof_;
  predict::ComputeScale scale_;
  predict::LogGPSParams params_;
};

TEST_F(PredictPipeline, ReplayedComputeAndInferredRank) {
  predict::ComputeScale scale;
  auto s = predict(true, &scale);
  EXPECT_DOUBLE_EQ(scale.overall, 0.5);
  EXPECT_EQ(scale.replayed_ranks, 1u);
  // rank 0: compute from the profile (halved), durations as captured.
  EXPECT_EQ(s.calls[0][1].start, 500 + 5000);
  EXPECT_EQ(s.calls[0][2].start, 500 + 5000 + 200 + 15000);
  // rank 1: per call site, the replayed ranks' ratio for the site ending the segment (0.5).
  EXPECT_EQ(s.calls[1][1].start, 500 + 10000);
  EXPECT_EQ(s.calls[1][2].start, 500 + 10000 + 300 + 20000);
  // Finalize has no call site: the overall ratio.
  EXPECT_EQ(s.calls[1][3].start - s.calls[1][2].end, 500);
}

TEST_F(PredictPipeline, WithoutProfilesComputeIsAsCaptured) {
  auto s = predict(false);
  EXPECT_EQ(s.calls[1][1].start, 500 + 20000);
  EXPECT_EQ(s.calls[0][2].start, 500 + 10000 + 200 + 30000);
}

TEST_F(PredictPipeline, PerCallSiteRatios) {
  // Site 1 replays 4x faster, site 2 as captured: rank 1's segments follow each site.
  auto calls = rank0(1.0);
  calls[1].gap = 2500;
  write_rank(prof_, 0, calls, 0);
  predict::ComputeScale scale;
  auto s = predict(true, &scale);
  EXPECT_DOUBLE_EQ(scale.by_callsite.at(1), 0.25);
  EXPECT_DOUBLE_EQ(scale.by_callsite.at(2), 1.0);
  EXPECT_EQ(s.calls[1][1].start, 500 + 5000);
  EXPECT_EQ(s.calls[1][2].start - s.calls[1][1].end, 40000);
}

// Init, a Barrier before each gap but the last, Finalize after it: the same calls on both ranks.
std::vector<Call> barriers(const std::vector<std::uint64_t>& gaps) {
  std::vector<Call> c = {{call(fn::Init), 0, 500, {}}};
  for (std::size_t i = 0; i + 1 < gaps.size(); ++i)
    c.push_back({call(fn::Barrier), gaps[i], 100, {}});
  c.push_back({call(fn::Finalize), gaps.back(), 100, {}});
  return c;
}

// An MPI_Test that completed nothing (flag 0).
Event failed_test() {
  Event poll = call(fn::Test);
  role_arg(poll, Role::request_inout).requests = {{true, 0, 0}};
  role_arg(poll, Role::status_out).statuses = {{}};
  return poll;
}

// The compute before each call of rank `r` after the first, as the logged model was fed it.
std::vector<std::int64_t> computes(const KeepSink& s, std::uint32_t r) {
  std::vector<std::int64_t> v;
  const auto& c = s.calls.at(r);
  for (std::size_t i = 1; i < c.size(); ++i) v.push_back(c[i].start - c[i - 1].end);
  return v;
}

TEST_F(PredictPipeline, AnSpmdRankFollowsTheReplayedRanksSegments) {
  // The same calls on both ranks. The capture stretched one segment between barriers on each
  // rank (30 us against 10 us), not the same one; the replay of rank 0 takes 5 us each.
  // Per kind of segment (calls around it) the ranks' captures sum alike (Barrier to Barrier:
  // 50 us each), so rank 1 takes rank 0's replayed segments as they are. Scaling rank 1's own
  // capture (the overall ratio, 20.5 / 61 us) would keep its stretched segment (10 us where
  // rank 0 replayed 5).
  write_rank(cap_, 0, barriers({10000, 10000, 30000, 10000, 1000}), 1'000'000);
  write_rank(cap_, 1, barriers({10000, 30000, 10000, 10000, 1000}), 1'000'000);
  write_rank(prof_, 0, barriers({5000, 5000, 5000, 5000, 500}), 0);
  auto s = predict(true);
  EXPECT_EQ(computes(s, 0), (std::vector<std::int64_t>{5000, 5000, 5000, 5000, 500}));
  EXPECT_EQ(computes(s, 1), (std::vector<std::int64_t>{5000, 5000, 5000, 5000, 500}));
}

TEST_F(PredictPipeline, AnSpmdRankKeepsItsOwnShareOfEachKindOfSegment) {
  // Rank 1's captured segments of each kind sum to twice rank 0's (more work, e.g. a root's):
  // twice rank 0's replayed segments (at the same step: rank 0's captured 10 and 30 us are
  // not the same work).
  write_rank(cap_, 0, barriers({10000, 10000, 30000, 10000, 1000}), 1'000'000);
  write_rank(cap_, 1, barriers({20000, 20000, 60000, 20000, 2000}), 1'000'000);
  write_rank(prof_, 0, barriers({5000, 5000, 7000, 5000, 500}), 0);
  auto s = predict(true);
  EXPECT_EQ(computes(s, 1), (std::vector<std::int64_t>{10000, 10000, 14000, 10000, 1000}));
}

// Both ranks' captures and rank 0's replay as barriers with these gaps (barriers() above).
void write_barrier_runs(const std::filesystem::path& cap, const std::filesystem::path& prof,
                        const std::vector<std::uint64_t>& rank0_gaps,
                        const std::vector<std::uint64_t>& rank1_gaps,
                        const std::vector<std::uint64_t>& replayed_gaps) {
  write_rank(cap, 0, barriers(rank0_gaps), 1'000'000);
  write_rank(cap, 1, barriers(rank1_gaps), 1'000'000);
  write_rank(prof, 0, barriers(replayed_gaps), 0);
}

TEST_F(PredictPipeline, AnSpmdRanksSegmentsAreNotDrawnWithTheSourcesAtTheSameStep) {
  // Rank 0's replay alternates 10 and 12 us between barriers (a real run's noise); the
  // captures say both ranks do the same work, step after step (10 us each). Rank 1 takes rank
  // 0's segment of each kind one step earlier (the first of a kind its own), so at each
  // barrier one of the two ranks waits for the other, as two ranks with noise of their own do.
  const std::vector<std::uint64_t> same = {10000, 10000, 10000, 10000, 10000, 1000};
  write_barrier_runs(cap_, prof_, same, same, {10000, 10000, 12000, 10000, 12000, 500});
  auto s = predict(true);
  EXPECT_EQ(computes(s, 0), (std::vector<std::int64_t>{10000, 10000, 12000, 10000, 12000, 500}));
  // Init -> Barrier: its own 10 us; Barrier -> Barrier: 10 (its own), then rank 0's previous
  // 10, 12, 10; Barrier -> Finalize: its own 500 ns.
  EXPECT_EQ(computes(s, 1), (std::vector<std::int64_t>{10000, 10000, 10000, 12000, 10000, 500}));
  // With the loggps model (o = L = g = 0: a barrier ends when its last rank arrives), Init
  // (500 ns as recorded) ends at 500. Barriers: both at 10500, both at 20500; rank 0 at
  // 32500, rank 1 at 30500 (waits 2 us); rank 0 at 42500 (waits 2 us), rank 1 at 44500; rank
  // 0 at 56500, rank 1 at 54500 (waits 2 us); Finalize at 57000 on both. A copy of rank 0's
  // segments (the source's at the same step) never waits: Finalize at 500 + 54000 + 500.
  params_.o = params_.L = params_.g = 0;
  s = predict(true, nullptr, true);
  EXPECT_EQ(s.calls[1][3].end - s.calls[1][3].start, 2000);
  EXPECT_EQ(s.calls[0][4].end - s.calls[0][4].start, 2000);
  EXPECT_EQ(s.calls[1][5].end - s.calls[1][5].start, 2000);
  EXPECT_EQ(s.calls[0][6].start, 57000);
  EXPECT_EQ(s.calls[1][6].start, 57000);
}

TEST_F(PredictPipeline, AlternatingPhasesBetweenTheSameCallsStayInStep) {
  // Rank 0's replay alternates 4 and 12 us between barriers, and so did both captures (4 and
  // 12 us): two phases of different work between the same calls, not noise (the captured
  // gaps 3x apart, outside 0.8-1.25x). Rank 1 takes rank 0's segments at the same step, so
  // its 12 us phases meet rank 0's: a step earlier would put 12 against 4 at every barrier.
  const std::vector<std::uint64_t> phases = {10000, 4000, 12000, 4000, 12000, 1000};
  write_barrier_runs(cap_, prof_, phases, phases, {10000, 4000, 12000, 4000, 12000, 500});
  auto s = predict(true);
  EXPECT_EQ(computes(s, 1), (std::vector<std::int64_t>{10000, 4000, 12000, 4000, 12000, 500}));
}

TEST_F(PredictPipeline, OneStretchedSegmentDoesNotScaleTheWholeKind) {
  // The capture stretched one of rank 1's Barrier-to-Barrier segments to 4x (40 us against
  // 10 us; the writer thread taking the core). The pairs' ratios are 1, 1, 4, 1: the median
  // (1) says the same work, so rank 1 takes rank 0's replayed segments as they are. The sums'
  // ratio (70 / 40 us = 1.75) made every one of them 1.75x rank 0's: 8750 ns where the replay
  // took 5000.
  write_rank(cap_, 0, barriers({10000, 10000, 10000, 10000, 10000, 1000}), 1'000'000);
  write_rank(cap_, 1, barriers({10000, 10000, 10000, 40000, 10000, 1000}), 1'000'000);
  write_rank(prof_, 0, barriers({5000, 5000, 5000, 5000, 5000, 500}), 0);
  auto s = predict(true);
  EXPECT_EQ(computes(s, 1), (std::vector<std::int64_t>{5000, 5000, 5000, 5000, 5000, 500}));
}

TEST_F(PredictPipeline, NotTheSameWorkFallsBackToTheOverallRatio) {
  // Rank 1's Barrier-to-Barrier segments sum to 3x rank 0's (more than twice): they scale by
  // the overall ratio; the first and last kinds (1x) follow rank 0's replay.
  write_rank(cap_, 0, barriers({10000, 10000, 10000, 10000, 1000}), 1'000'000);
  write_rank(cap_, 1, barriers({10000, 30000, 30000, 30000, 1000}), 1'000'000);
  write_rank(prof_, 0, barriers({5000, 4000, 6000, 5000, 500}), 0);
  predict::ComputeScale scale;
  auto s = predict(true, &scale);
  const auto scaled = [&](double ns) { return std::llround(ns * scale.overall); };
  EXPECT_EQ(computes(s, 1),
            (std::vector<std::int64_t>{5000, scaled(30000), scaled(30000), scaled(30000), 500}));
}

TEST_F(PredictPipeline, PollsAreSkippedWhenLiningUpAndTheirSegmentsScaled) {
  // Rank 1 polled once (a Test that completed nothing) between its second and third
  // barriers: the segments before and after the poll use the overall ratio, the next ones
  // line up again.
  write_rank(cap_, 0, barriers({10000, 10000, 30000, 10000, 1000}), 1'000'000);
  auto calls = barriers({10000, 10000, 6000, 10000, 1000});
  calls.insert(calls.begin() + 3, {failed_test(), 4000, 100, {}});
  write_rank(cap_, 1, calls, 1'000'000);
  write_rank(prof_, 0, barriers({5000, 5000, 5000, 5000, 500}), 0);
  predict::ComputeScale scale;
  auto s = predict(true, &scale);
  const auto scaled = [&](double ns) { return std::llround(ns * scale.overall); };
  EXPECT_EQ(computes(s, 1),
            (std::vector<std::int64_t>{5000, 5000, scaled(4000), scaled(6000), 5000, 500}));
}

// Rank 0's barriers with `polls` failed Tests before its third barrier, `poll_gap` ns of
// compute before each; the barriers' gaps times `scale`.
std::vector<Call> barriers_with_polls(double scale, int polls, std::uint64_t poll_gap) {
  const auto g = [&](std::uint64_t ns) {
    return static_cast<std::uint64_t>(static_cast<double>(ns) * scale);
  };
  auto calls = barriers({g(10000), g(10000), g(30000), g(10000), g(1000)});
  calls.insert(calls.begin() + 3, static_cast<std::size_t>(polls),
               {failed_test(), poll_gap, 100, {}});
  return calls;
}

TEST_F(PredictPipeline, AWaitLoopsTurnsDoNotSetTheOverallRatio) {
  // A wait loop's turns between polls (20 ns captured, the capture's residue, none left in
  // the replay) would pull the ratio of a rank whose work replays at half its captured time
  // down to 30.5 / 71 us; the ratio is taken over the segments of at least 1 us.
  write_rank(cap_, 0, barriers_with_polls(1.0, 500, 20), 1'000'000);
  write_rank(cap_, 1, barriers({10000, 10000, 30000, 10000, 1000}), 1'000'000);
  write_rank(prof_, 0, barriers_with_polls(0.5, 500, 0), 0);
  predict::ComputeScale scale;
  predict(true, &scale);
  EXPECT_DOUBLE_EQ(scale.overall, 0.5);
  EXPECT_DOUBLE_EQ(scale.captured_ns, 61000);
}

TEST_F(PredictPipeline, OnlyShortSegmentsStillGiveARatio) {
  // No segment of 1 us or more: the ratio is taken over all of them.
  write_rank(cap_, 0, barriers({800, 600, 600, 400}), 1'000'000);
  write_rank(cap_, 1, barriers({800, 600, 600, 400}), 1'000'000);
  write_rank(prof_, 0, barriers({400, 300, 300, 200}), 0);
  predict::ComputeScale scale;
  predict(true, &scale);
  EXPECT_DOUBLE_EQ(scale.overall, 0.5);
}

TEST_F(PredictPipeline, ProfileOfAnotherRunIsRejected) {
  auto calls = rank0(0.5);
  calls[2].ev = send(fn::Send, 1, 0, 8);
  write_rank(prof_, 0, calls, 0);
  try {
    predict(true);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a replay of this capture"), std::string::npos)
        << e.what();
  }
  save_profile_manifest(manifest(TraceKind::capture, {0}, 2), prof_);
  EXPECT_THROW(predict::open_profile(prof_, 2), Error);
  save_profile_manifest(manifest(TraceKind::replay, {0}, 3), prof_);
  EXPECT_THROW(predict::open_profile(prof_, 2), Error);
}

// replay_of.trace only names the recording in the message: a number there was a raw
// nlohmann type_error instead of the message.
TEST_F(PredictPipeline, ProfileOfAnotherRecordingWithAnyTraceTypeIsOneLine) {
  nlohmann::json doc = manifest_to_json(manifest(TraceKind::replay, {0}, 2));
  doc["replay_of"]["recording_start_ns"] = 1'000'000'000;
  for (const nlohmann::json& trace : {nlohmann::json(42), nlohmann::json::array()}) {
    doc["replay_of"]["trace"] = trace;
    std::ofstream(TraceDir(prof_).manifest_path()) << doc.dump();
    try {
      predict::open_profile(prof_, 2, 2'000'000'000);
      FAIL() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("replays the recording started at 1970-01-01T00:00:01Z "
                                           "(?), not this one"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_F(PredictPipeline, PredictedTraceReadsBack) {
  const auto out = dir_ / "predicted";
  {
    predict::PredictedTrace trace(out, 2);
    auto s = predict(true);
    for (std::uint32_t r = 0; r < 2; ++r) {
      Event ev = call(fn::Barrier);
      for (const auto& c : s.calls[r]) trace.on_event(r, ev, 0, c.start, c.end, c.wait);
    }
    trace.finish(load_manifest(TraceDir(cap_).manifest_path()), {{"model", "logged"}});
    EXPECT_EQ(trace.totals()[0].events, 4u);
  }
  const Manifest m = load_manifest(TraceDir(out).manifest_path());
  EXPECT_EQ(m.kind, TraceKind::predicted);
  EXPECT_EQ(m.options["prediction"]["model"], "logged");
  EXPECT_EQ(m.ranks.at(1).events, 4u);
  RankEventReader reader(TraceDir(out).events_path(1));
  Event ev;
  std::uint64_t n = 0, last_end = 0;
  while (reader.next(ev)) {
    ++n;
    EXPECT_GE(ev.start_ns, last_end);
    last_end = ev.end_ns;
  }
  EXPECT_TRUE(reader.complete());
  EXPECT_EQ(n, 4u);
}

}  // namespace
}  // namespace encore
