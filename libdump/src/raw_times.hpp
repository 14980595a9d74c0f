// The timing of one event as the application thread leaves it: raw clock ticks in a fixed-size
// record, no conversion and no varint work on the call's path. The writer thread turns each
// record into the event's gap, duration and overhead (doc/trace-format.md §9) before the chunk
// is compressed, so the trace format is the same as if the call had encoded them itself.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "segment.hpp"

#include "encore/clock.hpp"
#include "encore/varint.hpp"

namespace encore::dump {

struct RawTimes {
  // Set on the record after a call whose tool time (t3) was measured: the previous call's.
  static constexpr std::uint64_t kPrevMeasured = 1;     // exact: charged as measured
  static constexpr std::uint64_t kPrevLightSample = 2;  // a light call's sample (kTailSample)
  // A failed poll repeating the thread's previous event (format 1.2): its body in the segment
  // is only the 2-byte repeat head. The run's first poll (the template the reader copies) is
  // at body offset kRepeatAt (bits 32..63) with kRepeatLen bytes (bits 8..31), in the same
  // segment: a writer whose chunk starts inside the run writes the template there instead.
  static constexpr std::uint64_t kRepeat = 4;
  // The record is a LeanTimes (a repeat written by the lean poll path), not a RawTimes.
  static constexpr std::uint64_t kLean = 8;
  static constexpr std::uint64_t kLeanSample = 16;  // LeanTimes::t3 holds its measured tail
  // On a LeanTimes record only (a LightTimes has kExtra there): the application thread timed
  // the poll itself (LeanTimes).
  static constexpr std::uint64_t kLeanTimed = 64;
  // The record is a LightTimes (light_record.hpp): a light call whose body the writer encodes.
  static constexpr std::uint64_t kLight = 32;
  static constexpr unsigned kRepeatLenShift = 8;
  static constexpr unsigned kRepeatAtShift = 32;
  static constexpr std::uint64_t kRepeatMaxLen = std::uint64_t{1} << 24;
  static constexpr std::uint64_t kRepeatMaxAt = std::uint64_t{1} << 32;
  // The flags come first in both records: they say which one it is.
  std::uint64_t flags;    // kPrev*, kRepeat above
  std::uint64_t prev_t3;  // when the previous call's tool work ended, if measured (else 0)
  std::uint64_t t0;       // before this call's pre-work, or 0 if it had none
  std::uint64_t t1;       // PMPI call entered
  std::uint64_t t2;       // PMPI call returned

  static bool repeat(std::uint64_t flags) noexcept { return (flags & kRepeat) != 0; }
  static std::size_t repeat_at(std::uint64_t flags) noexcept {
    return static_cast<std::size_t>(flags >> kRepeatAtShift);
  }
  static std::size_t repeat_len(std::uint64_t flags) noexcept {
    return static_cast<std::size_t>((flags >> kRepeatLenShift) & (kRepeatMaxLen - 1));
  }
};

// A failed poll continuing a run on the lean path (Call's LeanPoll): no pre-work, its tail
// measured only on samples (kLeanSample), and the flags of a repeat (kRepeat, the template's
// place) plus kLean. Its 2-byte repeat head is in the body region as for any repeat.
// With kLeanTimed the application thread has turned the ticks into the event's three timing
// fields itself, exactly as the writer would (ThreadStream::lean_append): `t1` holds the gap
// (low 32 bits) and the duration (high 32 bits), `t2` the overhead, in ns; the poll's raw
// end is the previous one's plus the three (no field is cut: the thread writes the ticks
// instead when one would be).
struct LeanTimes {
  std::uint64_t flags;
  std::uint64_t t1;
  std::uint64_t t2;
  std::uint64_t t3;  // with kLeanSample: when the poll's tool work ended; else not written

  static std::uint64_t gap(std::uint64_t t1) noexcept { return t1 & 0xffffffff; }
  static std::uint64_t duration(std::uint64_t t1) noexcept { return t1 >> 32; }
};
static_assert(sizeof(LeanTimes) == kLeanTimesBytes && sizeof(RawTimes) == 40);

// The size of the record whose first word (its flags) is `flags`.
inline std::size_t times_record_bytes(std::uint64_t flags) noexcept {
  if (flags & RawTimes::kLean) return sizeof(LeanTimes);
  return (flags & RawTimes::kLight) ? kLightTimesBytes : sizeof(RawTimes);
}

struct LightTimes;

// Writer side: the per-thread state that turns raw records into the three timing fields,
// in the order the thread made the calls.
class TimeEncoder {
 public:
  // The median of the last kTailSamples measured light tails is charged to the light calls
  // whose tail was not measured (a sample stretched by a preemption is charged to its own
  // call only).
  static constexpr unsigned kTailSamples = 7;
  static constexpr std::size_t kMaxBytes = 30;  // three uvarints

  explicit TimeEncoder(const Clock& clock) noexcept : clock_(&clock) {}

