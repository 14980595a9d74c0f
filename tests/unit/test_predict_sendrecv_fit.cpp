// The fit's pairing of a Sendrecv's send half: queued whatever its size, so that the sends and
// receives of its envelope stay paired in order (a small one gives no sample of L), and a
// rendezvous-size one is judged by the S the fit found, not by the default S.
#include "predict_capture.hpp"
#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/predict/fit.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

using namespace encore::testing;

// MPI_Sendrecv of `bytes` to `dest` and from `source`, both with `tag`, as recorded.
Event sendrecv(std::int64_t dest, std::int64_t source, std::int64_t tag, std::uint64_t bytes) {
  Event e = call(fn::Sendrecv);
  role_arg(e, Role::peer, 0).scalar = dest;
  role_arg(e, Role::tag, 0).scalar = tag;
  role_arg(e, Role::peer, 1).scalar = source;
  role_arg(e, Role::tag, 1).scalar = tag;
  role_arg(e, Role::status_out).statuses = {{0, source, tag, bytes, 0}};
  e.send_hashes.push_back({0, bytes});
  return e;
}

class PredictSendrecvFit : public TempDirTest {};

TEST_F(PredictSendrecvFit, SmallHalvesKeepTheEnvelopeInOrderAndGiveNoLatency) {
  // Both ranks exchange 1 B with a Sendrecv (tag 0), then rank 0 sends 1 B with tag 0 to a
  // receive of rank 1 already waiting: o 100 (the send's duration), and the only sample of L
  // is that pair, its receive ending 700 after the send began: L = 700 - 2o = 500. Were the
  // small Sendrecv's send half not queued, rank 0's send would pair with rank 1's Sendrecv,
  // which ended before it began (L clamped to 0).
  const TraceDir d(dir_);
  write_rank(d, 0,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(sendrecv(1, 1, 0, 1), 2000), 1'010'000},
              {timed(send(fn::Send, 1, 0, 1), 100), 1'020'500},
              {timed(call(fn::Finalize), 100), 1'300'000}});
  write_rank(d, 1,
             {{timed(call(fn::Init), 500), 1'000'000},
              {timed(sendrecv(0, 0, 0, 1), 2000), 1'010'000},
              {timed(recv(fn::Recv, 0, 0, 0, 1), 1200), 1'020'000},
              {timed(call(fn::Finalize), 100), 1'300'000}});
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_DOUBLE_EQ(f.params.o, 100);
  EXPECT_EQ(f.latency_samples, 1u);
  EXPECT_DOUBLE_EQ(f.params.L, 500);
  EXPECT_EQ(f.large_pairs, 0u);
}

TEST_F(PredictSendrecvFit, HalfAboveTheFittedThresholdIsALargePair) {
  // Blocking sends tell the protocol (fit_threshold): 4 KiB sends return before their receives
  // are posted (eager); 16 KiB ones wait for theirs (rendezvous). S is fitted at 8 KiB, below
  // the default. A 32 KiB Sendrecv, under the default S but above the fitted one, is then
  // a large pair: its receive, waiting since before it began, measures the class from 32 KiB.
  const TraceDir d(dir_);
  std::vector<std::pair<Event, std::uint64_t>> r0{{timed(call(fn::Init), 500), 1'000'000}};
  std::vector<std::pair<Event, std::uint64_t>> r1{{timed(call(fn::Init), 500), 1'000'000}};
  std::uint64_t t = 1'100'000;
  for (int i = 0; i < 8; ++i, t += 100'000) {
    // Eager: the send returns at t + 2000, its receive is posted at t + 50000.
    r0.push_back({timed(send(fn::Send, 1, 1, 4096), 2000), t});
    r1.push_back({timed(recv(fn::Recv, 0, 1, 0, 4096), 1000), t + 50'000});
  }
  for (int i = 0; i < 8; ++i, t += 100'000) {
    // Rendezvous: the receive is posted at t + 20000, the send ends 5000 after that.
    r0.push_back({timed(send(fn::Send, 1, 2, 16384), 25'000), t});
    r1.push_back({timed(recv(fn::Recv, 0, 2, 0, 16384), 5000), t + 20'000});
  }
  // The Sendrecv: rank 1 has waited in its own since 1000 before rank 0's began.
  r0.push_back({timed(sendrecv(1, 1, 3, 32768), 40'000), t + 1000});
  r1.push_back({timed(sendrecv(0, 0, 3, 32768), 41'000), t});
  r0.push_back({timed(call(fn::Finalize), 100), t + 100'000});
  r1.push_back({timed(call(fn::Finalize), 100), t + 100'000});
  write_rank(d, 0, r0);
  write_rank(d, 1, r1);
  const predict::FitReport f = predict::fit_params(d, save_capture(d));
  EXPECT_EQ(f.params.S, 8192u);
  // The 16 KiB pairs were posted late (no sample); rank 0's 32 KiB half pairs with rank 1's
  // receive, which began first. (Rank 1's half pairs with rank 0's, which began later.)
  EXPECT_EQ(f.large_pairs, 1u);
}

}  // namespace
}  // namespace encore
