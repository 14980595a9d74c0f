// Reductions in the loggps model: gamma (ns per byte combined) on hand-computed algorithm
// times, MPICH's Rabenseifner allreduce above 2048 B, and gamma fitted from a recorded Reduce
// once a Bcast gave G.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
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

TEST(PredictReduction, SmallReduceIsABinomialTree) {
  // 2000 B (at most kReduceShort) to root 0, eager: rank 1's send costs o + 1999 G = 100 +
  // 499.75 (rounded to 500) = 600; the root has the bytes at 600 + L + o = 1700, then combines
  // 2000 x 0.5 = 1000.
  const std::vector<std::int64_t> zero(2, 0);
  const auto t = predict::collective_end_times(CollKind::reduce, zero, 0, 2000, params(0.25, 0.5));
  EXPECT_EQ(t[0], 2700);
  EXPECT_EQ(t[1], 600);
  EXPECT_EQ(predict::algorithm_name(CollKind::reduce, 2048, 2), "binomial tree");
  // A Gather moves the same bytes but combines nothing.
  EXPECT_EQ(predict::collective_end_times(CollKind::gather, zero, 0, 2000, params(0.25, 0.5))[0],
            1700);
  EXPECT_TRUE(predict::reduces(CollKind::scan));
  EXPECT_FALSE(predict::reduces(CollKind::allgather));
}

TEST(PredictReduction, LargeReduceScattersThenGathersToTheRoot) {
  // MPICH's reduce_scatter_gather above 2048 B. 200002 B to root 1 on two ranks: they swap
  // halves of 100001 B (rendezvous: the handshake at o + L = 1100, each send done L + o +
  // 100000 G = 26100 later, 27200, the bytes in L + o after that, 28300) and each combines its
  // half, 100001 x 0.5 = 50000.5 rounded up: 78301 on both. Then rank 0 sends its half to the
  // root: the handshake at 78301 + 1100, its send done 26100 later (105501), the root's receive
  // 1100 after that (106601). The binomial tree had rank 0 leave at 52200 and the root combine
  // all 200002 B alone, until 153301; the plain run's non-root stays in MPI_Reduce until the
  // end, as here.
  const std::vector<std::int64_t> zero(2, 0);
  const auto t =
      predict::collective_end_times(CollKind::reduce, zero, 1, 200002, params(0.25, 0.5));
  EXPECT_EQ(t[1], 106601);
  EXPECT_EQ(t[0], 105501);
  EXPECT_EQ(predict::algorithm_name(CollKind::reduce, 2049, 2), "reduce-scatter + gather");
  // A late root (at 100000) holds the other rank's swap, rendezvous: rank 0 (the root) has its
  // half at max(0 + 1100, 100000) + 26100 + 1100 = 127200, rank 1 at max(100000 + 1100, 0) +
  // 26100 + 1100 = 128300; rank 1's half then reaches the root at 128300 + 1100 + 26100 + 1100
  // = 156600, its sender done at 155500.
  const std::vector<std::int64_t> late{100000, 0};
  const auto l = predict::collective_end_times(CollKind::reduce, late, 0, 200002, params(0.25, 0));
  EXPECT_EQ(l[0], 156600);
  EXPECT_EQ(l[1], 155500);
}

TEST(PredictReduction, LargeReduceOnThreeGivesTheExcludedRootRankZerosBlock) {
  // 4000 B to root 1 on three ranks, G 1, eager: rank 1 (odd, below 2 rem = 2) hands its
  // vector to rank 0: its send done at o + 3999 G = 4099, rank 0 has it at 4099 + L + o =
  // 5199 and combines 2000 (7199). Ranks 0 and 2 swap halves of 2000 B, combined: rank 0
  // max(7199 + 2099, 0 + 2099 + 1000) + 100 + 1000 = 10398, rank 2 max(2099, 7199 + 3099) +
  // 1100 = 11398. The root was excluded: rank 0 sends it its block (2000 B): done at 12497,
  // the root has it at max(4099, 10398 + 3099) + 100 = 13597 and plays rank 0's part; rank 2
  // sends it its half: done at 11398 + 2099 = 13497, the root has it at max(13597, 11398 +
  // 3099) + 100 = 14597.
  const std::vector<std::int64_t> zero(3, 0);
  const auto t = predict::collective_end_times(CollKind::reduce, zero, 1, 4000, params(1, 0.5));
  EXPECT_EQ(t[0], 12497);
  EXPECT_EQ(t[1], 14597);
  EXPECT_EQ(t[2], 13497);
}

