// The replay profile: what the replayed rank did on this machine, as an Encore trace of kind
// "replay" (doc/trace-format.md, "Replay profiles"). One event per replayed call, in the
// recorded order, with the recorded arguments; its times are this machine's:
//   gap       compute measured here between the previous call's exit and this call's entry
//   duration  0: a replayed call communicates with nobody; its whole time in libreplay is the
//             replay's own cost (reading, decompressing, unpacking, hashing, checking)
//   overhead  that cost, charged to the next event as capture charges its own
// so corrected times are the rank's compute timeline here, and raw times (corrected + the
// running overhead) its wall clock. Call sites are the recorded ones (same binary, same code).
// With PAPI events (ENCORE_PAPI_EVENTS, `encore replay --papi`), each event carries the counts
// of the compute segment before it, read as capture reads them: at entry and at exit.
// With a writer thread (ENCORE_REPLAY_PROFILE_THREAD=1), full batches are encoded, compressed
// and written there while the program goes on; a call then only copies its body and times.
// Stalls: where the wall time since the last look exceeds kStallCheckTicks (a throttle or a
// preemption makes its piece that long, so it is caught at that piece's end), the time the
// thread was runnable but not running since the last look (the kernel's run_delay in
// /proc/thread-self/schedstat: a CPU quota's throttling, preemption; not sleeps or blocking
// I/O, which are the program's time) is charged to the piece just ended: the compute segment
// before a call (the event's stall extra) or the call itself (the manifest's
// replay.stall.calls_ns). encore predict spreads them where the replay ran under a CPU quota
// (a CPU-quota cgroup throttles in whole periods: a few segments carry all of it), and leaves
// them out where it did not (other work on the machine took the CPU, or the replay's own
// read-ahead thread did: no part of the program's time).
#pragma once

#include <pthread.h>
#include <time.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "encore/clock.hpp"
#include "encore/clock_choice.hpp"
#include "encore/event.hpp"
#include "encore/manifest.hpp"
#include "encore/papi_counters.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore::replay {

// A compute gap as the replay measures it, from the clock read that ends a replayed call to
// the one that begins the next, holds one clock read of the replay's own (rdtsc: 9 ns on the
// development VM, where a replayed polling loop's gaps came out 9.5 ns against the capture's
// 1 ns, 2.4 ms over 278711 polls): `read` ticks of it are the replay's overhead, never more
// than the gap. Returns the compute part.
constexpr std::uint64_t gap_less_clock_read(std::uint64_t gap, std::uint64_t read) noexcept {
  return gap > read ? gap - read : 0;
}

class ReplayProfile {
 public:
  // Creates `dir` (it must not hold a trace already) and the rank's stream files. Throws Error.
  // `papi_events`: counters to read per compute segment (none: no counters); when PAPI cannot
  // count them, one warning naming PAPI's reason, and the profile goes on without.
  // `writer_thread`: batches are written on a thread of the profile's (see above).
  ReplayProfile(const std::filesystem::path& dir, const std::filesystem::path& recorded_trace,
                const Manifest& recorded, std::uint32_t rank,
                const std::vector<std::string>& papi_events = {}, bool writer_thread = false);
  ~ReplayProfile();

  // The program called MPI: the clock (ticks) and, with PAPI, the counts of the compute
  // segment that just ended.
  std::uint64_t enter() noexcept {
    const std::uint64_t t = clock_.ticks();
    if (t - stall_mark_ >= kStallCheckTicks) [[unlikely]]
      segment_stall_ns_ += stall_since_mark(t);
    if (counters_on_) read_counters();
    return t;
  }
  // One replayed call: `ev` is the recorded event (its payload references are dropped: the
  // profile holds no data), `body` its encoded bytes if the reader has them (copied through
  // with new extras; else `ev` is encoded), `extras_at` where the body's extras start if the
  // reader knows (else 0), entered at `enter` ticks. Returns false if the profile could not
  // be written (reported once; the replay goes on).
  bool record(Event& ev, std::span<const std::byte> body, std::size_t extras_at,
              std::uint64_t enter) noexcept;
  // Time the replayed calls spent reading the payload stream (loading chunks, or waiting for
  // one loaded ahead): the manifest's replay.payload_read_ns, written only when noted.
  void note_payload_read(std::uint64_t ns) noexcept { payload_read_ns_ = ns; }
  // Writes trailers and manifest. `status`: complete after MPI_Finalize, aborted otherwise.
  void close(RankStatus status) noexcept;

  const std::filesystem::path& dir() const noexcept { return dir_; }
  // Whether batches are written on the profile's own thread.
  bool writer_thread() const noexcept { return helper_ != nullptr; }

