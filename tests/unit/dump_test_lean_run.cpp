// The writer encodes a run of lean polls in one loop (TimeEncoder::encode_lean_run): its
// columns and the encoder's state after it must be exactly what encoding the records one by
// one gives, samples, tails cut at the next start and a record that ends the run included.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "raw_times.hpp"
#include <gtest/gtest.h>

#include "encore/varint.hpp"

using encore::Clock;
using encore::ClockSource;
using encore::dump::LeanTimes;
using encore::dump::RawTimes;
using encore::dump::TimeEncoder;

namespace {

struct Columns {
  std::vector<std::byte> col[3];
  std::byte* cursor[3];
  explicit Columns(std::size_t events) {
    for (int i = 0; i < 3; ++i) {
      col[i].resize(events * encore::kMaxVarintBytes);
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

}  // namespace

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