TEST(PredictReduction, EachKindCombinesAtItsOwnGamma) {
  // The Reduce above at gamma 0.5, but gamma_by_kind gives reductions 0.2: each half 100001 x
  // 0.2 = 20000.2 -> 20000: the swap ends at 48300, the root at 48300 + 28300 = 76600. An
  // Allreduce (no gamma of its own) keeps gamma: 78301 after the swap, then the halves back,
  // 78301 + 28300 = 106601. A nonblocking one takes gamma_nonblocking first.
  LogGPSParams p = params(0.25, 0.5);
  p.gamma_by_kind["reduce"] = 0.2;
  const std::vector<std::int64_t> zero(2, 0);
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 1, 200002, p)[1], 76600);
  EXPECT_EQ(predict::collective_end_times(CollKind::allreduce, zero, 1, 200002, p)[1], 106601);
  p.gamma_nonblocking = 0.5;
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 1, 200002, p, true)[1], 106601);
  // The bisection fits the gamma given, whatever the kind's.
  const auto g = predict::collective_gamma(CollKind::reduce, zero, 1, 200002, p, 76600);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(*g, 0.2, 1e-4);
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
  // LargeReduceScattersThenGathersToTheRoot's Reduce ends at 106601 with gamma 0.5.
  const std::int64_t arrive[] = {0, 0};
  const auto g =
      predict::collective_gamma(CollKind::reduce, arrive, 1, 200002, params(0.25, 7), 106601);
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
  // The Reduce of LargeReduceScattersThenGathersToTheRoot, gamma 0.5, gamma_nonblocking 0.2:
  // the blocking one's root ends 28300 + 50001 (100001 x 0.5, rounded up) + 28300, the
  // nonblocking one's 28300 + 20000 (100001 x 0.2 = 20000.2) + 28300. Without
  // gamma_nonblocking both take gamma.
  LogGPSParams p = params(0.25, 0.5);
  const std::vector<std::int64_t> zero(2, 0);
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 1, 200002, p, true)[1], 106601);
  p.gamma_nonblocking = 0.2;
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 1, 200002, p)[1], 106601);
  EXPECT_EQ(predict::collective_end_times(CollKind::reduce, zero, 1, 200002, p, true)[1], 76600);
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
           {timed(coll(fn::Reduce, 300001), 156601), 1'200'000}};
  Calls r1{{timed(call(fn::Init), 500), 1'000'000},
           {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
           {timed(coll(fn::Bcast, 0), 78300), 1'030'000},
           {timed(coll(fn::Reduce, 300001), 155501), 1'200'000}};
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
  // of 262144 B and up, extended down to S + 1. A Reduce of 300001 B to rank 0 (halves of
  // 150001 B swapped and combined, then rank 1's half to the root: 2 x (3300 + 150000 G) =
  // 81600) then ends 81600 + 150001 gamma after the arrival: recorded 156601, gamma 0.5.
  // Without the Bcast the Reduce alone would give G (gamma 0).
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

TEST_F(PredictFitReduction, EachReductionKindGetsItsOwnGamma) {
  // The trace of AReduceGivesGammaOnceABcastGaveG (the Reduce at gamma 0.5), then an Allreduce
  // of 300001 B on both ranks at 1'500'000 recorded 111600: Rabenseifner on two ranks is the
  // Reduce's shape with the halves swapped back, 81600 + 150001 x 0.2. gamma is the median of
  // the two, 0.35, and each kind keeps its own; before, both were predicted at 0.35, the
  // Reduce 22500 ns short and the Allreduce 22500 ns long (150001 x 0.15).
  const TraceDir d(dir_);
  write_bcast_reduce(d, {{timed(coll(fn::Allreduce, 300001), 111600), 1'500'000}},
                     {{timed(coll(fn::Allreduce, 300001), 111600), 1'500'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.reduction_samples, 2u);
  EXPECT_NEAR(f.params.gamma, 0.35, 1e-4);
  ASSERT_EQ(f.params.gamma_by_kind.size(), 2u);
  EXPECT_NEAR(f.params.gamma_by_kind.at("reduce"), 0.5, 1e-4);
  EXPECT_NEAR(f.params.gamma_by_kind.at("allreduce"), 0.2, 1e-4);
  EXPECT_NE(predict::describe(f).find("from 2 reductions (allreduce 0.2000, reduce 0.5000)"),
            std::string::npos)
      << predict::describe(f);
  // Written and read back; a kind that is no reduction is named.
  const LogGPSParams back = predict::params_from_json(predict::to_json(f.params), "test");
  EXPECT_EQ(back.gamma_by_kind, f.params.gamma_by_kind);
  try {
    predict::params_from_json(nlohmann::json{{"gamma_by_kind", {{"bcast", 1.0}}}}, "p.json");
    ADD_FAILURE() << "bcast accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: gamma_by_kind: bcast: not a reduction"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(PredictFitReduction, AReduceAloneGivesGAndNoGamma) {
  // A Reduce of 300001 B without the Bcast: its class's G absorbs the combining, (231600 -
  // 6600) / 300000 = 0.75 (two messages of 150001 B, each 3300 + 150000 G), and gamma stays 0
  // with a note saying why.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'010'500},
              {timed(send(fn::Send, 1, 1, 512), 100), 1'020'600},
              {timed(coll(fn::Reduce, 300001), 231600), 1'200'000},
              {timed(call(fn::Finalize), 100), 1'500'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 1700), 1'010'000},
              {timed(coll(fn::Reduce, 300001), 230500), 1'200'000},
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