 private:
  struct Helper;
  void fail(const std::string& what) noexcept;
  // Hands the calls collected so far (one thread's bodies and times) to the writer: on the
  // writer thread if there is one, else here; `file` also flushes the writer's open chunks to
  // the files. Throws (a failure of the thread's previous batch included).
  void flush_batch(bool file = false);
  // Until the writer thread is done with what it was given (a batch it has not started is
  // written here instead), so that the writer may be used here. Throws its failure.
  void settle();
  // Writes one batch (ticks turned to ns) and flushes the files if `file`. Throws.
  void write_batch(std::span<RankTraceWriter::BodyTimes> times, std::span<const std::byte> bodies,
                   std::uint16_t thread, bool file);
  void start_helper();
  void stop_helper() noexcept;
  // A full batch: handed to the writer, or grown while the writer thread is busy.
  void batch_full() noexcept;
  // flush_batch() for the call's path: an error stops the profile.
  void flush_or_fail() noexcept;
  // record() for calls whose extras change (received data, counters) and for the first call
  // of a batch or thread; false if the profile failed.
  // `stall`: ns the thread was not running in the segment before the call (the stall extra).
  bool record_general(Event& ev, std::span<const std::byte> body, std::uint64_t start,
                      std::uint64_t stall) noexcept;
  // Ticks to ns, calibrating the clock on first use.
  std::uint64_t ns(std::uint64_t ticks) noexcept;
  // About once a second: the batch and the writer's open chunks to the file, so that a replay
  // killed with SIGKILL leaves its profile readable up to then (capture flushes as often).
  void timed_flush(std::uint64_t now_ticks) noexcept;
  void read_counters() noexcept;
  void mark_counters() noexcept;
  // The ns the measured thread was runnable but waiting since the previous read (0 at the
  // first read, and for any other thread), marked at `now`.
  std::uint64_t stall_since_mark(std::uint64_t now) noexcept;
  // The thread's CPU time and run_delay so far; without schedstat, its CPU clock and its wall
  // time less that (which counts sleeps too).
  struct Waited {
    std::uint64_t ran = 0, waited = 0;
  };
  Waited waited() noexcept;
  // The measured thread's CPU time from the first read to now (`replay.stall.cpu_ns`).
  std::uint64_t stall_cpu_ns() const noexcept;

  std::filesystem::path dir_;
  Manifest manifest_;
  std::uint32_t rank_;
  ClockDecision clock_choice_;  // ENCORE_CLOCK, as the capture chooses (clock_choice.hpp)
  Clock clock_;
  std::unique_ptr<RankTraceWriter> writer_;
  // Calls not yet handed to the writer: per call a fixed record, the bodies back to back.
  // Sized once; a call appends to them and nothing else (the writer runs per batch).
  static constexpr std::size_t kBatchEvents = 512;
  static constexpr std::size_t kMaxBatchEvents = 16 * kBatchEvents;
  std::vector<RankTraceWriter::BodyTimes> batch_;
  std::size_t batch_n_ = 0;
  std::vector<std::byte> batch_bodies_;
  std::size_t batch_bytes_ = 0;
  // The thread of the calls batched; none before the first call (a 16-bit thread never equals it).
  static constexpr std::uint32_t kNoThread = 0x10000;
  std::uint32_t batch_thread_ = kNoThread;
  bool counters_on_ = false;
  std::vector<long long> deltas_;      // PAPI counts of the segment before the current call
  std::vector<std::uint64_t> counts_;  // the same as the trace stores them
  // The clock is compared with next_check_ on every call (free: it was read anyway); past it,
  // CLOCK_MONOTONIC says whether a second has passed since the last flush. The check interval
  // is 2^25 ticks: 10 to 35 ms at TSC rates (1 to 3.4 GHz), 34 ms of CLOCK_MONOTONIC.
  static constexpr std::uint64_t kCheckTicks = std::uint64_t{1} << 25;
  static constexpr std::uint64_t kFlushNs = 1'000'000'000;
  std::uint64_t next_check_ = 0;
  std::uint64_t last_flush_ns_ = 0;  // CLOCK_MONOTONIC
  bool running_ = false;  // after the first call, until failed or closed: one test per call
  bool failed_ = false;
  bool closed_ = false;
  bool calibrated_ = false;
  std::uint64_t last_leave_ = 0;         // ticks when the previous call returned
  std::uint64_t pending_overhead_ = 0;   // ticks of the previous call, charged to the next
  std::uint64_t read_ticks_ = 0;         // one clock read (Clock::read_cost_ticks)
  std::uint64_t now_ticks_ = 0;          // corrected time of the last event (compute so far)
  std::uint64_t total_overhead_ns_ = 0;  // of the events written
  std::optional<std::uint64_t> payload_read_ns_;
  std::unique_ptr<Helper> helper_;  // the writer thread, if any (stopped before the rest goes)
  // Stalls. A read costs about a microsecond here (a system call), so it is taken only where
  // the wall time since the last one is at least 2^17 ticks (65 us at 2 GHz, 39 us at 3.4):
  // at most about 2 % of the time, and charged to the call (overhead) like the rest of its work.
  static constexpr std::uint64_t kStallCheckTicks = std::uint64_t{1} << 17;
  static constexpr const char* kStallSchedstat = "run_delay";
  static constexpr const char* kStallClocks = "wall - thread CPU";
  std::uint64_t stall_mark_ = 0;        // ticks of the last look
  std::uint64_t segment_stall_ns_ = 0;  // in the segment before the call being replayed
  std::uint64_t total_segment_stall_ns_ = 0, call_stall_ns_ = 0, stall_reads_ = 0;
  Waited mark_;                     // waited() at the last read
  std::uint64_t stall_ran_ns_ = 0;  // CPU time between the first read and the last
  // The measured thread's own CPU clock, read at the first mark and at close: schedstat's
  // CPU time moves only at ticks and switches, so a short replay could read none.
  clockid_t cpu_clock_ = CLOCK_THREAD_CPUTIME_ID;
  bool cpu_clock_ok_ = false;
  std::uint64_t cpu_at_mark_ = 0;
  int schedstat_fd_ = -1;
  const char* stall_source_ = kStallSchedstat;
  pthread_t mark_thread_{};  // the thread measured (the first to call)
  bool marked_ = false;
  // The replay's CPU-quota cgroup limit in CPUs (0: none), `replay.stall.cpu_quota`: with a
  // quota, stalls are its throttling, the slower machine the replay stands for; without, they
  // are other work on this machine (encore predict --stall-time auto tells them apart so).
  double cpu_quota_ = 0;
};

}  // namespace encore::replay
