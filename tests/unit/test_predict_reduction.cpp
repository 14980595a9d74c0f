// Reductions in the loggps model: gamma (ns per byte combined) on hand-computed algorithm
// times, MPICH's Rabenseifner allreduce above 2048 B, and gamma fitted from a recorded Reduce
// once a Bcast gave G.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/manifest.hpp"
#include "encore/predict/collectives.hpp"
#include "encore/predict/fit.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;
using predict::CollKind;
using predict::LogGPSParams;

LogGPSParams params(double G, double gamma) {
  LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.G = G;
  p.S = 65536;
  p.gamma = gamma;
  return p;
}

TEST(PredictReduction, ReduceRootCombinesWhatItReceives) {
  // Binomial tree of two to root 0, one rendezvous message (100001 B > S): the handshake at
  // max(0 + o + L, 0) = 1100; rank 1's send ends L + o + 100000 G later, 27200; the root has
  // the bytes L + o after that, 28300, then spends 100001 gamma = 50000.5 (rounded up)
  // combining them.
  const std::vector<std::int64_t> zero(2, 0);
  const auto t =
      predict::collective_end_times(CollKind::reduce, zero, 0, 100001, params(0.25, 0.5));
  EXPECT_EQ(t[0], 28300 + 50001);
  EXPECT_EQ(t[1], 27200);  // the sender waits for its bytes to move
  // A late root holds the sender (rendezvous): root at 100000, the handshake then, the
  // sender done at 100000 + L + o + 25000.
  const std::vector<std::int64_t> late{100000, 0};
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, late, 0, 100001, params(0.25, 0))[1],
            126100);
  // A Gather moves the same bytes but combines nothing.
  const auto g =
      predict::collective_end_times(CollKind::gather, zero, 0, 100001, params(0.25, 0.5));
  EXPECT_EQ(g[0], 28300);
  EXPECT_TRUE(predict::reduces(CollKind::scan));
  EXPECT_FALSE(predict::reduces(CollKind::allgather));
}

TEST(PredictReduction, RabenseifnerOnFourHalvesThenDoubles) {
  // 4000 B, G 1, gamma 0.5. Recursive halving: partners at distance 1 swap 2000 B:
  // 100 + 1999 + 1000 + 100 + 1000 (combine) = 4199; at distance 2, 1000 B: + 100 + 999 +
  // 1000 + 100 + 500 = 6898. Recursive doubling back without combining: 1000 B, + 2099 + 100
  // = 9097; 2000 B, + 3099 + 100 = 12296.
  const std::vector<std::int64_t> zero(4, 0);
  const auto t = predict::collective_end_times(CollKind::allreduce, zero, 0, 4000, params(1, 0.5));
  for (const std::int64_t end : t) EXPECT_EQ(end, 12296);
  EXPECT_EQ(predict::algorithm_name(CollKind::allreduce, 4000, 4), "Rabenseifner");
  EXPECT_EQ(predict::algorithm_name(CollKind::allreduce, 2048, 4), "recursive doubling");
}

TEST(PredictReduction, RabenseifnerOnThreeFoldsTheExtraRankIn) {
  // Rank 0 hands its 4000 B to rank 1 (rank 1: 100 + 3999 + 1000 + 100 + 2000 = 7199; rank 0
  // free at 4099). Ranks 1 and 2 swap 2000 B (send 2099) combined: rank 1 max(7199 + 2099,
  // 0 + 2099 + 1000) + 1100 = 10398, rank 2 max(2099, 7199 + 3099) + 1100 = 11398; then swap
  // back uncombined: rank 1 max(12497, 11398 + 3099) + 100 = 14597, rank 2 max(13497, 10398
  // + 3099) + 100 = 13597. Rank 1 returns the result: rank 0 gets it at 14597 + 4099 + 1000
  // + 100.
  const std::vector<std::int64_t> zero(3, 0);
  const auto t = predict::collective_end_times(CollKind::allreduce, zero, 0, 4000, params(1, 0.5));
  EXPECT_EQ(t[0], 14597 + 4099 + 1000 + 100);
  EXPECT_EQ(t[1], 14597 + 4099);
  EXPECT_EQ(t[2], 13597);
}

TEST(PredictReduction, GammaBisectsToTheRecordedEnd) {
  const std::int64_t arrive[] = {0, 0};
  const auto g = predict::collective_gamma(CollKind::reduce, arrive, 0, 100001, params(0.25, 7),
                                           28300 + 50001);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(*g, 0.5, 1e-4);
  // Not a reduction, or ended before the messages alone could: nothing, or 0.
  EXPECT_FALSE(predict::collective_gamma(CollKind::bcast, arrive, 0, 100001, params(0.25, 0), 1e6)
                   .has_value());
  EXPECT_EQ(predict::collective_gamma(CollKind::reduce, arrive, 0, 100001, params(0.25, 0), 100),
            0.0);
}

