// Clock offsets in prediction (clock_offsets.hpp): each recorded time takes the manifest's
// offset at that time (RankInfo::offset_at, interpolated between the MPI_Init and MPI_Finalize
// estimates), in the fit and in the compensated logged model, not the MPI_Init one alone.
// Rank 1's clock here drifts 10 us over its first millisecond: offset 0 at its time 0, 10000
// at 1'000'000, so 1 % of the time since (4000 at 400'000, 9000 at 900'000).
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/manifest.hpp"
#include "encore/predict/clock_offsets.hpp"
#include "encore/predict/fit.hpp"
#include "encore/predict/logged_model.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

void drift(Manifest& m) {
  m.ranks[1].clock_offset_ns = 0;
  m.ranks[1].sync_init = ClockSync{0, 0, 10, "round trips"};
  m.ranks[1].sync_end = ClockSync{10000, 1'000'000, 10, "round trips"};
}

TEST(PredictClockOffsets, FollowTheManifestsEstimatesOrConstants) {
  Manifest m = manifest(TraceKind::capture, {0, 1, 2}, 3);
  drift(m);
  m.ranks[2].clock_offset_ns = -700;  // one estimate only: a constant
  m.ranks[2].sync_init = ClockSync{-700, 5, 10, "round trips"};
  const predict::ClockOffsets c(m);
  EXPECT_EQ(c.at(0, 123), 0);
  EXPECT_EQ(c.at(1, 0), 0);
  EXPECT_EQ(c.at(1, 400'000), 4000);
  EXPECT_EQ(c.at(1, 900'000), 9000);
  EXPECT_EQ(c.at(1, 5'000'000), 10000);  // held at the nearer estimate outside them
  EXPECT_EQ(c.at(1, 400'000), m.ranks[1].offset_at(400'000));
  EXPECT_EQ(c.at(2, 900'000), -700);
  EXPECT_EQ(c.at(3, 900'000), 0);  // no such rank
  const predict::ClockOffsets constant(std::vector<std::int64_t>{5, 6});
  EXPECT_EQ(constant.at(1, 900'000), 6);
  EXPECT_EQ(constant.at(2, 900'000), 0);
}

TEST(PredictClockOffsets, TheLoggedModelGatesOnTheOffsetAtEachTime) {
  // Rank 0 sends at 900'000 (its clock is rank 0's). Rank 1's receive ran 890'000 .. 892'000
  // on its clock: 898'900 .. 900'900 on rank 0's with the offset at its start (8900), so it
  // ended 900 after the send began: it waited for it. Predicted, the send starts at 950'000
  // and the receive at 890'000: the receive ends 950'000 + 900. With the MPI_Init offset (0)
  // the receive would end at 892'000 before the send began, no dependency, and keep its
  // recorded 2000 ns from 890'000.
  Manifest m = manifest(TraceKind::capture, {0, 1});
  drift(m);
  const auto steps = [] {
    return std::vector<std::vector<Step>>{
        {{recorded_at(send(fn::Send, 1, 0, 8), 900'000, 10), 950'000}},
        {{recorded_at(recv(fn::Recv, 0, 0, 0, 8), 890'000, 2000), 890'000}}};
  };
  {
    auto f = feeds(steps());
    KeepSink sink;
    predict::run_compensated(f, round_params(), predict::ClockOffsets(m), sink);
    EXPECT_EQ(sink.calls[1][0].end, 950'900);
  }
  {
    auto f = feeds(steps());
    KeepSink sink;
    predict::run_compensated(f, round_params(), std::vector<std::int64_t>{0, 0}, sink);
    EXPECT_EQ(sink.calls[1][0].end, 892'000);
  }
}

class PredictFitClockDrift : public TempDirTest {};

TEST_F(PredictFitClockDrift, LatencyFromTheOffsetAtTheReceive) {
  // o 100 from the sends (G 0: an 8 B and a 512 B send alike). Rank 1's Recv starts at its
  // 400'000 (404'000 on rank 0's clock, the offset then 4000) and lasts 95'000: it ends at
  // 499'000 on rank 0's clock. Rank 0's 8 B Send began at 497'800: L = 499'000 - 497'800 -
  // 2o = 1000. With the MPI_Init offset (0) the receive would end at 495'000, before the
  // send began, and L would come out 0.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1000},
              {timed(send(fn::Send, 1, 0, 8), 100), 497'800},
              {timed(send(fn::Send, 1, 1, 512), 100), 600'000},
              {timed(call(fn::Finalize), 100), 900'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 95'000), 400'000},
              {timed(call(fn::Finalize), 100), 900'000}});
  Manifest m = save_capture(d);
  drift(m);
  save_manifest(m, d.manifest_path());
  const predict::FitReport f = predict::fit_params(d, load_manifest(d.manifest_path()));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_EQ(f.latency_samples, 1u);
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
}

}  // namespace
}  // namespace encore
