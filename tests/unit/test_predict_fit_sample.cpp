// The fit's sample: how many events of each rank give pairs (fit_events_per_rank), that sends
// count over the whole trace, thinned evenly, and that sends interleaving envelopes still pair
// with their own receives.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/predict/fit.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;
using predict::fit_events_per_rank;

TEST(PredictFitSample, EventsPerRankShareABoundedTotal) {
  // Up to 20 ranks: 50000 each, as before the total; above, 1 M shared; never below 1000.
  EXPECT_EQ(fit_events_per_rank(2), predict::kFitEventsPerRank);
  EXPECT_EQ(fit_events_per_rank(20), 50000u);
  EXPECT_EQ(fit_events_per_rank(64), 15625u);
  EXPECT_EQ(fit_events_per_rank(1000), 1000u);
  EXPECT_EQ(fit_events_per_rank(100000), predict::kFitEventsMinPerRank);
  EXPECT_EQ(fit_events_per_rank(0), predict::kFitEventsPerRank);
  for (std::uint32_t n : {21u, 64u, 999u})
    EXPECT_LE(fit_events_per_rank(n) * n, predict::kFitEvents) << n;
}

class PredictFitSampleTrace : public TempDirTest {};

TEST_F(PredictFitSampleTrace, SendsFromTheWholeTracePairsFromTheFirstEvents) {
  // Rank 0: Init, two small sends of 100 ns, then two of 900 ns; rank 1 waits for each. Pairs
  // come from the first three events of each rank (two of four pairs); o from every send: the
  // mean of {100, 100, 900, 900}, 500 (before sends beyond the first events counted, the first
  // three events gave o = 100).
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'010'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'020'000},
              {timed(send(fn::Send, 1, 0, 8), 900), 1'030'000},
              {timed(send(fn::Send, 1, 0, 8), 900), 1'040'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2000), 1'009'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2000), 1'019'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2000), 1'029'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2000), 1'039'000}});
  const Manifest m = save_capture(d);
  const predict::FitReport head = predict::fit_params(d, m, 3);
  EXPECT_DOUBLE_EQ(head.params.o, 500);
  EXPECT_EQ(head.send_samples, 4u);
  EXPECT_EQ(head.pairs, 2u);
  EXPECT_EQ(head.events_read, 10u);
  EXPECT_EQ(head.ranks_cut, 2u);
  EXPECT_NE(predict::describe(head).find(
                "read 10 events (pairs from the first 3 of each rank; 2 ranks had more)"),
            std::string::npos)
      << predict::describe(head);
  const predict::FitReport all = predict::fit_params(d, m);
  EXPECT_DOUBLE_EQ(all.params.o, 500);
  EXPECT_EQ(all.pairs, 4u);
  EXPECT_EQ(all.ranks_cut, 0u);
  EXPECT_NE(predict::describe(all).find("read 10 events (all of them for pairs)"),
            std::string::npos);
}

TEST_F(PredictFitSampleTrace, SendDurationsAreThinnedEvenlyOverTheRun) {
  // 50000 small sends of 100 ns, then 50000 of 300 ns: more than the 65536 durations kept, so
  // every other one is dropped once that many were kept and every second one kept after;
  // both halves keep 25000, and o, their mean, is 200. Keeping the first 65536 would give
  // 147.4.
  const TraceDir d(dir_);
  std::vector<std::pair<Event, std::uint64_t>> calls{{timed(call(fn::Init), 500), 1'000'000}};
  for (std::uint64_t k = 0; k < 100'000; ++k)
    calls.push_back({timed(send(fn::Send, 1, 0, 8), k < 50'000 ? 100 : 300), 1'001'000 + k * 1000});
  write_rank(d, 0, std::move(calls));
  write_rank(d, 1, {{timed(call(fn::Init), 500), 1'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.send_samples, 100'000u);
  EXPECT_DOUBLE_EQ(f.params.o, 200);
}

TEST_F(PredictFitSampleTrace, OverheadIsTheSendsMeanWithTheirTopPercentCapped) {
  // 200 small sends: 191 of 100 ns, 8 of 1000 ns (the slow first send after a compute), one
  // stretched to 1 ms (the capture's writer taking the core). The 99th percentile (the 199th
  // of 200 in order) is 1000 ns, so the stretch counts as 1000: o = (191 * 100 + 9 * 1000) / 200
  // = 140.5 ns. The median said 100 (every slow send left out), the plain mean 5135.5 (one
  // stretch worth 50 sends).
  const TraceDir d(dir_);
  std::vector<std::pair<Event, std::uint64_t>> calls{{timed(call(fn::Init), 500), 1'000'000}};
  for (std::uint64_t k = 0; k < 200; ++k) {
    const std::uint64_t ns = k == 57 ? 1'000'000 : k % 25 == 3 ? 1000 : 100;
    calls.push_back({timed(send(fn::Send, 1, 0, 8), ns), 1'001'000 + k * 2'000'000});
  }
  write_rank(d, 0, std::move(calls));
  write_rank(d, 1, {{timed(call(fn::Init), 500), 1'000'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.send_samples, 200u);
  EXPECT_DOUBLE_EQ(f.params.o, 140.5);
}

TEST_F(PredictFitSampleTrace, LatencyIsFittedWithTheMedianSendsOverhead) {
  // Ten 8-byte sends, nine of 100 ns and one of 1000: o = (9 * 100 + 1000) / 10 = 190 (the
  // 99th percentile of ten is the largest), the median 100. Rank 1's receive waits for the first
  // send and ends 1200 ns after it started: L = 1200 - 2 * 100 - 7 * 0.1 (G's default, one size)
  // = 999.3 with the median's o, the overhead of the fast pairs L comes from; the mean's would
  // say 819.3.
  const TraceDir d(dir_);
  std::vector<std::pair<Event, std::uint64_t>> calls{{timed(call(fn::Init), 500), 1'000'000}};
  for (std::uint64_t k = 0; k < 10; ++k)
    calls.push_back({timed(send(fn::Send, 1, 0, 8), k == 4 ? 1000 : 100), 1'010'000 + k * 10'000});
  write_rank(d, 0, std::move(calls));
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2200), 1'009'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 190);
  EXPECT_EQ(f.latency_samples, 1u);
  EXPECT_NEAR(f.params.L, 999.3, 1e-9);
}

TEST_F(PredictFitSampleTrace, InterleavedEnvelopesPairWithTheirOwnReceives) {
  // Rank 0 sends tag 0, tag 1, tag 0 (100 ns each, 8 and 512 B: o 100, G 0); rank 1's waiting
  // receives end 1500, 1000 and 2000 ns after 2o past their sends: three pairs, L 1000 (the
  // tenth percentile of three is the lowest). A send queued under the wrong envelope would
  // leave a tag-0 receive unpaired.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'010'000},
              {timed(send(fn::Send, 1, 1, 512), 100), 1'020'000},
              {timed(send(fn::Send, 1, 0, 8), 100), 1'030'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 2700), 1'009'000},
              {timed(recv(fn::Recv, 0, 1, 0, 512), 2200), 1'019'000},
              {timed(recv(fn::Recv, 0, 0, 0, 8), 3200), 1'029'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_DOUBLE_EQ(f.params.G, 0);
  EXPECT_EQ(f.pairs, 3u);
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
}

}  // namespace
}  // namespace encore
