#include "raw_times.hpp"

#include <algorithm>

#include "light_record.hpp"

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

std::uint64_t TimeEncoder::previous_t3() noexcept {
  if (prev_t3_known_) {
    prev_t3_known_ = false;
    return prev_t3_ns_;
  }
  return last_t2_ns_ + (prev_lean_ ? lean_.median : light_.median);
}

// Times are converted once each (absolute, so rounding never accumulates). The tool's time
// after the previous call's PMPI part (t3 - t2) and before this call's (t1 - t0) is this
// event's overhead; it is left out of every corrected timestamp from here on.
// An estimated t3 (a median tail) can lie past this call's start: the call came sooner than
// the median tail. The tail is then cut at the start, so that gap + duration + overhead is
// always the clock's own step from the previous PMPI end to this one: uncorrected times
// (corrected + overhead so far) stay the clock's, which the logged model and the fit compare
// across ranks. Charged in full, a polling loop's short tails moved the uncorrected times of
// master_worker's master 14-25 ms ahead of the clock (7.6 M failed polls; 731 of its 1025
// sends began after the worker's matching receive had ended).
void TimeEncoder::emit(std::uint64_t t3, std::uint64_t n0, std::uint64_t n1, std::uint64_t n2,
                       std::byte* out[3]) noexcept {
  t3 = std::clamp(t3, last_t2_ns_, std::max(n0, last_t2_ns_));
  const std::uint64_t gap = n0 - t3;
  const std::uint64_t dur = n2 > n1 ? n2 - n1 : 0;
  const std::uint64_t overhead = (t3 - last_t2_ns_) + (n1 > n0 ? n1 - n0 : 0);
  last_end_ns_ += gap + dur;
  last_t2_ns_ = n2;
  overhead_ns_ += overhead;
  out[0] += encode_uvarint(gap, out[0]);
  out[1] += encode_uvarint(dur, out[1]);
  out[2] += encode_uvarint(overhead, out[2]);
}

void TimeEncoder::encode(const RawTimes& r, std::byte* out[3]) noexcept {
  const Clock& clk = *clock_;
  std::uint64_t t3;
  if (r.flags & RawTimes::kPrevMeasured) {
    prev_t3_known_ = false;
    t3 = clk.to_ns(r.prev_t3);
    if (r.flags & RawTimes::kPrevLightSample) light_.add(t3 > last_t2_ns_ ? t3 - last_t2_ns_ : 0);
  } else {
    t3 = previous_t3();
  }
  const std::uint64_t n1 = clk.to_ns(r.t1);
  emit(t3, r.t0 ? clk.to_ns(r.t0) : n1, n1, clk.to_ns(r.t2), out);
  prev_lean_ = false;
}

// A light call is timed as the Call path times it, with no pre-work.
void TimeEncoder::encode(const LightTimes& r, std::byte* out[3]) noexcept {
  constexpr std::uint64_t kPrev = RawTimes::kPrevMeasured | RawTimes::kPrevLightSample;
  encode(RawTimes{r.flags & kPrev, r.prev_t3, 0, r.t1, r.t2}, out);
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
