// RankEventReader checks the room of the time columns once per budget of events (each event
// takes at most a 10-byte varint of each): with times of every varint length, long ones right
// up to a column's end included, every event must still decode as written, whichever path it
// takes (repeats through the budget are in test_event_repeat.cpp).
#include <cstdint>
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore {
namespace {

class EventReaderBudget : public TempDirTest {};

// 1 to 9 bytes: 7 bits per byte, so 2^(7k) needs k + 1 bytes.
std::uint64_t time_of(std::uint64_t k) { return std::uint64_t{1} << (7 * (k % 9)); }

Event send_of(std::uint64_t k) {
  Event e;
  e.function = fn::Send;
  e.index = k;
  const auto params = function_table()[fn::Send].params;
  e.args.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    e.args[i].present = true;
    e.args[i].scalar = static_cast<std::int64_t>(k + i);
  }
  return e;
}

TEST_F(EventReaderBudget, TimesOfEveryLengthUpToTheColumnsEnd) {
  for (const std::size_t chunk_events : {std::size_t{1000}, std::size_t{7}, std::size_t{1}}) {
    SCOPED_TRACE("chunk_events " + std::to_string(chunk_events));
    RankWriterOptions opt;
    opt.chunk_events = chunk_events;
    std::vector<Event> written;
    {
      RankTraceWriter w(dir_ / "r.events", dir_ / "r.payload", 0, opt);
      std::uint64_t now = 0;
      for (std::uint64_t k = 0; k < 300; ++k) {
        Event e = send_of(k);
        // The last events carry the longest times, so the columns end on long varints.
        const std::uint64_t at = k < 250 ? k : 8;
        e.start_ns = now + time_of(at);
        e.end_ns = e.start_ns + time_of(at + 3);
        e.overhead_ns = time_of(at + 5) / 2;
        now = e.end_ns;
        w.write(e, {});
        written.push_back(std::move(e));
      }
      w.close();
    }
    RankEventReader reader(dir_ / "r.events");
    Event ev;
    std::size_t n = 0;
    std::uint64_t overhead = 0;
    while (reader.next(ev)) {
      ASSERT_LT(n, written.size());
      const Event& w = written[n];
      EXPECT_EQ(ev.function, fn::Send);
      EXPECT_EQ(ev.index, n);
      EXPECT_EQ(ev.start_ns, w.start_ns) << n;
      EXPECT_EQ(ev.end_ns, w.end_ns) << n;
      EXPECT_EQ(ev.overhead_ns, w.overhead_ns) << n;
      overhead += w.overhead_ns;
      EXPECT_EQ(ev.raw_start_ns, w.start_ns + overhead) << n;
      for (std::size_t i = 0; i < w.args.size(); ++i)
        EXPECT_EQ(ev.args[i].scalar, w.args[i].scalar);
      ++n;
    }
    EXPECT_TRUE(reader.complete()) << reader.problem();
    EXPECT_EQ(n, written.size());
  }
}

}  // namespace
}  // namespace encore
