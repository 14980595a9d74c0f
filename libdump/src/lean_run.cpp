// The writer's loop over a run of lean polls (LeanTimes records, back to back in the times
// region): the same arithmetic as TimeEncoder::encode(const LeanTimes&) per record, with the
// encoder's state and the clock's factors held in registers across the run (the column stores
// are std::byte, which may alias anything, so the members would be reloaded every record).
// Most records come timed by the application thread (kLeanTimed): their fields are copied.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "raw_times.hpp"

#include "encore/varint.hpp"

namespace encore::dump {

namespace {

// Most of a lean poll's fields take one byte (tens of ns): that case inline, the rest as usual.
__attribute__((always_inline)) inline std::byte* put(std::uint64_t v, std::byte* out) noexcept {
  if (v < 0x80) [[likely]] {
    *out = static_cast<std::byte>(v);
    return out + 1;
  }
  return out + encode_uvarint(v, out);
}

}  // namespace

const std::byte* TimeEncoder::encode_lean_run(const std::byte* p, const std::byte* end,
                                              std::byte* out[3]) noexcept {
  const auto word = [](const std::byte* at) {
    std::uint64_t v;
    std::memcpy(&v, at, sizeof v);
    return v;
  };
  if (p >= end || !(word(p) & RawTimes::kLean)) return p;
  const Clock clk = *clock_;
  std::uint64_t last_t2 = last_t2_ns_;
  std::uint64_t last_end = last_end_ns_;
  std::uint64_t overhead = overhead_ns_;
  std::byte* gaps = out[0];
  std::byte* durations = out[1];
  std::byte* overheads = out[2];
  // When the previous event's tool work ended (estimated: it may lie past the next start).
  std::uint64_t t3 = previous_t3();
  std::uint64_t median = lean_.median;
  for (; p < end; p += sizeof(LeanTimes)) {
    const std::uint64_t flags = word(p + offsetof(LeanTimes, flags));
    if (!(flags & RawTimes::kLean)) break;
    if (flags & RawTimes::kLeanTimed) [[likely]] {  // timed by the application thread
      const std::uint64_t fields = word(p + offsetof(LeanTimes, t1));
      const std::uint64_t gap = LeanTimes::gap(fields);
      const std::uint64_t dur = LeanTimes::duration(fields);
      const std::uint64_t own = word(p + offsetof(LeanTimes, t2));
      gaps = put(gap, gaps);
      durations = put(dur, durations);
      overheads = put(own, overheads);
      overhead += own;
      last_end += gap + dur;
      last_t2 += gap + dur + own;
      t3 = last_t2 + median;
      continue;
    }
    const std::uint64_t n1 = clk.to_ns(word(p + offsetof(LeanTimes, t1)));
    const std::uint64_t n2 = clk.to_ns(word(p + offsetof(LeanTimes, t2)));
    t3 = std::clamp(t3, last_t2, std::max(n1, last_t2));
    const std::uint64_t gap = n1 - t3;
    const std::uint64_t dur = n2 > n1 ? n2 - n1 : 0;
    overhead += t3 - last_t2;
    last_end += gap + dur;
    gaps = put(gap, gaps);
    durations = put(dur, durations);
    overheads = put(t3 - last_t2, overheads);
    last_t2 = n2;
    t3 = n2 + median;
    if (flags & RawTimes::kLeanSample) [[unlikely]] {
      const std::uint64_t own = clk.to_ns(word(p + offsetof(LeanTimes, t3)));
      lean_.add(own > n2 ? own - n2 : 0);
      median = lean_.median;
      t3 = std::max(own, n2);
    }
  }
  // The last record's state, for the event after the run (its own tail, if it was measured).
  last_t2_ns_ = last_t2;
  last_end_ns_ = last_end;
  overhead_ns_ = overhead;
  prev_lean_ = true;
  prev_t3_known_ = (word(p - sizeof(LeanTimes)) & RawTimes::kLeanSample) != 0;
  prev_t3_ns_ = t3;
  out[0] = gaps;
  out[1] = durations;
  out[2] = overheads;
  return p;
}

}  // namespace encore::dump
