// The loggps engine against hand-computed LogGPS answers. Parameters are round numbers
// (L 1000, o 100, G 1 ns/byte, S 1000 bytes) so every expected time below is arithmetic.
#include <fstream>

#include "predict_events.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/predict/collectives.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/predict/loggps_params.hpp"

namespace encore {
namespace {

using namespace encore::testing;
using predict::LogGPSParams;

LogGPSParams params() {
  LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.g = 0;
  p.G = 1;
  p.S = 1000;
  return p;
}

KeepSink run(std::vector<std::vector<Step>> ranks, const LogGPSParams& p = params()) {
  auto f = feeds(std::move(ranks));
  KeepSink sink;
  predict::run_loggps(f, p, sink);
  return sink;
}

TEST(PredictLogGPS, PingPong) {
  // rank 0 sends 8 B at 0: done 0+100+7; arrives 1107, rank 1's Recv ends 1207; the reply
  // leaves at 1207, arrives 2314, rank 0's Recv (posted at 107) ends 2414.
  auto s = run({{{send(fn::Send, 1, 0, 8)}, {recv(fn::Recv, 1, 0, 1, 8)}},
                {{recv(fn::Recv, 0, 0, 0, 8)}, {send(fn::Send, 0, 0, 8)}}});
  EXPECT_EQ(s.calls[0][0].end, 107);
  EXPECT_EQ(s.calls[1][0].end, 1207);
  EXPECT_EQ(s.calls[1][1].end, 1314);
  EXPECT_EQ(s.calls[0][1].start, 107);
  EXPECT_EQ(s.calls[0][1].end, 2414);
  EXPECT_EQ(s.calls[0][1].wait, 2414 - 107 - 100);
}

TEST(PredictLogGPS, LateSender) {
  auto s = run({{{send(fn::Send, 1, 0, 8), 5000}}, {{recv(fn::Recv, 0, 0, 0, 8)}}});
  EXPECT_EQ(s.calls[1][0].end, 5000 + 107 + 1000 + 100);
  EXPECT_EQ(s.calls[1][0].wait, 5000 + 107 + 1000);  // everything but its own o
  EXPECT_EQ(s.calls[0][0].wait, 0);
}

TEST(PredictLogGPS, LateReceiverEagerDoesNotBlockTheSender) {
  auto s = run({{{send(fn::Send, 1, 0, 8)}}, {{recv(fn::Recv, 0, 0, 0, 8), 5000}}});
  EXPECT_EQ(s.calls[0][0].end, 107);
  EXPECT_EQ(s.calls[1][0].end, 5100);  // the message was there: only o
  EXPECT_EQ(s.calls[1][0].wait, 0);
}

TEST(PredictLogGPS, LateReceiverRendezvousFollowsPerWiz) {
  // 2000 B > S: t_wait = max(t_v - t_u - (o+L), 0) = 5000 - 0 - 1100 = 3900
  auto s = run({{{send(fn::Send, 1, 0, 2000)}}, {{recv(fn::Recv, 0, 0, 0, 2000), 5000}}});
  const std::int64_t handshake = 0 + 1100 + 3900;
  EXPECT_EQ(s.calls[0][0].end, handshake + 1000 + 100 + 1999);
  EXPECT_EQ(s.calls[0][0].wait, 3900);
  EXPECT_EQ(s.calls[1][0].end, handshake + 1000 + 100 + 1999 + 1100);
}

TEST(PredictLogGPS, BufferedSendNeverWaitsForTheReceive) {
  // Its own time is its copy into the attached buffer, as recorded (here 50 ns, under o: o).
  auto s = run({{{send(fn::Bsend, 1, 0, 2000)}}, {{recv(fn::Recv, 0, 0, 0, 2000), 5000}}});
  EXPECT_EQ(s.calls[0][0].end, 100);
  EXPECT_EQ(s.calls[0][0].wait, 0);
  EXPECT_EQ(s.calls[1][0].end, 5100);
}

TEST(PredictLogGPS, BufferedSendsTakeTheirRecordedCopy) {
  // A 2000 B Bsend and an Ibsend recorded 3000 ns long (a copy into a fresh buffer, page
  // faults and all) last 3000, not o + 1999 * G; the Ibsend's Wait finds it done then.
  Event bsend = send(fn::Bsend, 1, 0, 2000);
  bsend.end_ns = 3000;
  auto s = run({{{bsend}}, {{recv(fn::Recv, 0, 0, 0, 2000), 5000}}});
  EXPECT_EQ(s.calls[0][0].end, 3000);
  EXPECT_EQ(s.calls[0][0].wait, 0);
  EXPECT_EQ(s.calls[1][0].end, 5100);
  Event ibsend = send(fn::Ibsend, 1, 0, 2000);
  ibsend.end_ns = 3000;
  auto n = run({{{ibsend}, {waitall({0})}}, {{recv(fn::Recv, 0, 0, 0, 2000), 5000}}});
  EXPECT_EQ(n.calls[0][0].end, 3000);
  EXPECT_EQ(n.calls[0][1].wait, 0);
  EXPECT_EQ(n.calls[0][1].end, 3000);
}

TEST(PredictLogGPS, NonblockingStartsTakeTheirRecordedTime) {
  // An Isend recorded 2000 ns long (a derived datatype's packing) and an Irecv recorded 700:
  // each lasts as recorded, not o. The message still leaves at the Isend's start, so the
  // receive's Waitall ends at its arrival (0 + o + 7 + L) plus o.
  Event isend = send(fn::Isend, 1, 0, 8);
  isend.end_ns = 2000;
  Event irecv = recv(fn::Irecv, 0, 0, 0, 8);
  irecv.end_ns = 700;
  auto s = run({{{isend}, {waitall({0})}}, {{irecv}, {waitall({0})}}});
  EXPECT_EQ(s.calls[0][0].end, 2000);
  EXPECT_EQ(s.calls[1][0].end, 700);
  EXPECT_EQ(s.calls[1][1].end, 100 + 7 + 1000 + 100);
  // Recorded shorter than o: o.
  auto quick = run({{{send(fn::Isend, 1, 0, 8)}, {waitall({0})}},
                    {{recv(fn::Irecv, 0, 0, 0, 8)}, {waitall({0})}}});
  EXPECT_EQ(quick.calls[0][0].end, 100);
  EXPECT_EQ(quick.calls[1][0].end, 100);
}

TEST(PredictLogGPS, FirstReadFollowsTheTransferAsTheRanksOwnTime) {
  // Rank 1's Recv recorded a 5000 ns first read of its bytes (format 1.3): it ends that much
  // after the transfer (arrival 0 + 107 + 1000, then o), and that time is its own, not a
  // wait. So is the first read of a Barrier's member (as of any collective): only the member
  // that read ends later.
  Event r = recv(fn::Recv, 0, 0, 0, 8);
  r.first_read_ns = 5000;
  auto s = run({{{send(fn::Send, 1, 0, 8)}}, {{r}}});
  EXPECT_EQ(s.calls[1][0].end, 1207 + 5000);
  EXPECT_EQ(s.calls[1][0].wait, 1207 - 100);
  EXPECT_EQ(s.calls[0][0].end, 107);
  Event b = coll(fn::Barrier, 0);
  b.first_read_ns = 700;
  auto c = run({{{b}}, {{coll(fn::Barrier, 0), 3000}}});
  EXPECT_EQ(c.calls[0][0].end, 3000 + 1100 + 100 + 700);
  EXPECT_EQ(c.calls[0][0].wait, 3000 + 1100 + 100 - 1200);  // as without it
  EXPECT_EQ(c.calls[1][0].end, 3000 + 100 + 100);
}

TEST(PredictLogGPS, SynchronousSendWaitsEvenWhenSmall) {
  auto early = run({{{send(fn::Ssend, 1, 0, 8)}}, {{recv(fn::Recv, 0, 0, 0, 8), 500}}});
  EXPECT_EQ(early.calls[0][0].wait, 0);  // 500 < o + L: no wait
  auto late = run({{{send(fn::Ssend, 1, 0, 8)}}, {{recv(fn::Recv, 0, 0, 0, 8), 7000}}});
  EXPECT_EQ(late.calls[0][0].wait, 7000 - 1100);
  // The same small message with a plain Send does not wait.
  auto eager = run({{{send(fn::Send, 1, 0, 8)}}, {{recv(fn::Recv, 0, 0, 0, 8), 7000}}});
  EXPECT_EQ(eager.calls[0][0].wait, 0);
}

TEST(PredictLogGPS, WaitallOverSeveralIrecvs) {
  // rank 1 posts tag 1 then tag 2; rank 0 sends tag 2 at 1000, tag 1 at 2107.
  auto s = run({{{send(fn::Send, 1, 2, 8), 1000}, {send(fn::Send, 1, 1, 8), 1000}},
                {{recv(fn::Irecv, 0, 1, 0, 8)}, {recv(fn::Irecv, 0, 2, 0, 8)}, {waitall({0, 1})}}});
  EXPECT_EQ(s.calls[1][0].end, 100);
  EXPECT_EQ(s.calls[1][1].end, 200);
  EXPECT_EQ(s.calls[1][2].start, 200);
  EXPECT_EQ(s.calls[1][2].end, 2107 + 1107 + 100);
  EXPECT_EQ(s.calls[1][2].wait, 2107 + 1107 + 100 - 200);
}

TEST(PredictLogGPS, RequestReusedAfterItsWaitAndNamedTwice) {
  // Rank 0 sends tag 1 at 1000 (ends 1107), tag 3 at 1107 (ends 1214), tag 2 at 2214. Rank 1's
  // second pair of Irecvs takes the request slot the first one freed; its Waitall names one
  // request twice, which waits for it once.
  auto s = run({{{send(fn::Send, 1, 1, 8), 1000},
                 {send(fn::Send, 1, 3, 8), 0},
                 {send(fn::Send, 1, 2, 8), 1000}},
                {{recv(fn::Irecv, 0, 1, 0, 8)},
                 {waitall({0})},
                 {recv(fn::Irecv, 0, 2, 0, 8)},
                 {recv(fn::Irecv, 0, 3, 0, 8)},
                 {waitall({3, 2, 3})}}});
  ASSERT_EQ(s.calls[1].size(), 5u);
  EXPECT_EQ(s.calls[1][1].end, 1000 + 1107 + 100);
  EXPECT_EQ(s.calls[1][2].end, 2207 + 100);
  EXPECT_EQ(s.calls[1][4].start, 2407);
  EXPECT_EQ(s.calls[1][4].end, 2214 + 1107 + 100);  // tag 3 arrived at 2407, tag 2 later
  EXPECT_EQ(s.calls[1][4].wait, 3421 - 2407);
}

TEST(PredictLogGPS, ManyOutstandingRequestsAreAllWaitedFor) {
  // Rank 1 posts 40 Irecvs (tags 0..39, 100 ns each) and waits for all of them from 4000; rank
  // 0 sends them from 1000 in reverse order, 107 ns apart, so tag 0 (the oldest request, whose
  // lookup hint later requests have overwritten) arrives last: 5173 + 1107 + 100.
  std::vector<Step> sender, receiver;
  std::vector<std::uint64_t> all;
  for (int i = 0; i < 40; ++i) {
    sender.push_back({send(fn::Send, 1, 39 - i, 8), i == 0 ? 1000 : 0});
    receiver.push_back({recv(fn::Irecv, 0, i, 0, 8)});
    all.push_back(static_cast<std::uint64_t>(39 - i));
  }
  receiver.push_back({waitall(all)});
  auto s = run({sender, receiver});
  ASSERT_EQ(s.calls[1].size(), 41u);
  EXPECT_EQ(s.calls[1][40].start, 4000);
  EXPECT_EQ(s.calls[1][40].end, 1000 + 39 * 107 + 1107 + 100);
}

TEST(PredictLogGPS, AnySourceFollowsTheRecordedSource) {
  // Rank 2 sends at 0, rank 1 at 500. Rank 0 receives twice from MPI_ANY_SOURCE; the
  // recorded statuses say which message each receive got, and the times follow them.
  auto order = [](std::int64_t first, std::int64_t second) {
    return run(
        {{{recv(fn::Recv, kAnySource, 0, first, 8)}, {recv(fn::Recv, kAnySource, 0, second, 8)}},
         {{send(fn::Send, 0, 0, 8), 500}},
         {{send(fn::Send, 0, 0, 8), 0}}});
  };
  auto a = order(2, 1);
  EXPECT_EQ(a.calls[0][0].end, 1107 + 100);
  EXPECT_EQ(a.calls[0][1].end, 500 + 1107 + 100);
  auto b = order(1, 2);
  EXPECT_EQ(b.calls[0][0].end, 500 + 1107 + 100);
  EXPECT_EQ(b.calls[0][1].end, 1707 + 100);  // rank 2's message was waiting
}

TEST(PredictLogGPS, IrecvAnySourceResolvedAtTheWait) {
  Event ir = recv(fn::Irecv, kAnySource, 0, 0, 8);
  Event w = call(fn::Wait);
  role_arg(w, Role::request_inout).requests = {{false, 0, 0}};
  role_arg(w, Role::status_out).statuses = {{0, 1, 0, 8, 0}};
  auto s = run({{{ir}, {w}}, {{send(fn::Send, 0, 0, 8), 3000}}});
  EXPECT_EQ(s.calls[0][1].end, 3000 + 1107 + 100);
}

TEST(PredictLogGPS, BarrierOfTwo) {
  // One dissemination round: max(own send done, partner's arrival) + o.
  auto s = run({{{coll(fn::Barrier, 0)}}, {{coll(fn::Barrier, 0), 3000}}});
  EXPECT_EQ(s.calls[0][0].end, 3000 + 1100 + 100);
  EXPECT_EQ(s.calls[1][0].end, 3000 + 100 + 100);
  EXPECT_EQ(s.calls[0][0].wait, s.calls[0][0].end - 1200);  // cost alone: o + L + o
  EXPECT_EQ(s.calls[1][0].wait, 0);
}

TEST(PredictLogGPS, BinomialBroadcastOfFour) {
  std::vector<std::int64_t> zero(4, 0);
  const auto t = predict::collective_end_times(predict::CollKind::bcast, zero, 0, 8, params());
  // mask 2: 0 -> 2 (arrives 1107, done 1207); mask 1: 0 -> 1 leaves at 107, 2 -> 3 at 1207.
  EXPECT_EQ(t[2], 1207 + 107);
  EXPECT_EQ(t[1], 107 + 1107 + 100);
  EXPECT_EQ(t[3], 1207 + 1107 + 100);
  EXPECT_EQ(t[0], 214);
  EXPECT_EQ(predict::algorithm_name(predict::CollKind::bcast, 8, 4), "binomial tree");
  EXPECT_EQ(predict::algorithm_name(predict::CollKind::allreduce, 1 << 20, 4), "Rabenseifner");
}

TEST(PredictLogGPS, ComputeSpedUpOnOneRankShortensTheOthersWait) {
  auto ranks = [](std::int64_t compute0) {
    return run({{{send(fn::Send, 1, 0, 8), compute0}, {coll(fn::Allreduce, 8), 1000}},
                {{recv(fn::Recv, 0, 0, 0, 8), 100}, {coll(fn::Allreduce, 8), 100}}});
  };
  auto slow = ranks(20000);
  auto fast = ranks(10000);  // rank 0's compute twice as fast
  EXPECT_EQ(slow.calls[1][0].wait - fast.calls[1][0].wait, 10000);
  EXPECT_EQ(slow.calls[1][1].end - fast.calls[1][1].end, 10000);
  EXPECT_EQ(fast.calls[1][0].wait, 10000 + 1107 - 100);
}

TEST(PredictLogGPS, ACancelledReceiveTakesNoMessage) {
  // Rank 1 posts tag 1 and tag 9, cancels the tag-9 one (its Waitall's status says so), then
  // receives tag 2: the cancelled receive, whose message never comes, left the model waiting
  // forever at the Waitall. Rank 0 sends tag 1 at 1000 and tag 2 at 1000 + 107 + 5000.
  Event wait = waitall({0, 1});
  role_arg(wait, Role::status_array).statuses = {{0, 0, 1, 8, 0},
                                                 {event_format::kStatusCancelled, 0, 0, 0, 0}};
  auto s = run({{{send(fn::Send, 1, 1, 8), 1000}, {send(fn::Send, 1, 2, 8), 5000}},
                {{recv(fn::Irecv, 0, 1, 0, 8)},
                 {recv(fn::Irecv, 0, 9, 0, 8)},
                 {wait},
                 {recv(fn::Recv, 0, 2, 0, 8)}}});
  ASSERT_EQ(s.calls[1].size(), 4u);
  EXPECT_EQ(s.calls[1][2].end, 1000 + 1107 + 100);  // the tag-1 message only
  EXPECT_GT(s.calls[1][3].end, 6000);
  // A message the cancelled receive never had, but which the model matched with it (rank 0
  // ran ahead): named, not a wrong timeline.
  Event again = waitall({0, 1});
  role_arg(again, Role::status_array).statuses = role_arg(wait, Role::status_array).statuses;
  auto f = feeds({{{send(fn::Send, 1, 1, 8), 1000}, {send(fn::Send, 1, 9, 8), 5000}},
                  {{recv(fn::Irecv, 0, 1, 0, 8)},
                   {recv(fn::Irecv, 0, 9, 0, 8)},
                   {again},
                   {recv(fn::Recv, 0, 9, 0, 8)}}});
  KeepSink sink;
  try {
    predict::run_loggps(f, params(), sink);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 at MPI_Waitall #2: a receive it cancelled"),
              std::string::npos)
        << e.what();
  }
}

Event on_request(std::uint16_t f, std::uint64_t created_by) {
  Event e = call(f);
  role_arg(e, Role::request_inout).requests = {{false, 0, created_by}};
  return e;
}

TEST(PredictLogGPS, PersistentRequestsStartAsNonblockingOnes) {
  // Send_init/Recv_init, then three MPI_Starts and Waits a side (rank 0 computes 1000 before
  // each start): each start posts what its *_init set up, so the timeline is the one of
  // Isend/Irecv pairs in their place. (The model kept them as recorded, and a persistent
  // send against a blocking receive left the receive waiting forever.)
  std::vector<Step> sender{{send(fn::Send_init, 1, 4, 8)}},
      receiver{{recv(fn::Recv_init, 0, 4, 0, 8)}};
  std::vector<Step> isender, ireceiver;
  for (int i = 0; i < 3; ++i) {
    sender.push_back({on_request(fn::Start, 0), 1000});
    sender.push_back({on_request(fn::Wait, 0)});
    isender.push_back({send(fn::Isend, 1, 4, 8), 1000});
    isender.push_back({on_request(fn::Wait, isender.size() - 1)});
    receiver.push_back({on_request(fn::Start, 0)});
    receiver.push_back({on_request(fn::Wait, 0)});
    ireceiver.push_back({recv(fn::Irecv, 0, 4, 0, 8)});
    ireceiver.push_back({on_request(fn::Wait, ireceiver.size() - 1)});
  }
  sender.push_back({on_request(fn::Request_free, 0)});
  receiver.push_back({on_request(fn::Request_free, 0)});
  auto persistent = run({sender, receiver});
  auto nonblocking = run({isender, ireceiver});
  for (std::uint32_t r = 0; r < 2; ++r) {
    ASSERT_EQ(persistent.calls[r].size(), 8u);
    for (std::size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(persistent.calls[r][i + 1].end - 50, nonblocking.calls[r][i].end) << r << " " << i;
      EXPECT_EQ(persistent.calls[r][i + 1].wait, nonblocking.calls[r][i].wait) << r << " " << i;
    }
  }
  EXPECT_GT(persistent.calls[1][6].end, 3000);  // the receiver waited for the third message
  // A persistent send received by a blocking MPI_Recv.
  auto mixed = run(
      {sender,
       {{recv(fn::Recv, 0, 4, 0, 8)}, {recv(fn::Recv, 0, 4, 0, 8)}, {recv(fn::Recv, 0, 4, 0, 8)}}});
  EXPECT_GT(mixed.calls[1][2].end, 3000);
}

TEST(PredictLogGPS, IsendrecvWaitsForItsMessage) {
  // Rank 0's MPI_Isendrecv with rank 1, which computes 1000 first and answers with a
  // blocking MPI_Sendrecv: rank 0's Wait ends once rank 1's message is there (o + 7 + L + o
  // after 1000 + o), and neither waits forever.
  Event isr = call(fn::Isendrecv);
  role_arg(isr, Role::peer, 0).scalar = 1;
  role_arg(isr, Role::peer, 1).scalar = 1;
  isr.send_hashes.push_back({0, 8});
  Event sr = call(fn::Sendrecv);
  role_arg(sr, Role::peer, 0).scalar = 0;
  role_arg(sr, Role::peer, 1).scalar = 0;
  role_arg(sr, Role::status_out).statuses = {{0, 0, 0, 8, 0}};
  sr.send_hashes.push_back({0, 8});
  auto s = run({{{isr}, {on_request(fn::Wait, 0)}}, {{sr, 1000}}});
  ASSERT_EQ(s.calls[0].size(), 2u);
  EXPECT_GE(s.calls[0][1].end, 1000 + 100 + 1107);
  EXPECT_GT(s.calls[0][1].wait, 1000);
}

TEST(PredictLogGPS, MatchedProbeTakesTheMessage) {
  // MPI_Mprobe waits for rank 0's message (sent at 1000) as a receive does; the MPI_Mrecv
  // after it keeps its recorded duration.
  Event mp = call(fn::Mprobe);
  role_arg(mp, Role::peer).scalar = 0;
  role_arg(mp, Role::status_out).statuses = {{0, 0, 0, 8, 0}};
  auto s = run({{{send(fn::Send, 1, 0, 8), 1000}}, {{mp}, {call(fn::Mrecv, 300)}}});
  ASSERT_EQ(s.calls[1].size(), 2u);
  EXPECT_EQ(s.calls[1][0].end, 1000 + 1107 + 100);
  EXPECT_EQ(s.calls[1][1].end - s.calls[1][1].start, 300);
}

TEST(PredictLogGPS, DeadlockIsAnError) {
  auto f = feeds({{{recv(fn::Recv, 1, 0, 1, 8)}}, {{recv(fn::Recv, 0, 0, 0, 8)}}});
  KeepSink sink;
  try {
    predict::run_loggps(f, params(), sink);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 at MPI_Recv"), std::string::npos) << e.what();
  }
}

TEST(PredictLogged, KeepsRecordedDurationsAndFeedsCompute) {
  Event a = call(fn::Send, 300);
  Event b = call(fn::Barrier, 1000);
  auto f = feeds({{{a, 50}, {b, 200}}});
  KeepSink sink;
  predict::run_logged(f, params(), sink);
  EXPECT_EQ(sink.calls[0][0].start, 50);
  EXPECT_EQ(sink.calls[0][0].end, 350);
  EXPECT_EQ(sink.calls[0][1].start, 550);
  EXPECT_EQ(sink.calls[0][1].end, 1550);
  EXPECT_EQ(sink.calls[0][1].wait, 1000 - 100);  // beyond a barrier's own o
}

TEST(PredictParams, BadValuesAreNamed) {
  EXPECT_THROW(predict::params_from_json({{"L", -1}}, "p.json"), Error);
  EXPECT_THROW(predict::params_from_json({{"S", "big"}}, "p.json"), Error);
  const auto p = predict::params_from_json({{"L", 5}, {"S", 10}}, "p.json");
  EXPECT_EQ(p.L, 5);
  EXPECT_EQ(p.S, 10u);
  EXPECT_EQ(p.o, predict::LogGPSParams{}.o);
}

// A --params file gets the trace files' limits: its unread "source" key may not nest deep.
class PredictParamsFile : public TempDirTest {};

TEST_F(PredictParamsFile, DeepNestingIsRefused) {
  const auto p = dir_ / "params.json";
  std::ofstream(p) << "{\"L\": 5, \"source\": " << std::string(100'000, '[')
                   << std::string(100'000, ']') << "}";
  try {
    predict::load_params(p);
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": nesting deeper than 64 at offset 82");
  }
}

}  // namespace
}  // namespace encore
