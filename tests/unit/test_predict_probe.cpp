// Probe and Iprobe under the loggps engine, against hand-computed answers (L 1000, o 100, G 1,
// S 1000): a probe that found its message waits for its envelope, without taking it; an
// Iprobe that found nothing costs nothing (its time was the wait), so a polling loop ends when
// the model's message comes, with the recording's number of polls and compute between them.
#include "predict_events.hpp"
#include <gtest/gtest.h>

#include "encore/predict/loggps_engine.hpp"

namespace encore {
namespace {

using namespace encore::testing;

predict::LogGPSParams params() {
  predict::LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.g = 0;
  p.G = 1;
  p.S = 1000;
  return p;
}

KeepSink run(std::vector<std::vector<Step>> ranks) {
  auto f = feeds(std::move(ranks));
  KeepSink sink;
  predict::run_loggps(f, params(), sink);
  return sink;
}

// A probe as recorded (`dur` ns): what it asked for and the status it got.
Event probe(std::uint16_t f, std::int64_t source, std::int64_t tag, std::int64_t got_source,
            std::int64_t got_tag, bool found = true, std::uint64_t dur = 50) {
  Event e = call(f, dur);
  role_arg(e, Role::peer).scalar = source;
  role_arg(e, Role::tag).scalar = tag;
  if (f == fn::Iprobe) role_arg(e, Role::int_out).scalar = found ? 1 : 0;
  role_arg(e, Role::status_out).statuses = {{0, got_source, got_tag, 8, 0}};
  return e;
}

TEST(PredictProbe, BlockingProbeWaitsForTheMessageAndLeavesItToTheReceive) {
  // The send at 5000: 8 B arrive at 5000 + o + L + 7 = 6107, the Probe (posted at 0, recorded
  // 50 ns) ends o later, 6207; the Recv then finds the message there: 6307. Rank 0's second
  // send starts after its first ends (5107) and 3000 of compute: 8107; it arrives at 9214 and
  // the second Probe (posted at 6307) ends at 9314: the first Probe did not take a message.
  auto s = run({{{send(fn::Send, 1, 0, 8), 5000}, {send(fn::Send, 1, 0, 8), 3000}},
                {{probe(fn::Probe, 0, 0, 0, 0)},
                 {recv(fn::Recv, 0, 0, 0, 8)},
                 {probe(fn::Probe, 0, 0, 0, 0)},
                 {recv(fn::Recv, 0, 0, 0, 8)}}});
  EXPECT_EQ(s.calls[1][0].end, 6207);
  EXPECT_EQ(s.calls[1][0].wait, 6207 - 100);
  EXPECT_EQ(s.calls[1][1].end, 6307);
  EXPECT_EQ(s.calls[1][1].wait, 0);
  EXPECT_EQ(s.calls[0][1].start, 8107);
  EXPECT_EQ(s.calls[1][2].end, 9314);
  EXPECT_EQ(s.calls[1][3].end, 9414);
}

TEST(PredictProbe, AProbeOfARendezvousMessageSeesItsEnvelopeOnly) {
  // Ssend at 0: its envelope is there at o + L = 1100, the Probe ends at 1200. The Recv is
  // posted at 1200: t_wait = 1200 - 1100 = 100, handshake at 1200, the sender is done at
  // 1200 + L + o + 7 = 2307 and the receiver at 2307 + L + o = 3407.
  auto s = run({{{send(fn::Ssend, 1, 0, 8)}},
                {{probe(fn::Probe, 0, 0, 0, 0)}, {recv(fn::Recv, 0, 0, 0, 8)}}});
  EXPECT_EQ(s.calls[1][0].end, 1200);
  EXPECT_EQ(s.calls[0][0].end, 2307);
  EXPECT_EQ(s.calls[1][1].end, 3407);
}

TEST(PredictProbe, AnIprobeLoopKeepsItsPollsAndItsFindingProbeWaitsForTheMessage) {
  // Rank 0 polls with wildcards: three Iprobes that found nothing (200 ns each recorded, 100 ns
  // of compute between) at 0, 100 and 200, costing nothing (their time was the wait); the one
  // that found the message (status: source 1, tag 2) is posted at 300. Rank 1 sends at 20000:
  // the message is there at 21107, the Iprobe ends at 21207, the wildcard Recv at 21307.
  auto s = run({{{probe(fn::Iprobe, kAnySource, kAnyTag, 0, 0, false, 200)},
                 {probe(fn::Iprobe, kAnySource, kAnyTag, 0, 0, false, 200), 100},
                 {probe(fn::Iprobe, kAnySource, kAnyTag, 0, 0, false, 200), 100},
                 {probe(fn::Iprobe, kAnySource, kAnyTag, 1, 2), 100},
                 {recv(fn::Recv, kAnySource, 2, 1, 8)}},
                {{send(fn::Send, 0, 2, 8), 20000}}});
  EXPECT_EQ(s.calls[0][2].start, 200);
  EXPECT_EQ(s.calls[0][2].end, 200);
  EXPECT_EQ(s.calls[0][3].start, 300);
  EXPECT_EQ(s.calls[0][3].end, 21207);
  EXPECT_EQ(s.calls[0][4].end, 21307);
}

TEST(PredictProbe, AnIprobeLoopEndsWhenTheModelsMessageComes) {
  // The message is there at 1107; the recorded loop polled ten times (200 ns + 100 ns of
  // compute each, 0 to 2900). The failed polls cost nothing, so they end at 0, 100 .. 900 and
  // the finding Iprobe, posted at 1000, waits for the envelope: 1107 + o = 1207, the Recv
  // 1307, as a plain run would have found it. (Before, the loop kept its recorded 2900 ns and
  // the Iprobe started at 3000, whenever the message came.)
  std::vector<Step> master;
  master.reserve(12);
  for (int i = 0; i < 10; ++i)
    master.push_back({probe(fn::Iprobe, kAnySource, kAnyTag, 0, 0, false, 200), i == 0 ? 0 : 100});
  master.push_back({probe(fn::Iprobe, kAnySource, kAnyTag, 1, 2), 100});
  master.push_back({recv(fn::Recv, kAnySource, 2, 1, 8)});
  auto s = run({master, {{send(fn::Send, 0, 2, 8)}}});
  EXPECT_EQ(s.calls[0][9].end, 900);
  EXPECT_EQ(s.calls[0][10].start, 1000);
  EXPECT_EQ(s.calls[0][10].end, 1207);
  EXPECT_EQ(s.calls[0][11].end, 1307);
}

TEST(PredictProbe, AProbeBehindAPostedReceiveSeesTheMessageAfterTheOneItTakes) {
  // An Irecv posted first takes the send at 5000; the Probe sees the second, injected at
  // 5107 (8 B: 5107 + o + L + 7 = 6214, the Probe ends 6314), whichever rank the engine runs
  // first (the receiver here is rank 1, then rank 0).
  const std::vector<Step> sender = {{send(fn::Send, 1, 0, 8), 5000}, {send(fn::Send, 1, 0, 8)}};
  const std::vector<Step> receiver = {{recv(fn::Irecv, 0, 0, 0, 8)},
                                      {probe(fn::Probe, 0, 0, 0, 0)},
                                      {waitall({0})},
                                      {recv(fn::Recv, 0, 0, 0, 8)}};
  auto s = run({sender, receiver});
  EXPECT_EQ(s.calls[1][1].end, 6314);
  EXPECT_EQ(s.calls[1][3].end, 6414);
  std::vector<Step> sender_to_0 = sender, receiver_of_1 = receiver;
  for (auto& st : sender_to_0) role_arg(st.ev, Role::peer).scalar = 0;
  role_arg(receiver_of_1[0].ev, Role::peer).scalar = 1;
  role_arg(receiver_of_1[1].ev, Role::peer).scalar = 1;
  role_arg(receiver_of_1[3].ev, Role::peer).scalar = 1;
  auto t = run({receiver_of_1, sender_to_0});
  EXPECT_EQ(t.calls[0][1].end, 6314);
  EXPECT_EQ(t.calls[0][3].end, 6414);
}

}  // namespace
}  // namespace encore
