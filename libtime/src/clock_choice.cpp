#include "encore/clock_choice.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace encore {

std::optional<ClockChoice> parse_clock_choice(std::string_view text) noexcept {
  if (text == "auto") return ClockChoice::automatic;
  if (text == "tsc") return ClockChoice::tsc;
  if (text == "monotonic") return ClockChoice::monotonic;
  return std::nullopt;
}

namespace {

// The CPUs of `mask`, at most kMaxCpusChecked of them, spread evenly over it.
std::vector<int> cpus_to_check(const cpu_set_t& mask) {
  std::vector<int> all;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) all.push_back(c);
  if (all.size() <= static_cast<std::size_t>(kMaxCpusChecked)) return all;
  std::vector<int> some;
  some.reserve(kMaxCpusChecked);
  for (int i = 0; i < kMaxCpusChecked; ++i)
    some.push_back(all[all.size() * static_cast<std::size_t>(i) / kMaxCpusChecked]);
  return some;
}

}  // namespace

bool tsc_in_step(std::string& detail, std::uint64_t tolerance_ns) {
#if defined(__x86_64__)
  cpu_set_t old;
  CPU_ZERO(&old);
  if (sched_getaffinity(0, sizeof old, &old) != 0) {
    detail = "cannot read the thread's CPU affinity";
    return false;
  }
  const std::vector<int> cpus = cpus_to_check(old);
  const Clock tsc(ClockSource::tsc);
  const ClockPair first = tsc.pair(16);
  std::vector<ClockPair> pairs;
  pairs.reserve(cpus.size());
  bool pinned_all = true;
  for (const int c : cpus) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      pinned_all = false;
      break;
    }
    pairs.push_back(tsc.pair(8));
  }
  sched_setaffinity(0, sizeof old, &old);
  if (!pinned_all) {
    detail = "cannot move the thread to each of its CPUs to compare their TSCs";
    return false;
  }
  // The rate from two pairs on the starting CPU some 0.5 ms apart: a pair's uncertainty of
  // tens of ns then moves the rate by about 1e-4, tens of ns over the check.
  while (monotonic_ns() - first.mono_ns < 500'000) {
  }
  const ClockPair last = tsc.pair(16);
  if (last.ticks <= first.ticks || last.mono_ns <= first.mono_ns) {
    detail = "the TSC did not advance with CLOCK_MONOTONIC";
    return false;
  }
  const double ticks_per_ns = static_cast<double>(last.ticks - first.ticks) /
                              static_cast<double>(last.mono_ns - first.mono_ns);
  double worst = 0;
  int worst_cpu = cpus.empty() ? -1 : cpus.front();
  bool ok = true;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const ClockPair& p = pairs[i];
    const double predicted =
        static_cast<double>(first.mono_ns) +
        (static_cast<double>(p.ticks) - static_cast<double>(first.ticks)) / ticks_per_ns;
    const double off = std::fabs(static_cast<double>(p.mono_ns) - predicted);
    const double slack = static_cast<double>(p.width_ticks + first.width_ticks) / ticks_per_ns;
    if (off - slack > static_cast<double>(tolerance_ns)) ok = false;
    if (off > worst) {
      worst = off;
      worst_cpu = cpus[i];
    }
  }
  detail = fmt::format("TSC against CLOCK_MONOTONIC on {} CPU{}: at most {:.0f} ns apart (CPU {})",
                       cpus.size(), cpus.size() == 1 ? "" : "s", worst, worst_cpu);
  return ok;
#else
  (void)tolerance_ns;
  detail = "no TSC on this architecture";
  return false;
#endif
}

ClockDecision choose_clock(ClockChoice choice) {
#if !defined(__x86_64__)
  (void)choice;
  return {ClockSource::monotonic, "no TSC on this architecture"};
#else
  switch (choice) {
    case ClockChoice::monotonic:
      return {ClockSource::monotonic, "CLOCK_MONOTONIC as asked"};
    case ClockChoice::tsc:
      return {ClockSource::tsc, "the TSC as asked, unchecked"};
    case ClockChoice::automatic:
      break;
  }
  if (tsc_is_reliable()) return {ClockSource::tsc, "the kernel's clocksource is the TSC"};
  const std::string kernel = kernel_clocksource();
  if (!tsc_is_invariant())
    return {ClockSource::monotonic,
            fmt::format("kernel clocksource {}, and the CPU does not say its TSC is invariant",
                        kernel)};
  std::string detail;
  if (tsc_in_step(detail))
    return {ClockSource::tsc, fmt::format("kernel clocksource {}; {}", kernel, detail)};
  return {ClockSource::monotonic, fmt::format("kernel clocksource {}; {}", kernel, detail)};
#endif
}

ClockDecision choose_clock_from_environment() noexcept {
  ClockChoice choice = ClockChoice::automatic;
  if (const char* v = std::getenv("ENCORE_CLOCK"); v && *v) {
    if (const auto c = parse_clock_choice(v))
      choice = *c;
    else
      std::fprintf(stderr, "encore: ignoring ENCORE_CLOCK=%s (auto, tsc or monotonic)\n", v);
  }
  try {
    return choose_clock(choice);
  } catch (...) {  // out of memory while checking: the clock that needs no check
    return {ClockSource::monotonic, "CLOCK_MONOTONIC: the TSC could not be checked"};
  }
}

}  // namespace encore
