// Hand-made capture traces for the fit tests: timed events written rank by rank, and the
// manifest that makes the directory a complete capture.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "encore/event.hpp"
#include "encore/event_format.hpp"
#include "encore/manifest.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore::testing {

// `e` lasting `dur` ns; write_rank places it at its start.
inline Event timed(Event e, std::uint64_t dur) {
  e.start_ns = 0;
  e.end_ns = dur;
  return e;
}

// `calls` is changed through the structured binding below, which clang-tidy 14's
// performance-unnecessary-value-param does not see (it asks for a const reference).
inline void write_rank(const TraceDir& d, std::uint32_t rank,
                       // NOLINTNEXTLINE(performance-unnecessary-value-param): see above
                       std::vector<std::pair<Event, std::uint64_t>> calls) {  // (event, start)
  RankTraceWriter w(d.events_path(rank), d.payload_path(rank), rank);
  std::map<std::uint16_t, std::uint64_t> next;  // per thread: request references name indices
  for (auto& [ev, start] : calls) {
    ev.index = next[ev.thread]++;
    const std::uint64_t dur = ev.end_ns - ev.start_ns;
    ev.start_ns = start;
    ev.end_ns = start + dur;
    w.write(ev);
  }
  w.close();
}

// Saves and returns the manifest of a complete capture of `nprocs` ranks.
inline Manifest save_capture(const TraceDir& d, std::uint32_t nprocs = 2) {
  Manifest m;
  m.kind = TraceKind::capture;
  m.nprocs = nprocs;
  m.function_table.hash = std::string(kFunctionTableHash);
  for (const auto& fi : function_table()) m.function_table.functions.push_back(fi.name);
  for (std::uint32_t r = 0; r < nprocs; ++r) {
    RankInfo info;
    info.rank = r;
    info.status = RankStatus::complete;
    m.ranks.push_back(info);
  }
  save_manifest(m, d.manifest_path());
  return m;
}

}  // namespace encore::testing
