// The straight-line decoders generated per function (libtime/gen/decode_gen.py), with their
// unchecked runs and the fallback near a chunk's end, must decode every function exactly as the
// checked, table-interpreting path does, and as it was written: small and large values, failed
// calls, requests of other threads, lists, statuses and every extra.
#include <string>
#include <vector>

#include "expect_event.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/role_coding.hpp"

namespace encore {
namespace {

// Large values too, so that varints of every length go through both paths.
std::int64_t value_of(std::uint64_t seed) {
  switch (seed % 4) {
    case 0:
      return static_cast<std::int64_t>(seed % 50);
    case 1:
      return -static_cast<std::int64_t>(seed * 977);
    case 2:
      return static_cast<std::int64_t>(seed) << 40;
    default:
      return INT64_MIN + static_cast<std::int64_t>(seed);
  }
}

RequestRef request_of(std::uint64_t seed, const Event& ev) {
  switch (seed % 3) {
    case 0:
      return {};
    case 1:
      return {false, ev.thread, ev.index - seed % (ev.index + 1)};
    default:
      return {false, static_cast<std::uint16_t>(ev.thread + 1), seed * 100003};
  }
}

StatusRecord status_of(std::uint64_t seed) {
  return {static_cast<std::uint8_t>(seed % 4), value_of(seed), value_of(seed + 1),
          seed << (seed % 50), value_of(seed + 3) % 7};
}

// `small`: ids and values that encode in one byte each ([0, 127] and [-64, 63], both ends
// included), so that every run of them takes the generated one-byte path.
void fill(Role role, ArgValue& a, std::uint64_t seed, const Event& ev, bool small) {
  a.present = role != Role::opaque;
  const std::size_t n = seed % 5;  // lists of 0 to 4
  switch (coding_of(role)) {
    case Coding::nothing:
      break;
    case Coding::id:
      a.scalar = small      ? static_cast<std::int64_t>(seed % 128)
                 : seed % 3 ? static_cast<std::int64_t>(seed % 200)
                            : 1024 + (1LL << (seed % 40));
      break;
    case Coding::value:
      a.scalar = small ? static_cast<std::int64_t>(seed % 128) - 64 : value_of(seed);
      break;
    case Coding::values:
      for (std::size_t i = 0; i < n; ++i) a.list.push_back(value_of(seed + i));
      break;
    case Coding::ids:
      for (std::size_t i = 0; i < n; ++i) a.list.push_back(static_cast<std::int64_t>(seed + i));
      break;
    case Coding::new_comm:
      a.scalar = seed % 4 ? 1024 + static_cast<std::int64_t>(seed) : 0;
      a.flags = a.scalar ? seed % 2 : 0;
      if (a.scalar) a.list = {0, 5, -1};
      if (a.flags) a.remote = {7, 3};
      break;
    case Coding::new_group:
      a.scalar = seed % 4 ? 1024 + static_cast<std::int64_t>(seed) : 0;
      if (a.scalar) a.list = {2, 1};
      break;
    case Coding::request:
      a.requests = {request_of(seed, ev)};
      break;
    case Coding::requests:
      for (std::size_t i = 0; i < n; ++i) a.requests.push_back(request_of(seed + i, ev));
      break;
    case Coding::status:
      a.statuses = {status_of(seed)};
      break;
    case Coding::statuses:
      for (std::size_t i = 0; i < n; ++i) a.statuses.push_back(status_of(seed + i));
      break;
    case Coding::text:
      a.text = std::string(seed % 20, 'x');
      break;
    case Coding::real:
      a.real = 0.5 * static_cast<double>(seed);
      break;
  }
}

// Every function several times with different values, outcomes and extras; returns what was
// written, with the indexes the reader gives.
std::vector<Event> write_all(const std::filesystem::path& dir, std::size_t chunk_events,
                             bool small = false) {
  const auto table = function_table();
  std::vector<Event> written;
  RankWriterOptions opt;
  opt.chunk_events = chunk_events;
  RankTraceWriter w(dir / "r.events", dir / "r.payload", 0, opt);
  std::uint64_t now = 0;
  for (std::uint64_t k = 0; k < 4 * table.size(); ++k) {
    const std::size_t id = (k * 7919) % table.size();
    Event e;
    e.function = static_cast<std::uint16_t>(id);
    e.index = k;
    e.start_ns = now + (k % 3 == 0 ? 5 : 1u << (k % 30));
    e.end_ns = e.start_ns + k % 200;
    e.overhead_ns = k % 4 == 0 ? 0 : (1u << (k % 25));
    now = e.end_ns;
    e.rc = k % 5 == 1 ? -static_cast<std::int64_t>(k) : 0;
    e.args.resize(table[id].params.size());
    for (std::size_t i = 0; i < table[id].params.size(); ++i)
      fill(table[id].params[i].role, e.args[i], k + i, e, small);
    std::vector<std::byte> payload;
    if (k % 3 == 0) {
      e.payloads.push_back({k % 4, 2 + k % 30, k % 7, k % 2 ? 8u : 300u, 0});
      payload.resize(e.payloads.back().bytes, std::byte{1});
    }
    if (k % 4 == 0) e.send_hashes.push_back({k * 0x9e3779b97f4a7c15ull, k % 1000});
    if (k % 5 == 0) e.callsite = k;
    if (k % 6 == 0) e.attribute = -static_cast<std::int64_t>(k);
    if (k % 7 == 0) e.counters = {k, 1u << (k % 40)};
    if (k % 8 == 0) e.stall_ns = k * 1000;
    if (k % 9 == 0) e.signatures.push_back({2 + k % 30, 8, {{4, 2}}});
    if (k % 10 == 0) e.neighbours = NeighbourLists{false, {1, 2}, {}, {3}, {}};
    w.write(e, payload);
    written.push_back(std::move(e));
  }
  w.close();
  return written;
}

// The generic decoder over every chunk of the file, each event into a new Event.
std::vector<Event> decode_generic(const std::filesystem::path& file) {
  std::vector<Event> out;
  StreamFileReader reader(file);
  Chunk chunk;
  std::uint64_t index = 0, end_ns = 0, payload = 0, overhead = 0;
  while (reader.next(chunk) == ReadResult::chunk) {
    if (chunk.header.kind != ChunkKind::events) continue;
    EventColumns c = EventColumns::of(chunk.data);
    for (std::uint32_t i = 0; i < chunk.header.count; ++i) {
      Event ev;
      ev.index = index++;
      decode_event_generic(c, end_ns, payload, ev);
      end_ns = ev.end_ns;
      overhead += ev.overhead_ns;
      ev.raw_start_ns = ev.start_ns + overhead;
      out.push_back(std::move(ev));
    }
    EXPECT_TRUE(c.at_end());
  }
  return out;
}

class EventDecoderGenerated : public TempDirTest {};

void expect_reader_matches(const std::filesystem::path& dir, bool small) {
  // Long chunks (most events far from an end) and short ones (many near it, the fallback).
  for (const std::size_t chunk_events : {std::size_t{4096}, std::size_t{3}}) {
    SCOPED_TRACE("chunk_events " + std::to_string(chunk_events));
    const std::vector<Event> written = write_all(dir, chunk_events, small);
    const std::vector<Event> generic = decode_generic(dir / "r.events");
    ASSERT_EQ(generic.size(), written.size());
    RankEventReader reader(dir / "r.events");
    Event ev;  // reused, as readers do
    std::size_t n = 0;
    while (reader.next(ev)) {
      ASSERT_LT(n, written.size());
      expect_same_event(ev, generic[n]);
      EXPECT_EQ(ev.raw_start_ns, generic[n].raw_start_ns);
      // And what was written: arguments as given (outputs absent after a failure).
      const Event& w = written[n];
      const auto params = w.info().params;
      for (std::size_t i = 0; i < params.size(); ++i) {
        const bool absent = !w.info().modelled || params[i].role == Role::opaque ||
                            (w.rc != 0 && is_output(params[i].role));
        SCOPED_TRACE(std::string(w.info().name) + " " + params[i].name);
        ASSERT_EQ(ev.args[i].present, !absent);
        if (absent) continue;
        EXPECT_EQ(ev.args[i].scalar, w.args[i].scalar);
        EXPECT_EQ(ev.args[i].requests.size(), w.args[i].requests.size());
        EXPECT_EQ(ev.args[i].statuses.size(), w.args[i].statuses.size());
      }
      EXPECT_EQ(ev.start_ns, w.start_ns);
      EXPECT_EQ(ev.end_ns, w.end_ns);
      EXPECT_EQ(ev.rc, w.rc);
      EXPECT_EQ(ev.send_hashes.size(), w.send_hashes.size());
      EXPECT_EQ(ev.callsite, w.callsite);
      EXPECT_EQ(ev.stall_ns, w.stall_ns);
      ++n;
    }
    EXPECT_TRUE(reader.complete()) << reader.problem();
    EXPECT_EQ(n, written.size());
  }
}

TEST_F(EventDecoderGenerated, EveryFunctionMatchesTheGenericDecoderAndTheWriter) {
  expect_reader_matches(dir_, false);
}

// Every run of ids and values one byte each: the runs read from their bytes after one test.
TEST_F(EventDecoderGenerated, OneByteRunsMatchTheGenericDecoderAndTheWriter) {
  expect_reader_matches(dir_, true);
}

// last_body() is what the replay profile copies: the exact bytes of the event just decoded,
// on the fast path as on the checked one.
TEST_F(EventDecoderGenerated, LastBodyIsTheEventsBytes) {
  write_all(dir_, 5);
  RankEventReader reader(dir_ / "r.events");
  Event ev;
  std::size_t n = 0;
  while (reader.next(ev)) {
    std::vector<std::byte> again;
    encode_event_body(ev, again);
    const auto body = reader.last_body();
    ASSERT_EQ(body.size(), again.size()) << ev.info().name << " #" << ev.index;
    EXPECT_TRUE(std::equal(body.begin(), body.end(), again.begin()));
    ++n;
  }
  EXPECT_TRUE(reader.complete()) << reader.problem();
  EXPECT_EQ(n, 4 * function_table().size());
}

}  // namespace
}  // namespace encore
