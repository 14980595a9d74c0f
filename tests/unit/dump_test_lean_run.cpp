// The writer encodes a run of lean polls in one loop (TimeEncoder::encode_lean_run): its
// columns and the encoder's state after it must be exactly what encoding the records one by
// one gives, samples, tails cut at the next start and a record that ends the run included.
// And the polls the application thread timed itself come out as if the writer had.
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "raw_times.hpp"
#include "segment_pool.hpp"
#include "thread_stream.hpp"
#include <gtest/gtest.h>

#include "encore/varint.hpp"

namespace encore::dump {
namespace {

struct Columns {
  std::vector<std::byte> col[3];
  std::byte* cursor[3];
  explicit Columns(std::size_t events) {
    for (int i = 0; i < 3; ++i) {
      col[i].resize(events * kMaxVarintBytes);
      cursor[i] = col[i].data();
    }
  }
  std::vector<std::byte> used(int i) const {
    return {col[i].data(), static_cast<const std::byte*>(cursor[i])};
  }
};

// Records as the application thread leaves them: lean polls (some sampled, some coming sooner
// than the median tail) and, now and then, a RawTimes or a light sample between runs.
std::vector<std::byte> records(const Clock& clock, std::mt19937_64& rng, std::size_t n) {
  std::vector<std::byte> out;
  std::uint64_t t = clock.zero_ticks() + 1000;
  const auto add = [&](const auto& r) {
    const auto* b = reinterpret_cast<const std::byte*>(&r);
    out.insert(out.end(), b, b + sizeof r);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t gap = rng() % 4 == 0 ? rng() % 3 : rng() % 300;  // some too soon
    const std::uint64_t t1 = t + gap;
    const std::uint64_t t2 = t1 + rng() % 200 + (rng() % 50 == 0 ? 100000 : 0);
    const std::uint64_t t3 = t2 + rng() % 40;
    t = rng() % 9 == 0 ? t3 : t2;
    if (rng() % 30 == 0) {
      // A call through a Call, its tail a light sample.
      add(RawTimes{RawTimes::kPrevMeasured | RawTimes::kPrevLightSample, t1 - 1, 0, t1, t2});
      continue;
    }
    const bool sample = rng() % 7 == 0;
    const std::uint64_t flags = RawTimes::kLean | RawTimes::kRepeat |
                                (sample ? RawTimes::kLeanSample : 0) | std::uint64_t{5} << 32;
    add(LeanTimes{flags, t1, t2, sample ? t3 : 0xdeadbeef});
    if (sample) t = t3;
  }
  return out;
}

TEST(TimeEncoder, LeanRunEncodesAsRecordByRecord) {
  Clock clock{ClockSource::monotonic};  // before calibration: ticks are ns since its zero
  std::mt19937_64 rng(14);
  for (int round = 0; round < 20; ++round) {
    const std::vector<std::byte> recs = records(clock, rng, 500);
    const std::byte* const end = recs.data() + recs.size();
    TimeEncoder one(clock);
    TimeEncoder run(clock);
    Columns a(600), b(600);
    // A light sample first, so the first lean poll of each run takes the light median.
    const RawTimes head{0, 0, 0, clock.zero_ticks() + 10, clock.zero_ticks() + 20};
    one.encode(head, a.cursor);
    run.encode(head, b.cursor);
    for (const std::byte* p = recs.data(); p < end;) {
      std::uint64_t flags;
      std::memcpy(&flags, p, sizeof flags);
      if (flags & RawTimes::kLean) {
        const std::byte* stop = run.encode_lean_run(p, end, b.cursor);
        ASSERT_GT(stop, p);
        for (; p < stop; p += sizeof(LeanTimes)) {
          LeanTimes r;
          std::memcpy(&r, p, sizeof r);
          ASSERT_TRUE(r.flags & RawTimes::kLean);
          one.encode(r, a.cursor);
        }
        if (p < end) {  // the run ended at a record that is not a lean poll
          std::memcpy(&flags, p, sizeof flags);
          EXPECT_FALSE(flags & RawTimes::kLean);
        }
      } else {
        RawTimes r;
        std::memcpy(&r, p, sizeof r);
        p += sizeof r;
        one.encode(r, a.cursor);
        run.encode(r, b.cursor);
      }
      ASSERT_EQ(one.end_ns(), run.end_ns());
      ASSERT_EQ(one.overhead_ns(), run.overhead_ns());
    }
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a.used(i), b.used(i)) << "column " << i;
    // The state carried to the next event (its previous tail) agrees too.
    const RawTimes tail{0, 0, 0, clock.zero_ticks() + 1'000'000'000,
                        clock.zero_ticks() + 1'000'000'100};
    one.encode(tail, a.cursor);
    run.encode(tail, b.cursor);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(a.used(i), b.used(i)) << "column " << i;
  }
}

TEST(TimeEncoder, LeanRunStopsAtOtherRecordsAndAtTheEnd) {
  Clock clock{ClockSource::monotonic};
  TimeEncoder enc(clock);
  Columns c(4);
  const std::uint64_t z = clock.zero_ticks();
  const std::uint64_t lean = RawTimes::kLean | RawTimes::kRepeat;
  std::vector<std::byte> recs(2 * sizeof(LeanTimes) + sizeof(RawTimes));
  const LeanTimes polls[2] = {{lean, z + 100, z + 110, 0}, {lean, z + 200, z + 210, 0}};
  const RawTimes other{0, 0, 0, z + 300, z + 310};
  std::memcpy(recs.data(), polls, sizeof polls);
  std::memcpy(recs.data() + sizeof polls, &other, sizeof other);
  const std::byte* end = recs.data() + recs.size();
  EXPECT_EQ(enc.encode_lean_run(recs.data(), end, c.cursor), recs.data() + sizeof polls);
  EXPECT_EQ(enc.end_ns(), 210u);
  // Nothing to encode: the encoder is left as it was.
  EXPECT_EQ(enc.encode_lean_run(recs.data() + sizeof polls, end, c.cursor),
            recs.data() + sizeof polls);
  EXPECT_EQ(enc.encode_lean_run(end, end, c.cursor), end);
  EXPECT_EQ(c.cursor[0] - c.col[0].data(), 2);
  EXPECT_EQ(enc.end_ns(), 210u);
}

// A thread's stream whose polls may take the lean path, on an uncalibrated TSC clock (a tick
// is a nanosecond).
struct LeanStream {
  SegmentPool pool{64u << 20};
  ThreadStream ts{0, pool};
  const Clock clock{ClockSource::tsc};
  LeanStream() {
    ts.clock = &clock;
    ts.lean_allowed = true;
  }
};

// A run's template (a failed poll committed in place, its times returned) and its lean path.
RawTimes open_run(ThreadStream& ts, std::uint64_t start) {
  const RawTimes head{0, 0, 0, start, start + 40};
  const std::byte body[6] = {std::byte{0x15}, std::byte{0x02}, std::byte{3},
                             std::byte{4},    std::byte{5},    std::byte{0}};
  const std::size_t at = ts.body_offset();
  std::memcpy(ts.body_cursor(), body, sizeof body);
  *ts.times_cursor() = head;
  ts.commit_in_place(sizeof body);
  ts.start_poll_run(5, 1, 2, sizeof body, at, nullptr, 0);
  return head;
}

LeanTimes record(const ThreadStream& ts, std::size_t i) {
  LeanTimes r;
  std::memcpy(&r, ts.lean.times + i * sizeof r, sizeof r);
  return r;
}

// The application thread times a lean poll itself from the run's second poll on (LeanTimes
// with kLeanTimed, ThreadStream::lean_append): what the writer makes of those records must be
// exactly what it makes of the raw ticks, with sampled tails, polls that come sooner than the
// median tail, and values the thread leaves to the writer (a clock step backwards, a gap of
// seconds).
TEST(LeanPolls, TheThreadTimesPollsAsTheWriterWould) {
  LeanStream stream;
  ThreadStream& ts = stream.ts;
  const std::uint64_t start = __rdtsc();
  const RawTimes head = open_run(ts, start);
  ASSERT_TRUE(ts.lean.at == ts.events());

  std::mt19937_64 rng(14);
  std::vector<std::uint64_t> t1s, t2s;
  std::uint64_t t = start + 40;
  for (int i = 0; i < 3000; ++i) {
    std::uint64_t t1 = std::max<std::uint64_t>(t, __rdtsc()) + rng() % 60;
    std::uint64_t t2 = t1 + rng() % 400;
    if (i % 97 == 50) t1 = t - 7;                // before the previous end
    if (i % 89 == 40) t2 = t1 - 3;               // ends before it starts
    if (i % 211 == 100) t1 += 5'000'000'000ull;  // a gap too long for 32 bits
    if (i % 5 == 0) t2 = t1;                     // no time at all
    ASSERT_TRUE(ts.lean_continues(5, 1, 2));
    ts.in_tool = true;
    ts.lean_append(t1, t2);
    t1s.push_back(t1);
    t2s.push_back(t2);
    t = std::max(t1, t2);
  }
  const std::size_t n = t1s.size();
  ASSERT_EQ(ts.lean.n, n);
  const std::byte* recs = ts.lean.times;
  const std::byte* const end = recs + n * sizeof(LeanTimes);
  // The same polls as raw ticks, as the thread would have left them before.
  std::vector<std::byte> raw(n * sizeof(LeanTimes));
  std::size_t timed = 0, sampled = 0;
  for (std::size_t i = 0; i < n; ++i) {
    LeanTimes r;
    std::memcpy(&r, recs + i * sizeof r, sizeof r);
    if (r.flags & RawTimes::kLeanTimed) ++timed;
    if (r.flags & RawTimes::kLeanSample) ++sampled;
    const LeanTimes plain{r.flags & ~RawTimes::kLeanTimed, t1s[i], t2s[i], r.t3};
    std::memcpy(raw.data() + i * sizeof r, &plain, sizeof plain);
  }
  EXPECT_EQ(sampled, (n + 63) / 64);  // the first poll, then one in 64: the writer times those
  EXPECT_GT(timed, n * 9 / 10);       // and the odd values: the thread times the rest
  EXPECT_GT(n - timed - sampled, 30u);

  TimeEncoder expected(stream.clock), run(stream.clock), one(stream.clock);
  Columns e(n + 2), a(n + 2), b(n + 2);
  expected.encode(head, e.cursor);
  run.encode(head, a.cursor);
  one.encode(head, b.cursor);
  EXPECT_EQ(expected.encode_lean_run(raw.data(), raw.data() + raw.size(), e.cursor),
            raw.data() + raw.size());
  EXPECT_EQ(run.encode_lean_run(recs, end, a.cursor), end);
  for (const std::byte* p = recs; p < end; p += sizeof(LeanTimes)) {  // as the crash handler
    LeanTimes r;
    std::memcpy(&r, p, sizeof r);
    one.encode(r, b.cursor);
  }
  EXPECT_EQ(expected.end_ns(), run.end_ns());
  EXPECT_EQ(expected.overhead_ns(), run.overhead_ns());
  EXPECT_EQ(expected.end_ns(), one.end_ns());
  // And the event after the run is charged the same tail.
  const RawTimes next{0, 0, 0, t + 500, t + 600};
  expected.encode(next, e.cursor);
  run.encode(next, a.cursor);
  one.encode(next, b.cursor);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(e.used(i), a.used(i)) << "column " << i;
    EXPECT_EQ(e.used(i), b.used(i)) << "column " << i;
  }
}

// A sampled poll stands for the tool's time between two polls: its tail and its own pre-work
// (from its entry, t0, to t1), less the one clock read the others do not make. Its record's
// end of tool work (t3) is moved on by that pre-work, so the writer's median, and the next
// poll's charge, hold it; the thread keeps the pre-work's own median for lean_help.
TEST(LeanPolls, ASampledPollsPreWorkIsInItsSample) {
  LeanStream stream;
  ThreadStream& ts = stream.ts;
  ts.read_cost_ticks = 100;
  open_run(ts, __rdtsc());
  ASSERT_TRUE(ts.lean_samples_next());  // a run's first lean poll is sampled
  const std::uint64_t t1 = __rdtsc();
  const std::uint64_t t2 = t1 + 30;
  ts.in_tool = true;
  const std::uint64_t before = __rdtsc();
  ts.lean_append(t1, t2, t1 - 5000);
  const LeanTimes r = record(ts, 0);
  ASSERT_TRUE(r.flags & RawTimes::kLeanSample);
  EXPECT_GE(r.t3, before + 4900);
  EXPECT_EQ(ts.lean_prologues.median, 4900u);
  EXPECT_FALSE(ts.lean_samples_next());
}

// From a run's kHelpFrom-th poll on, each poll helps its writer (on_wait) after recording
// itself; that step is the tool's time, so the next poll the thread times is charged it as
// overhead, not as the gap before it (which is the program's compute).
TEST(LeanPolls, AHelpStepIsChargedToTheNextPoll) {
  LeanStream stream;
  ThreadStream& ts = stream.ts;
  constexpr std::uint64_t kStep = 20000;
  int helped = 0;
  ts.on_wait = [&helped] {
    ++helped;
    const std::uint64_t until = __rdtsc() + kStep;
    while (__rdtsc() < until) {
    }
  };
  open_run(ts, __rdtsc());
  constexpr std::size_t kPolls = ThreadStream::kHelpFrom + 4;
  for (std::size_t i = 0; i < kPolls; ++i) {
    ASSERT_TRUE(ts.lean_continues(5, 1, 2));
    ts.in_tool = true;
    const std::uint64_t t1 = __rdtsc();
    ts.lean_append(t1, __rdtsc());
  }
  EXPECT_EQ(helped, 5);  // after the 64th poll and each one after it
  // Polls 0 and 64 are sampled (the writer times them); the others are timed by the thread.
  for (std::size_t i = ThreadStream::kHelpFrom + 1; i < kPolls; ++i) {
    const LeanTimes r = record(ts, i);
    ASSERT_TRUE(r.flags & RawTimes::kLeanTimed) << i;
    EXPECT_GE(r.t2, kStep) << "overhead of poll " << i;
    EXPECT_LT(LeanTimes::gap(r.t1), kStep) << "gap of poll " << i;
  }
  // Before the help steps, a poll is charged the lean tail alone.
  const LeanTimes quiet = record(ts, 10);
  ASSERT_TRUE(quiet.flags & RawTimes::kLeanTimed);
  EXPECT_LT(quiet.t2, kStep);
}

}  // namespace
}  // namespace encore::dump
