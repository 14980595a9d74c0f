// The state of a replay: one rank of a recorded run, executed alone. It walks the rank's events
// in order (each MPI call the program makes must be the next recorded one), hands out handles
// for the objects the recorded run created, and feeds received data from the payload stream.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "local_reduction.hpp"
#include "replay_profile.hpp"
#include "replay_types.hpp"
#include <mpi.h>

#include "encore/collective_contribution.hpp"
#include "encore/event.hpp"
#include "encore/manifest.hpp"
#include "encore/ordered_event_reader.hpp"
#include "encore/payload_reader.hpp"

namespace encore::replay {

// Exit code of a replay that cannot go on (divergence, unsupported call, trace cut short).
inline constexpr int kReplayErrorExit = 86;

struct ReplayOptions {
  std::string trace;            // ENCORE_REPLAY_TRACE
  std::uint32_t rank = 0;       // ENCORE_REPLAY_RANK
  bool wtime_recorded = false;  // ENCORE_REPLAY_WTIME=recorded
  // ENCORE_REPLAY_DATA=stop: data sent or contributed that differs from the recorded run's
  // stops the replay (exit 86) instead of being reported once and counted.
  bool stop_on_data = false;
  bool quiet = false;   // ENCORE_QUIET=1
  std::string profile;  // ENCORE_REPLAY_PROFILE: directory of the replay profile, if any
  std::vector<std::string> papi_events;  // ENCORE_PAPI_EVENTS: counted into the profile
  bool read_ahead = true;  // ENCORE_REPLAY_READ_AHEAD=0: payload chunks loaded by the calls
  // ENCORE_REPLAY_PROFILE_THREAD=1: the profile's batches written on a thread of its own
  // (off by default: on a machine busy with other work, the thread woken for a batch took
  // the program's core inside its call)
  bool profile_thread = false;
  // ENCORE_REPLAY_PACE=recorded: every call lasts at least as long as the recorded one (the
  // replay spins out the rest), so the replay computes and waits as the rank did in the real
  // run: the load `encore replay --neighbours` puts beside a measured rank.
  bool pace_recorded = false;
  // ENCORE_REPLAY_CONFIG names a file of KEY=VALUE lines with the same keys.
  static ReplayOptions from_environment();
};

enum class Topology : std::uint8_t { none, cart, graph, dist_graph };

struct CommState {
  std::uint32_t id = 0;
  int size = 0;
  int rank = 0;
  bool inter = false;
  int remote_size = 0;
  std::vector<std::int64_t> members;  // world ranks
  // Process topology, from the recorded constructor calls (replay_topology.hpp): what the
  // neighbourhood collectives' receive layouts need. -1: no topology or degree not known.
  Topology topology = Topology::none;
  int indegree = -1;
  int outdegree = -1;
  int cart_ndims = -1;
};

enum class RequestKind : std::uint8_t { send, recv, collective, other };

struct RequestState {
  bool live = false;        // the slot holds a request the program has not released
  std::uint64_t event = 0;  // index of the creating event
  RequestKind kind = RequestKind::other;
  bool persistent = false;
  RecvBlocks layout;
  const void* send_buf = nullptr;
  MPI_Count send_count = 0;
  MPI_Datatype send_type = MPI_DATATYPE_NULL;
  int send_peer = MPI_PROC_NULL;
  contribution::Blocks contribution;  // persistent collectives: checked at every MPI_Start
};

class Replayer {
 public:
  // Opens the trace at MPI_Init; reports a clear error and exits if it cannot.
  static Replayer& start();
  static Replayer* get() noexcept { return instance_; }

  const ReplayOptions& options() const noexcept { return options_; }
  const Manifest& manifest() const noexcept { return manifest_; }
  Types& types() noexcept { return types_; }

