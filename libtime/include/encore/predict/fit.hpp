// LogGPS parameters fitted from a capture, as the PerWiz seed's Table 5 measures them: o from
// the duration of small sends (their mean, each above the 99th percentile counted as it; without
// any, where the G line meets size 0), G from how send durations grow with size (the fastest send
// of each size class, least squares), L from matched eager send/receive pairs where the receive was
// already waiting (receive end - send start - 2o - (n-1)G, tenth percentile: load only adds). A
// receive is a blocking one (Recv, Sendrecv) or an Irecv completed by a Wait* (waiting from the
// Wait*'s start) or by a Test* (from the first poll of the run of Test* calls that had not found
// it); a call completing several receives gives one sample, its tightest. Where ranks exchanged
// both ways, L is the median over those pairs of ranks of the mean of the two directions' tenth
// percentiles (the clock offsets' error cancels). Above S each power-of-two size class gets its own
// G from its rendezvous pairs whose receive was waiting (params.G_classes, the median: a run pays
// every transfer), or where no pair measured a class, from the blocking collectives that do not
// reduce whose largest message is of that class (collective_G); the smallest class measured also
// covers the sizes from S
// + 1 up to it. gamma (a reduction's combining cost) is the median over the reductions above S
// given that G (collective_gamma); only when nothing else measured G do the reductions give it,
// gamma 0. The nonblocking reductions above S (Iallreduce... from their start to the Wait* or
// Test* that completed them) give params.gamma_nonblocking the same way, unset without any. An L
// above kMaxPlausibleL is replaced by the fastest pair's (or the default) with a warning. S
// (fitted first: the eager line and the classes depend on it) from the blocking standard sends
// whose receive was posted late: one that returned before the post went eagerly; a size class
// whose sends mostly lasted until the post waited (fit_threshold in fit.cpp has the rule);
// without either, the default. g is the median
// time from one small send's start to the next's where a rank sent them back to back; without
// any, 0. Reads every event:
// sends' durations (o, from an evenly thinned sample of at most 65536; G, the fastest of each
// class) and collectives (the first 4096) over the whole trace, whose memory is bounded; pairs
// (L, the rendezvous classes), which keep every message until its peer's rank is read, from the
// first events of each rank only (fit_events_per_rank).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "encore/manifest.hpp"
#include "encore/predict/loggps_params.hpp"
#include "encore/trace_dir.hpp"

namespace encore::predict {

inline constexpr std::uint64_t kFitEventsPerRank = 50000;
// The fit reads at most this many events in all: with many ranks, the first
// kFitEvents / nprocs events of each (never fewer than kFitEventsMinPerRank), so that the fit
// costs a bounded fraction of `encore predict`, whatever the rank count.
inline constexpr std::uint64_t kFitEvents = 1000000;
inline constexpr std::uint64_t kFitEventsMinPerRank = 1000;
inline constexpr std::uint64_t fit_events_per_rank(std::uint32_t nprocs) {
  const std::uint64_t share = nprocs == 0 ? kFitEventsPerRank : kFitEvents / nprocs;
  return share < kFitEventsMinPerRank ? kFitEventsMinPerRank
         : share > kFitEventsPerRank  ? kFitEventsPerRank
                                      : share;
}
// Above this L (ns) a fit comes from a loaded recording, not the interconnect: shared memory
// takes about 0.13 us one way here, networks a few us.
inline constexpr double kMaxPlausibleL = 20000;

struct FitReport {
  LogGPSParams params;
  std::uint64_t send_samples = 0;        // sends measured for o
  std::uint64_t size_classes = 0;        // size classes in the G fit
  std::uint64_t pairs = 0;               // matched send/receive pairs
  std::uint64_t latency_samples = 0;     // of which L was fitted (see fit_params)
  std::uint64_t latency_rank_pairs = 0;  // pairs of ranks measured both ways (see fit_params)
  std::uint64_t large_pairs = 0;         // rendezvous pairs measured for params.G_classes
  std::uint64_t collective_samples = 0;  // collectives measured for classes without pairs
  std::uint64_t reduction_samples = 0;   // reductions measured for gamma
  std::uint64_t nonblocking_reduction_samples = 0;  // for params.gamma_nonblocking
  // S (see fit_params): blocking sends whose receive was posted late that returned first
  // (eager), that waited for it in a size class taken for rendezvous, and that waited but
  // were not counted (too few in their class, or no larger than an eager one); the largest
  // eager size and the smallest waiting one counted (0: none).
  std::uint64_t threshold_eager = 0;
  std::uint64_t threshold_waiting = 0;
  std::uint64_t threshold_ignored = 0;
  std::uint64_t largest_eager_bytes = 0;
  std::uint64_t smallest_waiting_bytes = 0;
  std::uint64_t gap_samples = 0;      // small sends back to back, for g
  std::uint64_t events_read = 0;      // all ranks' (all of them: see fit_params)
  std::uint64_t events_per_rank = 0;  // the prefix of each rank pairs came from
  std::uint64_t ranks_cut = 0;        // ranks with more events than that prefix
  std::string notes;                  // what fell back to a default, and why
  std::string warnings;               // what the fit distrusted (empty: nothing)
};

FitReport fit_params(const TraceDir& capture, const Manifest& manifest);
// The same with pairs from the first `events_per_rank` events of each rank (`encore predict
// --fit-events`; tests of the sample rule): their memory grows with the messages read.
FitReport fit_params(const TraceDir& capture, const Manifest& manifest,
                     std::uint64_t events_per_rank);
nlohmann::json to_json(const FitReport& f);
std::string describe(const FitReport& f);

}  // namespace encore::predict
