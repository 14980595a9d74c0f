// The fit's receives completed by Wait* and Test*: an Irecv's pair is timed from the completing
// call (a Wait*'s start, a Test* loop's first poll) to its end, one sample per completing call.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/predict/fit.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

class PredictWaitFit : public TempDirTest {};

Event completing(std::uint16_t f, const std::vector<std::uint64_t>& request_events,
                 std::vector<StatusRecord> statuses) {
  Event e = f == fn::Waitall ? waitall(request_events) : call(f);
  if (f == fn::Waitall) {
    role_arg(e, Role::status_array).statuses = std::move(statuses);
  } else {
    role_arg(e, Role::request_inout).requests = {{false, 0, request_events.at(0)}};
    role_arg(e, Role::status_out).statuses = std::move(statuses);
  }
  return e;
}

Event test_call(std::uint64_t request_event, bool flag, std::int64_t source, std::int64_t tag) {
  Event e = completing(fn::Test, {request_event}, {{0, source, tag, 8, 0}});
  role_arg(e, Role::int_out).scalar = flag ? 1 : 0;
  return e;
}

TEST_F(PredictWaitFit, IrecvsCompletedByWaitallGiveOneSamplePerCall) {
  // o 100 (Isends of 100 ns), G 0 (8 and 512 B sends equally fast). Rank 1's Waitall (from
  // 1'010'200, before both sends) ends at 1'011'900: tag 1 sent at 1'010'700 gives
  // 1'011'900 - 1'010'700 - 2o = 1000, tag 0 (sent at 1'010'500) 1200: the call's sample is
  // 1000. The wildcard Irecv is paired by its status. Tag 2: the Waitall began after the send
  // (late), no sample. Tag 3: a Test loop whose first poll (1'039'500) was before the send
  // (1'040'000), found at 1'041'400: 1200. L = the tenth percentile of {1000, 1200} = 1000.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Isend, 1, 0, 8), 100), 1'010'500},
              {timed(send(fn::Isend, 1, 1, 512), 100), 1'010'700},
              {timed(waitall({1, 2}), 100), 1'010'900},
              {timed(send(fn::Isend, 1, 2, 8), 100), 1'020'000},
              {timed(waitall({4}), 50), 1'020'200},
              {timed(send(fn::Isend, 1, 3, 8), 100), 1'040'000},
              {timed(waitall({6}), 50), 1'040'200},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Irecv, 0, 0, 0, 8), 50), 1'010'000},
              {timed(recv(fn::Irecv, kAnySource, 1, 0, 512), 50), 1'010'100},
              {timed(completing(fn::Waitall, {1, 2}, {{0, 0, 0, 8, 0}, {0, 0, 1, 512, 0}}), 1700),
               1'010'200},
              {timed(recv(fn::Irecv, 0, 2, 0, 8), 50), 1'020'000},
              {timed(completing(fn::Waitall, {4}, {{0, 0, 2, 8, 0}}), 100), 1'030'000},
              {timed(recv(fn::Irecv, 0, 3, 0, 8), 50), 1'039'000},
              {timed(test_call(6, false, 0, 0), 50), 1'039'500},
              {timed(test_call(6, false, 0, 0), 50), 1'040'600},
              {timed(test_call(6, true, 0, 3), 400), 1'041'000},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_DOUBLE_EQ(f.params.G, 0);
  EXPECT_EQ(f.pairs, 4u);
  EXPECT_EQ(f.latency_samples, 2u);
  EXPECT_DOUBLE_EQ(f.params.L, 1000);
}

TEST_F(PredictWaitFit, ATestLoopMeasuresFromItsFirstPollAndOnlyIfThatWasBeforeTheSend) {
  // Tag 0: polls from 1'009'000, the send at 1'010'000 (o 100; one send size: G the
  // default), found by the poll ending at 1'011'500: L = 1'011'500 - 1'010'000 - 200 - 7G.
  // Tag 1: the first poll (1'021'000) after the send (1'020'000), then a Wait: the Wait also
  // began after the send, no sample.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Isend, 1, 0, 8), 100), 1'010'000},
              {timed(waitall({1}), 50), 1'010'200},
              {timed(send(fn::Isend, 1, 1, 8), 100), 1'020'000},
              {timed(waitall({3}), 50), 1'020'200},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Irecv, 0, 0, 0, 8), 50), 1'008'000},
              {timed(test_call(1, false, 0, 0), 50), 1'009'000},
              {timed(test_call(1, false, 0, 0), 50), 1'010'000},
              {timed(test_call(1, false, 0, 0), 50), 1'011'000},
              {timed(test_call(1, true, 0, 0), 100), 1'011'400},
              {timed(recv(fn::Irecv, 0, 1, 0, 8), 50), 1'019'000},
              {timed(test_call(6, false, 0, 0), 50), 1'021'000},
              {timed(completing(fn::Wait, {6}, {{0, 0, 1, 8, 0}}), 500), 1'022'000},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.pairs, 2u);
  EXPECT_EQ(f.latency_samples, 1u);
  EXPECT_DOUBLE_EQ(f.params.G, predict::LogGPSParams{}.G);
  EXPECT_DOUBLE_EQ(f.params.L, 1300 - 7 * f.params.G);
}

