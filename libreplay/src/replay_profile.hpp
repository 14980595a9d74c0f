// The replay profile: what the replayed rank did on this machine, as an Encore trace of kind
// "replay" (doc/trace-format.md, "Replay profiles"). One event per replayed call, in the
// recorded order, with the recorded arguments; its times are this machine's:
//   gap       compute measured here between the previous call's exit and this call's entry
//   duration  0: a replayed call communicates with nobody; its whole time in libreplay is the
//             replay's own cost (reading, decompressing, unpacking, hashing, checking)
//   overhead  that cost, charged to the next event as capture charges its own
// so corrected times are the rank's compute timeline here, and raw times (corrected + the
// running overhead) its wall clock. Call sites are the recorded ones (same binary, same code).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "encore/clock.hpp"
#include "encore/event.hpp"
#include "encore/manifest.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore::replay {

class ReplayProfile {
 public:
  // Creates `dir` (it must not hold a trace already) and the rank's stream files. Throws Error.
  ReplayProfile(const std::filesystem::path& dir, const std::filesystem::path& recorded_trace,
                const Manifest& recorded, std::uint32_t rank);
  ~ReplayProfile();

  std::uint64_t ticks() const noexcept { return clock_.ticks(); }
  // One replayed call: `ev` is the recorded event (its payload references are dropped: the
  // profile holds no data), entered at `enter` ticks. Returns false if the profile could not
  // be written (reported once; the replay goes on).
  bool record(Event& ev, std::uint64_t enter) noexcept;
  // Writes trailers and manifest. `status`: complete after MPI_Finalize, aborted otherwise.
  void close(RankStatus status) noexcept;

  const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  void fail(const std::string& what) noexcept;

  std::filesystem::path dir_;
  Manifest manifest_;
  std::uint32_t rank_;
  Clock clock_;
  std::unique_ptr<RankTraceWriter> writer_;
  bool first_ = true;
  bool failed_ = false;
  bool closed_ = false;
  std::uint64_t last_leave_ = 0;        // ticks when the previous call returned
  std::uint64_t pending_overhead_ = 0;  // ns of the previous call, charged to the next
  std::uint64_t now_ns_ = 0;            // corrected time of the last event's end
  std::uint64_t total_overhead_ns_ = 0;
  std::uint64_t compute_ns_ = 0;
};

}  // namespace encore::replay
