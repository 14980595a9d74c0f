// RankEventReader hands every event out in one reused Event (see Event::stale): whatever the
// event before it held (send hashes, payloads, statuses, requests, lists, text, attribute,
// neighbours...), each event read back must hold exactly what was written for it, field by
// field, and a repeated poll (format 1.2) exactly its template with its own index and times.
// The trace goes through the real writer; every template follows every other one, and chunk
// ends fall everywhere (the decoder's checked path near a chunk's end, the fast one elsewhere).
#include <string>
#include <vector>

#include "expect_event.hpp"
#include "role_values.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/role_coding.hpp"

namespace encore {
namespace {

// What the reader must give for a written argument: absent when the trace does not hold it.
ArgValue expected_arg(const FunctionInfo& f, std::size_t i, const ArgValue& written,
                      std::int64_t rc) {
  const Role role = f.params[i].role;
  if (!f.modelled || role == Role::opaque || (is_output(role) && rc != 0)) return ArgValue{};
  return written;
}

enum Extras : unsigned {
  kPayload = 1,
  kTwoPayloads = 2,
  kSendHash = 4,
  kCallsite = 8,
  kStall = 16,
  kCounters = 32,
  kSignature = 64,
  kAttribute = 128,
  kNeighbours = 256,
  kWeighted = 512,
  kFirstRead = 1024,     // format 1.3
  kContribution = 2048,  // format 1.4
};

struct Template {
  std::uint16_t function;
  std::int64_t rc;
  unsigned extras;
  bool poll;  // followed by repeats (format 1.2) where the chunk allows
};

// Point-to-point calls with and without hashes and payloads, polls after completions and the
// other way round, failed calls, communicator constructors (MPI_COMM_NULL too), the rare extras.
const std::vector<Template>& templates() {
  static const std::vector<Template> t = {
      {fn::Send, 0, kSendHash | kCallsite, false},
      {fn::Send, 0, 0, false},
      {fn::Isend, 0, kSendHash | kStall, false},
      {fn::Irecv, 0, 0, false},
      {fn::Recv, 0, kPayload | kCallsite, false},
      {fn::Recv, 0, 0, false},
      {fn::Recv, 15, 0, false},
      {fn::Wait, 0, kPayload, false},
      {fn::Wait, 0, kPayload | kFirstRead, false},
      {fn::Recv, 0, kPayload | kFirstRead | kStall, false},
      {fn::Wait, 0, 0, false},
      {fn::Test, 0, 0, true},
      {fn::Test, 0, kCallsite | kStall, true},
      {fn::Iprobe, 0, 0, true},
      {fn::Testany, 0, 0, true},
      {fn::Testsome, 0, kTwoPayloads, false},
      {fn::Waitall, 0, kTwoPayloads | kCallsite, false},
      {fn::Waitall, 0, 0, false},
      {fn::Waitany, 0, kPayload, false},
      {fn::Allreduce, 0, kPayload | kSignature, false},
      {fn::Reduce, 0, kPayload | kSignature | kFirstRead, false},
      {fn::Allreduce, 0, kPayload | kContribution, false},
      {fn::Alltoallv, 0, kContribution | kCallsite, false},
      {fn::Startall, 0, kContribution, false},
      {fn::Barrier, 0, kCounters | kStall, false},
      {fn::Barrier, 0, 0, false},
      {fn::Comm_split, 0, kSignature, false},
      {fn::Comm_split, 3, 0, false},
      {fn::Comm_group, 0, 0, false},
      {fn::Comm_get_attr, 0, kAttribute, false},
      {fn::Comm_get_attr, 0, 0, false},
      {fn::Dist_graph_create, 0, kNeighbours | kWeighted, false},
      {fn::Dist_graph_create, 0, kNeighbours, false},
      {fn::Wtime, 0, 0, false},
      {fn::Get_processor_name, 0, kCounters, false},
  };
  return t;
}

Event make(const Template& t, std::uint64_t index, std::int64_t seed) {
  Event e;
  e.function = t.function;
  e.index = index;  // the writer codes request references relative to it
  e.rc = t.rc;
  const FunctionInfo& f = e.info();
  e.args.resize(f.params.size());
  for (std::size_t i = 0; i < f.params.size(); ++i)
    e.args[i] = value_of(f.params[i].role, seed + static_cast<std::int64_t>(i), e);
  const auto s = static_cast<std::uint64_t>(seed);
  if (t.extras & (kPayload | kTwoPayloads)) e.payloads.push_back({0, 12, 2, 8 + s % 5, 0});
  if (t.extras & kTwoPayloads) e.payloads.push_back({1, 13, 1, 3, 0});
  if (t.extras & kSendHash) e.send_hashes.push_back({0x0123456789abcdefu ^ s, 16 + s});
  if (t.extras & kCallsite) e.callsite = 40000 + s;
  if (t.extras & kStall) e.stall_ns = 300 + s;
  if (t.extras & kCounters) e.counters = {s, 7, 1u << 20};
  if (t.extras & kSignature) e.signatures.push_back({12, 8, {{4, 2}, {8, 1 + s}}});
  if (t.extras & kAttribute) e.attribute = -static_cast<std::int64_t>(s) - 1;
  if (t.extras & kFirstRead) e.first_read_ns = 9000000 + s;
  if (t.extras & kContribution) {
    e.contribution_hashes.push_back({0x0123456789abcdefULL ^ static_cast<std::uint64_t>(s), 64});
    if (s % 2) e.contribution_hashes.push_back({~static_cast<std::uint64_t>(s), 1u << 20});
  }
  if (t.extras & kNeighbours) {
    NeighbourLists n;
    n.weighted = (t.extras & kWeighted) != 0;
    n.sources = {1, 2};
    n.destinations = {3};
    if (n.weighted) {
      n.source_weights = {10, -20};
      n.dest_weights = {30};
    }
    e.neighbours = n;
  }
  return e;
}

const std::vector<std::byte> kRepeat = {std::byte{event_format::kRepeatHead0},
                                        std::byte{event_format::kRepeatHead1}};

// Writes every ordered pair of templates (then two repeats after a poll, unless they would
// start a chunk) with chunks of `chunk_events`; returns the events the reader must give.
std::vector<Event> write_trace(const std::filesystem::path& dir, std::size_t chunk_events) {
  RankWriterOptions opt;
  opt.chunk_events = chunk_events;
  opt.chunk_bytes = std::size_t{1} << 30;  // chunk ends where chunk_events puts them
  RankTraceWriter w(dir / "r.events", dir / "r.payload", 0, opt);
  std::vector<Event> want;
  std::uint64_t now = 1000, payload = 0, overhead = 0;
  const auto times = [&](Event& e) {
    const std::uint64_t k = want.size();
    e.start_ns = now + (k % 4 == 0 ? 5000000 : 10 + k % 7);  // 1- to 4-byte varints
    e.end_ns = e.start_ns + (k % 3 == 0 ? 300000 : k % 5);
    e.overhead_ns = k % 6 == 0 ? 70000 : k % 2;
    now = e.end_ns;
    overhead += e.overhead_ns;
    e.raw_start_ns = e.start_ns + overhead;
  };
  const auto& pool = templates();
  std::vector<const Template*> order;
  for (const Template& a : pool) {
    for (const Template& b : pool) {
      order.push_back(&a);
      order.push_back(&b);
    }
  }
  for (const Template* t : order) {
    Event e = make(*t, want.size(), static_cast<std::int64_t>(want.size()));
    times(e);
    std::vector<std::byte> bytes(e.payload_bytes(), std::byte{0x5a});
    w.write(e, bytes);
    Event expect = e;
    const FunctionInfo& f = e.info();
    for (std::size_t i = 0; i < f.params.size(); ++i)
      expect.args[i] = expected_arg(f, i, e.args[i], e.rc);
    for (auto& p : expect.payloads) {
      p.offset = payload;
      payload += p.bytes;
    }
    want.push_back(expect);
    for (int r = 0; r < 2 && t->poll && want.size() % chunk_events != 0; ++r) {
      Event rep = want.back();
      rep.index = want.size();
      times(rep);
      w.write_body(0, rep.start_ns, rep.end_ns, rep.overhead_ns, kRepeat);
      want.push_back(rep);
    }
  }
  w.close();
  return want;
}

class EventReaderFields : public TempDirTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(EventReaderFields, EveryFieldOfEveryEventAsWritten) {
  const std::vector<Event> want = write_trace(dir_, GetParam());
  // One Event for every read, then three taken in turn: each read (a repeat's too) then
  // lands in an Event that holds an older event, not the one just before.
  for (const std::size_t events : {1u, 3u}) {
    SCOPED_TRACE(std::to_string(events) + " Event(s) in turn");
    RankEventReader reader(dir_ / "r.events");
    std::vector<Event> got(events);
    std::size_t n = 0;
    std::size_t repeats = 0;
    while (reader.next(got[n % events])) {
      ASSERT_LT(n, want.size());
      if (reader.last_body().empty()) ++repeats;
      expect_same_event(want[n], got[n % events]);
      if (::testing::Test::HasFailure()) FAIL() << "first wrong event: #" << n;
      ++n;
    }
    EXPECT_TRUE(reader.complete()) << reader.problem();
    EXPECT_EQ(n, want.size());
    if (GetParam() > 1) {
      EXPECT_GT(repeats, 0u);  // the repeats were exercised
    }
  }
}

// One event per chunk (each decoded near its chunk's end, by the checked path), small chunks
// that end at every position, and one chunk for everything (the fast path).
INSTANTIATE_TEST_SUITE_P(ChunkEvents, EventReaderFields,
                         ::testing::Values(1, 2, 3, 5, 8, 13, 4096));

}  // namespace
}  // namespace encore
