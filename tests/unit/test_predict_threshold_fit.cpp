// The fit of S (the eager/rendezvous threshold) and g (the gap between message injections) on
// hand-made captures with known answers: a blocking send that returned before its receive was
// posted went eagerly; one that lasted until its late receive was posted waited for it; g is
// the median start-to-start time of small sends made back to back.
#include <string>

#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/predict/fit.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

class PredictThresholdFit : public TempDirTest {};

TEST_F(PredictThresholdFit, ASendReturningBeforeItsReceiveWasPostedRaisesS) {
  // 100000 B sent at 1.000 ms, back at 1.010 ms; its receive posted at 1.050 ms: eager, so S
  // is at least 100000. No send waited: the power of two at or above it, 131072.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(send(fn::Send, 1, 0, 100000), 10'000), 1'000'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(recv(fn::Recv, 0, 0, 0, 100000), 1'000), 1'050'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.params.S, 131072u);
  EXPECT_EQ(f.threshold_eager, 1u);
  EXPECT_EQ(f.threshold_waiting, 0u);
  EXPECT_EQ(f.largest_eager_bytes, 100000u);
  EXPECT_NE(predict::describe(f).find("S from 1 blocking sends whose receive was posted late: 1 "
                                      "returned first (up to 100000 B), 0 waited for it"),
            std::string::npos)
      << predict::describe(f);
}

TEST_F(PredictThresholdFit, SendsWaitingForTheirLateReceivesLowerS) {
  // 16384 B: one send whose receive was already waiting lasts 5 us (the class's fastest);
  // three others, whose receives came 50 us after they began (more than twice 5 us), lasted
  // until then: they waited, so S < 16384. 4096 B went eagerly (back 99 us before its
  // receive): S >= 4096. Between them the power of two nearest the default 65536: 8192. The
  // 16384 B pair whose receive waited is then a rendezvous one: its class starts at S + 1.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(send(fn::Send, 1, 0, 16384), 60'000), 1'000'000},
              {timed(send(fn::Send, 1, 1, 16384), 5'000), 1'200'000},
              {timed(send(fn::Send, 1, 2, 4096), 1'000), 1'300'000},
              {timed(send(fn::Send, 1, 3, 16384), 60'000), 1'500'000},
              {timed(send(fn::Send, 1, 4, 16384), 60'000), 1'700'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(recv(fn::Recv, 0, 0, 0, 16384), 12'000), 1'050'000},
              {timed(recv(fn::Recv, 0, 1, 0, 16384), 106'000), 1'100'000},
              {timed(recv(fn::Recv, 0, 2, 0, 4096), 1'000), 1'400'000},
              {timed(recv(fn::Recv, 0, 3, 0, 16384), 12'000), 1'550'000},
              {timed(recv(fn::Recv, 0, 4, 0, 16384), 12'000), 1'750'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.params.S, 8192u);
  EXPECT_EQ(f.threshold_eager, 1u);
  EXPECT_EQ(f.threshold_waiting, 3u);
  EXPECT_EQ(f.threshold_ignored, 0u);
  EXPECT_EQ(f.largest_eager_bytes, 4096u);
  EXPECT_EQ(f.smallest_waiting_bytes, 16384u);
  EXPECT_EQ(f.large_pairs, 1u);
  ASSERT_FALSE(f.params.G_classes.empty());
  EXPECT_EQ(f.params.G_classes.front().from, 8193u);
}

TEST_F(PredictThresholdFit, OneSendThatWaitedIsNotEnough) {
  // The ring example's first token waited for its receive (the peers' connection being made):
  // one send of its class, which says nothing of the protocol. S stays the default.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(send(fn::Send, 1, 0, 8), 50'000), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'100'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1'000), 1'040'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1'000), 1'099'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.params.S, 65536u);
  EXPECT_EQ(f.threshold_waiting, 0u);
  EXPECT_EQ(f.threshold_ignored, 1u);
  EXPECT_NE(f.notes.find("(1 waited, too few in their size class to count), default"),
            std::string::npos)
      << f.notes;
}

TEST_F(PredictThresholdFit, AnEagerReturnOutweighsSmallerSendsThatSeemedToWait) {
  // 32768 B came back before its receive was posted; three 16384 B sends lasted until their
  // late receives (preempted eager sends look so; another of their class, whose receive
  // waited, took 5 us): not counted, and the default 65536 fits.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(send(fn::Send, 1, 0, 32768), 3'000), 1'000'000},
              {timed(send(fn::Send, 1, 1, 16384), 60'000), 1'100'000},
              {timed(send(fn::Send, 1, 2, 16384), 5'000), 1'300'000},
              {timed(send(fn::Send, 1, 3, 16384), 60'000), 1'400'000},
              {timed(send(fn::Send, 1, 4, 16384), 60'000), 1'600'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(recv(fn::Recv, 0, 0, 0, 32768), 1'000), 1'050'000},
              {timed(recv(fn::Recv, 0, 1, 0, 16384), 12'000), 1'150'000},
              {timed(recv(fn::Recv, 0, 2, 0, 16384), 10'000), 1'295'000},
              {timed(recv(fn::Recv, 0, 3, 0, 16384), 12'000), 1'450'000},
              {timed(recv(fn::Recv, 0, 4, 0, 16384), 12'000), 1'650'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.params.S, 65536u);
  EXPECT_EQ(f.threshold_eager, 1u);
  EXPECT_EQ(f.threshold_waiting, 0u);
  EXPECT_EQ(f.threshold_ignored, 3u);
}

TEST_F(PredictThresholdFit, WithoutLateReceivesSIsTheDefaultAndGFollowsBackToBackSends) {
  // Every receive waits: nothing tells the protocol. Rank 0 sends three 8 B messages back to
  // back (each 100 ns after the previous one's end, 400 ns start to start), then one after a
  // pause: g = 400 from two samples.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(send(fn::Send, 1, 0, 8), 300), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 300), 1'000'400},
              {timed(send(fn::Send, 1, 0, 8), 300), 1'000'800},
              {timed(send(fn::Send, 1, 0, 8), 300), 1'010'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2'000), 999'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1'000), 1'001'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1'000), 1'002'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2'000), 1'009'000},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.params.S, 65536u);
  EXPECT_NE(f.notes.find("S: no blocking send that returned before its receive was posted or that "
                         "waited for it, default"),
            std::string::npos)
      << f.notes;
  EXPECT_EQ(f.gap_samples, 2u);
  EXPECT_DOUBLE_EQ(f.params.g, 400);
}

TEST_F(PredictThresholdFit, NoSendsBackToBackLeaveGAtZero) {
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(send(fn::Send, 1, 0, 8), 300), 1'000'000},
              {timed(call(fn::Barrier), 300), 1'000'400},
              {timed(send(fn::Send, 1, 0, 8), 300), 1'000'800},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1'000), 999'000},
              {timed(call(fn::Barrier), 300), 1'000'400},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1'000), 1'000'700},
              {timed(call(fn::Finalize), 100), 2'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.gap_samples, 0u);
  EXPECT_DOUBLE_EQ(f.params.g, 0);
  EXPECT_NE(f.notes.find("g: no small sends back to back, 0"), std::string::npos) << f.notes;
}

}  // namespace
}  // namespace encore
