// RankTraceWriter + decode: every modelled function of the table, with values for every
// parameter role, survives a write and a read unchanged; chunks split per thread.
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
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

void expect_same(const Event& a, const Event& b) {
  ASSERT_EQ(a.function, b.function);
  const FunctionInfo& f = a.info();
  SCOPED_TRACE(std::string(f.name));
  EXPECT_EQ(a.thread, b.thread);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.overhead_ns, b.overhead_ns);
  EXPECT_EQ(a.rc, b.rc);
  for (std::size_t i = 0; f.modelled && i < f.params.size(); ++i) {
    if (a.rc != 0 && is_output(f.params[i].role)) continue;
    const ArgValue& x = a.args[i];
    const ArgValue& y = b.args[i];
    EXPECT_EQ(x.scalar, y.scalar) << f.params[i].name;
    EXPECT_EQ(x.list, y.list) << f.params[i].name;
    EXPECT_EQ(x.remote, y.remote) << f.params[i].name;
    EXPECT_EQ(x.flags, y.flags) << f.params[i].name;
    EXPECT_EQ(x.text, y.text) << f.params[i].name;
    EXPECT_EQ(x.real, y.real) << f.params[i].name;
    ASSERT_EQ(x.requests.size(), y.requests.size()) << f.params[i].name;
    for (std::size_t k = 0; k < x.requests.size(); ++k) {
      EXPECT_EQ(x.requests[k].null, y.requests[k].null);
      if (!x.requests[k].null) {
        EXPECT_EQ(x.requests[k].thread, y.requests[k].thread);
        EXPECT_EQ(x.requests[k].event, y.requests[k].event);
      }
    }
    ASSERT_EQ(x.statuses.size(), y.statuses.size()) << f.params[i].name;
    for (std::size_t k = 0; k < x.statuses.size(); ++k) {
      EXPECT_EQ(x.statuses[k].source, y.statuses[k].source);
      EXPECT_EQ(x.statuses[k].tag, y.statuses[k].tag);
      EXPECT_EQ(x.statuses[k].bytes, y.statuses[k].bytes);
      EXPECT_EQ(x.statuses[k].bits, y.statuses[k].bits);
      EXPECT_EQ(x.statuses[k].error, y.statuses[k].error);
    }
  }
  ASSERT_EQ(a.payloads.size(), b.payloads.size());
  for (std::size_t k = 0; k < a.payloads.size(); ++k) {
    EXPECT_EQ(a.payloads[k].bytes, b.payloads[k].bytes);
    EXPECT_EQ(a.payloads[k].datatype, b.payloads[k].datatype);
    EXPECT_EQ(a.payloads[k].count, b.payloads[k].count);
    EXPECT_EQ(a.payloads[k].slot, b.payloads[k].slot);
  }
  ASSERT_EQ(a.send_hashes.size(), b.send_hashes.size());
  for (std::size_t k = 0; k < a.send_hashes.size(); ++k)
    EXPECT_EQ(a.send_hashes[k].hash, b.send_hashes[k].hash);
  ASSERT_EQ(a.signatures.size(), b.signatures.size());
  for (std::size_t k = 0; k < a.signatures.size(); ++k)
    EXPECT_EQ(a.signatures[k].runs, b.signatures[k].runs);
  EXPECT_EQ(a.callsite, b.callsite);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.stall_ns, b.stall_ns);
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
    expect_same(want, ev);
    ++n;
  }
  EXPECT_TRUE(r.complete()) << r.problem();
  EXPECT_EQ(n, written.size());
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

}  // namespace
}  // namespace encore
