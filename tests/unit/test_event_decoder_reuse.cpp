// The decoder reuses the caller's Event and clears only what the previous event left (see
// Event::stale): decoding into one reused Event must give exactly what decoding each event
// into a new Event gives, whatever function, outcome and extras came before.
#include <numeric>
#include <string>
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/role_coding.hpp"

namespace encore {
namespace {

// Every coding gets a value that differs from a fresh ArgValue, so leftovers would show.
void fill(Role role, ArgValue& a, std::int64_t seed, const Event& ev) {
  a.present = role != Role::opaque;
  switch (coding_of(role)) {
    case Coding::nothing:
      break;
    case Coding::id:
      a.scalar = 2 + seed % 300;
      break;
    case Coding::value:
      a.scalar = seed % 2 ? -seed : seed * 1000;
      break;
    case Coding::values:
      a.list = {seed, -seed};
      break;
    case Coding::ids:
      a.list = {2, 1024 + seed};
      break;
    case Coding::new_comm:
      a.scalar = 1024 + seed;
      a.flags = seed % 2;
      a.list = {0, 3};
      if (a.flags) a.remote = {1};
      break;
    case Coding::new_group:
      a.scalar = 1024 + seed;
      a.list = {2};
      break;
    case Coding::request:
      a.requests = {RequestRef{false, ev.thread, ev.index > 0 ? ev.index - 1 : 0}};
      break;
    case Coding::requests:
      a.requests = {RequestRef{}, RequestRef{false, ev.thread, ev.index > 1 ? ev.index - 2 : 0}};
      break;
    case Coding::status:
      a.statuses = {StatusRecord{0, seed, 7, 64, 0}};
      break;
    case Coding::statuses:
      a.statuses = {StatusRecord{1, 2, 3, 4, 0}, StatusRecord{0, -1, seed, 8, 9}};
      break;
    case Coding::text:
      a.text = "t" + std::to_string(seed);
      break;
    case Coding::real:
      a.real = 0.25 * static_cast<double>(seed);
      break;
  }
}

void expect_identical(const Event& a, const Event& b) {
  ASSERT_EQ(a.function, b.function);
  const FunctionInfo& f = a.info();
  SCOPED_TRACE(std::string(f.name) + " #" + std::to_string(a.index));
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.raw_start_ns, b.raw_start_ns);
  EXPECT_EQ(a.rc, b.rc);
  ASSERT_GE(a.args.size(), f.params.size());
  ASSERT_GE(b.args.size(), f.params.size());
  for (std::size_t i = 0; i < f.params.size(); ++i) {
    const ArgValue& x = a.args[i];
    const ArgValue& y = b.args[i];
    SCOPED_TRACE(f.params[i].name);
    EXPECT_EQ(x.present, y.present);
    EXPECT_EQ(x.scalar, y.scalar);
    EXPECT_EQ(x.real, y.real);
    EXPECT_EQ(x.flags, y.flags);
    EXPECT_EQ(x.list, y.list);
    EXPECT_EQ(x.remote, y.remote);
    EXPECT_EQ(x.text, y.text);
    ASSERT_EQ(x.requests.size(), y.requests.size());
    for (std::size_t k = 0; k < x.requests.size(); ++k) {
      EXPECT_EQ(x.requests[k].null, y.requests[k].null);
      EXPECT_EQ(x.requests[k].event, y.requests[k].event);
    }
    ASSERT_EQ(x.statuses.size(), y.statuses.size());
    for (std::size_t k = 0; k < x.statuses.size(); ++k) {
      EXPECT_EQ(x.statuses[k].source, y.statuses[k].source);
      EXPECT_EQ(x.statuses[k].tag, y.statuses[k].tag);
      EXPECT_EQ(x.statuses[k].bytes, y.statuses[k].bytes);
    }
  }
  EXPECT_EQ(a.payloads.size(), b.payloads.size());
  EXPECT_EQ(a.send_hashes.size(), b.send_hashes.size());
  EXPECT_EQ(a.signatures.size(), b.signatures.size());
  EXPECT_EQ(a.callsite, b.callsite);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.stall_ns, b.stall_ns);
  EXPECT_EQ(a.attribute, b.attribute);
  EXPECT_EQ(a.neighbours.has_value(), b.neighbours.has_value());
}

class EventDecoderReuse : public TempDirTest {};

TEST_F(EventDecoderReuse, ReusedEventMatchesAFreshOne) {
  const auto table = function_table();
  {
    RankWriterOptions opt;
    opt.chunk_events = 50;
    RankTraceWriter w(dir_ / "r.events", dir_ / "r.payload", 0, opt);
    std::uint64_t now = 0;
    // Every function three times, in an order where each follows many different others;
    // a third of the calls fail (outputs absent), some carry extras.
    const std::size_t n = 3 * table.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t id = (k * 7919) % table.size();
      Event e;
      e.function = static_cast<std::uint16_t>(id);
      e.index = k;
      e.start_ns = now + 10;
      e.end_ns = e.start_ns + k % 5;
      now = e.end_ns;
      e.rc = k % 3 == 1 ? 5 : 0;
      e.args.resize(table[id].params.size());
      for (std::size_t i = 0; i < table[id].params.size(); ++i)
        fill(table[id].params[i].role, e.args[i], static_cast<std::int64_t>(k + i), e);
      if (k % 4 == 0) e.send_hashes.push_back({k, 8});
      if (k % 5 == 0) e.callsite = k;
      if (k % 6 == 0) e.attribute = -static_cast<std::int64_t>(k);
      if (k % 7 == 0) e.counters = {k, 1};
      w.write(e, {});
    }
    w.close();
  }
  RankEventReader reused_reader(dir_ / "r.events");
  RankEventReader fresh_reader(dir_ / "r.events");
  Event reused;
  // A hand-filled Event handed to the decoder: its leftovers must go too.
  reused.args.resize(40);
  for (auto& a : reused.args) {
    a.present = true;
    a.scalar = a.flags = 99;
    a.list = {1};
    a.requests = {RequestRef{}};
    a.text = "junk";
  }
  reused.counters = {1, 2};
  std::size_t n = 0;
  while (reused_reader.next(reused)) {
    Event fresh;
    ASSERT_TRUE(fresh_reader.next(fresh));
    expect_identical(fresh, reused);
    ++n;
  }
  EXPECT_TRUE(reused_reader.complete()) << reused_reader.problem();
  EXPECT_EQ(n, 3 * table.size());
}

}  // namespace
}  // namespace encore
