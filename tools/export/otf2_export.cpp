// encore export --to otf2: an OTF2 3.0 archive (OUT/traces.otf2) through libotf2's serial
// writer. One location per recorded thread, a region per MPI function and one for compute,
// message and collective events, communicators with their members, PAPI counters as metrics.
// Events are written as the ranks are read, and OTF2 flushes its 1 MiB buffers to disk, so
// memory stays bounded; definitions (small: one per function, communicator, location) are
// kept until the end, when the counts they carry are known.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "call_kinds.hpp"
#include "cancelled_requests.hpp"
#include "exporters.hpp"
#include "matched_messages.hpp"
#include "otf2_ids.hpp"
#include "rank_walk.hpp"
#include <fmt/format.h>
#include <mpi.h>
#include <otf2/otf2.h>

#include "encore/error.hpp"

namespace encore::exporter {
namespace {

constexpr std::uint64_t kChunkBytes = 1 << 20;

// OTF2 prints its errors on stderr unless told otherwise; keep the last one for our message.
std::string g_last_otf2_error;
OTF2_ErrorCode remember_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                              const char* format, va_list va) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, format, va);
  g_last_otf2_error = buf;
  return code;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }

// libotf2 keeps every chunk of a writer in memory until the writer closes unless the chunk
// allocator says no: then it flushes the chunks to the file and frees them. So each buffer may
// hold at most kChunksPerBuffer chunks, which bounds memory whatever the trace length.
constexpr int kChunksPerBuffer = 4;
struct ChunkPool {
  std::vector<void*> chunks;
};
void* allocate_chunk(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, uint64_t size) {
  if (!*per_buffer) *per_buffer = new ChunkPool;
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (pool->chunks.size() >= kChunksPerBuffer) return nullptr;  // makes libotf2 flush
  void* chunk = std::malloc(size);
  if (chunk) pool->chunks.push_back(chunk);
  return chunk;
}
void free_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (!pool) return;
  for (void* chunk : pool->chunks) std::free(chunk);
  pool->chunks.clear();
  if (final) {
    delete pool;
    *per_buffer = nullptr;
  }
}

