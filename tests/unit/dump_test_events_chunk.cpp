// An events chunk built in steps (an application thread encoding its own records while it
// waits, TraceWriter::help, then the writer finishing it) must be byte for byte the chunk the
// writer builds in one go, with the encoder left in the same state: lean runs cut anywhere,
// light records, Call records with bodies, chunks that start inside a run.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "events_chunk.hpp"
#include "light_record.hpp"
#include "raw_times.hpp"
#include "segment.hpp"
#include <gtest/gtest.h>

#include "encore/event_format.hpp"

namespace encore::dump {
namespace {

// A segment filled as the application thread fills one, and where each event starts.
struct Filled {
  std::vector<Mark> at;  // at[i]: the mark before event i (at.back(): after the last)
};

Filled fill(Segment& s, const Clock& clock, std::mt19937_64& rng, std::size_t events) {
  Filled f;
  Mark m;
  std::uint64_t t = clock.zero_ticks() + 1000;
  std::uint64_t repeat = 0;  // the open run's kRepeat flags (its template), or 0
  const auto put_times = [&](const auto& r) {
    std::memcpy(s.times_data() + m.times, &r, sizeof r);
    m.times += sizeof r;
  };
  for (std::size_t i = 0; i < events; ++i) {
    f.at.push_back(m);
    const std::uint64_t t1 = t + rng() % 300;
    const std::uint64_t t2 = t1 + rng() % 200 + (rng() % 40 == 0 ? 70000 : 0);
    t = t2 + rng() % 30;
    const auto pick = rng() % 10;
    if (repeat != 0 && pick < 7) {  // the run goes on: a lean poll, its 2-byte repeat head
      const bool sample = rng() % 9 == 0;
      put_times(LeanTimes{repeat | RawTimes::kLean | (sample ? RawTimes::kLeanSample : 0), t1, t2,
                          sample ? t : 0});
      s.body_data()[m.bytes++] = std::byte{event_format::kRepeatHead0};
      s.body_data()[m.bytes++] = std::byte{event_format::kRepeatHead1};
    } else if (pick < 8) {  // a light send: its body is encoded by the writer, at body_at
      repeat = 0;
      LightTimes r{};
      r.flags = RawTimes::kLight | (rng() % 3 == 0 ? RawTimes::kPrevMeasured : 0);
      r.prev_t3 = t1 - 1;
      r.t1 = t1;
      r.t2 = t2;
      r.body_at = m.bytes;
      r.word = rng();
      r.count = static_cast<std::int32_t>(rng() % 300);
      r.peer = static_cast<std::int32_t>(rng() % 4);
      r.tag = static_cast<std::int32_t>(rng() % 200);
      r.type_id = 3;
      r.comm_id = 1;
      r.bytes = static_cast<std::uint32_t>(rng() % 300);
      r.fn = 7;
      r.kind = LightTimes::send;
      put_times(r);
    } else {  // a Call's record and body, perhaps a failed poll that opens a run
      const std::size_t len = 3 + rng() % 20;
      put_times(RawTimes{RawTimes::kPrevMeasured, t1 - 2, 0, t1, t2});
      for (std::size_t k = 0; k < len; ++k) s.body_data()[m.bytes + k] = std::byte(rng());
      repeat = pick == 9 ? 0
                         : RawTimes::kRepeat | std::uint64_t{len} << RawTimes::kRepeatLenShift |
                               std::uint64_t{m.bytes} << RawTimes::kRepeatAtShift;
      m.bytes += len;
    }
    ++m.events;
  }
  f.at.push_back(m);
  s.publish(m);
  return f;
}

TEST(EventsChunk, StepsGiveTheChunkBuiltInOneGo) {
  Clock clock{ClockSource::monotonic};  // before calibration: ticks are ns since its zero
  std::mt19937_64 rng(15);
  Segment seg(StreamKind::events, 1u << 20, false);
  ScratchBuffer out_one, out_steps;
  EventsChunk one, steps;
  for (int round = 0; round < 40; ++round) {
    const Filled f = fill(seg, clock, rng, 2000);
    // From the segment's start or from any event (inside a run: the template comes first).
    const std::size_t first = round % 2 ? 0 : rng() % 1000;
    const std::size_t last = first + 1 + rng() % (f.at.size() - first - 1);
    const Mark from = f.at[first];
    const Mark to = f.at[last];
    // Both encoders come from the same state, some events encoded before.
    TimeEncoder enc(clock);
    {
      EventsChunk before;
      ScratchBuffer scratch;
      before.begin(seg, Mark{}, enc);
      before.finish(from, scratch);
      enc = before.encoder();
    }
    one.begin(seg, from, enc);
    const auto a = one.finish(to, out_one);
    steps.begin(seg, from, enc);
    // Steps of a few events up to what was "published" at some later event, as help() takes.
    std::size_t pub = first;
    while (pub < last && rng() % 8 != 0) {
      pub = std::min(last, pub + rng() % 12);
      steps.add(f.at[pub].times, 1 + rng() % 10);
    }
    const auto b = steps.finish(to, out_steps);
    ASSERT_EQ(std::vector<std::byte>(a.begin(), a.end()),
              std::vector<std::byte>(b.begin(), b.end()))
        << "round " << round << " events " << first << ".." << last;
    EXPECT_EQ(one.encoder().end_ns(), steps.encoder().end_ns());
    EXPECT_EQ(one.encoder().overhead_ns(), steps.encoder().overhead_ns());
    EXPECT_GT(a.size(), to.events - from.events);
  }
}

TEST(EventsChunk, AStepEncodesAtMostItsShareAndNothingUnpublished) {
  Clock clock{ClockSource::monotonic};
  std::mt19937_64 rng(3);
  Segment seg(StreamKind::events, 1u << 20, false);
  const Filled f = fill(seg, clock, rng, 500);
  EventsChunk c;
  c.begin(seg, Mark{}, TimeEncoder(clock));
  std::uint64_t done = 0;
  for (int i = 0; i < 40; ++i) {
    const std::uint64_t n = c.add(f.at[100].times, 4);
    EXPECT_LE(n, 4u);
    done += n;
  }
  EXPECT_EQ(done, 100u);  // stops at the published mark however many steps follow
  EXPECT_EQ(c.add(f.at[100].times, 4), 0u);
}

}  // namespace
}  // namespace encore::dump
