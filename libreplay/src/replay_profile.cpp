#include "replay_profile.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "encore/background_worker.hpp"
#include "encore/cpu_budget.hpp"
#include "encore/error.hpp"
#include "encore/event_body.hpp"
#include "encore/trace_dir.hpp"

#ifndef ENCORE_VERSION
#define ENCORE_VERSION "unknown"
#endif

namespace encore::replay {
namespace {

// The stall extra appended to a body copied into the batch (n bytes at `body`, room for
// kStallRoom more): the extras' end tag, if any, becomes the stall and a new end tag follows.
constexpr std::size_t kStallRoom = 2 + kMaxVarintBytes;
std::size_t add_stall(std::byte* body, std::size_t n, std::uint64_t stall_ns) noexcept {
  const auto head = static_cast<std::uint8_t>(body[0]);
  if (head & event_format::kHasExtras)
    --n;  // the end tag (extras always end with it)
  else
    body[0] = static_cast<std::byte>(head | event_format::kHasExtras);
  body[n++] = static_cast<std::byte>(event_format::Extra::stall);
  n += encode_uvarint(stall_ns, body + n);
  body[n++] = static_cast<std::byte>(event_format::Extra::end);
  return n;
}

// 0 where the clock cannot be read (a thread's CPU clock after the thread has exited).
std::uint64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  if (clock_gettime(id, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The decimal number at `pos` (a NUL-terminated text), after spaces, moving `pos` past it;
// false if there is none or it has over 19 digits. schedstat's fields are plain decimals:
// strtoull's locale and base handling cost some 285 instructions a number. Local pointer:
// through the reference, every digit would store it (a char may alias it).
bool read_decimal(const char*& pos, std::uint64_t& out) noexcept {
  const char* p = pos;
  while (*p == ' ') ++p;
  const char* const first = p;
  std::uint64_t v = 0;
  unsigned d = 0;
  while ((d = static_cast<unsigned char>(*p) - unsigned{'0'}) < 10 && p - first < 19) {
    v = v * 10 + d;
    ++p;
  }
  if (p == first || d < 10) return false;  // none, or a 20th digit
  pos = p;
  out = v;
  return true;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// What the replay ran on: the profile is only meaningful next to it.
nlohmann::json machine() {
  std::string model;
  double mhz = 0;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && model.empty()) model = value;
    if (key == "cpu MHz" && mhz == 0) mhz = std::atof(value.c_str());
  }
  return {{"host", host_name()},
          {"cpu_model", model},
          {"cpu_mhz", mhz},
          {"logical_cpus", std::thread::hardware_concurrency()}};
}

}  // namespace

// The writer thread and the batch it was given. From post() to take(), the batch, the
// RankTraceWriter and total_overhead_ns_ are the thread's; otherwise the program thread's.
// When idle, `times` and `bodies` are the spare buffers the next batch is swapped with.
struct ReplayProfile::Helper {
  std::vector<RankTraceWriter::BodyTimes> times;
  std::vector<std::byte> bodies;
  std::size_t n = 0;
  std::size_t bytes = 0;
  std::uint16_t thread = 0;
  bool file = false;
  std::string error;        // why a batch failed, for the program's thread to report
  BackgroundWorker worker;  // last: stopped before the batch goes

