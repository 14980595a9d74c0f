// The loggps engine on more ranks than the hand-made cases elsewhere: a ring of nonblocking
// exchanges, where every rank blocks and is woken by its neighbour many times, exercising
// the run queue's wrap-around and ranks completing their own requests while they run.
// Parameters as in test_predict_loggps.cpp (L 1000, o 100, G 1 ns/byte, S 1000 bytes).
#include "predict_events.hpp"
#include <gtest/gtest.h>

#include "encore/predict/loggps_engine.hpp"

namespace encore {
namespace {

using namespace encore::testing;

TEST(PredictRing, EveryLapTakesOneEagerMessage) {
  // Per lap, from its start t: Irecv ends t+100, Isend (8 B) leaves at t+100 and arrives
  // t+100+100+7+1000; the left neighbour's message is received at t+1207+100 = t+1307, when
  // the Waitall (started at t+200) ends; the Isend's own request completed at t+207.
  constexpr std::uint32_t kRanks = 7;
  constexpr std::uint64_t kLaps = 3;
  std::vector<std::vector<Step>> ranks(kRanks);
  for (std::uint32_t r = 0; r < kRanks; ++r)
    for (std::uint64_t lap = 0; lap < kLaps; ++lap) {
      ranks[r].push_back({recv(fn::Irecv, (r + kRanks - 1) % kRanks, 0, 0, 8)});
      ranks[r].push_back({send(fn::Isend, (r + 1) % kRanks, 0, 8)});
      ranks[r].push_back({waitall({3 * lap, 3 * lap + 1})});
    }
  predict::LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.g = 0;
  p.G = 1;
  p.S = 1000;
  auto f = feeds(std::move(ranks));
  KeepSink sink;
  const auto stats = predict::run_loggps(f, p, sink);
  EXPECT_EQ(stats.events, kRanks * kLaps * 3);
  EXPECT_EQ(stats.messages, kRanks * kLaps);
  ASSERT_EQ(sink.calls.size(), kRanks);
  for (std::uint32_t r = 0; r < kRanks; ++r) {
    const auto& c = sink.calls[r];
    ASSERT_EQ(c.size(), kLaps * 3);
    for (std::uint64_t lap = 0; lap < kLaps; ++lap) {
      const std::int64_t t = 1307 * static_cast<std::int64_t>(lap);
      EXPECT_EQ(c[3 * lap].end, t + 100) << "rank " << r << " lap " << lap;
      EXPECT_EQ(c[3 * lap + 1].end, t + 200) << "rank " << r << " lap " << lap;
      EXPECT_EQ(c[3 * lap + 2].start, t + 200) << "rank " << r << " lap " << lap;
      EXPECT_EQ(c[3 * lap + 2].end, t + 1307) << "rank " << r << " lap " << lap;
      EXPECT_EQ(c[3 * lap + 2].wait, 1107) << "rank " << r << " lap " << lap;
    }
  }
}

}  // namespace
}  // namespace encore
