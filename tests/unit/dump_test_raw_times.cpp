// The writer thread turns each event's raw clock ticks into gap, duration and overhead exactly
// as doc/trace-format.md §9 defines them: corrected times leave out every overhead charged so
// far, and a light call whose tool time was not measured is charged the median of the last
// measured ones.
#include <cstdint>
#include <vector>

#include "light_record.hpp"
#include "raw_times.hpp"
#include <gtest/gtest.h>

#include "encore/varint.hpp"

using encore::Clock;
using encore::ClockSource;
using encore::dump::LeanTimes;
using encore::dump::LightTimes;
using encore::dump::RawTimes;
using encore::dump::TimeEncoder;

namespace {

struct Fields {
  std::uint64_t gap, dur, overhead;
};

// Before calibration a monotonic clock's ticks are its nanoseconds since its zero.
struct Encoder {
  Clock clock{ClockSource::monotonic};
  TimeEncoder enc{clock};
  std::uint64_t z = clock.zero_ticks();

  Fields next(std::uint64_t prev_t3, std::uint64_t flags, std::uint64_t t0, std::uint64_t t1,
              std::uint64_t t2) {
    std::byte col[3][encore::kMaxVarintBytes];
    std::byte* cursor[3] = {col[0], col[1], col[2]};
    enc.encode(RawTimes{flags, prev_t3 ? z + prev_t3 : 0, t0 ? z + t0 : 0, z + t1, z + t2}, cursor);
    return read(col, cursor);
  }
  // A poll of the lean path; t3 (its own tail's end) only when sampled.
  Fields lean(std::uint64_t t1, std::uint64_t t2, std::uint64_t t3 = 0) {
    std::byte col[3][encore::kMaxVarintBytes];
    std::byte* cursor[3] = {col[0], col[1], col[2]};
    const std::uint64_t flags =
        RawTimes::kLean | RawTimes::kRepeat | (t3 ? RawTimes::kLeanSample : 0);
    enc.encode(LeanTimes{flags, z + t1, z + t2, t3 ? z + t3 : 0}, cursor);
    return read(col, cursor);
  }
  // A light call (no pre-work), with its times column by column in `col` (each varint
  // encoded into a fresh column of kMaxVarintBytes).
  Fields light(std::uint64_t prev_t3, std::uint64_t flags, std::uint64_t t1, std::uint64_t t2) {
    std::byte col[3][encore::kMaxVarintBytes];
    std::byte* cursor[3] = {col[0], col[1], col[2]};
    LightTimes r{};
    r.flags = RawTimes::kLight | flags;
    r.prev_t3 = prev_t3 ? z + prev_t3 : 0;
    r.t1 = z + t1;
    r.t2 = z + t2;
    enc.encode(r, cursor);
    return read(col, cursor);
  }
  static Fields read(std::byte (&col)[3][encore::kMaxVarintBytes], std::byte* cursor[3]) {
    std::uint64_t v[3];
    for (int i = 0; i < 3; ++i) {
      encore::ByteReader r({col[i], static_cast<std::size_t>(cursor[i] - col[i])});
      v[i] = r.read_uvarint();
      EXPECT_TRUE(r.at_end());
    }
    return {v[0], v[1], v[2]};
  }
};

constexpr auto kMeasured = RawTimes::kPrevMeasured;
constexpr auto kSample = RawTimes::kPrevMeasured | RawTimes::kPrevLightSample;

}  // namespace

