// G fitted from recorded collectives: the bisection of collective_G on hand-computed algorithm
// times, and the fit giving a size class no rendezvous pair measured the G of a Bcast.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/manifest.hpp"
#include "encore/predict/collectives.hpp"
#include "encore/predict/fit.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;
using predict::CollKind;
using predict::LogGPSParams;

LogGPSParams params() {
  LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.G = 5;  // replaced by the G being fitted, every size alike
  p.G_classes = {{1000, 7}};
  return p;
}

TEST(PredictCollectiveFit, BcastGivesTheGOfItsOneMessage) {
  // Binomial tree on 2 ranks arriving at 0, one rendezvous message (100001 B > S): the
  // handshake at max(0 + o + L, 0) = 1100, the root's send ends L + o + (n-1)G later, rank 1
  // L + o after that: 3300 + 100000 G.
  const std::int64_t arrive[] = {0, 0};
  const auto g = predict::collective_G(CollKind::bcast, arrive, 0, 100001, params(), 28300);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(g->G, 0.25, 1e-4);
  EXPECT_EQ(g->message, 100001u);
}

TEST(PredictCollectiveFit, AllreduceSwapsHalvesAndWaitsForTheLateMember) {
  // 200002 B on 2 ranks (Rabenseifner): two exchanges of 100001 B, rendezvous both ways (X =
  // 100000 G; a message's sender ends at max(its start + o + L, the receiver's) + L + o + X,
  // its receiver L + o after that). Rank 1 arrives at 5000. Swap one: rank 0's half goes at
  // max(1100, 5000) = 5000, sent 6100 + X; rank 1's at max(6100, 0), sent 7200 + X, received
  // by rank 0 at 8300 + X; so rank 0 is done at 8300 + X, rank 1 at max(7200 + X, 6100 + X +
  // 1100) = 7200 + X. Swap two: rank 0's half goes at max(9400 + X, 7200 + X), sent 10500 +
  // 2X, received by rank 1 at 11600 + 2X, the last end (rank 1's goes at max(8300 + X, 8300 +
  // X): rank 0 done at 10500 + 2X).
  const std::int64_t arrive[] = {0, 5000};
  const auto g = predict::collective_G(CollKind::allreduce, arrive, 0, 200002, params(), 61600);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(g->G, 0.25, 1e-4);
  EXPECT_EQ(g->message, 100001u);
}

TEST(PredictCollectiveFit, FasterThanLatencyAloneGivesZeroAndEmptyGivesNothing) {
  const std::int64_t arrive[] = {0, 0};
  const auto g = predict::collective_G(CollKind::bcast, arrive, 0, 100001, params(), 1000);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->G, 0);
  EXPECT_FALSE(predict::collective_G(CollKind::bcast, arrive, 0, 0, params(), 5000).has_value());
  const std::int64_t one[] = {0};
  EXPECT_FALSE(predict::collective_G(CollKind::bcast, one, 0, 100001, params(), 5000).has_value());
  // 1e12 ns for 1e5 B: more than kMaxFittedG ns per byte.
  EXPECT_FALSE(
      predict::collective_G(CollKind::bcast, arrive, 0, 100001, params(), 1'000'000'000'000)
          .has_value());
}

