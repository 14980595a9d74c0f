#include "recorder.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "clock_sync.hpp"
#include "compress_policy.hpp"
#include "crash_guard.hpp"

#include "encore/error.hpp"
#include "encore/manifest.hpp"
#include "encore/trace_dir.hpp"

namespace encore::dump {

std::atomic<Recorder*> Recorder::instance_{nullptr};
constinit thread_local ThreadStream* tls_stream __attribute__((tls_model("initial-exec"))) =
    nullptr;

const ClockDecision& capture_clock_decision() {
  static const ClockDecision decision = choose_clock_from_environment();
  return decision;
}

Clock& capture_clock() noexcept {
  static Clock clock(capture_clock_decision().source);
  return clock;
}

namespace {

// Start the clock when the library is loaded, so calibration spans MPI_Init.
[[maybe_unused]] const bool clock_started = (capture_clock(), true);

// What every rank tells rank 0 for the manifest.
struct RankReport {
  char host[MPI_MAX_PROCESSOR_NAME];
  std::int64_t pid;
  ClockOffset clock;
  std::uint8_t byte_order;
  std::uint8_t sizes[6];
};

std::string library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  PMPI_Get_library_version(version, &len);
  std::string v(version, static_cast<std::size_t>(len));
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

Manifest initial_manifest(const Recorder& rec, const std::vector<RankReport>& reports) {
  Manifest m;
  m.kind = TraceKind::capture;
  m.tool_version = ENCORE_VERSION;
  m.nprocs = static_cast<std::uint32_t>(rec.nprocs);
  m.command = process_command_line();
  m.start_time_unix_ns = unix_time_ns();
  m.start_time_iso = iso_utc(m.start_time_unix_ns);
  m.mpi_library_version = library_version();
  m.function_table.hash = std::string(kFunctionTableHash);
  for (const auto& f : function_table()) m.function_table.functions.emplace_back(f.name);
  const Options& o = rec.options;
  m.options = {
      {"payload_ranks", o.payload_ranks},
      {"callsites", o.callsites},
      {"callsite_depth", o.callsite_depth},
      {"payload_byte_order", std::string(o.payload_order == PayloadOrder::native ? "native"
                                         : o.payload_order == PayloadOrder::big  ? "big"
                                                                                 : "little")},
      {"zstd_level", o.event_level},
      {"compress", std::string(rec.compress_after ? "after" : "during")},
      {"memory_budget_bytes", o.memory_budget},
      {"flush_interval_ms", o.flush_interval_ns / 1'000'000},
      {"send_hashes", o.send_hashes},
      {"clock_sync", std::string(o.shared_clock ? "auto" : "round-trips")}};
  m.papi.requested = o.papi_events;
  m.papi.available = rec.counters_on;
  m.papi.reason = rec.counter_setup.reason;
  m.papi.cpu_model = rec.counter_setup.cpu_model;
  m.papi.cpu_mhz = rec.counter_setup.cpu_mhz;
  m.clock.source = std::string(to_string(rec.clock.source()));
  m.clock.resolution_ns = rec.clock.resolution_ns();
  m.clock.why = capture_clock_decision().why;
  for (int r = 0; r < rec.nprocs; ++r) {
    const RankReport& rep = reports[static_cast<std::size_t>(r)];
    RankInfo info;
    info.rank = static_cast<std::uint32_t>(r);
    info.host = rep.host;
    info.pid = rep.pid;
    info.byte_order = static_cast<ByteOrder>(rep.byte_order);
    info.sizes = {rep.sizes[0], rep.sizes[1], rep.sizes[2],
                  rep.sizes[3], rep.sizes[4], rep.sizes[5]};
    info.clock_offset_ns = rep.clock.offset_ns;
    info.sync_init = to_manifest(rep.clock);
    m.ranks.push_back(info);
  }
  return m;
}

// Rank 0 keeps the manifest between init and finalize.
Manifest& rank0_manifest() {
  static Manifest m;
  return m;
}

}  // namespace

Recorder::Recorder(const Options& o, Clock clk) : options(o), clock(clk), pool(o.memory_budget) {}

HandleIds& Recorder::ids(HandleKind kind) {
  auto& slot = other_ids[static_cast<int>(kind)];
  if (!slot) slot = std::make_unique<HandleIds>(kind);
  return *slot;
}

CommInfo& Recorder::comm(MPI_Comm c) {
  auto [it, fresh] = comms.try_emplace(c);
  CommInfo& info = it->second;
  if (fresh && c != MPI_COMM_NULL) {
    PMPI_Comm_size(c, &info.size);
    PMPI_Comm_rank(c, &info.rank);
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    info.inter = inter != 0;
    if (info.inter) PMPI_Comm_remote_size(c, &info.remote_size);
  }
  return info;
}

ThreadStream* Recorder::register_thread() {
  std::lock_guard lock(threads_mu_);
  if (!writer || threads_.size() >= 0xffff) return nullptr;
  auto stream = std::make_unique<ThreadStream>(static_cast<std::uint16_t>(threads_.size()), pool);
  // Every thread's first gap counts from the clock's zero (the library's load): its first
  // chunk's base is 0, and a reader adds the gaps to it. (Counting a later thread's from its
  // start put all its times off by that start once it had a second chunk.)
  ThreadStream* s = stream.get();
  if (counters_on && !s->counters.start(options.papi_events)) {
    std::fprintf(stderr,
                 "encore: rank %d: PAPI refused an event set for a new thread; its "
                 "counters read as 0\n",
                 rank);
  }
  // The lean poll path reads the TSC itself, and records no per-call extras.
  s->lean_allowed = options.lean && clock.source() == ClockSource::tsc && !call_extras;
  s->plain = clock.source() == ClockSource::tsc && !counters_on && !multiple;
  // The light calls' lean path (LightCall) reads the TSC and takes no lock.
  s->light_allowed = s->lean_allowed && s->plain;
  s->clock = &clock;
  s->read_cost_ticks = clock.read_cost_ticks();
  s->set_extras_every_call(call_extras);
  threads_.push_back(std::move(stream));
  // A sealed segment is drained at once, and where the writer shares this thread's core (ranks
  // bound to cores, or as many as the cores) the thread lets it run now, while it is in the
  // tool, so the drain lands in the overhead the correction takes out rather than in the
  // compute after the call (ring 100 200000, recorded compute with payloads over without:
  // 1.00x instead of 1.06x; design.md). With a core of its own the writer is not waiting here
  // and the yield returns at once: one system call per 4 MiB of payload or ~13,000 events.
  s->on_seal = [w = writer.get()] {
    w->notify();
    sched_yield();
  };
  // Half a payload segment filled: the writer prepares the next one now, so the roll takes a
  // segment whose pages are in (no allocation, no populating in the call that rolls).
  s->on_half = [w = writer.get()] { w->notify(); };
  TraceWriter::StreamState& state = writer->add_stream(s);
  s->on_wait = [w = writer.get(), st = &state, s] { w->help(*st, s->current_events()); };
  tls_stream = s;
  return s;
}

std::uint64_t Recorder::total_overhead_ns() {
  return writer->overhead_ns();  // after flush_now(): every event so far
}

void Recorder::start(int thread_level) {
  Options opts = Options::from_environment();
  if (opts.disabled || instance_.load()) return;
  Clock& clk = capture_clock();
  clk.calibrate();
  auto* rec = new Recorder(opts, clk);  // lives until the process ends: signal handlers use it
  PMPI_Comm_rank(MPI_COMM_WORLD, &rec->rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &rec->nprocs);
  rec->payload_on = opts.records_payload_of(rec->rank);
  rec->pool.set_populate(StreamKind::payload, rec->payload_on);
  rec->convert_payload = opts.payload_byte_order() != host_byte_order();
  rec->copy_payload = rec->payload_on && !rec->convert_payload;
  rec->counter_setup = setup_counters(opts.papi_events);
  rec->counters_on = rec->counter_setup.available;
  if (!opts.papi_events.empty() && !rec->counters_on && rec->rank == 0) {
    std::fprintf(stderr, "encore: PAPI counters unavailable, recording without them: %s\n",
                 rec->counter_setup.reason.c_str());
  }
  if (opts.callsites) rec->callsites = std::make_unique<CallSites>(opts.callsite_depth);
  rec->call_extras = rec->counters_on || rec->callsites;
  rec->multiple = thread_level == MPI_THREAD_MULTIPLE;
  const TraceDir dir(opts.trace_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir.root(), ec);
  PMPI_Barrier(MPI_COMM_WORLD);
  rec->compress_after = compress_after_run(opts.compress, MPI_COMM_WORLD);
  int ok = 1;
  try {
    rec->writer = std::make_unique<TraceWriter>(
        dir.events_path(static_cast<std::uint32_t>(rec->rank)),
        dir.payload_path(static_cast<std::uint32_t>(rec->rank)),
        static_cast<std::uint32_t>(rec->rank), opts.payload_byte_order(), opts.event_level,
        opts.payload_level, rec->compress_after, opts.flush_interval_ns, rec->pool, rec->clock);
  } catch (const Error& e) {
    std::fprintf(stderr, "encore: rank %d cannot write its trace: %s\n", rec->rank, e.what());
    ok = 0;
  }
  // The tool's own collectives (here and at MPI_Finalize) need every rank: all record or none.
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    if (rec->rank == 0)
      std::fprintf(stderr, "encore: not recording this run: a rank cannot write its trace\n");
    return;
  }

