#include "encore/clock.hpp"

#include <time.h>

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

bool tsc_is_reliable() noexcept {
#if defined(__x86_64__)
  try {
    std::ifstream cs("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string source;
    if (!(cs >> source) || source != "tsc") return false;
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("flags", 0) == 0) {
        return line.find(" constant_tsc") != std::string::npos &&
               line.find(" nonstop_tsc") != std::string::npos;
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
  // Bracket the monotonic read with tick reads so the pair is tight.
  const std::uint64_t a = ticks();
  mono0_ = monotonic_ns();
  const std::uint64_t b = ticks();
  tick0_ = a + (b - a) / 2;
}

void Clock::calibrate(std::uint64_t min_interval_ns) noexcept {
  if (source_ == ClockSource::monotonic) {
    mult_ = 1ull << kShift;
    return;
  }
  std::uint64_t mono = 0;
  std::uint64_t tick = 0;
  do {
    const std::uint64_t a = ticks();
    mono = monotonic_ns();
    const std::uint64_t b = ticks();
    tick = a + (b - a) / 2;
  } while (mono - mono0_ < min_interval_ns);
  const auto ns = static_cast<unsigned __int128>(mono - mono0_) << kShift;
  mult_ = static_cast<std::uint64_t>(ns / (tick - tick0_));
}

double Clock::resolution_ns() const noexcept {
  return static_cast<double>(mult_) / static_cast<double>(1ull << kShift);
}

double Clock::ticks_per_second() const noexcept { return 1e9 / resolution_ns(); }

}  // namespace encore