TEST(PredictReduction, NonblockingCollectiveCompletesAtItsWait) {
  // An Ibarrier (0 B) costs o to start; rank 1 starts it at 3000. One dissemination round:
  // rank 0's Wait ends max(0 + 100, 3000 + 100 + 1000) + 100 = 4200, rank 1's max(3100, 1100)
  // + 100 = 3200. Before nonblocking collectives were classed, both kept their recorded
  // durations and the Wait found no request.
  Event w = call(fn::Wait);
  role_arg(w, Role::request_inout).requests = {{false, 0, 0}};
  auto f = feeds({{{call(fn::Ibarrier, 9999)}, {w}}, {{call(fn::Ibarrier, 9999), 3000}, {w}}});
  KeepSink s;
  predict::run_loggps(f, params(1, 0), s);
  EXPECT_EQ(s.calls[0][0].end, 100);
  EXPECT_EQ(s.calls[0][1].end, 4200);
  EXPECT_EQ(s.calls[1][0].end, 3100);
  EXPECT_EQ(s.calls[1][1].end, 3200);
}

TEST(PredictReduction, NonblockingReductionCombinesAtItsOwnGamma) {
  // The Reduce of ReduceRootCombinesWhatItReceives, gamma 0.5, gamma_nonblocking 0.2: the
  // blocking one's root ends 28300 + 50001 (100001 x 0.5, rounded up), the nonblocking one's
  // 28300 + 20000 (100001 x 0.2 = 20000.2). Without gamma_nonblocking both take gamma.
  LogGPSParams p = params(0.25, 0.5);
  const std::vector<std::int64_t> zero(2, 0);
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 0, 100001, p, true)[0],
            28300 + 50001);
  p.gamma_nonblocking = 0.2;
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 0, 100001, p)[0], 28300 + 50001);
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 0, 100001, p, true)[0],
            28300 + 20000);
  // In the engine: an Iallreduce of 300001 B on two ranks (Rabenseifner: halves of 150001 B
  // swapped, each rendezvous: the handshake at o + L = 1100, the send done 1000 + 100 + 37500
  // later (G 0.25), 39700; the bytes in L + o after that, 40800, combined: + 30000 at gamma_nb
  // 0.2 = 70800; swapped back uncombined: + 40800 = 111600), its Wait right after its start:
  // 111600 on both ranks; at gamma 0.5 instead, 75000.5 rounded up for the combine: 156601.
  Event w = call(fn::Wait);
  role_arg(w, Role::request_inout).requests = {{false, 0, 0}};
  Event iallreduce = coll(fn::Iallreduce, 300001);
  iallreduce.payloads.push_back({0, 0, 0, 300001, 0});  // what it received, as recorded
  for (const bool own : {true, false}) {
    LogGPSParams q = params(0.25, 0.5);
    if (own) q.gamma_nonblocking = 0.2;
    auto f = feeds({{{iallreduce}, {w}}, {{iallreduce}, {w}}});
    KeepSink s;
    predict::run_loggps(f, q, s);
    EXPECT_EQ(s.calls[0][1].end, own ? 111600 : 156601);
    EXPECT_EQ(s.calls[1][1].end, own ? 111600 : 156601);
  }
}

class PredictFitReduction : public TempDirTest {};

using Calls = std::vector<std::pair<Event, std::uint64_t>>;  // (event, start)

