// The compensated `logged` model against hand-computed answers (logged_model.hpp): a call
// ends at max(predicted start, its gates' predicted times) + (recorded end - the latest of its
// recorded start and its gates' recorded times). S is 1000 bytes, so 8 B is eager, 2000 B
// rendezvous.
#include "predict_events.hpp"
#include <gtest/gtest.h>

#include "encore/predict/logged_model.hpp"

namespace encore {
namespace {

using namespace encore::testing;

struct Result {
  KeepSink sink;
  predict::LoggedStats stats;
};

Result run(std::vector<std::vector<Step>> ranks, const std::vector<std::int64_t>& offsets = {}) {
  auto f = feeds(std::move(ranks));
  Result r;
  r.stats = predict::run_compensated(f, round_params(), offsets, r.sink);
  return r;
}

TEST(PredictCompensated, WaitCausedByThePeersOverheadIsRemovedExactly) {
  // Rank 0 computed 100 ns, then the capture spent 50 ns on it before its Send (raw start
  // 150). Rank 1's Recv, posted at 0, got the message 20 ns after the send began (170). With
  // the overhead gone the send starts at 100, so the receive ends at 120: 50 ns less wait.
  auto r = run({{{recorded_at(send(fn::Send, 1, 0, 8), 150, 10), 100}},
                {{recorded_at(recv(fn::Recv, 0, 0, 0, 8), 0, 170), 0}}});
  EXPECT_EQ(r.sink.calls[0][0].end, 110);
  EXPECT_EQ(r.sink.calls[1][0].start, 0);
  EXPECT_EQ(r.sink.calls[1][0].end, 120);
  EXPECT_EQ(r.stats.messages, 1u);
  EXPECT_EQ(r.stats.released, 0u);
}

TEST(PredictCompensated, RecordedTimesComeBackWhenNothingMoves) {
  // Compute as the raw recording had it (150): every call ends where it was recorded.
  auto r = run({{{recorded_at(send(fn::Send, 1, 0, 8), 150, 10), 150}},
                {{recorded_at(recv(fn::Recv, 0, 0, 0, 8), 0, 170), 0}}});
  EXPECT_EQ(r.sink.calls[0][0].end, 160);
  EXPECT_EQ(r.sink.calls[1][0].end, 170);
}

TEST(PredictCompensated, AReceiveWaitsForASenderThatIsNowLater) {
  // Recorded: the message was there when the Recv began at 500 (sender at 150), 30 ns of own
  // cost. Predicted sender at 600: the receive now ends 30 ns after it, at 630.
  auto r = run({{{recorded_at(send(fn::Send, 1, 0, 8), 150, 10), 600}},
                {{recorded_at(recv(fn::Recv, 0, 0, 0, 8), 500, 30), 500}}});
  EXPECT_EQ(r.sink.calls[1][0].start, 500);
  EXPECT_EQ(r.sink.calls[1][0].end, 630);
}

TEST(PredictCompensated, RendezvousSendWaitsForTheReceivePostOnly) {
  // 2000 B: the Send (raw 0..500) waited for the Recv posted at 400 (raw 400..600). The
  // receiver's compute is now 100: the send ends 100 after it (200), the receive 200 after
  // its own start (300).
  auto r = run({{{recorded_at(send(fn::Send, 1, 0, 2000), 0, 500), 0}},
                {{recorded_at(recv(fn::Recv, 0, 0, 0, 2000), 400, 200), 100}}});
  EXPECT_EQ(r.sink.calls[0][0].end, 200);
  EXPECT_EQ(r.sink.calls[1][0].end, 300);
}

TEST(PredictCompensated, CollectiveEndsAfterItsLastArrival) {
  // Allreduce: rank 0 (raw 0..1000) waited for rank 1 (raw 900..1000). Rank 1 now arrives at
  // 400: both end 100 later, at 500.
  auto r = run({{{recorded_at(coll(fn::Allreduce, 8), 0, 1000), 0}},
                {{recorded_at(coll(fn::Allreduce, 8), 900, 100), 400}}});
  EXPECT_EQ(r.sink.calls[0][0].end, 500);
  EXPECT_EQ(r.sink.calls[1][0].end, 500);
  EXPECT_EQ(r.stats.collectives, 1u);
}

TEST(PredictCompensated, ClockOffsetsPutThePeersOnOneClock) {
  // Rank 1's clock is 1000 behind rank 0's. Its Waitall (raw 20..1150, common 1020..2150)
  // got the message 50 ns after rank 0's Isend began (raw 2100). Predicted Isend at 2000:
  // the Waitall ends at 2050. Without the offset the send would seem to start after the
  // Waitall ended, no gate would hold, and the Waitall would keep its 1130 ns (2150).
  const std::vector<std::vector<Step>> ranks = {
      {{recorded_at(send(fn::Isend, 1, 0, 8), 2100, 10), 2000}},
      {{recorded_at(recv(fn::Irecv, 0, 0, 0, 8), 0, 10), 1000},
       {recorded_at(waitall({0}), 20, 1130), 10}}};
  auto r = run(ranks, {0, 1000});
  EXPECT_EQ(r.sink.calls[1][1].start, 1020);
  EXPECT_EQ(r.sink.calls[1][1].end, 2050);
  auto no_offsets = run(ranks);
  EXPECT_EQ(no_offsets.sink.calls[1][1].end, 2150);
}

TEST(PredictCompensated, CallsNoRankCanReachAreReleasedWithTheirDuration) {
  // Two receives and no sends: neither can be ordered, both keep their recorded time.
  auto r = run({{{recorded_at(recv(fn::Recv, 1, 0, 1, 8), 0, 70), 10}},
                {{recorded_at(recv(fn::Recv, 0, 0, 0, 8), 0, 90), 20}}});
  EXPECT_EQ(r.stats.released, 2u);
  EXPECT_EQ(r.sink.calls[0][0].end, 80);
  EXPECT_EQ(r.sink.calls[1][0].end, 110);
}

}  // namespace
}  // namespace encore
