#include "replayer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "encore/cpu_budget.hpp"
#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/mpi_table.hpp"
#include "encore/papi_counters.hpp"
#include "encore/trace_dir.hpp"

namespace encore::replay {

Replayer* Replayer::instance_ = nullptr;

namespace {

// Handles the replay gives out for objects the program creates. They must never equal one of
// MPICH's predefined handles, which applications have compiled in.
constexpr std::int64_t kCommBase = 0x84100000;
constexpr std::int64_t kOpBase = 0x98100000;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// A difference in the data: reported once and counted, or (ENCORE_REPLAY_DATA=stop) the end.
std::string data_outcome(const std::string& what, bool stop) {
  return what + (stop ? " (ENCORE_REPLAY_DATA=stop)" : "; the replay goes on");
}
}  // namespace

ReplayOptions ReplayOptions::from_environment() {
  ReplayOptions o;
  std::unordered_map<std::string, std::string> file;
  if (const char* cfg = std::getenv("ENCORE_REPLAY_CONFIG"); cfg && *cfg) {
    std::ifstream in(cfg);
    if (!in) {
      std::fprintf(stderr, "encore replay: cannot read ENCORE_REPLAY_CONFIG=%s\n", cfg);
      std::exit(kReplayErrorExit);
    }
    std::string line;
    while (std::getline(in, line)) {
      const auto eq = line.find('=');
      if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
      file[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  const auto get = [&](const char* key) {
    const auto it = file.find(key);
    return env_or(key, it == file.end() ? "" : it->second);
  };
  o.trace = get("ENCORE_REPLAY_TRACE");
  const std::string rank = get("ENCORE_REPLAY_RANK");
  if (o.trace.empty() || rank.empty()) {
    std::fprintf(stderr,
                 "encore replay: set ENCORE_REPLAY_TRACE and ENCORE_REPLAY_RANK (or "
                 "ENCORE_REPLAY_CONFIG), or run the program with `encore replay`\n");
    std::exit(kReplayErrorExit);
  }
  char* end = nullptr;
  const long r = std::strtol(rank.c_str(), &end, 10);
  if (*end || r < 0) {
    std::fprintf(stderr, "encore replay: ENCORE_REPLAY_RANK=%s is not a rank number\n",
                 rank.c_str());
    std::exit(kReplayErrorExit);
  }
  o.rank = static_cast<std::uint32_t>(r);
  o.wtime_recorded = get("ENCORE_REPLAY_WTIME") == "recorded";
  const std::string data = get("ENCORE_REPLAY_DATA");
  if (data != "" && data != "warn" && data != "stop") {
    std::fprintf(stderr, "encore replay: ENCORE_REPLAY_DATA=%s: give warn or stop\n", data.c_str());
    std::exit(kReplayErrorExit);
  }
  o.stop_on_data = data == "stop";
  o.quiet = get("ENCORE_QUIET") == "1";
  o.profile = get("ENCORE_REPLAY_PROFILE");
  o.papi_events = split_event_list(get("ENCORE_PAPI_EVENTS"));
  // On by default only where a core is left beside the program's: on one core (a CPU
  // simulator, a CPU-quota cgroup) the thread's work would be taken from the compute measured.
  const std::string ahead = get("ENCORE_REPLAY_READ_AHEAD");
  o.read_ahead = ahead == "1" || (ahead != "0" && usable_cpus() >= 2.0);
  o.profile_thread = get("ENCORE_REPLAY_PROFILE_THREAD") == "1";
  const std::string pace = get("ENCORE_REPLAY_PACE");
  if (pace != "" && pace != "none" && pace != "recorded") {
    std::fprintf(stderr, "encore replay: ENCORE_REPLAY_PACE=%s: give recorded or none\n",
                 pace.c_str());
    std::exit(kReplayErrorExit);
  }
  o.pace_recorded = pace == "recorded";
  return o;
}

Replayer& Replayer::start() {
  if (!instance_) {
    instance_ = new Replayer(ReplayOptions::from_environment());
    // A program that exits without MPI_Finalize leaves a profile marked aborted, not a cut one,
    // and is reported.
    std::atexit([] {
      if (!instance_) return;
      if (instance_->profile_) instance_->profile_->close(RankStatus::aborted);
      instance_->report_exit();
    });
  }
  return *instance_;
}

// A program that exits before its trace ends did not do what the recorded run did (or is not
// the recorded program): said on stderr, and to `encore replay` (ENCORE_REPLAY_STATUS: a file
// it reads once the program is gone), which then exits with 86 where the program said 0.
void Replayer::report_exit() {
  std::string line = ended_as_ ? ended_as_ : "";
  std::string what;
  if (!ended_as_) {
    try {
      if (const Event* next = peek())
        what =
            fmt::format("the recorded run went on with {}", function_table()[next->function].name);
      else
        line = "trace-ended";  // the recorded rank ended there too (an exit, a crash)
    } catch (const std::exception& e) {
      what = e.what();
    }
  }
  if (line.empty()) {
    std::fflush(stdout);
    std::fputs(fmt::format("encore replay: the program exited at event {} of rank {}, before its "
                           "trace ended ({})\n",
                           index_, options_.rank, what)
                   .c_str(),
               stderr);
    line = "early";
  }
  if (const char* path = std::getenv("ENCORE_REPLAY_STATUS"); path && *path) {
    if (std::FILE* f = std::fopen(path, "w")) {
      std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  }
}

void Replayer::finish() noexcept {
  finished_ = true;
  ended_as_ = "finalized";
  if (profile_) {
    profile_->note_payload_read(static_cast<std::uint64_t>(payload_->load_time().count()));
    profile_->close(RankStatus::complete);
  }
}

Replayer::Replayer(ReplayOptions options) : options_(std::move(options)) {
  try {
    const TraceDir dir(options_.trace);
    manifest_ = load_manifest(dir.manifest_path());
    if (options_.rank >= manifest_.nprocs) {
      fail("rank " + std::to_string(options_.rank) + " is not in " + options_.trace + " (" +
           std::to_string(manifest_.nprocs) + " ranks)");
    }
    if (!records_payload_of(manifest_, options_.rank))
      fail(fmt::format(
          "{} holds no received data of rank {} (recorded with --payload-ranks {}): "
          "it cannot be replayed",
          options_.trace, options_.rank, manifest_.options.value("payload_ranks", std::string())));
    if (manifest_.function_table.hash != kFunctionTableHash) {
      std::fprintf(stderr,
                   "encore replay: warning: %s was recorded with another MPI function table "
                   "(%s, this library has %s)\n",
                   options_.trace.c_str(), manifest_.function_table.hash.c_str(),
                   std::string(kFunctionTableHash).c_str());
    }
    events_ = std::make_unique<OrderedEventReader>(dir.events_path(options_.rank));
    payload_ = std::make_unique<RankPayloadReader>(dir.payload_path(options_.rank));
    payload_swapped_ = payload_->byte_order() != host_byte_order();
    // The payload's chunks are read and decompressed on the other core while the program
    // computes, instead of in the receive that first needs them.
    if (options_.read_ahead) payload_->read_ahead(0);
    // The first event now, with the rest of the start-up: its chunk (often the whole rank's
    // events) is read before the program's first call, not inside it.
    peek();
    if (!options_.profile.empty())
      profile_ = std::make_unique<ReplayProfile>(options_.profile, options_.trace, manifest_,
                                                 options_.rank, options_.papi_events,
                                                 options_.profile_thread);
  } catch (const Error& e) {
    fail(e.what());
  }
  // Predefined objects keep the ids libdump gives them: 2 + their place in the table.
  const HandleKind kinds[3] = {HandleKind::comm, HandleKind::datatype, HandleKind::op};
  for (int k = 0; k < 3; ++k) {
    const auto predefined = predefined_handles(kinds[k]);
    for (std::size_t i = 0; i < predefined.size(); ++i)
      fixed_ids_[k][predefined[i].value] =
          event_format::kFirstPredefinedId + static_cast<std::uint32_t>(i);
  }
  const int n = static_cast<int>(manifest_.nprocs);
  CommState world;
  world.id = comm_id(MPI_COMM_WORLD);
  world.size = n;
  world.rank = static_cast<int>(options_.rank);
  for (int r = 0; r < n; ++r) world.members.push_back(r);
  comms_[MPI_COMM_WORLD] = world;
  comm_by_id_[world.id] = MPI_COMM_WORLD;
  CommState self;
  self.id = comm_id(MPI_COMM_SELF);
  self.size = 1;
  self.members = {static_cast<std::int64_t>(options_.rank)};
  comms_[MPI_COMM_SELF] = self;
  comm_by_id_[self.id] = MPI_COMM_SELF;
  comm_memo_.valid = false;
}

std::string Replayer::end_problem() const { return events_->problem(); }

void Replayer::read_payload(std::uint64_t offset, std::uint64_t n,
                            const RankPayloadReader::Sink& sink) {
  try {
    payload_->read(current_.thread, offset, n, sink);
  } catch (const Error& e) {
    fail(std::string("received data missing from the trace: ") + e.what());
  }
}

bool Replayer::view_payload_slow(std::uint64_t offset, std::uint64_t n,
                                 std::span<const std::byte>& out) {
  try {
    return payload_->view(current_.thread, offset, n, out);
  } catch (const Error& e) {
    fail(std::string("received data missing from the trace: ") + e.what());
  }
}

MPI_Comm Replayer::comm_handle(std::uint32_t id) const {
  const auto it = comm_by_id_.find(id);
  return it == comm_by_id_.end() ? MPI_COMM_NULL : it->second;
}

std::uint32_t Replayer::comm_id_slow(MPI_Comm c) const {
  std::uint32_t id = event_format::kUnknownId;
  if (c == MPI_COMM_NULL)
    id = event_format::kNullId;
  else if (const auto it = comms_.find(c); it != comms_.end())
    id = it->second.id;
  else if (const auto f = fixed_ids_[0].find(c); f != fixed_ids_[0].end())
    id = f->second;
  comm_memo_ = {true, c, id};
  return id;
}

CommState* Replayer::comm(MPI_Comm c) {
  const auto it = comms_.find(c);
  return it == comms_.end() ? nullptr : &it->second;
}

MPI_Comm Replayer::new_comm(const CommState& state) {
  const auto handle = static_cast<MPI_Comm>(kCommBase + next_handle_++);
  comm_memo_.valid = false;
  comms_[handle] = state;
  comm_by_id_[state.id] = handle;
  return handle;
}

void Replayer::free_comm(MPI_Comm c) {
  if (const auto it = comms_.find(c); it != comms_.end()) {
    comm_memo_.valid = false;
    comm_by_id_.erase(it->second.id);
    comms_.erase(it);
  }
}

std::uint32_t Replayer::datatype_id_slow(MPI_Datatype t) const {
  std::uint32_t id = event_format::kUnknownId;
  if (t == MPI_DATATYPE_NULL)
    id = event_format::kNullId;
  else if (const auto it = datatype_ids_.find(t); it != datatype_ids_.end())
    id = it->second;
  else if (const auto f = fixed_ids_[1].find(t); f != fixed_ids_[1].end())
    id = f->second;
  type_memo_.handle[type_memo_.next] = t;
  type_memo_.id[type_memo_.next] = id;
  type_memo_.next ^= 1;
  return id;
}

void Replayer::bind_datatype(std::uint32_t id, MPI_Datatype t) {
  type_memo_.forget();
  datatype_ids_[t] = id;
}

void Replayer::unbind_datatype(MPI_Datatype t) {
  type_memo_.forget();
  datatype_ids_.erase(t);
}

std::uint32_t Replayer::op_id_slow(MPI_Op o) const {
  std::uint32_t id = event_format::kUnknownId;
  if (o == MPI_OP_NULL)
    id = event_format::kNullId;
  else if (const auto it = op_ids_.find(o); it != op_ids_.end())
    id = it->second;
  else if (const auto f = fixed_ids_[2].find(o); f != fixed_ids_[2].end())
    id = f->second;
  op_memo_ = {true, o, id};
  return id;
}

MPI_Op Replayer::new_op(std::uint32_t id) {
  const auto handle = static_cast<MPI_Op>(kOpBase + next_handle_++);
  op_memo_.valid = false;
  op_ids_[handle] = id;
  return handle;
}

std::int64_t Replayer::new_handle(std::uint32_t kind_base) {
  return static_cast<std::int64_t>(kind_base) + next_handle_++;
}

MPI_Request Replayer::new_request(std::uint64_t event) {
  std::size_t slot;
  if (!free_request_slots_.empty()) {
    slot = free_request_slots_.back();
    free_request_slots_.pop_back();
  } else {
    slot = request_slots_.size();
    request_slots_.emplace_back();
  }
  RequestState& st = request_slots_[slot];
  st.live = true;
  st.event = event;
  st.kind = RequestKind::other;
  st.persistent = false;
  st.layout.clear();  // its storage stays for the next receive
  st.send_buf = nullptr;
  st.send_count = 0;
  st.send_type = MPI_DATATYPE_NULL;
  st.contribution = {};
  return static_cast<MPI_Request>(kRequestBase + static_cast<std::int64_t>(slot));
}

void Replayer::drop_request(MPI_Request r) {
  if (RequestState* st = request(r)) {
    st->live = false;
    free_request_slots_.push_back(static_cast<std::uint32_t>(st - request_slots_.data()));
  }
}

void Replayer::fail(const std::string& message) {
  ended_as_ = "failed";
  if (profile_) profile_->close(RankStatus::aborted);  // readable up to the last good call
  std::fflush(stdout);
  std::fprintf(stderr, "encore replay: %s\n", message.c_str());
  std::exit(kReplayErrorExit);
}

void Replayer::warn_send_mismatch(const std::string& what) {
  if (options_.stop_on_data) fail(data_outcome(what, true));
  if (send_mismatches_++ == 0)
    std::fprintf(stderr, "encore replay: %s\n", data_outcome(what, false).c_str());
}

void Replayer::warn_contribution_mismatch(const std::string& what) {
  if (options_.stop_on_data) fail(data_outcome(what, true));
  if (contribution_mismatches_++ == 0)
    std::fprintf(stderr, "encore replay: %s\n", data_outcome(what, false).c_str());
}

}  // namespace encore::replay
