#include "encore/predict/stall_spread.hpp"

namespace encore::predict {

std::optional<StallTime> parse_stall_time(std::string_view s) {
  if (s == "spread") return StallTime::spread;
  if (s == "keep") return StallTime::keep;
  if (s == "drop") return StallTime::drop;
  if (s == "auto") return StallTime::automatic;
  return std::nullopt;
}

std::string_view to_string(StallTime t) {
  switch (t) {
    case StallTime::spread:
      return "spread";
    case StallTime::keep:
      return "keep";
    case StallTime::drop:
      return "drop";
    case StallTime::automatic:
      break;
  }
  return "auto";
}

void StallSpread::finish() {
  factor = measured_factor = 1.0;
  const std::uint64_t stalled = segments_ns + calls_ns;
  const std::uint64_t wall = compute_ns + overhead_ns;
  if (stalled > 0 && ran_ns > 0) {
    measured_factor = static_cast<double>(ran_ns + stalled) / static_cast<double>(ran_ns);
  } else if (stalled > 0 && wall > stalled) {
    measured_factor = static_cast<double>(wall) / static_cast<double>(wall - stalled);
  }
  if (mode != StallTime::spread) return;
  factor = by_quota() ? 1.0 / cpu_quota : measured_factor;
}

std::uint64_t StallSpread::spread_compute_ns() const {
  if (!active()) return compute_ns;
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(cpu_ns()) * factor));
}

}  // namespace encore::predict
