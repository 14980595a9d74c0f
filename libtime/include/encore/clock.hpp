// The capture clock: the TSC where the kernel trusts it (about 10 ns a read), else
// CLOCK_MONOTONIC (about 23 ns). Ticks are turned into nanoseconds with a factor calibrated
// against CLOCK_MONOTONIC over an interval the caller chooses (libdump spans MPI_Init with it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace encore {

enum class ClockSource : std::uint8_t { tsc, monotonic };

// A tick value and CLOCK_MONOTONIC read together: the tick value is the midpoint of two tick
// reads around the monotonic read, and `width_ticks` their distance, the pair's uncertainty
// (large when the thread was preempted between the reads).
struct ClockPair {
  std::uint64_t ticks = 0;
  std::uint64_t mono_ns = 0;
  std::uint64_t width_ticks = 0;
};

std::string_view to_string(ClockSource source) noexcept;

// Nanoseconds of CLOCK_MONOTONIC.
std::uint64_t monotonic_ns() noexcept;

// True when the CPU advertises an invariant TSC (constant_tsc and nonstop_tsc) and the kernel
// uses it as its clocksource, so TSC ticks advance at one rate on every core.
bool tsc_is_reliable() noexcept;
// The kernel's current clocksource (tsc, kvm-clock, hpet...), or "unknown".
std::string kernel_clocksource();
// The CPU advertises an invariant TSC (constant_tsc and nonstop_tsc in /proc/cpuinfo): one
// rate whatever the frequency and power state. Whether the CPUs' TSCs agree is another matter
// (clock_choice.hpp).
bool tsc_is_invariant() noexcept;

class Clock {
 public:
  // Starts calibration: samples the tick counter and CLOCK_MONOTONIC together.
  explicit Clock(ClockSource source) noexcept;

  ClockSource source() const noexcept { return source_; }

  std::uint64_t ticks() const noexcept {
#if defined(__x86_64__)
    if (source_ == ClockSource::tsc) return __rdtsc();
#endif
    return monotonic_ns();
  }

  // The tightest of `tries` pairs: one preemption inside a bracket costs a retry, not an
  // error of its length (a calibration over 5 ms with a 1 ms error would be 20 % off).
  ClockPair pair(int tries = 8) const noexcept;
  // What one read costs, in ticks: the median distance between two back-to-back reads over
  // 63 pairs (a preemption inside one pair moves nothing; not the least, since the TSC of
  // the development VM gave 26 ticks apart but now and then 1, two reads overlapping).
  std::uint64_t read_cost_ticks() const noexcept;
  // Ends calibration: takes a second sample (spinning until at least min_interval_ns have
  // passed since the first) and fixes the tick -> ns factor. Until then to_ns() is invalid.
  void calibrate(std::uint64_t min_interval_ns = 5'000'000) noexcept;

  // Nanoseconds since the clock was created.
  std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    const auto delta = static_cast<unsigned __int128>(ticks - tick0_);
    return static_cast<std::uint64_t>((delta * mult_) >> kShift);
  }

  // A length of `ticks` in ns (a difference of two reads, not a time since the zero).
  std::uint64_t duration_ns(std::uint64_t ticks) const noexcept { return to_ns(tick0_ + ticks); }

  // The tick value at the clock's zero.
  std::uint64_t zero_ticks() const noexcept { return tick0_; }
  // CLOCK_MONOTONIC value at the clock's zero: places a timeline among other processes'.
  std::uint64_t epoch_monotonic_ns() const noexcept { return mono0_; }
  // Nominal resolution in ns (one tick), rounded up.
  double resolution_ns() const noexcept;
  double ticks_per_second() const noexcept;

 private:
  static constexpr unsigned kShift = 32;
  ClockSource source_;
  std::uint64_t tick0_;
  std::uint64_t mono0_;
  std::uint64_t mult_ = 1ull << kShift;  // ns per tick, fixed point
};

}  // namespace encore
