// The state of one rank's capture, from MPI_Init to MPI_Finalize: options, clock, the writer,
// the application threads' streams, and the stable ids of MPI objects.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "callsites.hpp"
#include "counters.hpp"
#include "datatypes.hpp"
#include "handle_ids.hpp"
#include "options.hpp"
#include "recv_layout.hpp"
#include "request_table.hpp"
#include "segment_pool.hpp"
#include "thread_stream.hpp"
#include "trace_writer.hpp"
#include <mpi.h>

#include "encore/clock.hpp"
#include "encore/clock_choice.hpp"

namespace encore::dump {

struct CommInfo {
  int size = 0;
  int rank = 0;
  int remote_size = 0;
  bool inter = false;
  int indegree = -1;  // neighborhood degrees, looked up on first use
  int outdegree = -1;
  int cart_ndims = -1;
};

// Totals rank 0 collects at MPI_Finalize for the manifest and the summary line.
struct FinalizeReport {
  std::uint64_t events = 0;
  std::uint64_t payload = 0;
  std::uint64_t overhead_ns = 0;
  std::uint64_t raw = 0;
  std::uint64_t stored = 0;
  int failed_ranks = 0;  // ranks whose trace could not be written completely
};

class Recorder {
 public:
  // Sets up capture once PMPI_Init has returned. Does nothing when disabled.
  static void start(int thread_level);
  static Recorder* get() noexcept { return instance_.load(std::memory_order_acquire); }

  Options options;
  int rank = 0;
  int nprocs = 1;
  MPI_Comm tool_comm = MPI_COMM_NULL;  // MPI_COMM_WORLD's duplicate for the tool's own messages
  bool payload_on = true;
  bool convert_payload = false;  // payloads are written in the other byte order than the host's
  bool copy_payload = false;    // payload_on and not convert_payload: received bytes go as they are
  bool compress_after = false;  // chunks written raw, packed at MPI_Finalize (CompressWhen)
  bool multiple = false;        // MPI_THREAD_MULTIPLE: calls from several threads at once
  Clock clock;
  CounterSetup counter_setup;
  bool counters_on = false;              // PAPI events requested and countable
  std::unique_ptr<CallSites> callsites;  // when call sites are recorded
  bool call_extras = false;              // counters_on or callsites: every event has extras
  SegmentPool pool;
  std::unique_ptr<TraceWriter> writer;

  HandleIds comm_ids{HandleKind::comm};
  HandleIds group_ids{HandleKind::group};
  HandleIds op_ids{HandleKind::op};
  Datatypes types;
  std::unique_ptr<HandleIds> other_ids[static_cast<int>(HandleKind::request) + 1];
  std::unordered_map<MPI_Comm, CommInfo> comms;
  RequestTable requests;
  // A persistent collective with a contribution was set up: MPI_Start(all) looks its requests
  // up before the call (Call::start_contributions). Until then a start costs nothing more.
  bool persistent_contributions = false;
  std::mutex shared_mu;  // guards the tables above under MPI_THREAD_MULTIPLE

  ThreadStream* register_thread();
  CommInfo& comm(MPI_Comm c);
  HandleIds& ids(HandleKind kind);

  // MPI_Finalize: the tool's last collective work (before PMPI_Finalize), then closing.
  FinalizeReport before_finalize();
  void after_finalize(const FinalizeReport& report);
  // Abort, exit without MPI_Finalize: drain and close with that status.
  void finish(EndStatus status);
  std::uint64_t total_overhead_ns();
  void write_callsites();

  Recorder(const Options& o, Clock clk);

 private:
  static std::atomic<Recorder*> instance_;
  std::mutex threads_mu_;
  std::vector<std::unique_ptr<ThreadStream>> threads_;
};

// The calling thread's stream (nullptr before it first records). constinit and initial-exec:
// a plain TLS load, no wrapper call and no __tls_get_addr on the hot path.
extern constinit thread_local ThreadStream* tls_stream __attribute__((tls_model("initial-exec")));

// The clock started when the library was loaded, calibrated in MPI_Init.
Clock& capture_clock() noexcept;
// How it was chosen (ENCORE_CLOCK, clock_choice.hpp), once, when the library is loaded.
const ClockDecision& capture_clock_decision();

}  // namespace encore::dump
