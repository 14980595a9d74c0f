// The decoder reuses the caller's Event and clears only what the previous event left (see
// Event::stale): decoding into one reused Event must give exactly what decoding each event
// into a new Event gives, whatever function, outcome and extras came before.
#include <numeric>
#include <string>
#include <vector>

#include "expect_event.hpp"
#include "role_values.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/event_reader.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/role_coding.hpp"

namespace encore {
namespace {

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
        e.args[i] = value_of(table[id].params[i].role, static_cast<std::int64_t>(k + i), e);
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
    a.scalar = 99;
    a.flags = 99;
    a.list = {1};
    a.requests = {RequestRef{}};
    a.text = "junk";
  }
  reused.counters = {1, 2};
  std::size_t n = 0;
  while (reused_reader.next(reused)) {
    Event fresh;
    ASSERT_TRUE(fresh_reader.next(fresh));
    expect_same_event(fresh, reused);
    ++n;
  }
  EXPECT_TRUE(reused_reader.complete()) << reused_reader.problem();
  EXPECT_EQ(n, 3 * table.size());
}

}  // namespace
}  // namespace encore