TEST(TimeEncoder, ChargesToolTimeToTheNextEvent) {
  Encoder e;
  Fields f = e.next(0, 0, 0, 100, 150);
  EXPECT_EQ(f.gap, 100u);
  EXPECT_EQ(f.dur, 50u);
  EXPECT_EQ(f.overhead, 0u);
  // Tool work until 170 after the first call, pre-work from 200 to 210 before the second.
  f = e.next(170, kMeasured, 200, 210, 260);
  EXPECT_EQ(f.gap, 30u);
  EXPECT_EQ(f.dur, 50u);
  EXPECT_EQ(f.overhead, 30u);
  EXPECT_EQ(e.enc.end_ns(), 230u);  // raw end 260 minus the 30 ns charged so far
  // A light call's measured tail (15 ns) becomes the estimate for the ones not measured.
  f = e.next(275, kSample, 0, 300, 310);
  EXPECT_EQ(f.overhead, 15u);
  EXPECT_EQ(f.gap, 25u);
  f = e.next(0, 0, 0, 400, 420);
  EXPECT_EQ(f.overhead, 15u);
  EXPECT_EQ(f.gap, 75u);
  EXPECT_EQ(f.dur, 20u);
  EXPECT_EQ(e.enc.overhead_ns(), 60u);
  // Uncorrected times stay recoverable: corrected end plus all overhead is the raw end.
  EXPECT_EQ(e.enc.end_ns() + e.enc.overhead_ns(), 420u);
}

TEST(TimeEncoder, MedianOfSamplesIgnoresOneStretchedSample) {
  Encoder e;
  std::uint64_t t = 1000;
  const std::uint64_t tails[] = {10, 12, 5000, 11, 13};
  e.next(0, 0, 0, t, t + 5);
  for (const std::uint64_t tail : tails) {
    t += 5;  // the previous call's t2
    const std::uint64_t t3 = t + tail;
    e.next(t3, kSample, 0, t3 + 100, t3 + 105);
    t = t3 + 100;
  }
  // Samples 10, 12, 5000, 11, 13: the median (12) is charged, not the preempted one.
  t += 5;
  const Fields f = e.next(0, 0, 0, t + 1000, t + 1001);
  EXPECT_EQ(f.overhead, 12u);
  EXPECT_EQ(f.gap, 1000u - 12u);
}

TEST(TimeEncoder, LargeTimesTakeSeveralBytes) {
  Encoder e;
  const std::uint64_t second = 1'000'000'000;
  const Fields f = e.next(0, 0, 0, 3 * second, 5 * second);
  EXPECT_EQ(f.gap, 3 * second);
  EXPECT_EQ(f.dur, 2 * second);
}

// A lean poll's tail (a few stores) is charged from its own samples, not from the light calls'
// (a whole recording each); a sampled lean poll's tail is charged exactly to the next event.
TEST(TimeEncoder, LeanPollsHaveTheirOwnTailSamples) {
  Encoder e;
  e.next(0, 0, 0, 100, 150);
  Fields f = e.next(170, kSample, 0, 200, 210);  // a light call's tail: 20 ns
  EXPECT_EQ(f.overhead, 20u);
  f = e.lean(300, 310);  // after a light call: the light median
  EXPECT_EQ(f.overhead, 20u);
  EXPECT_EQ(f.gap, 300u - 230u);
  EXPECT_EQ(f.dur, 10u);
  f = e.lean(400, 405, 408);  // no lean sample yet: nothing charged for the previous poll
  EXPECT_EQ(f.overhead, 0u);
  EXPECT_EQ(f.gap, 90u);
  f = e.lean(500, 502);  // after a sampled poll: its measured tail, 3 ns
  EXPECT_EQ(f.overhead, 3u);
  EXPECT_EQ(f.gap, 500u - 408u);
  f = e.lean(600, 601);  // the lean median
  EXPECT_EQ(f.overhead, 3u);
  EXPECT_EQ(f.gap, 600u - 505u);
  f = e.next(0, 0, 0, 700, 710);  // the call after a lean poll: the lean median too
  EXPECT_EQ(f.overhead, 3u);
  EXPECT_EQ(f.gap, 700u - 604u);
  f = e.next(0, 0, 0, 800, 810);  // after a light call again: the light median
  EXPECT_EQ(f.overhead, 20u);
  EXPECT_EQ(f.gap, 800u - 730u);
  EXPECT_EQ(e.enc.end_ns() + e.enc.overhead_ns(), 810u);
}