  RankReport mine{};
  int len = 0;
  PMPI_Get_processor_name(mine.host, &len);
  mine.pid = getpid();
  mine.byte_order = static_cast<std::uint8_t>(host_byte_order());
  const std::uint8_t sizes[6] = {sizeof(int),      sizeof(long),       sizeof(void*),
                                 sizeof(MPI_Aint), sizeof(MPI_Offset), sizeof(MPI_Count)};
  std::copy(std::begin(sizes), std::end(sizes), mine.sizes);
  PMPI_Comm_dup(MPI_COMM_WORLD, &rec->tool_comm);  // the tool's own messages (clock_sync.hpp)
  mine.clock =
      estimate_clock_offset(rec->clock, rec->tool_comm, rec->rank, rec->nprocs, opts.shared_clock);
  std::vector<RankReport> reports(static_cast<std::size_t>(rec->rank == 0 ? rec->nprocs : 0));
  PMPI_Gather(&mine, sizeof mine, MPI_BYTE, reports.data(), sizeof mine, MPI_BYTE, 0,
              MPI_COMM_WORLD);
  if (rec->rank == 0) {
    rank0_manifest() = initial_manifest(*rec, reports);
    try {
      save_manifest(rank0_manifest(), dir.manifest_path());
    } catch (const Error& e) {
      std::fprintf(stderr, "encore: cannot write the manifest: %s\n", e.what());
    }
  }
  rec->register_thread();
  rec->writer->start();
  instance_.store(rec, std::memory_order_release);
  install_crash_guard();
  install_fatal_error_handler();
}

