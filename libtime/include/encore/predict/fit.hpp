// LogGPS parameters fitted from a capture, as the PerWiz seed's Table 5 measures them: o from
// the duration of small sends, G from how send durations grow with size (the fastest send of
// each size class, least squares), L from matched eager send/receive pairs where the receive
// was already waiting (receive end - send start - 2o - (n-1)G, tenth percentile: load only adds).
// Above S each power-of-two size class gets its own G from the rendezvous pairs whose receive was
// waiting (params.G_classes). g and S are not fitted (0 and the default eager threshold; --params
// sets them). Reads the first events of each rank only, so the fit costs little whatever the trace
// length.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "encore/manifest.hpp"
#include "encore/predict/loggps_params.hpp"
#include "encore/trace_dir.hpp"

namespace encore::predict {

inline constexpr std::uint64_t kFitEventsPerRank = 50000;

struct FitReport {
  LogGPSParams params;
  std::uint64_t send_samples = 0;  // sends measured for o
  std::uint64_t size_classes = 0;  // size classes in the G fit
  std::uint64_t pairs = 0;         // matched pairs measured for L
  std::uint64_t large_pairs = 0;   // rendezvous pairs measured for params.G_classes
  std::string notes;               // what fell back to a default, and why
};

FitReport fit_params(const TraceDir& capture, const Manifest& manifest);
nlohmann::json to_json(const FitReport& f);
std::string describe(const FitReport& f);

}  // namespace encore::predict