// A poll that comes sooner after the previous one than the median tail (the tail charged to it
// was not measured) is charged only the time there was: the uncorrected time (corrected end
// plus the overhead so far) stays the clock's, which the logged model and the fit compare
// across ranks. Charged the whole median, every such poll moved it ahead of the clock.
TEST(TimeEncoder, AnEstimatedTailEndsAtTheNextCall) {
  Encoder e;
  e.next(0, 0, 0, 100, 110);
  e.lean(120, 130, 150);        // sampled: tail 20 ns, the lean median from here on
  Fields f = e.lean(160, 170);  // its measured t3 (150) is 10 ns before this start
  EXPECT_EQ(f.overhead, 20u);
  EXPECT_EQ(f.gap, 10u);
  f = e.lean(175, 185);  // 5 ns after the previous PMPI end: 5 ns of overhead, not 20
  EXPECT_EQ(f.overhead, 5u);
  EXPECT_EQ(f.gap, 0u);
  EXPECT_EQ(f.dur, 10u);
  f = e.lean(185, 195);  // no time at all between the two
  EXPECT_EQ(f.overhead, 0u);
  EXPECT_EQ(f.gap, 0u);
  f = e.next(0, 0, 0, 300, 320);  // a full median's room again
  EXPECT_EQ(f.overhead, 20u);
  EXPECT_EQ(f.gap, 300u - 195u - 20u);
  EXPECT_EQ(e.enc.overhead_ns(), 20u + 5u + 0u + 20u);
  EXPECT_EQ(e.enc.end_ns() + e.enc.overhead_ns(), 320u);
}

// The light records' times take a short path when each field is under 2^14 (one or two bytes
// without a branch on the length): every length on either side of the limits must read back
// as written, each column's varint ending where the next event's begins.
TEST(TimeEncoder, LightTimesOfEveryVarintLength) {
  const std::uint64_t values[] = {0,
                                  1,
                                  127,
                                  128,
                                  129,
                                  255,
                                  256,
                                  8191,
                                  8192,
                                  16383,
                                  16384,
                                  16385,
                                  2097151,
                                  2097152,
                                  1u << 28,
                                  (1ull << 35) + 3,
                                  5'000'000'000};
  Encoder e;
  e.light(0, 0, 100, 150);
  std::uint64_t t2 = 150;
  unsigned checked = 0;
  for (const std::uint64_t gap : values)
    for (const std::uint64_t dur : values)
      for (const std::uint64_t overhead :
           {std::uint64_t{0}, std::uint64_t{127}, std::uint64_t{128}, std::uint64_t{20000}}) {
        // A measured tail of `overhead` after the previous call, then `gap` before this one.
        const std::uint64_t t3 = t2 + overhead;
        const std::uint64_t t1 = t3 + gap;
        const Fields f = e.light(t3, RawTimes::kPrevMeasured, t1, t1 + dur);
        ASSERT_EQ(f.gap, gap) << gap << " " << dur << " " << overhead;
        ASSERT_EQ(f.dur, dur) << gap << " " << dur << " " << overhead;
        ASSERT_EQ(f.overhead, overhead) << gap << " " << dur << " " << overhead;
        t2 = t1 + dur;
        ++checked;
      }
  EXPECT_EQ(checked, 17u * 17u * 4u);
  // Many events into one set of columns: each value starts where the previous one ended.
  Encoder many;
  std::vector<std::byte> col[3];
  for (auto& c : col) c.resize(std::size(values) * encore::kMaxVarintBytes);
  std::byte* cursor[3] = {col[0].data(), col[1].data(), col[2].data()};
  t2 = 0;
  for (const std::uint64_t v : values) {
    LightTimes r{};
    r.flags = RawTimes::kLight | RawTimes::kPrevMeasured;
    r.prev_t3 = many.z + t2 + v / 3;
    r.t1 = many.z + t2 + v / 3 + v;
    r.t2 = r.t1 + v;
    many.enc.encode(r, cursor);
    t2 = r.t2 - many.z;
  }
  for (unsigned i = 0; i < 3; ++i) {
    encore::ByteReader in({col[i].data(), static_cast<std::size_t>(cursor[i] - col[i].data())});
    for (const std::uint64_t v : values) EXPECT_EQ(in.read_uvarint(), i == 2 ? v / 3 : v) << i;
    EXPECT_TRUE(in.at_end()) << i;
  }
}