  // The next recorded event (the one the program's current call must match), or nullptr at
  // the end of what the trace holds.
  const Event* peek() {
    if (have_current_) return &current_;
    if (finished_ || !events_->next(current_)) [[unlikely]]
      return nullptr;
    have_current_ = true;
    return &current_;
  }
  void advance() noexcept {  // the current event has been replayed
    have_current_ = false;
    ++index_;
  }
  std::uint64_t index() const noexcept { return index_; }
  bool finished() const noexcept { return finished_; }
  // No call can be replayed now: after MPI_Finalize, or inside an attribute callback.
  bool blocked() const noexcept { return finished_ || in_callback_; }
  bool in_callback() const noexcept { return in_callback_; }
  void set_in_callback(bool on) noexcept { in_callback_ = on; }
  // After MPI_Finalize: no more calls are replayed; the profile is closed as complete.
  void finish() noexcept;
  // The recorded run had MPI_THREAD_MULTIPLE (MPI_Init_thread's provided level).
  void set_thread_multiple() noexcept { thread_multiple_ = true; }
  bool thread_multiple() const noexcept { return thread_multiple_; }
  std::mutex& calls_mutex() noexcept { return calls_mutex_; }
  // The program called MPI_Abort where the trace has it: the run ends there, as recorded.
  void note_abort() noexcept { ended_as_ = "aborted"; }
  // The profile being written, or nullptr.
  ReplayProfile* profile() noexcept { return profile_.get(); }
  bool paced() const noexcept { return options_.pace_recorded; }
  // The current event, for the profile to take over once the call is done.
  Event& current() noexcept { return current_; }
  // Its encoded bytes in the trace, while the reader still holds them (else empty).
  std::span<const std::byte> current_body() const noexcept { return events_->last_body(); }
  std::size_t current_extras_at() const noexcept { return events_->last_extras_at(); }
  // Why the trace ended where it did (empty if it holds the whole run).
  std::string end_problem() const;

  // Byte order the payload stream holds (the capture may have converted it).
  ByteOrder payload_byte_order() const { return payload_->byte_order(); }
  bool payload_swapped() const noexcept { return payload_swapped_; }
  // Received bytes of the current thread's payload stream.
  void read_payload(std::uint64_t offset, std::uint64_t n, const RankPayloadReader::Sink& sink);
  // The same without a copy when they lie in one chunk (RankPayloadReader::view).
  bool view_payload(std::uint64_t offset, std::uint64_t n, std::span<const std::byte>& out) {
    return payload_->view_hot(current_.thread, offset, n, out) || view_payload_slow(offset, n, out);
  }
  // Only the inline part of view_payload (RankPayloadReader::view_hot): a replayed receive.
  bool view_payload_hot(std::uint64_t offset, std::uint64_t n, std::span<const std::byte>& out) {
    return payload_->view_hot(current_.thread, offset, n, out);
  }
  // Room for packed or gathered bytes, kept from call to call (calls never nest).
  std::vector<std::byte>& scratch() noexcept { return scratch_; }

  // Objects: handles given to the program <-> stable ids in the trace.
  MPI_Comm comm_handle(std::uint32_t id) const;
  // Ids of the program's handles: the last answer per kind is kept, as calls mostly reuse
  // one communicator and datatype.
  std::uint32_t comm_id(MPI_Comm c) const {
    return comm_memo_.valid && comm_memo_.handle == c ? comm_memo_.id : comm_id_slow(c);
  }
  CommState* comm(MPI_Comm c);
  MPI_Comm new_comm(const CommState& state);
  void free_comm(MPI_Comm c);
  std::uint32_t datatype_id(MPI_Datatype t) const {
    // Two entries: halo exchanges alternate a row and a column type call after call.
    if (type_memo_.handle[0] == t) return type_memo_.id[0];
    if (type_memo_.handle[1] == t) return type_memo_.id[1];
    return datatype_id_slow(t);
  }
  void bind_datatype(std::uint32_t id, MPI_Datatype t);
  void unbind_datatype(MPI_Datatype t);
  std::uint32_t op_id(MPI_Op o) const {
    return op_memo_.valid && op_memo_.handle == o ? op_memo_.id : op_id_slow(o);
  }
  MPI_Op new_op(std::uint32_t id);
  // A user's operations (MPI_Op_create), which MPI_Reduce_local calls.
  void set_user_op(MPI_Op o, UserOp f) { user_ops_[static_cast<std::int64_t>(o)] = f; }
  const UserOp* user_op(MPI_Op o) const {
    const auto it = user_ops_.find(static_cast<std::int64_t>(o));
    return it == user_ops_.end() ? nullptr : &it->second;
  }
  void forget_user_op(MPI_Op o) { user_ops_.erase(static_cast<std::int64_t>(o)); }
  // The buffer of MPI_Buffer_attach, which MPI_Buffer_detach hands back.
  void*& attached_buffer() noexcept { return attached_buffer_; }
  std::int64_t new_handle(std::uint32_t kind_base);

