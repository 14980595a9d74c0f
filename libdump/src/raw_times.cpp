#include "raw_times.hpp"

#include <algorithm>

#include "encore/varint.hpp"

namespace encore::dump {

std::uint64_t TimeEncoder::light_tail(std::uint64_t sample) noexcept {
  samples_[sample_count_++ % kTailSamples] = sample;
  const unsigned n = std::min(sample_count_, kTailSamples);
  std::uint64_t sorted[kTailSamples];
  std::copy_n(samples_, n, sorted);
  std::nth_element(sorted, sorted + n / 2, sorted + n);
  return sorted[n / 2];
}

// Times are converted once each (absolute, so rounding never accumulates). The tool's time
// after the previous call's PMPI part (t3 - t2) and before this call's (t1 - t0) is this
// event's overhead; it is left out of every corrected timestamp from here on.
void TimeEncoder::encode(const RawTimes& r, std::byte* out[3]) noexcept {
  const Clock& clk = *clock_;
  if (r.flags & RawTimes::kPrevMeasured) {
    const std::uint64_t t3 = clk.to_ns(r.prev_t3);
    if (r.flags & RawTimes::kPrevLightSample)
      light_tail_ns_ = light_tail(t3 > last_t2_ns_ ? t3 - last_t2_ns_ : 0);
    last_t3_ns_ = t3;
  } else {
    last_t3_ns_ = last_t2_ns_ + light_tail_ns_;
  }
  const std::uint64_t n1 = clk.to_ns(r.t1);
  const std::uint64_t n2 = clk.to_ns(r.t2);
  const std::uint64_t n0 = r.t0 ? clk.to_ns(r.t0) : n1;
  const std::uint64_t gap = n0 > last_t3_ns_ ? n0 - last_t3_ns_ : 0;
  const std::uint64_t dur = n2 > n1 ? n2 - n1 : 0;
  const std::uint64_t overhead = (last_t3_ns_ - last_t2_ns_) + (n1 > n0 ? n1 - n0 : 0);
  last_end_ns_ += gap + dur;
  last_t2_ns_ = n2;
  overhead_ns_ += overhead;
  out[0] += encode_uvarint(gap, out[0]);
  out[1] += encode_uvarint(dur, out[1]);
  out[2] += encode_uvarint(overhead, out[2]);
}

}  // namespace encore::dump
