// Which clock a capture or a replay reads: the TSC (a few ns a read, no system call) or
// CLOCK_MONOTONIC. The kernel's own choice of clocksource is not the whole answer: virtual
// machines often run on a paravirtual clock (kvm-clock) or boot with `tsc=unstable`, while
// their TSC is invariant and in step on every vCPU, and CLOCK_MONOTONIC costs several times
// a TSC read there (and turns libdump's lean paths off). So `automatic` checks the TSC itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "encore/clock.hpp"

namespace encore {

enum class ClockChoice : std::uint8_t { automatic, tsc, monotonic };

// "auto", "tsc" or "monotonic"; nothing for anything else.
std::optional<ClockChoice> parse_clock_choice(std::string_view text) noexcept;

struct ClockDecision {
  ClockSource source = ClockSource::monotonic;
  std::string why;  // one line: what decided it
};

// automatic: the TSC where the kernel uses it as its clocksource (tsc_is_reliable()), else
// where the CPU says it is invariant (constant_tsc and nonstop_tsc) and tsc_in_step() finds
// it in step with CLOCK_MONOTONIC on every CPU the thread may run on; else CLOCK_MONOTONIC.
// tsc: the TSC without checks (x86-64 only). monotonic: CLOCK_MONOTONIC.
ClockDecision choose_clock(ClockChoice choice);

// choose_clock() of ENCORE_CLOCK (auto when unset; a value it does not know is named in one
// line on stderr and taken as auto). Never throws: a failing check gives CLOCK_MONOTONIC.
ClockDecision choose_clock_from_environment() noexcept;

// Reads the TSC and CLOCK_MONOTONIC together on each CPU of the calling thread's affinity mask
// (at most kMaxCpusChecked of them, spread over the mask), the thread pinned to each in turn
// and its mask restored after, and says whether every CPU's pair lies within `tolerance_ns`
// (plus the pairs' own uncertainty) of the line through the first and last pairs, read on the
// starting CPU about 0.5 ms apart. `detail` gets one line on what was found. Takes about
// 0.5 ms plus a migration per CPU.
bool tsc_in_step(std::string& detail, std::uint64_t tolerance_ns = 1000);
inline constexpr int kMaxCpusChecked = 64;

}  // namespace encore
