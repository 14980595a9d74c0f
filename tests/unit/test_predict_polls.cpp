// A polling loop of MPI_Test in the loggps model: its failed polls wait until the model knows
// when their request completes, and those after that cost nothing, so the loop ends when the
// model's request does, not after the recording's number of polls; a loop that feeds its own
// request's peer is released with the recorded durations. (L 1000, o 100, G 1, S 1000.)
#include "predict_events.hpp"
#include <gtest/gtest.h>

#include "encore/predict/loggps_engine.hpp"

namespace encore {
namespace {

using namespace encore::testing;

// MPI_Test of the request made by event `request_event`, `dur` ns long as recorded.
Event test_of(std::uint64_t request_event, bool flag, std::uint64_t dur) {
  Event e = call(fn::Test, dur);
  role_arg(e, Role::request_inout).requests = {{false, 0, request_event}};
  role_arg(e, Role::status_out).statuses = {{0, 1, 0, 8, 0}};
  role_arg(e, Role::int_out).scalar = flag ? 1 : 0;
  return e;
}

TEST(PredictPolls, FailedTestsAfterTheRequestCompletedCostNothing) {
  // Rank 1 sends 8 B at 1500: the Irecv's request completes at 1500 + o + 7G + L + o = 2707.
  // Rank 0 posts the Irecv (ends at o = 100) and polls six times, 1000 ns each as recorded:
  // the first three start at 100, 1100 and 2100, before 2707, and keep their 1000 ns (ending
  // 3100); the other three start at 3100, after it, and cost nothing; the successful Test
  // ends at 3100. Before failed polls waited, the six ran to 6100.
  std::vector<Step> r0{{recv(fn::Irecv, 1, 0, 1, 8)}};
  for (int k = 0; k < 6; ++k) r0.push_back({test_of(0, false, 1000)});
  r0.push_back({test_of(0, true, 50)});
  auto f = feeds({r0, {{send(fn::Send, 0, 0, 8), 1500}}});
  KeepSink s;
  const predict::EngineStats st = predict::run_loggps(f, round_params(), s);
  const std::vector<std::int64_t> ends{100, 1100, 2100, 3100, 3100, 3100, 3100, 3100};
  ASSERT_EQ(s.calls[0].size(), ends.size());
  for (std::size_t k = 0; k < ends.size(); ++k) EXPECT_EQ(s.calls[0][k].end, ends[k]) << k;
  for (const auto& c : s.calls[0]) EXPECT_EQ(c.wait, 0);
  EXPECT_EQ(st.polls_released, 0u);
}

TEST(PredictPolls, ALoopThatFeedsItsPeerIsReleasedAsRecorded) {
  // Rank 0 polls its Irecv once, then sends rank 1 the message rank 1 waits for before it
  // answers: the poll cannot wait for the Irecv (that would never end), so it keeps its
  // recorded 1000 ns (100 -> 1100). The Send (1100, o + 7G = 107) reaches rank 1's Recv at
  // 1100 + 107 + L + o = 2307; rank 1's answer reaches rank 0 at 2307 + 107 + 1000 + 100 =
  // 3514, where the successful Test ends. Without the release the model found a deadlock.
  auto f = feeds({{{recv(fn::Irecv, 1, 0, 1, 8)},
                   {test_of(0, false, 1000)},
                   {send(fn::Send, 1, 5, 8)},
                   {test_of(0, true, 50)}},
                  {{recv(fn::Recv, 0, 5, 0, 8)}, {send(fn::Send, 0, 0, 8)}}});
  KeepSink s;
  const predict::EngineStats st = predict::run_loggps(f, round_params(), s);
  EXPECT_EQ(s.calls[0][1].end, 1100);
  EXPECT_EQ(s.calls[1][0].end, 2307);
  EXPECT_EQ(s.calls[0][3].end, 3514);
  EXPECT_EQ(st.polls_released, 1u);
}

}  // namespace
}  // namespace encore