  // Writes gap, duration and overhead of the event `r` to out[0..2] (each column's cursor,
  // advanced), and moves on to the next event.
  void encode(const RawTimes& r, std::byte* out[3]) noexcept;
  void encode(const LeanTimes& r, std::byte* out[3]) noexcept;
  void encode(const LightTimes& r, std::byte* out[3]) noexcept;  // inline, light_record.hpp
  // A call with no pre-work (a light call: the most common record), inline.
  __attribute__((always_inline)) void encode_light(std::uint64_t flags, std::uint64_t prev_t3,
                                                   std::uint64_t t1, std::uint64_t t2,
                                                   std::byte* out[3]) noexcept {
    std::uint64_t t3;
    if (flags & RawTimes::kPrevMeasured) [[unlikely]]  // one light call in 64
      t3 = measured_t3(prev_t3, flags);
    else
      t3 = previous_t3();
    const std::uint64_t n1 = clock_->to_ns(t1);
    emit(t3, n1, n1, clock_->to_ns(t2), out);
    prev_lean_ = false;
  }
  // Encodes the LeanTimes records from `p` on, up to `end` or the first record that is not
  // one (a run of lean polls lies in one piece), exactly as encode() would one by one, in one
  // tight loop (lean_run.cpp); returns where it stopped.
  const std::byte* encode_lean_run(const std::byte* p, const std::byte* end,
                                   std::byte* out[3]) noexcept;

  std::uint64_t end_ns() const noexcept { return last_end_ns_; }  // corrected end so far
  std::uint64_t overhead_ns() const noexcept { return overhead_ns_; }

  // The last kTailSamples measured tails of one kind of call, and their median (public: the
  // lean poll path keeps the lean polls' too, ThreadStream::LeanRun).
  struct Tails {
    std::uint64_t samples[kTailSamples] = {};
    unsigned count = 0;
    std::uint64_t median = 0;
    void add(std::uint64_t sample) noexcept;
  };

 private:
  // When the previous call's tool work ended: estimated, or measured (its t3, from the
  // record's flags and prev_t3).
  std::uint64_t previous_t3() noexcept {
    if (prev_t3_known_) {
      prev_t3_known_ = false;
      return prev_t3_ns_;
    }
    return last_t2_ns_ + (prev_lean_ ? lean_.median : light_.median);
  }
  std::uint64_t measured_t3(std::uint64_t prev_t3, std::uint64_t flags) noexcept;

  // Times are converted once each (absolute, so rounding never accumulates). The tool's time
  // after the previous call's PMPI part (t3 - t2) and before this call's (t1 - t0) is this
  // event's overhead; it is left out of every corrected timestamp from here on.
  // An estimated t3 (a median tail) can lie past this call's start: the call came sooner
  // than the median tail. The tail is then cut at the start, so that gap + duration +
  // overhead is always the clock's own step from the previous PMPI end to this one:
  // uncorrected times (corrected + overhead so far) stay the clock's, which the logged model
  // and the fit compare across ranks. Charged in full, a polling loop's short tails moved the
  // uncorrected times of master_worker's master 14-25 ms ahead of the clock (7.6 M failed
  // polls; 731 of its 1025 sends began after the worker's matching receive had ended).
  __attribute__((always_inline)) void emit(std::uint64_t t3, std::uint64_t n0, std::uint64_t n1,
                                           std::uint64_t n2, std::byte* out[3]) noexcept {
    const std::uint64_t last_t2 = last_t2_ns_;
    t3 = std::clamp(t3, last_t2, std::max(n0, last_t2));
    const std::uint64_t gap = n0 - t3;
    const std::uint64_t dur = n2 > n1 ? n2 - n1 : 0;
    const std::uint64_t overhead = (t3 - last_t2) + (n1 > n0 ? n1 - n0 : 0);
    last_end_ns_ += gap + dur;
    last_t2_ns_ = n2;
    overhead_ns_ += overhead;
    std::byte* c[3] = {out[0], out[1], out[2]};        // in registers: the stores below may alias
    if ((gap | dur | overhead) < 0x4000) [[likely]] {  // under 16 us each
      c[0] += encode_uvarint14(gap, c[0]);
      c[1] += encode_uvarint14(dur, c[1]);
      c[2] += encode_uvarint14(overhead, c[2]);
    } else {
      c[0] += encode_uvarint(gap, c[0]);
      c[1] += encode_uvarint(dur, c[1]);
      c[2] += encode_uvarint(overhead, c[2]);
    }
    out[0] = c[0];
    out[1] = c[1];
    out[2] = c[2];
  }

  const Clock* clock_;
  std::uint64_t last_t2_ns_ = 0;  // the previous call's PMPI end (raw ns)
  std::uint64_t last_end_ns_ = 0;
  std::uint64_t overhead_ns_ = 0;
  // A lean poll's tail is a few stores, a light call's all of its recording: each kind of
  // call is charged the median of its own kind's samples.
  Tails light_;
  Tails lean_;
  bool prev_lean_ = false;
  bool prev_t3_known_ = false;  // a sampled lean poll left its t3 for the next event
  std::uint64_t prev_t3_ns_ = 0;
};

}  // namespace encore::dump
