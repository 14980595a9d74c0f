// RankTraceWriter + decode: every modelled function of the table, with values for every
// parameter role, survives a write and a read unchanged; chunks split per thread.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "expect_event.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/payload_reader.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore {
namespace {

// A value for each role, varied by `seed` so neighbouring events differ.
void fill_arg(Role role, ArgValue& a, std::int64_t seed, const Event& ev) {
  a = ArgValue{};
  a.present = role != Role::opaque;
  switch (role) {
    case Role::opaque:
    case Role::request_out:
      break;
    case Role::comm_out:
      a.scalar = 1024 + seed;
      a.flags = seed % 2;
      a.list = {0, 2, 3, -1};
      if (a.flags & 1) a.remote = {5, 1};
      break;
    case Role::group_out:
      a.scalar = 1024 + seed;
      a.list = {3, 1};
      break;
    case Role::int_array:
    case Role::int_array_out:
    case Role::aint_array:
    case Role::aint_array_out:
      a.list = {seed, -seed, 1LL << 40};
      break;
    case Role::datatype_array:
      a.list = {2, 1030};
      break;
    case Role::request:
    case Role::request_inout:
      a.requests = {RequestRef{false, ev.thread, ev.index > 0 ? ev.index - 1 : 0}};
      break;
    case Role::request_array:
      a.requests = {RequestRef{}, RequestRef{false, 3, 77}, RequestRef{false, ev.thread, ev.index}};
      break;
    case Role::status_in:
    case Role::status_out:
      a.statuses = {StatusRecord{1, seed, -3, 800, 0}};
      break;
    case Role::status_array:
      a.statuses = {StatusRecord{0, 1, 2, 3, 0}, StatusRecord{2, -1, 9, 0, 5}};
      break;
    case Role::string_in:
    case Role::string_out:
      a.text = "name-" + std::to_string(seed);
      break;
    case Role::ret_double:
      a.real = 1.5 * static_cast<double>(seed);
      break;
    case Role::count:
    case Role::peer:
    case Role::root:
    case Role::tag:
    case Role::value:
    case Role::aint:
    case Role::int_out:
    case Role::aint_out:
    case Role::ret_aint:
      a.scalar = seed % 3 == 0 ? -seed : seed;
      break;
    default:
      a.scalar = seed;
      break;
  }
}

class RankTraceWriterTest : public TempDirTest {};

TEST_F(RankTraceWriterTest, EveryFunctionRoundTrips) {
  const auto table = function_table();
  std::vector<Event> written;
  std::vector<std::byte> payload_bytes;
  {
    RankWriterOptions opt;
    opt.chunk_events = 37;  // many chunks, so chunk bases and per-thread numbering are exercised
    RankTraceWriter w(dir_ / "r.events", dir_ / "r.payload", 3, opt);
    std::uint64_t now[2] = {100, 50};
    std::uint64_t index[2] = {0, 0};
    for (std::size_t id = 0; id < table.size(); ++id) {
      Event e;
      e.function = static_cast<std::uint16_t>(id);
      e.thread = static_cast<std::uint16_t>(id % 5 == 0 ? 1 : 0);
      e.index = index[e.thread]++;
      const auto seed = static_cast<std::int64_t>(id);
      e.start_ns = now[e.thread] + static_cast<std::uint64_t>(seed % 7) * 1000;
      e.end_ns = e.start_ns + static_cast<std::uint64_t>(seed);
      now[e.thread] = e.end_ns;
      e.overhead_ns = static_cast<std::uint64_t>(seed % 11);
      e.rc = id % 13 == 0 ? 17 : 0;
      e.args.resize(table[id].params.size());
      for (std::size_t i = 0; i < table[id].params.size(); ++i)
        fill_arg(table[id].params[i].role, e.args[i], seed + static_cast<std::int64_t>(i), e);
      std::vector<std::byte> data;
      if (id % 4 == 0) {
        e.signatures.push_back({1030, 12, {{4, 2}, {8, 1}}});
        e.payloads.push_back({0, 1030, 2, 24, 0});
        for (int b = 0; b < 24; ++b) data.push_back(static_cast<std::byte>(id + b));
      }
      if (id % 6 == 0) e.send_hashes.push_back({0x0123456789abcdefULL ^ id, 64});
      if (id % 3 == 0) e.callsite = id;
      if (id % 9 == 0) e.counters = {1, 2, id};
      // Format 1.1 extras; the reader reuses its Event, so events without them follow.
      if (id % 5 == 2) e.attribute = id % 2 ? -seed : seed << 33;
      if (id % 7 == 3) {
        const bool weighted = id % 2 == 0;
        e.neighbours = NeighbourLists{weighted, {seed, 0, -1}, {}, {2}, {}};
        if (weighted) {
          e.neighbours->source_weights = {7, 8, 1LL << 40};
          e.neighbours->dest_weights = {-9};
        }
      }
      w.write(e, data);
      payload_bytes.insert(payload_bytes.end(), data.begin(), data.end());
      written.push_back(std::move(e));
    }
    w.close();
  }
  RankEventReader r(dir_ / "r.events");
  Event ev;
  std::size_t per_thread[2] = {0, 0};
  std::vector<std::vector<const Event*>> by_thread(2);
  for (const auto& e : written) by_thread[e.thread].push_back(&e);
  std::size_t n = 0;
  while (r.next(ev)) {
    ASSERT_LT(ev.thread, 2);
    const Event& want = *by_thread[ev.thread][per_thread[ev.thread]];
    EXPECT_EQ(ev.index, per_thread[ev.thread]);
    ++per_thread[ev.thread];
    expect_same_event(want, ev, BuiltReference{true});
    ++n;
  }
  EXPECT_TRUE(r.complete()) << r.problem();
  EXPECT_EQ(n, written.size());
}

// An opaque event (no arguments) followed by the given extras, as an interleaved chunk:
// layout, times column (3 bytes: gap, duration, overhead 0), two-byte head.
std::vector<std::byte> chunk_with_extras(const std::vector<std::uint8_t>& extras) {
  const unsigned head =
      (fn::Type_get_contents_c << event_format::kHeadFlagBits) | event_format::kHasExtras;
  std::vector<std::uint8_t> bytes(5, 0);
  bytes[0] = event_format::kInterleavedTimes;
  bytes[1] = 3;
  bytes.push_back(static_cast<std::uint8_t>((head & 0x7f) | 0x80));
  bytes.push_back(static_cast<std::uint8_t>(head >> 7));
  bytes.insert(bytes.end(), extras.begin(), extras.end());
  std::vector<std::byte> out;
  out.reserve(bytes.size());
  for (const auto b : bytes) out.push_back(static_cast<std::byte>(b));
  return out;
}

TEST(EventDecoder, BadNeighbourListsAreErrorsNotAllocations) {
  ASSERT_FALSE(function_table()[fn::Type_get_contents_c].modelled);
  const auto decode = [](const std::vector<std::uint8_t>& extras) {
    const auto chunk = chunk_with_extras(extras);
    EventColumns c = EventColumns::of(chunk);
    Event ev;
    std::uint64_t payload = 0;
    decode_event(c, 0, payload, ev);
    return ev;
  };
  // Weighted, in-degree 1 (source 2, weight 3), out-degree 0; then attribute -1.
  const Event ok = decode({8, 1, 1, 4, 6, 0, 7, 1, 0});
  ASSERT_TRUE(ok.neighbours);
  EXPECT_EQ(ok.neighbours->sources, std::vector<std::int64_t>{2});
  EXPECT_EQ(ok.neighbours->source_weights, std::vector<std::int64_t>{3});
  EXPECT_TRUE(ok.neighbours->destinations.empty());
  EXPECT_EQ(ok.attribute, -1);
  // An in-degree of 2^35 in a chunk of a few bytes; a list cut short.
  EXPECT_THROW(decode({8, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0}), Error);
  EXPECT_THROW(decode({8, 1, 2, 4}), Error);
}

TEST_F(RankTraceWriterTest, RejectsTimeGoingBackwardsAndMissingPayload) {
  RankTraceWriter w(dir_ / "r.events", dir_ / "r.payload", 0);
  Event e;
  e.function = fn::Barrier;
  e.args.resize(e.info().params.size());
  e.start_ns = 10;
  e.end_ns = 20;
  w.write(e);
  e.start_ns = 15;
  EXPECT_THROW(w.write(e), Error);
  e.start_ns = 30;
  e.end_ns = 40;
  e.payloads.push_back({0, 2, 1, 4, 0});
  EXPECT_THROW(w.write(e), Error);
}

// write_bodies() in batches of any size gives the same files byte for byte as write_body()
// one event at a time, chunk cuts (by event count and by bytes) included.
TEST_F(RankTraceWriterTest, BatchedBodiesWriteTheSameFiles) {
  RankWriterOptions o;
  o.chunk_events = 700;
  o.chunk_bytes = 3000;
  RankTraceWriter one(dir_ / "a.events", dir_ / "a.payload", 0, o);
  RankTraceWriter batched(dir_ / "b.events", dir_ / "b.payload", 0, o);
  std::vector<RankTraceWriter::BodyTimes> times;
  std::vector<std::byte> bodies, body;
  const std::size_t sizes[] = {1, 7, 512, 3000, 2, 1000};
  std::size_t next_size = 0;
  std::uint64_t t = 0;
  Event e;
  e.function = fn::Barrier;
  e.args.resize(e.info().params.size());
  e.args[0].present = true;
  for (int i = 0; i < 6000; ++i) {
    e.args[0].scalar = (i * 37) % 5000;  // one or two varint bytes
    body.clear();
    encode_event_body(e, body);
    const std::uint64_t start = t + static_cast<std::uint64_t>(i % 9) * 300;
    const std::uint64_t end = start + static_cast<std::uint64_t>(i % 4);
    t = end;
    one.write_body(0, start, end, static_cast<std::uint64_t>(i % 5) * 1000, body);
    times.push_back({start, end, static_cast<std::uint64_t>(i % 5) * 1000, body.size()});
    bodies.insert(bodies.end(), body.begin(), body.end());
    if (times.size() == sizes[next_size % std::size(sizes)] || i == 5999) {
      batched.write_bodies(0, times, bodies);
      times.clear();
      bodies.clear();
      ++next_size;
    }
  }
  one.close();
  batched.close();
  EXPECT_EQ(one.events(), 6000u);
  EXPECT_EQ(batched.events(), 6000u);
  const auto bytes = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string a = bytes(dir_ / "a.events");
  EXPECT_GT(a.size(), 10000u);  // several chunks
  EXPECT_EQ(a, bytes(dir_ / "b.events"));
  EXPECT_EQ(bytes(dir_ / "a.payload"), bytes(dir_ / "b.payload"));
}

TEST_F(RankTraceWriterTest, BatchedBodiesRejectBackwardsTimesAndWrongByteCounts) {
  RankTraceWriter w(dir_ / "r.events", dir_ / "r.payload", 0);
  const std::byte body[4] = {};
  const RankTraceWriter::BodyTimes backwards[] = {{10, 20, 0, 2}, {15, 30, 0, 2}};
  EXPECT_THROW(w.write_bodies(0, backwards, body), Error);
  const RankTraceWriter::BodyTimes too_many[] = {{10, 20, 0, 2}, {20, 30, 0, 3}};
  EXPECT_THROW(w.write_bodies(0, too_many, body), Error);
  EXPECT_EQ(w.events(), 0u);
}

}  // namespace
}  // namespace encore