// The trace of AReduceGivesGammaOnceABcastGaveG: an 8 B pair, a Bcast and a Reduce of 300001
// B, then each rank's `more` calls and MPI_Finalize at 2'000'000.
void write_bcast_reduce(const TraceDir& d, const Calls& more0, const Calls& more1) {
  Calls r0{{timed(call(fn::Init), 500), 1'000'000},
           {timed(send(fn::Send, 1, 0, 8), 100), 1'010'500},
           {timed(send(fn::Send, 1, 1, 512), 100), 1'020'600},
           {timed(coll(fn::Bcast, 300001), 77200), 1'030'000},
           {timed(coll(fn::Reduce, 300001), 228301), 1'200'000}};
  Calls r1{{timed(call(fn::Init), 500), 1'000'000},
           {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
           {timed(coll(fn::Bcast, 0), 78300), 1'030'000},
           {timed(coll(fn::Reduce, 300001), 77200), 1'200'000}};
  r0.insert(r0.end(), more0.begin(), more0.end());
  r1.insert(r1.end(), more1.begin(), more1.end());
  r0.push_back({timed(call(fn::Finalize), 100), 2'000'000});
  r1.push_back({timed(call(fn::Finalize), 100), 2'000'000});
  write_rank(d, 0, std::move(r0));
  write_rank(d, 1, std::move(r1));
}

TEST_F(PredictFitReduction, AnIallreduceGivesTheNonblockingGamma) {
  // The trace of AReduceGivesGammaOnceABcastGaveG (L 1000, o 100, G 0.25 above S, gamma 0.5
  // from the Reduce) and then an Iallreduce of 300001 B started by both ranks at 1'500'000
  // and completed by a Wait right after: the last Wait ends at 1'611'600, which the
  // engine's Iallreduce reaches at gamma 0.2 (NonblockingReductionCombinesAtItsOwnGamma:
  // 81600 + 150001 gamma after the start). The blocking gamma stays 0.5. Before the fit
  // knew nonblocking collectives, gamma_nonblocking stayed unset and the Iallreduce was
  // predicted at 0.5 (156601 ns, recorded 111600).
  const TraceDir d(dir_);
  Event w0 = call(fn::Wait), w1 = call(fn::Wait);
  role_arg(w0, Role::request_inout).requests = {{false, 0, 5}};  // rank 0's event 5
  role_arg(w1, Role::request_inout).requests = {{false, 0, 4}};  // rank 1's event 4
  role_arg(w0, Role::status_out).statuses = {{}};                // MPI_STATUS_IGNORE's empty record
  role_arg(w1, Role::status_out).statuses = {{}};
  write_bcast_reduce(
      d, {{timed(coll(fn::Iallreduce, 300001), 100), 1'500'000}, {timed(w0, 111'500), 1'500'100}},
      {{timed(coll(fn::Iallreduce, 300001), 100), 1'500'000}, {timed(w1, 111'000), 1'500'100}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.reduction_samples, 1u);
  EXPECT_NEAR(f.params.gamma, 0.5, 1e-4);
  EXPECT_EQ(f.nonblocking_reduction_samples, 1u);
  ASSERT_TRUE(f.params.gamma_nonblocking.has_value());
  EXPECT_NEAR(*f.params.gamma_nonblocking, 0.2, 1e-4);
  EXPECT_NE(predict::describe(f).find("nonblocking reductions' gamma 0.2000 ns/B from 1"),
            std::string::npos)
      << predict::describe(f);
  // Written and read back with the other parameters.
  const LogGPSParams back = predict::params_from_json(predict::to_json(f.params), "test");
  ASSERT_TRUE(back.gamma_nonblocking.has_value());
  EXPECT_DOUBLE_EQ(*back.gamma_nonblocking, *f.params.gamma_nonblocking);
  EXPECT_FALSE(predict::params_from_json(nlohmann::json::object(), "t").gamma_nonblocking);
}

TEST_F(PredictFitReduction, AReduceGivesGammaOnceABcastGaveG) {
  // o 100, L 1000 from an 8 B pair. A Bcast of 300001 B (rendezvous) ends rank 1 at 3300 +
  // 300000 G = 78300 after both arrived (test_predict_collective_fit): G 0.25, for the class
  // of 262144 B and up, extended down to S + 1. A Reduce of 300001 B to rank 0 then ends
  // 78300 + 300001 gamma after the arrival: recorded 228301, gamma 0.5. Without the Bcast the
  // Reduce alone would give G (gamma 0).
  const TraceDir d(dir_);
  write_bcast_reduce(d, {}, {});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
  EXPECT_EQ(f.collective_samples, 1u);
  EXPECT_EQ(f.reduction_samples, 1u);
  ASSERT_EQ(f.params.G_classes.size(), 1u);
  EXPECT_EQ(f.params.G_classes[0].from, 65537u);
  EXPECT_NEAR(f.params.G_classes[0].G, 0.25, 1e-4);
  EXPECT_NEAR(f.params.gamma, 0.5, 1e-4);
  EXPECT_NE(predict::describe(f).find("gamma 0.5000 ns/B from 1 reductions"), std::string::npos)
      << predict::describe(f);
}

TEST_F(PredictFitReduction, AReduceAloneGivesGAndNoGamma) {
  // The same Reduce without the Bcast: its class's G absorbs the combining, (228300 - 3300) /
  // 300000 = 0.75, and gamma stays 0 with a note saying why.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'010'500},
              {timed(send(fn::Send, 1, 1, 512), 100), 1'020'600},
              {timed(coll(fn::Reduce, 300001), 228300), 1'200'000},
              {timed(call(fn::Finalize), 100), 1'500'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
              {timed(coll(fn::Reduce, 300001), 227200), 1'200'000},
              {timed(call(fn::Finalize), 100), 1'500'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.collective_samples, 1u);
  EXPECT_EQ(f.reduction_samples, 0u);
  ASSERT_EQ(f.params.G_classes.size(), 1u);
  EXPECT_NEAR(f.params.G_classes[0].G, 0.75, 1e-4);
  EXPECT_EQ(f.params.gamma, 0);
  EXPECT_NE(f.notes.find("gamma: no G measured apart from the reductions"), std::string::npos)
      << f.notes;
}

}  // namespace
}  // namespace encore
