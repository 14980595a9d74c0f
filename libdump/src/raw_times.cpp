#include "raw_times.hpp"

#include <algorithm>

#include "encore/varint.hpp"

namespace encore::dump {

void TimeEncoder::Tails::add(std::uint64_t sample) noexcept {
  samples[count++ % kTailSamples] = sample;
  const unsigned n = std::min(count, kTailSamples);
  std::uint64_t sorted[kTailSamples];
  std::copy_n(samples, n, sorted);
  std::nth_element(sorted, sorted + n / 2, sorted + n);
  median = sorted[n / 2];
}

// The end of the previous call's tool work as a record's kPrevMeasured flag gives it.
std::uint64_t TimeEncoder::measured_t3(std::uint64_t prev_t3, std::uint64_t flags) noexcept {
  prev_t3_known_ = false;
  const std::uint64_t t3 = clock_->to_ns(prev_t3);
  if (flags & RawTimes::kPrevLightSample) light_.add(t3 > last_t2_ns_ ? t3 - last_t2_ns_ : 0);
  return t3;
}

void TimeEncoder::encode(const RawTimes& r, std::byte* out[3]) noexcept {
  const Clock& clk = *clock_;
  const std::uint64_t t3 =
      (r.flags & RawTimes::kPrevMeasured) ? measured_t3(r.prev_t3, r.flags) : previous_t3();
  const std::uint64_t n1 = clk.to_ns(r.t1);
  emit(t3, r.t0 ? clk.to_ns(r.t0) : n1, n1, clk.to_ns(r.t2), out);
  prev_lean_ = false;
}

// A lean poll had no pre-work; its own tail, when sampled, is the next event's measured t3.
void TimeEncoder::encode(const LeanTimes& r, std::byte* out[3]) noexcept {
  if (r.flags & RawTimes::kLeanTimed) {  // the fields as the application thread worked them out
    prev_t3_known_ = false;
    const std::uint64_t gap = LeanTimes::gap(r.t1);
    const std::uint64_t dur = LeanTimes::duration(r.t1);
    last_end_ns_ += gap + dur;
    last_t2_ns_ += gap + dur + r.t2;
    overhead_ns_ += r.t2;
    prev_lean_ = true;
    out[0] += encode_uvarint(gap, out[0]);
    out[1] += encode_uvarint(dur, out[1]);
    out[2] += encode_uvarint(r.t2, out[2]);
    return;
  }
  const Clock& clk = *clock_;
  const std::uint64_t n1 = clk.to_ns(r.t1);
  const std::uint64_t n2 = clk.to_ns(r.t2);
  emit(previous_t3(), n1, n1, n2, out);
  prev_lean_ = true;
  if (r.flags & RawTimes::kLeanSample) {
    const std::uint64_t t3 = clk.to_ns(r.t3);
    lean_.add(t3 > n2 ? t3 - n2 : 0);
    prev_t3_known_ = true;
    prev_t3_ns_ = std::max(t3, n2);
  }
}

}  // namespace encore::dump
