// Large messages: the fit's rendezvous rule (a size class above S takes the median G of its
// pairs whose receive was waiting; a receive posted late measures the recording's distortion,
// not the network), and a large buffered send, which only copies into its buffer.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/predict/fit.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

class PredictRendezvousFit : public TempDirTest {};

TEST_F(PredictRendezvousFit, OnlyWaitingReceivesMeasureTheClass) {
  // o 100 (small sends lasting 100 ns), L 1000 (the 8 B receive waiting: 2o + L = 1200).
  // 100001 B, tag 2, the receive waiting: it ends 3o + 3L + 100000 * 0.75 = 78300 after the
  // send began. 100001 B, tag 3, the receive posted 50 us after the send: it ends
  // 2o + 2L + 100000 * 0.25 = 27200 after its own post: not a sample. G = 0.75 (counting the
  // late one and taking the mean would give 0.5).
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'010'500},
              {timed(send(fn::Send, 1, 1, 512), 100), 1'020'600},
              {timed(send(fn::Send, 1, 2, 100001), 80000), 1'030'700},
              {timed(send(fn::Send, 1, 3, 100001), 76000), 1'200'000},
              {timed(call(fn::Finalize), 100), 1'300'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
              {timed(recv(fn::Recv, 0, 2, 0, 100001), 79000), 1'030'000},
              {timed(recv(fn::Recv, 0, 3, 0, 100001), 27200), 1'250'000},
              {timed(call(fn::Finalize), 100), 1'300'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
  EXPECT_EQ(f.large_pairs, 1u);
  ASSERT_EQ(f.params.G_classes.size(), 1u);
  EXPECT_EQ(f.params.G_classes[0].from, 65537u);
  EXPECT_DOUBLE_EQ(f.params.G_classes[0].G, 0.75);
}

TEST(PredictBufferedSend, LargeOneTakesItsRecordedCopyAndItsReceiveWaitsForTheTransfer) {
  // L 1000, o 100, eager G 1, G 2 from 2000 B. A 3001 B Bsend at 0 recorded 3100 ns long (its
  // copy) returns at 3100, not after o + 3000 * 2 = 6100. Its data arrives at
  // 0 + o + 6000 + L = 7100, after the receive's post at 5000: the receive ends at 7100 + o.
  predict::LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.G = 1;
  p.S = 1000;
  p.G_classes = {{2000, 2}};
  Event bsend = send(fn::Bsend, 1, 0, 3001);
  bsend.end_ns = 3100;
  auto f = feeds({{{bsend}}, {{recv(fn::Recv, 0, 0, 0, 3001), 5000}}});
  KeepSink sink;
  predict::run_loggps(f, p, sink);
  EXPECT_EQ(sink.calls[0][0].end, 3100);
  EXPECT_EQ(sink.calls[0][0].wait, 0);
  EXPECT_EQ(sink.calls[1][0].end, 7200);
  EXPECT_EQ(sink.calls[1][0].wait, 7200 - 5000 - 100);
}

}  // namespace
}  // namespace encore