// Called from MPI_Finalize before PMPI_Finalize: the last collective work of the tool.
FinalizeReport Recorder::before_finalize() {
  FinalizeReport report;
  const ClockOffset offset =
      estimate_clock_offset(clock, tool_comm, rank, nprocs, options.shared_clock);
  writer->flush_now();
  struct Totals {
    ClockOffset offset;
    std::uint64_t events, payload, overhead, raw, stored, failed;
  } mine{offset, 0, 0, total_overhead_ns(), 0, 0, writer->failure().empty() ? 0u : 1u};
  {
    std::lock_guard lock(threads_mu_);
    for (const auto& t : threads_) {
      mine.events += t->events_total();
      mine.payload += t->payload_bytes();
    }
    ++mine.events;  // the MPI_Finalize event itself, committed after this report
  }
  const WriterStats ws = writer->stats();
  mine.raw = ws.raw_bytes;
  mine.stored = ws.stored_bytes;
  std::vector<Totals> all(static_cast<std::size_t>(rank == 0 ? nprocs : 0));
  PMPI_Gather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rank != 0) return report;
  Manifest& m = rank0_manifest();
  for (int r = 0; r < nprocs; ++r) {
    const Totals& t = all[static_cast<std::size_t>(r)];
    RankInfo& info = m.ranks[static_cast<std::size_t>(r)];
    info.status = RankStatus::complete;
    info.events = t.events;
    info.payload_bytes = t.payload;
    info.sync_end = to_manifest(t.offset);
    info.raw["overhead_ns"] = t.overhead;
    report.events += t.events;
    report.payload += t.payload;
    report.overhead_ns += t.overhead;
    report.raw += t.raw;
    report.stored += t.stored;
    report.failed_ranks += static_cast<int>(t.failed);
    if (t.failed) info.status = RankStatus::aborted;
  }
  return report;
}

void Recorder::after_finalize(const FinalizeReport& report) {
  instance_.store(nullptr, std::memory_order_release);
  writer->finish(EndStatus::complete);
  write_callsites();
  if (rank != 0) return;
  const TraceDir dir(options.trace_dir);
  try {
    save_manifest(rank0_manifest(), dir.manifest_path());
  } catch (const Error& e) {
    std::fprintf(stderr, "encore: cannot write the manifest: %s\n", e.what());
  }
  if (report.failed_ranks) {
    std::fprintf(stderr,
                 "encore: the trace of %d rank(s) is cut short (see the lines above); "
                 "`encore check %s` shows where\n",
                 report.failed_ranks, options.trace_dir.c_str());
  }
  if (!options.quiet) {
    // With compression after the run the ranks' totals were gathered before it: rank 0's own
    // files stand for them.
    const WriterStats own = writer->stats();
    const double raw = static_cast<double>(compress_after ? own.raw_bytes : report.raw);
    const double stored = static_cast<double>(compress_after ? own.stored_bytes : report.stored);
    std::fprintf(stderr,
                 "encore: %d ranks, %llu events, %.1f MiB received payload, compression %.1f:1%s, "
                 "corrected overhead %.3f ms -> %s\n",
                 nprocs, static_cast<unsigned long long>(report.events),
                 static_cast<double>(report.payload) / (1 << 20), stored > 0 ? raw / stored : 0.0,
                 compress_after ? " (after the run; rank 0)" : "",
                 static_cast<double>(report.overhead_ns) / 1e6, options.trace_dir.c_str());
  }
}

void Recorder::finish(EndStatus status) {
  if (instance_.exchange(nullptr) == nullptr && status != EndStatus::complete) return;
  writer->finish(status);
  write_callsites();
}

void Recorder::write_callsites() {
  if (!callsites) return;
  char name[48];
  std::snprintf(name, sizeof name, "rank-%05d.callsites.json", rank);
  callsites->write(std::filesystem::path(options.trace_dir) / name);
}

}  // namespace encore::dump
