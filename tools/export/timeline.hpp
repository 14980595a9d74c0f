// One rank's MPI calls in stream order, with times on the common timeline (rank 0's clock)
// and the compute segment before each call. Shared by the exporters: they only decide what
// to write for a call. Streams: one chunk in memory, whatever the trace length.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>

#include "encore/event.hpp"
#include "encore/event_reader.hpp"
#include "encore/manifest.hpp"

namespace encore::exporter {

// An opened trace: manifest loaded and its function table checked against this build's.
struct TraceInput {
  std::filesystem::path root;
  Manifest manifest;
};
// Throws Error naming the file if the trace cannot be used.
TraceInput open_trace_input(const std::filesystem::path& root);

struct TimelineCall {
  const Event* event = nullptr;
  std::int64_t start_ns = 0;  // corrected start plus the rank's clock offset
  std::int64_t end_ns = 0;
  std::int64_t compute_start_ns = 0;  // end of this thread's previous call (aligned)
  std::uint64_t compute_ns = 0;       // 0 before a thread's first call
};

class RankTimeline {
 public:
  // Throws Error if the rank's events file is missing or unreadable.
  RankTimeline(const TraceInput& trace, std::uint32_t rank);

  // The next call in stream order (threads interleave by chunk; each thread in order).
  bool next(TimelineCall& out);

  // After next() returned false: "" if the stream ended with its trailer, else one line
  // saying where and why it stopped (what was before is still delivered).
  std::string end_note() const;
  std::uint32_t rank() const noexcept { return rank_; }

 private:
  RankEventReader reader_;
  std::uint32_t rank_;
  const RankInfo* info_;  // for its clock offset (nullptr: none)
  std::string path_;
  Event event_;
  std::unordered_map<std::uint16_t, std::int64_t> last_end_;  // per thread (aligned)
};

}  // namespace encore::exporter
