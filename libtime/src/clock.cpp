#include "encore/clock.hpp"

#include <time.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <string>

namespace encore {

std::string_view to_string(ClockSource source) noexcept {
  return source == ClockSource::tsc ? "tsc" : "monotonic";
}

std::uint64_t monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string kernel_clocksource() {
  std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  if (!(cs >> source)) return "unknown";
  return source;
}

bool tsc_is_reliable() noexcept {
#if defined(__x86_64__)
  try {
    return kernel_clocksource() == "tsc" && tsc_is_invariant();
  } catch (...) {
  }
#endif
  return false;
}

bool tsc_is_invariant() noexcept {
#if defined(__x86_64__)
  try {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("flags", 0) == 0) {
        line += ' ';
        return line.find(" constant_tsc ") != std::string::npos &&
               line.find(" nonstop_tsc ") != std::string::npos;
      }
    }
  } catch (...) {
  }
#endif
  return false;
}

Clock::Clock(ClockSource source) noexcept : source_(source), tick0_(0), mono0_(0) {
#if !defined(__x86_64__)
  source_ = ClockSource::monotonic;
#endif
  const ClockPair p = pair();
  tick0_ = p.ticks;
  mono0_ = p.mono_ns;
}

ClockPair Clock::pair(int tries) const noexcept {
  ClockPair best{0, 0, ~std::uint64_t{0}};
  for (int i = 0; i < std::max(tries, 1); ++i) {
    const std::uint64_t a = ticks();
    const std::uint64_t mono = monotonic_ns();
    const std::uint64_t b = ticks();
    if (b - a < best.width_ticks) best = {a + (b - a) / 2, mono, b - a};
  }
  return best;
}

std::uint64_t Clock::read_cost_ticks() const noexcept {
  std::array<std::uint64_t, 63> d{};
  for (auto& x : d) {
    const std::uint64_t a = ticks();
    const std::uint64_t b = ticks();
    x = b - a;
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

void Clock::calibrate(std::uint64_t min_interval_ns) noexcept {
  if (source_ == ClockSource::monotonic) {
    mult_ = 1ull << kShift;
    return;
  }
  while (monotonic_ns() - mono0_ < min_interval_ns) {
  }
  const ClockPair p = pair();
  const auto ns = static_cast<unsigned __int128>(p.mono_ns - mono0_) << kShift;
  mult_ = static_cast<std::uint64_t>(ns / (p.ticks - tick0_));
}

double Clock::resolution_ns() const noexcept {
  return static_cast<double>(mult_) / static_cast<double>(1ull << kShift);
}

double Clock::ticks_per_second() const noexcept { return 1e9 / resolution_ns(); }

}  // namespace encore
