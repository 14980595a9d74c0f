// What the models consume and produce: each rank's recorded calls in order, each with the
// compute time that precedes it (from a replay profile, inferred, or as captured), and a sink
// told the predicted start and end of every call.
#pragma once

#include <cstdint>

#include "encore/event.hpp"

namespace encore::predict {

class RankFeed {
 public:
  virtual ~RankFeed() = default;
  // The next recorded call of this rank and the compute before it (ns), or false at the end.
  // The first call's compute is the rank's start offset on the common time base.
  virtual bool next(Event& ev, std::int64_t& compute_ns) = 0;
};

class PredictSink {
 public:
  virtual ~PredictSink() = default;
  // Called for each rank's calls in order. `wait_ns` is the part of [start, end) spent waiting
  // for other ranks (or the network) beyond the call's own LogGPS cost.
  virtual void on_event(std::uint32_t rank, const Event& ev, std::int64_t compute_ns,
                        std::int64_t start_ns, std::int64_t end_ns, std::int64_t wait_ns) = 0;
};

}  // namespace encore::predict
