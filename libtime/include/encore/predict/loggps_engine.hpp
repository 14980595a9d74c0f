// The `loggps` model: a discrete-event re-timing of all ranks' calls. Each rank advances
// through its calls until one needs another rank (a receive its message, a rendezvous send
// its receive, a wait its requests, a collective its members), then blocks; the rank that
// supplies the missing piece wakes it. Point-to-point timing (n bytes, s = send start,
// v = receive start):
//   eager (n <= S):   sender done at s + o + (n-1)G; receiver done at max(v, s + o + (n-1)G + L) +
//   o rendezvous (n > S, and every Ssend): the PerWiz rule t_wait = max(v - s - (o+L), 0);
//                     the handshake completes at h = s + o + L + t_wait, the sender is done at
//                     h + L + o + (n-1)G and the receiver L + o after that
// Consecutive injections from one rank are at least g apart. Nonblocking calls cost o and
// complete their request at the time above; Wait* ends at max(start, completions).
// Receives are matched to sends in order per (source, destination, communicator, tag),
// wildcards resolved by the recorded status. Collectives: collectives.hpp. Calls the model
// does not cover keep their recorded duration. Memory: per rank its open requests, plus the
// messages and collectives in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "encore/predict/feed.hpp"
#include "encore/predict/loggps_params.hpp"
#include "encore/rank_context.hpp"

namespace encore::predict {

struct EngineStats {
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  std::uint64_t collectives = 0;
  std::uint64_t max_in_flight = 0;  // messages and collectives open at once, at most
  // Failed MPI_Tests that could not wait for their request (it completes only after the
  // rank's later calls): kept at their recorded durations, as every later poll of it.
  std::uint64_t polls_released = 0;
};

// Runs the model over `feeds` (index = world rank). Throws Error if the ranks deadlock under
// the model (a pattern it does not cover), naming the blocked calls.
EngineStats run_loggps(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& params,
                       PredictSink& sink);

// The `logged` model: compute from the feed, every call's recorded duration.
EngineStats run_logged(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& params,
                       PredictSink& sink);

// The LogGPS cost of a call made alone (no waiting), used to split a recorded or logged
// duration into communication and wait: o + (n-1)G for a call moving n bytes, 0 for Wait*,
// the whole duration for calls that do not communicate.
std::int64_t solo_cost(const Event& ev, const RankContext& ctx, const LogGPSParams& params);

}  // namespace encore::predict