class PredictFitFromCollectives : public TempDirTest {
 protected:
  // o 100 and L 1000 from an 8 B pair (as in test_predict_size_classes), then a Bcast of
  // 100001 B from rank 0 (its send hash says the size; rank 1 knows none), both arriving at
  // 1'030'000; `bcast` is rank 1's.
  predict::FitReport fit_bcast(const Event& bcast) {
    const TraceDir d(dir_);
    write_rank(d, 0,
               {{timed(call(fn::Init), 500), 1'000'000},
                {timed(send(fn::Send, 1, 0, 8), 100), 1'010'500},
                {timed(send(fn::Send, 1, 1, 512), 100), 1'020'600},
                {timed(coll(fn::Bcast, 100001), 27200), 1'030'000},
                {timed(call(fn::Finalize), 100), 1'070'000}});
    write_rank(d, 1,
               {{timed(call(fn::Init), 500), 1'000'000},
                {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
                {bcast, 1'030'000},
                {timed(call(fn::Finalize), 100), 1'070'000}});
    return predict::fit_params(d, save_capture(d));
  }
};

TEST_F(PredictFitFromCollectives, ABcastGivesItsClassAG) {
  // Rank 1 ends 28300 after both arrived (3300 + 100000 G, BcastGivesTheGOfItsOneMessage), so
  // G = 0.25 from 65537 B (the class of 100001 B).
  const predict::FitReport f = fit_bcast(timed(coll(fn::Bcast, 0), 28300));
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
  EXPECT_TRUE(f.warnings.empty()) << f.warnings;
  EXPECT_EQ(f.large_pairs, 0u);
  EXPECT_EQ(f.collective_samples, 1u);
  ASSERT_EQ(f.params.G_classes.size(), 1u);
  EXPECT_EQ(f.params.G_classes[0].from, 65537u);
  EXPECT_NEAR(f.params.G_classes[0].G, 0.25, 1e-4);
  EXPECT_NE(predict::describe(f).find("1 collectives"), std::string::npos) << predict::describe(f);
}

TEST_F(PredictFitFromCollectives, AFirstReadIsNoPartOfTheTransfer) {
  // The same with rank 1's Bcast 9000 ns longer, all of it the first read of what it received
  // (format 1.3): the same G, as the fit leaves the first read out.
  Event bcast = timed(coll(fn::Bcast, 0), 28300 + 9000);
  bcast.first_read_ns = 9000;
  const predict::FitReport f = fit_bcast(bcast);
  ASSERT_EQ(f.params.G_classes.size(), 1u);
  EXPECT_NEAR(f.params.G_classes[0].G, 0.25, 1e-4);
  // Counted as transfer, it would give another G.
  bcast.first_read_ns = 0;
  const predict::FitReport without = fit_bcast(bcast);
  ASSERT_EQ(without.params.G_classes.size(), 1u);
  EXPECT_GT(without.params.G_classes[0].G, 0.3);
}

TEST_F(PredictFitFromCollectives, AnImplausibleLFallsBackToTheFastestPairWithAWarning) {
  // Ten 8 B pairs (o 100 from the sends): nine receives end 50200 ns after their send began
  // (L 50 us: a loaded recording), one 1200 (L 1000). The tenth percentile is 50 us, above
  // kMaxPlausibleL: the fit takes the fastest pair and says so.
  const TraceDir d(dir_);
  std::vector<std::pair<Event, std::uint64_t>> r0{{timed(call(fn::Init), 500), 1'000'000}};
  std::vector<std::pair<Event, std::uint64_t>> r1{{timed(call(fn::Init), 500), 1'000'000}};
  for (std::uint64_t i = 0; i < 10; ++i) {
    const std::uint64_t t = 1'010'000 + i * 100'000;
    r0.push_back({timed(send(fn::Send, 1, 0, 8), 100), t + 500});
    r1.push_back({timed(recv(fn::Recv, 0, 0, 0, 8), i == 3 ? 1700 : 50700), t});
  }
  r0.push_back({timed(send(fn::Send, 1, 1, 512), 100), 2'900'000});  // G 0: same duration
  r0.push_back({timed(call(fn::Finalize), 100), 3'000'000});
  r1.push_back({timed(call(fn::Finalize), 100), 3'000'000});
  write_rank(d, 0, r0);
  write_rank(d, 1, r1);
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
  EXPECT_NE(f.warnings.find("L fitted at 50.0 us"), std::string::npos) << f.warnings;
  EXPECT_NE(predict::describe(f).find("warning: L fitted"), std::string::npos);
}

}  // namespace
}  // namespace encore
