// The `logged` model with overhead compensation. Every call keeps its recorded duration except
// the part of it spent waiting for another rank, which is re-derived from when that rank now
// gets there (Scalasca-style timestamp correction). A call's gates are the other ranks'
// moments it cannot end before: a receive's matched send start, a rendezvous send's matched
// receive post, a collective's members' arrivals. With recorded times R (uncorrected, on the
// common clock: what really happened) and predicted times P:
//   recorded start RS, end RE; gates kept: those with RD <= RE (a real dependency ends first)
//   lag = RE - max(RS, max RD)          the call's time after its last gate opened
//   end = max(PS, max PD) + lag         (no gate kept: PS + RE - RS)
// So a receive that waited only because its sender was busy with the capture's own work (which
// the corrected compute leaves out) loses exactly that wait, and predicting the recorded times
// gives them back. Ranks advance together as in the loggps engine; a call whose gate another
// rank cannot supply under this ordering is released with its recorded duration (counted).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "encore/predict/clock_offsets.hpp"
#include "encore/predict/feed.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/predict/loggps_params.hpp"

namespace encore::predict {

struct LoggedStats : EngineStats {
  std::uint64_t released = 0;  // calls let go without their gates (see above)
};

// `clocks` puts rank r's recorded times on the common clock (the manifest's offset at each
// time, or a constant per rank; missing ranks count as 0). `params` decides which sends are
// rendezvous and splits durations into cost and wait for the sink, as in run_logged.
LoggedStats run_compensated(std::vector<std::unique_ptr<RankFeed>>& feeds,
                            const LogGPSParams& params, const ClockOffsets& clocks,
                            PredictSink& sink);

}  // namespace encore::predict
