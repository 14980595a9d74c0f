// The timing of one event as the application thread leaves it: raw clock ticks in a fixed-size
// record, no conversion and no varint work on the call's path. The writer thread turns each
// record into the event's gap, duration and overhead (doc/trace-format.md §9) before the chunk
// is compressed, so the trace format is the same as if the call had encoded them itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "segment.hpp"

#include "encore/clock.hpp"

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
  void encode(const LightTimes& r, std::byte* out[3]) noexcept;
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
  // When the previous call's tool work ended: measured (its t3) or estimated.
  std::uint64_t previous_t3() noexcept;
  void emit(std::uint64_t t3, std::uint64_t n0, std::uint64_t n1, std::uint64_t n2,
            std::byte* out[3]) noexcept;

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