OTF2_CollectiveOp collective_op(std::string_view base) {
  static const std::map<std::string_view, OTF2_CollectiveOp> ops = {
      {"Barrier", OTF2_COLLECTIVE_OP_BARRIER},
      {"Bcast", OTF2_COLLECTIVE_OP_BCAST},
      {"Gather", OTF2_COLLECTIVE_OP_GATHER},
      {"Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
      {"Scatter", OTF2_COLLECTIVE_OP_SCATTER},
      {"Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
      {"Allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
      {"Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
      {"Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
      {"Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
      {"Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
      {"Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
      {"Reduce", OTF2_COLLECTIVE_OP_REDUCE},
      {"Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
      {"Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
      {"Scan", OTF2_COLLECTIVE_OP_SCAN},
      {"Exscan", OTF2_COLLECTIVE_OP_EXSCAN},
  };
  const auto it = ops.find(base);
  if (it == ops.end()) return OTF2_COLLECTIVE_OP_BARRIER;
  return it->second;
}

OTF2_RegionRole region_role(const CallClass& c) {
  switch (c.kind) {
    case CallKind::send:
    case CallKind::recv:
    case CallKind::sendrecv:
    case CallKind::isend:
    case CallKind::irecv:
    case CallKind::mrecv:
    case CallKind::imrecv:
    case CallKind::send_init:
    case CallKind::recv_init:
      return OTF2_REGION_ROLE_POINT2POINT;
    case CallKind::collective:
      if (c.base == "Barrier") return OTF2_REGION_ROLE_BARRIER;
      if (c.base == "Bcast" || c.base.substr(0, 7) == "Scatter")
        return OTF2_REGION_ROLE_COLL_ONE2ALL;
      if (c.base == "Reduce" || c.base.substr(0, 6) == "Gather")
        return OTF2_REGION_ROLE_COLL_ALL2ONE;
      if (c.base == "Scan" || c.base == "Exscan") return OTF2_REGION_ROLE_COLL_OTHER;
      return OTF2_REGION_ROLE_COLL_ALL2ALL;
    default:
      return OTF2_REGION_ROLE_FUNCTION;
  }
}

class Otf2Writer {
 public:
  Otf2Writer(const std::filesystem::path& trace, const std::filesystem::path& out,
             const ExportOptions& options, ExportStats& stats)
      : trace_(trace),
        out_(out),
        options_(options),
        stats_(stats),
        manifest_(load_trace(trace)),
        comms_(manifest_.nprocs) {
    prepare_output_dir(out);
    OTF2_Error_RegisterCallback(&remember_error, nullptr);
    archive_ = OTF2_Archive_Open(out.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunkBytes,
                                 4 * kChunkBytes, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive_) fail("cannot create the archive", OTF2_ERROR_INVALID);
    // libotf2 keeps the pointer, not a copy. No post-flush callback: no BufferFlush records.
    static OTF2_FlushCallbacks flush{&pre_flush, nullptr};
    check(OTF2_Archive_SetFlushCallbacks(archive_, &flush, nullptr), "flush callbacks");
    static OTF2_MemoryCallbacks memory{&allocate_chunk, &free_chunks};
    check(OTF2_Archive_SetMemoryCallbacks(archive_, &memory, nullptr), "memory callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive_), "collective callbacks");
    check(OTF2_Archive_SetCreator(archive_, "encore export"), "creator");
    check(OTF2_Archive_OpenEvtFiles(archive_), "event files");
    // Timestamps are ns on rank 0's timeline, shifted so that none is negative.
    for (const auto& r : manifest_.ranks) shift_ = std::max(shift_, -r.lowest_offset());
    if (manifest_.papi.available) counter_names_ = manifest_.papi.requested;
  }
  ~Otf2Writer() {
    if (archive_) OTF2_Archive_Close(archive_);
  }

  void run() {
    RankWalk walk;
    walk.begin_rank = [this](std::uint32_t rank) { begin_rank(rank); };
    walk.event = [this](std::uint32_t rank, const Event& ev, const RankContext& ctx) {
      event(rank, ev, ctx);
    };
    walk.end_rank = [this](std::uint32_t rank) { end_rank(rank); };
    stats_.events = walk_ranks(trace_, manifest_, options_.progress, walk, stats_.problems);
    // Every world rank has a location, even one this trace does not hold (a replay profile)
    // or that recorded nothing: communicator groups and message peers refer to them.
    std::set<OTF2_LocationRef> defined;
    for (const auto& loc : locations_) defined.insert(loc.id);
    for (std::uint32_t r = 0; r < manifest_.nprocs; ++r)
      if (!defined.count(otf2_location_id(r, 0))) {
        Location loc;
        loc.id = otf2_location_id(r, 0);
        loc.rank = r;
        // An empty event file: readers open one for every location.
        loc.writer = OTF2_Archive_GetEvtWriter(archive_, loc.id);
        if (!loc.writer) fail(fmt::format("event writer of rank {}", r), OTF2_ERROR_INVALID);
        check(OTF2_Archive_CloseEvtWriter(archive_, loc.writer), "closing a writer");
        loc.writer = nullptr;
        locations_.push_back(loc);
      }
    check(OTF2_Archive_CloseEvtFiles(archive_), "closing event files");
    write_local_definitions();
    write_global_definitions();
    check(OTF2_Archive_Close(archive_), "closing the archive");
    archive_ = nullptr;
    stats_.files.push_back(out_ / "traces.otf2");
  }

 private:
  struct Location {
    OTF2_LocationRef id = 0;
    std::uint32_t rank = 0;
    std::uint16_t thread = 0;
    OTF2_EvtWriter* writer = nullptr;
    std::uint64_t records = 0;
    std::uint64_t last = 0;      // latest timestamp written (OTF2 wants them in order)
    std::uint64_t prev_end = 0;  // end of the previous call
    bool any = false;
    std::vector<std::uint64_t> counters;  // accumulated PAPI counts
  };
  struct Request {
    bool send = false;
    bool persistent = false;
    OTF2_CommRef comm = 0;
    std::int64_t peer = 0, tag = 0;
    std::uint64_t bytes = 0;
  };

  [[noreturn]] void fail(std::string_view what, OTF2_ErrorCode code) const {
    std::string why =
        g_last_otf2_error.empty() ? OTF2_Error_GetDescription(code) : g_last_otf2_error;
    throw Error(format_in(out_.string(), fmt::format("otf2: {}: {}", what, why)));
  }
  void check(OTF2_ErrorCode code, std::string_view what) const {
    if (code != OTF2_SUCCESS) fail(what, code);
  }

  std::uint64_t ts(std::uint32_t rank, std::uint64_t ns) const {
    const RankInfo* info = manifest_.rank_info(rank);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(ns) +
                                      (info ? info->offset_at(static_cast<std::int64_t>(ns)) : 0) +
                                      shift_);
  }

  Location& location(std::uint32_t rank, std::uint16_t thread) {
    auto it = open_.find(thread);
    if (it != open_.end()) return locations_[it->second];
    Location loc;
    loc.id = otf2_location_id(rank, thread);
    loc.rank = rank;
    loc.thread = thread;
    loc.writer = OTF2_Archive_GetEvtWriter(archive_, loc.id);
    if (!loc.writer)
      fail(fmt::format("event writer of rank {} thread {}", rank, thread), OTF2_ERROR_INVALID);
    loc.counters.assign(counter_names_.size(), 0);
    open_[thread] = locations_.size();
    locations_.push_back(std::move(loc));
    return locations_.back();
  }

  // Keeps a location's timestamps from going backwards (threads' clocks are each monotonic;
  // this guards against a damaged trace).
  std::uint64_t at(Location& loc, std::uint64_t t) {
    loc.last = std::max(loc.last, t);
    ++loc.records;
    first_ts_ = std::min(first_ts_, loc.last);
    last_ts_ = std::max(last_ts_, loc.last);
    return loc.last;
  }

  OTF2_RegionRef region(std::uint16_t function) {
    auto [it, fresh] =
        regions_.try_emplace(function, static_cast<OTF2_RegionRef>(regions_.size() + 1));
    return it->second;
  }

  OTF2_CommRef comm(std::int64_t id) {
    if (id == world_comm_id()) return comms_.world();
    if (id == self_comm_id()) return comms_.self();
    const auto it = local_comms_.find(id);
    if (it != local_comms_.end()) return it->second;
    note_once("a communicator the trace did not see created is exported as MPI_COMM_WORLD");
    return comms_.world();
  }

  void note_once(const std::string& text) {
    if (noted_.insert(text).second) stats_.notes.push_back(text);
  }

  void begin_rank(std::uint32_t) {
    local_comms_.clear();
    seen_members_.clear();
    requests_.clear();
    messages_ = MatchedMessages();
    open_.clear();
  }

  void end_rank(std::uint32_t) {
    for (const auto& [thread, index] : open_) {
      check(OTF2_Archive_CloseEvtWriter(archive_, locations_[index].writer), "closing a writer");
      locations_[index].writer = nullptr;
    }
    open_.clear();
  }

  void metrics(Location& loc, std::uint64_t t) {
    std::vector<OTF2_Type> types(loc.counters.size(), OTF2_TYPE_UINT64);
    std::vector<OTF2_MetricValue> values(loc.counters.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i].unsigned_int = loc.counters[i];
    check(OTF2_EvtWriter_Metric(loc.writer, nullptr, at(loc, t), kMetricClass,
                                static_cast<std::uint8_t>(values.size()), types.data(),
                                values.data()),
          "metric");
  }

  void event(std::uint32_t rank, const Event& ev, const RankContext& ctx) {
    Location& loc = location(rank, ev.thread);
    const std::uint64_t s = ts(rank, ev.start_ns), e = ts(rank, ev.end_ns);
    const bool counters = !loc.counters.empty() && ev.counters.size() == loc.counters.size();
    if (loc.any && s > loc.prev_end) {  // the compute segment since the previous call
      check(OTF2_EvtWriter_Enter(loc.writer, nullptr, at(loc, loc.prev_end), kComputeRegion),
            "compute enter");
      if (counters) metrics(loc, loc.prev_end);
      if (counters)
        for (std::size_t i = 0; i < ev.counters.size(); ++i) loc.counters[i] += ev.counters[i];
      if (counters) metrics(loc, s);
      check(OTF2_EvtWriter_Leave(loc.writer, nullptr, at(loc, s), kComputeRegion), "compute leave");
    }
    loc.any = true;
    loc.prev_end = e;
    const OTF2_RegionRef reg = region(ev.function);
    check(OTF2_EvtWriter_Enter(loc.writer, nullptr, at(loc, s), reg), "enter");
    mpi_records(loc, ev, message_bytes(ctx, ev), messages_.observe(ev), s, e);
    check(OTF2_EvtWriter_Leave(loc.writer, nullptr, at(loc, e), reg), "leave");
    track_new_comms(ev);
  }

  // `matched`: the message an MPI_Mrecv/MPI_Imrecv receives (MatchedMessages::observe).
  void mpi_records(Location& loc, const Event& ev, const MessageBytes& bytes,
                   const std::optional<MatchedMessage>& matched, std::uint64_t s, std::uint64_t e) {
    if (ev.rc != MPI_SUCCESS) return;
    const CallClass& c = classify(ev.function);
    const std::uint64_t self_key = request_key(RequestRef{false, ev.thread, ev.index});
    switch (c.kind) {
      case CallKind::send:
      case CallKind::sendrecv: {
        const std::int64_t peer = role_scalar(ev, Role::peer, 0, MPI_PROC_NULL);
        if (peer >= 0)
          check(OTF2_EvtWriter_MpiSend(loc.writer, nullptr, at(loc, s), static_cast<uint32_t>(peer),
                                       comm(role_scalar(ev, Role::comm, 0, 1)),
                                       static_cast<uint32_t>(role_scalar(ev, Role::tag, 0, 0)),
                                       bytes.sent),
                "send");
        if (c.kind == CallKind::sendrecv)
          recv_record(loc, ev, role_scalar(ev, Role::comm, 0, 1), e);
        break;
      }
      case CallKind::recv:
        recv_record(loc, ev, role_scalar(ev, Role::comm, 0, 1), e);
        break;
      case CallKind::mrecv:  // nothing for MPI_MESSAGE_NO_PROC
        if (matched) recv_record(loc, ev, matched->comm, e);
        break;
      case CallKind::imrecv:
        if (matched) {
          Request r;
          r.comm = comm(matched->comm);
          r.peer = matched->source;
          r.tag = matched->tag;
          requests_[self_key] = r;
          start_request(loc, r, self_key, s);
        }
        break;
      case CallKind::isend:
      case CallKind::irecv:
      case CallKind::send_init:
      case CallKind::recv_init: {
        Request r;
        r.send = c.kind == CallKind::isend || c.kind == CallKind::send_init;
        r.persistent = c.kind == CallKind::send_init || c.kind == CallKind::recv_init;
        r.comm = comm(role_scalar(ev, Role::comm, 0, 1));
        r.peer = role_scalar(ev, Role::peer, 0, MPI_PROC_NULL);
        r.tag = role_scalar(ev, Role::tag, 0, 0);
        r.bytes = bytes.sent;
        requests_[self_key] = r;
        if (!r.persistent) start_request(loc, r, self_key, s);
        break;
      }
      case CallKind::start: {
        const ArgValue* one = role_arg(ev, Role::request_inout);
        const ArgValue* many = role_arg(ev, Role::request_array);
        for (const ArgValue* a : {one, many})
          if (a)
            for (const auto& ref : a->requests) {
              const auto it = requests_.find(request_key(ref));
              if (!ref.null && it != requests_.end()) start_request(loc, it->second, it->first, s);
            }
        break;
      }
      case CallKind::completion:
        completed_requests(ev, completed_);
        for (const auto& done : completed_) {
          const auto it = requests_.find(request_key(done.request));
          if (it == requests_.end()) continue;  // a collective's or an untracked request
          const Request& r = it->second;
          if (r.peer != MPI_PROC_NULL && was_cancelled(done.status)) {  // it moved no message
            check(OTF2_EvtWriter_MpiRequestCancelled(loc.writer, nullptr, at(loc, e), it->first),
                  "request cancelled");
          } else if (r.send) {
            if (r.peer >= 0)
              check(OTF2_EvtWriter_MpiIsendComplete(loc.writer, nullptr, at(loc, e), it->first),
                    "isend complete");
          } else if (r.peer != MPI_PROC_NULL && done.status && done.status->source >= 0) {
            check(OTF2_EvtWriter_MpiIrecv(loc.writer, nullptr, at(loc, e),
                                          static_cast<uint32_t>(done.status->source), r.comm,
                                          static_cast<uint32_t>(done.status->tag),
                                          done.status->bytes, it->first),
                  "irecv");
          }
          if (!r.persistent) requests_.erase(it);
        }
        break;
      case CallKind::collective: {
        check(OTF2_EvtWriter_MpiCollectiveBegin(loc.writer, nullptr, at(loc, s)),
              "collective begin");
        const std::int64_t root = role_scalar(ev, Role::root, 0, -1);
        check(OTF2_EvtWriter_MpiCollectiveEnd(
                  loc.writer, nullptr, at(loc, e), collective_op(c.base),
                  comm(role_scalar(ev, Role::comm, 0, 1)),
                  root >= 0 ? static_cast<uint32_t>(root) : OTF2_UNDEFINED_UINT32, bytes.sent,
                  bytes.received),
              "collective end");
        break;
      }
      case CallKind::other:
        break;
    }
  }

  void start_request(Location& loc, const Request& r, std::uint64_t key, std::uint64_t s) {
    if (r.peer == MPI_PROC_NULL) return;  // no message (MPI_ANY_SOURCE is one)
    if (r.send)
      check(OTF2_EvtWriter_MpiIsend(loc.writer, nullptr, at(loc, s), static_cast<uint32_t>(r.peer),
                                    r.comm, static_cast<uint32_t>(r.tag), r.bytes, key),
            "isend");
    else
      check(OTF2_EvtWriter_MpiIrecvRequest(loc.writer, nullptr, at(loc, s), key), "irecv request");
  }

  void recv_record(Location& loc, const Event& ev, std::int64_t comm_id, std::uint64_t e) {
    const ArgValue* st = role_arg(ev, Role::status_out);
    if (!st || st->statuses.empty() || st->statuses[0].source < 0) return;
    const StatusRecord& status = st->statuses[0];
    check(OTF2_EvtWriter_MpiRecv(loc.writer, nullptr, at(loc, e),
                                 static_cast<uint32_t>(status.source), comm(comm_id),
                                 static_cast<uint32_t>(status.tag), status.bytes),
          "recv");
  }

  // New communicators: the k-th one a rank creates with a given member list is the same
  // communicator as the k-th one with that list on its other members (creation is collective).
  void track_new_comms(const Event& ev) {
    const auto params = ev.info().params;
    for (std::size_t i = 0; i < params.size() && i < ev.args.size(); ++i) {
      if (params[i].role != Role::comm_out || !ev.args[i].present || ev.args[i].scalar == 0)
        continue;
      const ArgValue& a = ev.args[i];
      if (a.flags & 1) note_once("intercommunicators are exported as their local group");
      const int k = seen_members_[a.list]++;
      local_comms_[a.scalar] = comms_.find_or_add(a.list, k);
    }
  }

  void write_local_definitions() {
    check(OTF2_Archive_OpenDefFiles(archive_), "definition files");
    for (const auto& loc : locations_) {
      OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(archive_, loc.id);
      if (!w) fail("local definition writer", OTF2_ERROR_INVALID);
      check(OTF2_Archive_CloseDefWriter(archive_, w), "local definitions");
    }
    check(OTF2_Archive_CloseDefFiles(archive_), "closing definition files");
  }

  void write_global_definitions() {
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
    if (!g) fail("global definition writer", OTF2_ERROR_INVALID);
    Otf2Strings str;
    const std::uint64_t first = first_ts_ == UINT64_MAX ? 0 : first_ts_;
    const std::uint64_t last = std::max(first, last_ts_);
    const std::uint64_t realtime = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, manifest_.start_time_unix_ns - shift_));
    check(
        OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, first, last - first + 1, realtime),
        "clock properties");
    // Strings first: every later definition refers to them.
    const auto machine = str.ref("encore trace");
    std::map<std::string, OTF2_SystemTreeNodeRef> hosts;
    const auto host_of = [this](std::uint32_t rank) {
      const RankInfo* info = manifest_.rank_info(rank);
      return info ? info->host : std::string("(rank not in this trace)");
    };
    for (std::uint32_t r = 0; r < manifest_.nprocs; ++r) hosts.try_emplace(host_of(r), 0);
    OTF2_SystemTreeNodeRef node = 1;
    for (auto& [host, ref] : hosts) ref = node++;
    std::vector<OTF2_StringRef> rank_names, loc_names;
    for (std::uint32_t r = 0; r < manifest_.nprocs; ++r)
      rank_names.push_back(str.ref(fmt::format("MPI Rank {}", r)));
    for (const auto& loc : locations_)
      loc_names.push_back(str.ref(loc.thread == 0
                                      ? fmt::format("rank {}", loc.rank)
                                      : fmt::format("rank {} thread {}", loc.rank, loc.thread)));
    std::vector<std::pair<std::uint16_t, OTF2_RegionRef>> regions(regions_.begin(), regions_.end());
    // Definitions of one kind must come in the order of their refs.
    std::sort(regions.begin(), regions.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<OTF2_StringRef> region_names;
    region_names.reserve(regions.size());
    for (const auto& [function, ref] : regions)
      region_names.push_back(str.ref(function_table()[function].name));
    const auto compute_name = str.ref("compute");
    const auto compute_desc = str.ref("time between two MPI calls");
    const auto node_class = str.ref("node"), machine_class = str.ref("machine");
    std::vector<OTF2_StringRef> host_names;
    host_names.reserve(hosts.size());
    for (const auto& [host, ref] : hosts) host_names.push_back(str.ref(host));
    const auto empty = str.ref("");
    const auto mpi = str.ref("MPI");
    std::vector<OTF2_StringRef> comm_names;
    for (std::size_t i = 0; i < comms_.size(); ++i) comm_names.push_back(str.ref(comms_.name(i)));
    std::vector<OTF2_StringRef> counter_strs;
    for (const auto& name : counter_names_) counter_strs.push_back(str.ref(name));
    const auto count_unit = str.ref("#");
    str.write(g, [&](OTF2_ErrorCode code) { check(code, "string"); });

    check(
        OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi, OTF2_PARADIGM_CLASS_PROCESS),
        "paradigm");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine_class,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree");
    std::size_t h = 0;
    for (const auto& [host, ref] : hosts)
      check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, ref, host_names[h++], node_class, 0),
            "system tree node");
    for (std::uint32_t r = 0; r < manifest_.nprocs; ++r)
      check(OTF2_GlobalDefWriter_WriteLocationGroup(
                g, r, rank_names[r], OTF2_LOCATION_GROUP_TYPE_PROCESS, hosts.at(host_of(r)),
                OTF2_UNDEFINED_LOCATION_GROUP),
            "location group");
    for (std::size_t i = 0; i < locations_.size(); ++i) {
      const auto& loc = locations_[i];
      check(OTF2_GlobalDefWriter_WriteLocation(
                g, loc.id, loc_names[i], OTF2_LOCATION_TYPE_CPU_THREAD, loc.records, loc.rank),
            "location");
    }
    check(OTF2_GlobalDefWriter_WriteRegion(g, kComputeRegion, compute_name, compute_name,
                                           compute_desc, OTF2_REGION_ROLE_FUNCTION,
                                           OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, empty, 0, 0),
          "region");
    for (std::size_t i = 0; i < regions.size(); ++i)
      check(OTF2_GlobalDefWriter_WriteRegion(g, regions[i].second, region_names[i], region_names[i],
                                             empty, region_role(classify(regions[i].first)),
                                             OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, empty, 0, 0),
            "region");
    comms_.write(g, manifest_.nprocs, comm_names, empty,
                 [&](OTF2_ErrorCode code) { check(code, "communicator"); });
    if (!counter_names_.empty()) {
      std::vector<OTF2_MetricMemberRef> members;
      for (std::size_t i = 0; i < counter_names_.size(); ++i) {
        members.push_back(static_cast<OTF2_MetricMemberRef>(i));
        check(
            OTF2_GlobalDefWriter_WriteMetricMember(
                g, members.back(), counter_strs[i], counter_strs[i], OTF2_METRIC_TYPE_PAPI,
                OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, count_unit),
            "metric member");
      }
      check(OTF2_GlobalDefWriter_WriteMetricClass(
                g, kMetricClass, static_cast<std::uint8_t>(members.size()), members.data(),
                OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_CPU),
            "metric class");
    }
    std::uint64_t records = 0;
    for (const auto& loc : locations_) records += loc.records;
    stats_.records = records;
  }

  static constexpr OTF2_RegionRef kComputeRegion = 0;
  static constexpr OTF2_MetricRef kMetricClass = 0;

  std::filesystem::path trace_, out_;
  const ExportOptions& options_;
  ExportStats& stats_;
  Manifest manifest_;
  OTF2_Archive* archive_ = nullptr;
  std::int64_t shift_ = 0;
  std::uint64_t first_ts_ = UINT64_MAX, last_ts_ = 0;
  std::vector<std::string> counter_names_;
  std::vector<Location> locations_;
  std::map<std::uint16_t, std::size_t> open_;  // thread -> index in locations_, current rank
  std::map<std::uint16_t, OTF2_RegionRef> regions_;
  Otf2Comms comms_;
  std::unordered_map<std::int64_t, OTF2_CommRef> local_comms_;
  std::map<std::vector<std::int64_t>, int> seen_members_;
  std::unordered_map<std::uint64_t, Request> requests_;
  MatchedMessages messages_;
  std::vector<Completed> completed_;
  std::set<std::string> noted_;
};

}  // namespace

ExportStats export_otf2(const std::filesystem::path& trace, const std::filesystem::path& out,
                        const ExportOptions& options) {
  ExportStats stats;
  Otf2Writer writer(trace, out, options, stats);
  writer.run();
  return stats;
}

}  // namespace encore::exporter