TEST_F(PredictWaitFit, AHaloExchangeFitsOFromTheSizesLineAndLFromItsWaitall) {
  // No send of 1 KiB or less: the fastest 2048 B send took 612 ns, the 4096 B one 1124 (the
  // one to MPI_PROC_NULL, 30 ns, is no sample): G 0.25, the line meets size 0 at o = 100. The
  // Waitall (from 1'009'200, before both sends) ended at 1'013'000: the later send (4096 B at
  // 1'010'700) gives 1'013'000 - 1'010'700 - 2o - 4095 G = 1076.25, the earlier 2288.25: L =
  // 1076.25.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Isend, 1, 0, 2048), 612), 1'010'000},
              {timed(send(fn::Isend, 1, 1, 4096), 1124), 1'010'700},
              {timed(waitall({1, 2}), 100), 1'011'900},
              {timed(send(fn::Isend, kProcNull, 2, 4096), 30), 1'012'000},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  write_rank(
      d, 1,
      {{timed(call(fn::Init), 500), 1'000'000},
       {timed(recv(fn::Irecv, 0, 0, 0, 2048), 50), 1'009'000},
       {timed(recv(fn::Irecv, 0, 1, 0, 4096), 50), 1'009'100},
       {timed(completing(fn::Waitall, {1, 2}, {{0, 0, 0, 2048, 0}, {0, 0, 1, 4096, 0}}), 3800),
        1'009'200},
       {timed(call(fn::Finalize), 100), 1'100'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.send_samples, 0u);
  EXPECT_DOUBLE_EQ(f.params.G, 0.25);
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_NE(f.notes.find("o: no small sends, the intercept"), std::string::npos) << f.notes;
  EXPECT_EQ(f.latency_samples, 1u);
  EXPECT_DOUBLE_EQ(f.params.L, 1076.25);
}

TEST_F(PredictWaitFit, IrecvsPairInPostingOrderWhateverOrderTheyComplete) {
  // Two Irecvs of one envelope, the second waited for first: it holds the second send (MPI
  // matches in posting order), 1'020'000, its Wait ending at 1'021'500: L = 1500 - 2o - 7G.
  // The first Irecv's Wait began after the first send: no sample. (Paired in completion order,
  // the second Wait would give 11'500 - 2o - 7G.)
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Isend, 1, 0, 8), 100), 1'010'000},
              {timed(send(fn::Isend, 1, 0, 8), 100), 1'020'000},
              {timed(waitall({1, 2}), 100), 1'020'200},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Irecv, 0, 0, 0, 8), 50), 1'009'000},
              {timed(recv(fn::Irecv, 0, 0, 0, 8), 50), 1'009'100},
              {timed(completing(fn::Wait, {2}, {{0, 0, 0, 8, 0}}), 12'300), 1'009'200},
              {timed(completing(fn::Wait, {1}, {{0, 0, 0, 8, 0}}), 100), 1'021'600},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.pairs, 2u);
  EXPECT_EQ(f.latency_samples, 1u);
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_DOUBLE_EQ(f.params.L, 1500 - 200 - 7 * f.params.G);
}

TEST_F(PredictWaitFit, BothDirectionsCancelAClockOffsetError) {
  // Rank 1's clock reads 3000 ns early (its offset estimate was off); o 100, G the default
  // (one send size), true L 1000. 0 -> 1: the send at 1'010'000, rank 1's Wait ends at true
  // 1'011'200, recorded 1'008'200: -2000 - 7G. 1 -> 0: the send at true 1'020'000, recorded
  // 1'017'000, rank 0's Wait ends at 1'021'200: 4000 - 7G. One way alone would give 0 or
  // 4000; both ways, the mean: 1000 - 7G.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Isend, 1, 0, 8), 100), 1'010'000},
              {timed(waitall({1}), 50), 1'010'200},
              {timed(recv(fn::Irecv, 1, 1, 1, 8), 50), 1'015'900},
              {timed(completing(fn::Wait, {3}, {{0, 1, 1, 8, 0}}), 5200), 1'016'000},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Irecv, 0, 0, 0, 8), 50), 1'007'900},
              {timed(completing(fn::Wait, {1}, {{0, 0, 0, 8, 0}}), 200), 1'008'000},
              {timed(send(fn::Isend, 0, 1, 8), 100), 1'017'000},
              {timed(waitall({3}), 50), 1'017'200},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.latency_samples, 2u);
  EXPECT_EQ(f.latency_rank_pairs, 1u);
  EXPECT_DOUBLE_EQ(f.params.G, predict::LogGPSParams{}.G);
  EXPECT_DOUBLE_EQ(f.params.L, 1000 - 7 * f.params.G);
}

TEST_F(PredictWaitFit, NoWaitingReceiveKeepsTheDefaultL) {
  // Only a Wait that began after its send: L stays the default and the notes say why.
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(send(fn::Isend, 1, 0, 8), 100), 1'010'000},
              {timed(waitall({1}), 50), 1'010'200},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(recv(fn::Irecv, 0, 0, 0, 8), 50), 1'009'000},
              {timed(completing(fn::Wait, {1}, {{0, 0, 0, 8, 0}}), 50), 1'012'000},
              {timed(call(fn::Finalize), 100), 1'100'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.pairs, 1u);
  EXPECT_EQ(f.latency_samples, 0u);
  EXPECT_DOUBLE_EQ(f.params.L, predict::LogGPSParams{}.L);
  EXPECT_NE(f.notes.find("L: no send matched"), std::string::npos);
}

}  // namespace
}  // namespace encore