  // Requests live in slots reused through a free list and their handles name the slot, so a
  // lookup is an index and a replayed Isend or Irecv allocates nothing once slots exist.
  MPI_Request new_request(std::uint64_t event);
  RequestState* request(MPI_Request r) noexcept {
    const auto slot = static_cast<std::uint64_t>(static_cast<std::int64_t>(r) - kRequestBase);
    return slot < request_slots_.size() && request_slots_[slot].live ? &request_slots_[slot]
                                                                     : nullptr;
  }
  void drop_request(MPI_Request r);

  [[noreturn]] void fail(const std::string& message);
  // Data sent or contributed that differs from the recorded run (`what`: which event and
  // call): the first reported, all counted, the replay going on; or with
  // ENCORE_REPLAY_DATA=stop, fail() there.
  void warn_send_mismatch(const std::string& what);
  std::uint64_t send_mismatches() const noexcept { return send_mismatches_; }
  void warn_contribution_mismatch(const std::string& what);
  std::uint64_t contribution_mismatches() const noexcept { return contribution_mismatches_; }

 private:
  explicit Replayer(ReplayOptions options);

  struct IdMemo {
    bool valid = false;
    std::int64_t handle = 0;
    std::uint32_t id = 0;
  };
  struct IdMemo2 {
    static constexpr std::int64_t kNone = INT64_MIN;  // no MPI_Datatype (an int) has it
    std::int64_t handle[2] = {kNone, kNone};
    std::uint32_t id[2] = {0, 0};
    std::uint8_t next = 0;  // the entry the next miss replaces
    void forget() noexcept { handle[0] = handle[1] = kNone; }
  };
  bool view_payload_slow(std::uint64_t offset, std::uint64_t n, std::span<const std::byte>& out);
  std::uint32_t comm_id_slow(MPI_Comm c) const;
  std::uint32_t datatype_id_slow(MPI_Datatype t) const;
  std::uint32_t op_id_slow(MPI_Op o) const;

  static Replayer* instance_;
  // Forgotten whenever a handle is bound or freed.
  mutable IdMemo comm_memo_, op_memo_;
  mutable IdMemo2 type_memo_;
  ReplayOptions options_;
  Manifest manifest_;
  Types types_;
  std::unique_ptr<OrderedEventReader> events_;  // in call order across threads
  std::unique_ptr<RankPayloadReader> payload_;
  std::unique_ptr<ReplayProfile> profile_;
  Event current_;
  std::vector<std::byte> scratch_;
  bool have_current_ = false;
  bool finished_ = false;
  // How the replay ended, for the exit report (report_exit): null while the program runs.
  const char* ended_as_ = nullptr;
  bool thread_multiple_ = false;
  std::mutex calls_mutex_;
  void report_exit();
  bool in_callback_ = false;
  bool payload_swapped_ = false;  // payloads in the other byte order than this host's
  std::uint64_t index_ = 0;
  std::uint64_t send_mismatches_ = 0;
  std::uint64_t contribution_mismatches_ = 0;

  std::unordered_map<MPI_Comm, CommState> comms_;
  std::unordered_map<std::uint32_t, MPI_Comm> comm_by_id_;
  std::unordered_map<std::int64_t, std::uint32_t> datatype_ids_;
  std::unordered_map<std::int64_t, std::uint32_t> op_ids_;
  std::unordered_map<std::int64_t, UserOp> user_ops_;
  void* attached_buffer_ = nullptr;
  std::unordered_map<std::int64_t, std::uint32_t> fixed_ids_[3];  // predefined comm, type, op
  // Handles of requests: this base plus the slot (never one of MPICH's predefined handles).
  static constexpr std::int64_t kRequestBase = 0x2c100000;
  std::vector<RequestState> request_slots_;
  std::vector<std::uint32_t> free_request_slots_;
  std::int64_t next_handle_ = 1;
};

}  // namespace encore::replay