  void write(ReplayProfile& p) noexcept {
    try {
      p.write_batch({times.data(), n}, {bodies.data(), bytes}, thread, file);
    } catch (const std::exception& e) {
      if (error.empty()) error = e.what();
    }
  }
};

ReplayProfile::ReplayProfile(const std::filesystem::path& dir,
                             const std::filesystem::path& recorded_trace, const Manifest& recorded,
                             std::uint32_t rank, const std::vector<std::string>& papi_events,
                             bool writer_thread)
    : dir_(dir),
      rank_(rank),
      clock_choice_(choose_clock_from_environment()),
      clock_(clock_choice_.source) {
  read_ticks_ = clock_.read_cost_ticks();
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec)
    throw Error(format_in(dir_.string(), "cannot create the profile directory: " + ec.message()));
  const TraceDir out(dir_);
  if (std::filesystem::exists(out.manifest_path()))
    throw Error(format_in(out.manifest_path().string(),
                          "a trace is already there; give a new directory to -o"));
  Manifest& m = manifest_;
  m.kind = TraceKind::replay;
  m.tool_version = ENCORE_VERSION;
  m.nprocs = recorded.nprocs;
  m.command = process_command_line();
  m.start_time_unix_ns = unix_time_ns();
  m.start_time_iso = iso_utc(m.start_time_unix_ns);
  m.mpi_library_version = "Encore replay of: " + recorded.mpi_library_version;
  m.function_table = recorded.function_table;
  m.options = {{"call_durations",
                "zero: replayed calls do not communicate; their time in the "
                "replay library is overhead"},
               {"callsites", "as recorded"}};
  m.papi.requested = papi_events;
  if (papi_events.empty()) {
    m.papi.reason = "not requested";
  } else {
    const CounterSetup setup = setup_counters(papi_events);
    counters_on_ = setup.available;
    m.papi.available = setup.available;
    m.papi.reason = setup.reason;
    m.papi.cpu_model = setup.cpu_model;
    m.papi.cpu_mhz = setup.cpu_mhz;
    if (!counters_on_)
      std::fprintf(stderr, "encore replay: PAPI counters unavailable, replaying without them: %s\n",
                   setup.reason.c_str());
    deltas_.assign(papi_events.size(), 0);
    counts_.assign(papi_events.size(), 0);
  }
  m.clock.source = std::string(to_string(clock_.source()));
  m.clock.resolution_ns = clock_.resolution_ns();
  m.clock.why = clock_choice_.why;
  m.replay_of = ReplayOf{std::filesystem::absolute(recorded_trace).lexically_normal().string(),
                         rank, recorded.start_time_unix_ns};
  const RankInfo* rec = recorded.rank_info(rank);
  RankInfo info = rec ? *rec : RankInfo{};
  info.rank = rank;
  info.host = host_name();
  info.pid = getpid();
  info.byte_order = host_byte_order();
  info.clock_offset_ns = 0;
  info.sync_init.reset();
  info.sync_end.reset();
  info.status = RankStatus::running;
  info.events = 0;
  info.payload_bytes = 0;
  info.raw = nlohmann::json::object();
  m.ranks = {info};
  m.raw = {{"machine", machine()}};
  // A fast zstd level: the profile is compressed in the replayed program's path, not off it.
  RankWriterOptions wo;
  wo.level = -3;
  writer_ =
      std::make_unique<RankTraceWriter>(out.events_path(rank), out.payload_path(rank), rank, wo);
  last_flush_ns_ = monotonic_ns();
  cpu_quota_ = cgroup_cpu_quota();
  batch_.resize(kBatchEvents);
  batch_bodies_.resize(1 << 16);
  if (writer_thread) start_helper();
  save_manifest(m, out.manifest_path());
  const auto sites = fmt::format("rank-{:05}.callsites.json", rank);
  if (std::filesystem::exists(recorded_trace / sites))
    std::filesystem::copy_file(recorded_trace / sites, dir_ / sites,
                               std::filesystem::copy_options::overwrite_existing, ec);
}

ReplayProfile::~ReplayProfile() {
  stop_helper();
  if (schedstat_fd_ >= 0) ::close(schedstat_fd_);
}

void ReplayProfile::start_helper() {
  auto h = std::make_unique<Helper>();
  h->times.resize(kBatchEvents);
  h->bodies.resize(1 << 16);
  if (!h->worker.start("encore-profile", [p = h.get(), this] { p->write(*this); }))
    return;  // no thread: batches are written by the calls that fill them
  helper_ = std::move(h);
}

void ReplayProfile::stop_helper() noexcept {
  if (!helper_) return;
  helper_->worker.stop();
  helper_.reset();
}

void ReplayProfile::write_batch(std::span<RankTraceWriter::BodyTimes> times,
                                std::span<const std::byte> bodies, std::uint16_t thread,
                                bool file) {
  if (!times.empty()) {
    const std::uint64_t zero = clock_.zero_ticks();
    std::uint64_t overhead = 0;
    for (RankTraceWriter::BodyTimes& b : times) {
      b.start_ns = clock_.to_ns(zero + b.start_ns);
      b.end_ns = b.start_ns;
      b.overhead_ns = clock_.to_ns(zero + b.overhead_ns);
      overhead += b.overhead_ns;
    }
    total_overhead_ns_ += overhead;
    writer_->write_bodies(thread, times, bodies);
  }
  if (file) writer_->flush();
}

void ReplayProfile::settle() {
  if (!helper_) return;
  Helper& h = *helper_;
  // Not started (the thread got no CPU): written here rather than waited for.
  if (h.worker.take() == BackgroundWorker::Taken::not_started)
    write_batch({h.times.data(), h.n}, {h.bodies.data(), h.bytes}, h.thread, h.file);
  if (!h.error.empty()) throw Error(std::exchange(h.error, {}));
}

void ReplayProfile::flush_batch(bool file) {
  if (batch_n_ == 0 && !file) return;
  ns(0);  // calibrates the clock on the first batch, here: the thread only reads it
  const std::size_t n = std::exchange(batch_n_, 0);
  const std::size_t bytes = std::exchange(batch_bytes_, 0);
  const auto thread = static_cast<std::uint16_t>(batch_thread_);
  if (!helper_) {
    write_batch({batch_.data(), n}, {batch_bodies_.data(), bytes}, thread, file);
    return;
  }
  settle();
  Helper& h = *helper_;
  std::swap(h.times, batch_);
  std::swap(h.bodies, batch_bodies_);
  h.n = n;
  h.bytes = bytes;
  h.thread = thread;
  h.file = file;
  h.worker.post();
}

void ReplayProfile::batch_full() noexcept {
  // The writer thread still on the previous batch (a busy machine): this one grows, up to a
  // bound, rather than the call waiting for a thread that may have no CPU.
  if (helper_ && batch_.size() < kMaxBatchEvents && helper_->worker.busy()) {
    try {
      batch_.resize(2 * batch_.size());
      return;
    } catch (const std::bad_alloc&) {
      // written now instead
    }
  }
  flush_or_fail();
}

bool ReplayProfile::record(Event& ev, std::span<const std::byte> body, std::size_t extras_at,
                           std::uint64_t enter) noexcept {
  if (!running_) [[unlikely]] {
    if (failed_ || closed_) return false;
    last_leave_ = enter;  // the profile starts at the first call, as a capture does
    running_ = true;
  }
  // Times stay in clock ticks until a batch is written (one conversion per call there). The
  // gap's clock read is charged to the overhead before this call, with the previous call's time.
  const std::uint64_t gap = gap_less_clock_read(enter - last_leave_, read_ticks_);
  pending_overhead_ += enter - last_leave_ - gap;
  const std::uint64_t start = now_ticks_ + gap;
  // The usual calls without counters, in the batch's thread: a send or a query keeps its body
  // as it is, a receive drops its payload references; the rest goes the general way.
  // (batch_thread_ is kNoThread until the general way has set it.)
  std::size_t n = 0;
  std::byte* out = batch_bodies_.data() + batch_bytes_;
  const std::uint64_t stall = segment_stall_ns_;
  segment_stall_ns_ = 0;
  if (body.size() >= 2 && ev.thread == batch_thread_ &&
      batch_bodies_.size() - batch_bytes_ >= body.size() + kStallRoom && !counters_on_ &&
      ev.signatures.empty() && ev.counters.empty() && ev.stall_ns == 0 && ev.first_read_ns == 0)
      [[likely]] {
    if (ev.payloads.empty()) {
      copy_short(out, body.data(), body.size());
      n = body.size();
    } else if (ev.send_hashes.empty() && ev.contribution_hashes.empty() && !ev.callsite) {
      // Payload references are then the only extras, unless one of the rare ones is there.
      n = extras_at != 0 && extras_at < body.size() && !ev.attribute && !ev.neighbours
              ? copy_body_drop_extras(body, extras_at, out)
              : copy_body_drop_payload_refs(body, ev, out);
    }
  }
  if (n > 0) [[likely]] {
    if (stall != 0) [[unlikely]]
      n = add_stall(out, n, stall);
    batch_[batch_n_++] = {start, start, pending_overhead_, n};  // ticks, for now
    batch_bytes_ += n;
    if (batch_n_ == batch_.size()) [[unlikely]]
      batch_full();
  } else if (!record_general(ev, body, start, stall)) {
    return false;
  }
  total_segment_stall_ns_ += stall;
  now_ticks_ = start;
  if (counters_on_) mark_counters();
  std::uint64_t leave = clock_.ticks();
  if (leave - stall_mark_ >= kStallCheckTicks) [[unlikely]] {
    call_stall_ns_ += stall_since_mark(leave);
    leave = clock_.ticks();  // the read is the call's cost, not the program's
  }
  pending_overhead_ = leave - enter;
  last_leave_ = leave;
  if (leave >= next_check_) [[unlikely]]
    timed_flush(leave);
  return true;
}

void ReplayProfile::flush_or_fail() noexcept {
  try {
    flush_batch();
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

bool ReplayProfile::record_general(Event& ev, std::span<const std::byte> body, std::uint64_t start,
                                   std::uint64_t stall) noexcept {
  try {
    const std::span<const std::uint64_t> counts =
        counters_on_ ? std::span<const std::uint64_t>(counts_) : std::span<const std::uint64_t>{};
    std::size_t n = 0;
    if (!body.empty()) {
      if (batch_n_ > 0 && ev.thread != batch_thread_) flush_batch();
      const std::size_t room = copy_body_bound(body.size(), counts.size()) + kStallRoom;
      if (batch_bodies_.size() - batch_bytes_ < room) {
        // As in batch_full: no wait for a busy writer thread while the batch may grow.
        if (!helper_ || batch_.size() >= kMaxBatchEvents || !helper_->worker.busy()) flush_batch();
        if (batch_bodies_.size() - batch_bytes_ < room)
          batch_bodies_.resize(
              std::max<std::size_t>(2 * batch_bodies_.size(), batch_bytes_ + 2 * room));
      }
      n = copy_body_new_extras(body, ev, counts, batch_bodies_.data() + batch_bytes_);
      if (n > 0 && stall != 0) n = add_stall(batch_bodies_.data() + batch_bytes_, n, stall);
    }
    if (n > 0) {
      batch_thread_ = ev.thread;
      batch_[batch_n_++] = {start, start, pending_overhead_, n};  // ticks, for now
      batch_bytes_ += n;
      if (batch_n_ == batch_.size()) batch_full();
    } else {
      flush_batch();  // in order with the batched ones
      settle();       // the writer is used here
      ev.start_ns = ns(start);
      ev.end_ns = ev.start_ns;
      ev.overhead_ns = ns(pending_overhead_);
      ev.payloads.clear();    // the profile holds no received data ...
      ev.signatures.clear();  // ... so no signatures to convert it either
      ev.counters.assign(counts.begin(), counts.end());
      ev.stall_ns = stall;   // the replay's own stall, not the capture's
      ev.first_read_ns = 0;  // the capture's first read: the replay wrote the bytes itself
      // `ev` is the reader's, reused for the next event: it clears only what its decoder
      // set (Event::stale), so the counters and stall put in here would stay in the events
      // after it (and send each of them this general way). It clears everything next time.
      ev.stale = ~std::uint64_t{0};
      writer_->write(ev);
      total_overhead_ns_ += ev.overhead_ns;
    }
  } catch (const std::exception& e) {
    fail(e.what());
    return false;
  }
  return !failed_;
}

void ReplayProfile::timed_flush(std::uint64_t now_ticks) noexcept {
  next_check_ = now_ticks + kCheckTicks;
  const std::uint64_t now = monotonic_ns();
  if (now - last_flush_ns_ < kFlushNs || failed_) return;
  last_flush_ns_ = now;
  try {
    flush_batch(/*file=*/true);
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

std::uint64_t ReplayProfile::ns(std::uint64_t ticks) noexcept {
  if (!calibrated_) {
    // Late, so that the calibration interval has mostly passed already (it spans 5 ms).
    clock_.calibrate();
    calibrated_ = true;
  }
  return clock_.duration_ns(ticks);
}

namespace {
// One event set per thread that calls MPI (PAPI's are per thread), started on its first call.
ThreadCounters* thread_counters(const std::vector<std::string>& events) noexcept {
  thread_local std::unique_ptr<ThreadCounters> mine;
  thread_local bool tried = false;
  if (!tried) {
    tried = true;
    auto c = std::make_unique<ThreadCounters>();
    if (c->start(events))
      mine = std::move(c);
    else
      std::fprintf(stderr,
                   "encore replay: PAPI refused an event set for a new thread; its "
                   "counters read as 0\n");
  }
  return mine.get();
}
}  // namespace

void ReplayProfile::read_counters() noexcept {
  ThreadCounters* c = thread_counters(manifest_.papi.requested);
  if (c) {
    c->read_segment(deltas_);
  } else {
    std::fill(deltas_.begin(), deltas_.end(), 0);
  }
  for (std::size_t i = 0; i < deltas_.size(); ++i)
    counts_[i] = deltas_[i] > 0 ? static_cast<std::uint64_t>(deltas_[i]) : 0;
}

void ReplayProfile::mark_counters() noexcept {
  if (ThreadCounters* c = thread_counters(manifest_.papi.requested)) c->mark_segment_start();
}

ReplayProfile::Waited ReplayProfile::waited() noexcept {
  if (schedstat_fd_ >= 0) {
    // "<ns on the CPU> <ns runnable but waiting> <timeslices>\n"
    char buf[96];
    const ssize_t n = pread(schedstat_fd_, buf, sizeof buf - 1, 0);
    if (n > 0) {
      buf[n] = '\0';
      const char* at = buf;
      std::uint64_t ran = 0, delay = 0;
      if (read_decimal(at, ran) && read_decimal(at, delay)) return {ran, delay};
    }
    ::close(schedstat_fd_);  // unreadable after all: the clocks from now on
    schedstat_fd_ = -1;
    stall_source_ = kStallClocks;
  }
  const std::uint64_t ran = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  return {ran, clock_ns(CLOCK_MONOTONIC) - ran};
}

std::uint64_t ReplayProfile::stall_since_mark(std::uint64_t now) noexcept {
  stall_mark_ = now;
  const pthread_t self = pthread_self();
  if (!marked_) {
    marked_ = true;
    mark_thread_ = self;
    // Bound to this thread (thread-self resolves when opened).
    schedstat_fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    stall_source_ = schedstat_fd_ >= 0 ? kStallSchedstat : kStallClocks;
    mark_ = waited();
    cpu_clock_ok_ = pthread_getcpuclockid(self, &cpu_clock_) == 0;
    if (cpu_clock_ok_) cpu_at_mark_ = clock_ns(cpu_clock_);
    return 0;
  }
  // Only the first calling thread is measured: another's counters say nothing of its interval
  // (MPI_THREAD_SERIALIZED programs calling from several threads).
  if (!pthread_equal(self, mark_thread_)) return 0;
  ++stall_reads_;
  const char* const source = stall_source_;
  const Waited w = waited();
  // A source that changed (schedstat failed) starts over: the two do not compare.
  std::uint64_t stall = 0;
  if (source == stall_source_) {
    stall = w.waited > mark_.waited ? w.waited - mark_.waited : 0;
    stall_ran_ns_ += w.ran > mark_.ran ? w.ran - mark_.ran : 0;
  }
  mark_ = w;
  return stall;
}

std::uint64_t ReplayProfile::stall_cpu_ns() const noexcept {
  // The thread's clock cannot be read once it has exited (clock_ns gives 0): the sum of
  // schedstat's steps then.
  const std::uint64_t now = cpu_clock_ok_ ? clock_ns(cpu_clock_) : 0;
  return now > cpu_at_mark_ ? now - cpu_at_mark_ : stall_ran_ns_;
}

void ReplayProfile::fail(const std::string& what) noexcept {
  failed_ = true;
  running_ = false;
  std::fprintf(stderr, "encore replay: the replay profile stops here: %s\n", what.c_str());
}

void ReplayProfile::close(RankStatus status) noexcept {
  if (closed_) return;
  closed_ = true;
  running_ = false;
  try {
    if (!failed_) {
      flush_batch();
      settle();
      stop_helper();
      writer_->close(status == RankStatus::complete ? 0 : 1);
    }
    stop_helper();
    ns(0);  // calibrates the clock if no batch did
    RankInfo& info = manifest_.ranks.front();
    info.status = failed_ ? RankStatus::aborted : status;
    info.events = writer_->events();
    manifest_.clock.resolution_ns = clock_.resolution_ns();  // calibrated by now
    manifest_.raw["replay"] = {{"compute_ns", ns(now_ticks_)},
                               {"replay_overhead_ns", total_overhead_ns_ + ns(pending_overhead_)}};
    if (payload_read_ns_) manifest_.raw["replay"]["payload_read_ns"] = *payload_read_ns_;
    manifest_.raw["replay"]["stall"] = {
        {"source", stall_source_},    {"segments_ns", total_segment_stall_ns_},
        {"calls_ns", call_stall_ns_}, {"cpu_ns", stall_cpu_ns()},
        {"reads", stall_reads_},      {"cpu_quota", cpu_quota_}};
    save_manifest(manifest_, TraceDir(dir_).manifest_path());
  } catch (const std::exception& e) {
    stop_helper();
    std::fprintf(stderr, "encore replay: cannot finish the replay profile: %s\n", e.what());
  }
}

}  // namespace encore::replay
