#include "call.hpp"

#include <algorithm>
#include <cstring>

#include "first_read.hpp"

namespace encore::dump {

using event_format::Extra;

// Encoding ------------------------------------------------------------------------------------

void Call::grow(std::size_t n) {
  auto& scratch = ts_->scratch;
  if (scratch.size() < pos_ + n + 64) scratch.resize(std::max(scratch.size() * 2, pos_ + n + 64));
  if (in_place_) {
    // Too large for the room left in the segment: continue in the scratch buffer, and let
    // commit() append the event (it starts a new segment).
    std::memcpy(scratch.data(), buf_, pos_);
    in_place_ = false;
  }
  buf_ = scratch.data();
  cap_ = scratch.size();
}

void Call::read_counters() noexcept {
  if (!t0_) mark_pre_work();
  ts_->counters.read_segment(ts_->counter_deltas);
}

void Call::put_call_extras() noexcept {
  heavy_ = true;
  if (rec_->counters_on) {
    begin_extra(Extra::counters);
    put_uint(ts_->counter_deltas.size());
    for (const long long d : ts_->counter_deltas)
      put_uint(static_cast<std::uint64_t>(d < 0 ? 0 : d));
    ts_->counters.mark_segment_start();
  }
  if (rec_->callsites) {
    begin_extra(Extra::callsite);
    put_uint(rec_->callsites->current());
  }
}

void Call::commit_extras() noexcept {
  if (!ts_->send_hashes.empty()) emit_send_hashes();
  if (rec_->counters_on || rec_->callsites) put_call_extras();
  if (const auto stall = ts_->take_stall_ns()) {
    heavy_ = true;
    begin_extra(Extra::stall);
    put_uint(stall);
  }
  if (const auto first_read = ts_->take_first_read_ns()) {
    heavy_ = true;
    begin_extra(Extra::first_read);
    put_uint(first_read);
  }
  ts_->clear_commit_work();
}

void Call::commit_moved(const RawTimes& times) noexcept {
  if (in_place_) {
    // No room for the times: the event moves to a new segment, from a copy (the writer may
    // recycle the old segment as soon as it is sealed).
    auto& scratch = ts_->scratch;
    if (scratch.size() < pos_) scratch.resize(pos_);
    std::memcpy(scratch.data(), buf_, pos_);
    buf_ = scratch.data();
  }
  ts_->append_event(times, {buf_, pos_});
}

void Call::measure_tail() noexcept {
  ts_->prev_t3 = rec_->clock.ticks();
  ts_->prev_flags = RawTimes::kPrevMeasured;
  if (!heavy_) {
    ts_->light_calls = 0;
    ts_->prev_flags |= RawTimes::kPrevLightSample;
  }
}

void Call::put_string(const char* s) {
  const std::size_t n = s ? std::strlen(s) : 0;
  put_uint(n);
  reserve(n);
  if (n) std::memcpy(buf_ + pos_, s, n);
  pos_ += n;
}

void Call::put_absent(Role role) {
  switch (role) {
    case Role::buf_in:
    case Role::buf_out:
    case Role::buf_inout:
      put_uint(static_cast<std::uint8_t>(event_format::BufFlag::absent));
      break;
    default:
      put_uint(0);  // int 0, empty array, null handle
  }
}

void Call::put_datatypes(const MPI_Datatype* t, std::int64_t n) {
  if (!t || n < 0) n = 0;
  put_uint(static_cast<std::uint64_t>(n));
  for (std::int64_t i = 0; i < n; ++i) put_datatype(t[i]);
}

// Communicators and groups ----------------------------------------------------------------------

void Call::put_members(MPI_Group g) {
  heavy_ = true;
  int n = 0;
  PMPI_Group_size(g, &n);
  put_uint(static_cast<std::uint64_t>(n));
  std::vector<int> mine(static_cast<std::size_t>(n));
  std::vector<int> world(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = i;
  MPI_Group world_group;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  PMPI_Group_translate_ranks(g, n, mine.data(), world_group, world.data());
  PMPI_Group_free(&world_group);
  int prev = -1;
  for (int w : world) {
    if (w == MPI_UNDEFINED) w = -1;
    put_int(w - prev);
    prev = w;
  }
}

void Call::put_new_comm(MPI_Comm c) {
  const std::uint32_t id = rec_->comm_ids.create(c);
  put_uint(id);
  if (c == MPI_COMM_NULL) return;
  rec_->comms.erase(c);  // a recycled handle: forget what the old communicator was
  CommInfo& info = rec_->comm(c);
  put_uint(info.inter ? 1 : 0);
  MPI_Group g;
  PMPI_Comm_group(c, &g);
  put_members(g);
  PMPI_Group_free(&g);
  if (info.inter) {
    PMPI_Comm_remote_group(c, &g);
    put_members(g);
    PMPI_Group_free(&g);
  }
}

void Call::put_freed_comm(MPI_Comm c) {
  rec_->comms.erase(c);
  put_uint(rec_->comm_ids.release(c));
}

void Call::put_new_group(MPI_Group g) {
  const std::uint32_t id = rec_->group_ids.create(g);
  put_uint(id);
  if (g != MPI_GROUP_NULL) put_members(g);
}

std::int64_t Call::send_peers(MPI_Comm c, bool neighbor) {
  CommInfo& info = rec_->comm(c);
  if (!neighbor) return info.inter ? info.remote_size : info.size;
  if (info.outdegree < 0) recv_peers(c, true);
  return info.outdegree;
}

std::int64_t Call::recv_peers(MPI_Comm c, bool neighbor) {
  CommInfo& info = rec_->comm(c);
  if (!neighbor) return info.inter ? info.remote_size : info.size;
  if (info.indegree < 0) {
    int topo = MPI_UNDEFINED;
    PMPI_Topo_test(c, &topo);
    int in = 0, out = 0, weighted = 0;
    if (topo == MPI_DIST_GRAPH) {
      PMPI_Dist_graph_neighbors_count(c, &in, &out, &weighted);
    } else if (topo == MPI_GRAPH) {
      PMPI_Graph_neighbors_count(c, info.rank, &in);
      out = in;
    } else if (topo == MPI_CART) {
      PMPI_Cartdim_get(c, &in);
      in *= 2;
      out = in;
    }
    info.indegree = in;
    info.outdegree = out;
  }
  return info.indegree;
}

std::int64_t Call::cart_ndims(MPI_Comm c) {
  CommInfo& info = rec_->comm(c);
  if (info.cart_ndims < 0) {
    int n = 0;
    PMPI_Cartdim_get(c, &n);
    info.cart_ndims = n;
  }
  return info.cart_ndims;
}

bool Call::is_root(int root, MPI_Comm c) {
  const CommInfo& info = rec_->comm(c);
  return info.inter ? root == MPI_ROOT : root == info.rank;
}

// Requests and statuses -------------------------------------------------------------------------

void Call::put_new_request(MPI_Request r) {
  if (r == MPI_REQUEST_NULL) return;
  RequestInfo& info = rec_->requests.add(r);
  info.thread = ts_->index();
  info.event = ts_->events();  // this event's index: it is committed next
  created_ = &info;
  resolved_r_ = nullptr;
}

RequestInfo* const* Call::resolve(const MPI_Request* r, std::int64_t n) {
  if (!r || n <= 0) return nullptr;
  if (r == resolved_r_ && n == resolved_n_) return ts_->resolved.data();
  auto& v = ts_->resolved;
  if (v.size() < static_cast<std::size_t>(n)) v.resize(static_cast<std::size_t>(n));
  rec_->requests.resolve(r, static_cast<std::size_t>(n), v.data());
  resolved_r_ = r;
  resolved_n_ = n;
  return v.data();
}

void Call::put_request_ref(const RequestInfo* info) {
  Fields w = fields(kRequestRefMax);
  put_request_ref(w, info);
  close(w);
}

void Call::put_request(MPI_Request r) { put_request_ref(rec_->requests.find({r, 0})); }

void Call::put_requests(const MPI_Request* r, std::int64_t n) {
  if (!r || n < 0) n = 0;
  put_uint(static_cast<std::uint64_t>(n));
  RequestInfo* const* info = resolve(r, n);
  for (std::int64_t i = 0; i < n; ++i) {
    Fields w = fields(kRequestRefMax);
    put_request_ref(w, info[i]);
    close(w);
  }
}

void Call::put_statuses(const MPI_Status* s, std::int64_t n, bool ignored) {
  if (n < 0) n = 0;
  put_uint(static_cast<std::uint64_t>(n));
  for (std::int64_t i = 0; i < n; ++i) put_status(s + i, ignored);
}

void Call::put_request_status(const MPI_Status* s, bool ignored, const RequestInfo* info,
                              bool null_request) {
  Fields w = fields(kStatusMax);
  put_request_status(w, s, ignored, info, null_request);
  close(w);
}

void Call::put_completion_status(const MPI_Status* s, bool ignored, MPI_Request r) {
  put_request_status(s, ignored, rec_->requests.find({r, 0}), r == MPI_REQUEST_NULL);
}

void Call::put_completion_status_at(const MPI_Status* s, bool ignored, const MPI_Request* r,
                                    int index) {
  if (!r || index < 0) {
    // MPI_UNDEFINED: no request completed (MPI's empty status, or nothing defined at all).
    put_status_fields(ignored ? event_format::kStatusIgnored : 0, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    return;
  }
  put_request_status(s, ignored, request_at(r, index), r[index] == MPI_REQUEST_NULL);
}

RequestInfo* Call::request_at(const MPI_Request* r, int index) {
  if (r == resolved_r_ && index < resolved_n_)
    return ts_->resolved[static_cast<std::size_t>(index)];
  std::size_t seen = 0;
  for (int j = 0; j < index; ++j) seen += r[j] == r[index];
  return rec_->requests.find({r[index], seen});
}

void Call::put_completion_statuses(const MPI_Status* s, std::int64_t n, bool ignored,
                                   const MPI_Request* r, std::int64_t nreq, const int* indices) {
  if (n < 0) n = 0;
  put_uint(static_cast<std::uint64_t>(n));
  RequestInfo* const* info = resolve(r, nreq);
  if (!info) nreq = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t i = indices ? indices[k] : k;
    Fields w = fields(kStatusMax);
    if (i < 0 || i >= nreq)
      put_status(w, s + k, ignored);
    else
      put_request_status(w, s + k, ignored, info[i], r[i] == MPI_REQUEST_NULL);
    close(w);
  }
}

const MPI_Request* Call::copy_requests(const MPI_Request* r, std::int64_t n) {
  mark_pre_work();
  if (!r || n <= 0) return r;
  auto& v = ts_->request_scratch;
  v.assign(r, r + n);
  return v.data();
}

const MPI_Request* Call::copy_requests(const LeanPoll& lean, std::int64_t n) {
  auto& v = ts_->request_scratch;
  v.assign(lean.requests(), lean.requests() + n);
  return v.data();
}

MPI_Status* Call::scratch_statuses(std::int64_t n) { return ts_->scratch_statuses(n); }

// Payloads --------------------------------------------------------------------------------------

namespace {

// Non-contiguous data packed into `scratch` (at most `bytes` of it).
std::span<const std::byte> pack(const void* buf, MPI_Count count, MPI_Datatype type,
                                std::size_t bytes, std::vector<std::byte>& scratch) {
  MPI_Count pack_size = 0;
  PMPI_Pack_size_c(count, type, MPI_COMM_WORLD, &pack_size);
  scratch.resize(static_cast<std::size_t>(pack_size));
  MPI_Count position = 0;
  if (buf != MPI_BOTTOM) [[likely]] {
    PMPI_Pack_c(buf, count, type, scratch.data(), pack_size, &position, MPI_COMM_WORLD);
  } else {
    // MPICH's MPI_Pack refuses a null input buffer, and MPI_BOTTOM is one: the same bytes,
    // from address 1 with the type moved back by a byte.
    const MPI_Count back = -1;
    MPI_Datatype moved = MPI_DATATYPE_NULL;
    if (PMPI_Type_create_hindexed_c(1, &count, &back, type, &moved) == MPI_SUCCESS &&
        PMPI_Type_commit(&moved) == MPI_SUCCESS)
      PMPI_Pack_c(reinterpret_cast<const void*>(std::uintptr_t{1}), 1, moved, scratch.data(),
                  pack_size, &position, MPI_COMM_WORLD);
    if (moved != MPI_DATATYPE_NULL) PMPI_Type_free(&moved);
  }
  return {scratch.data(), std::min(bytes, static_cast<std::size_t>(position))};
}

// The packed bytes of `count` elements: a view of the program's memory when contiguous (the
// light calls' case, inlined), else packed into `scratch`.
ENCORE_HOT std::span<const std::byte> packed(const void* buf, MPI_Count count, MPI_Datatype type,
                                             const TypeInfo& t, std::vector<std::byte>& scratch) {
  const auto bytes = static_cast<std::size_t>(count * t.size);
  if (bytes == 0) return {};
  if (t.contiguous) return {static_cast<const std::byte*>(buf) + t.true_lb, bytes};
  return pack(buf, count, type, bytes, scratch);
}

}  // namespace

void Call::hash_send_typed(const void* buf, MPI_Count count, MPI_Datatype type, TypeInfo& t,
                           event_format::Extra tag) {
  auto data = packed(buf, count, type, t, ts_->pack_buf);
  if (data.size() > kLightBytes || !t.contiguous) heavy_ = true;
  if (rec_->convert_payload) {
    // Hashed in the byte order the payloads are written in, as a replay on a host of that
    // order sees the data (trace-format.md). Without a signature it cannot be: no hash.
    if (t.signature.empty() || data.empty()) return;
    heavy_ = true;
    if (data.data() != ts_->pack_buf.data()) ts_->pack_buf.assign(data.begin(), data.end());
    const std::span<std::byte> mut(ts_->pack_buf.data(), data.size());
    try {
      swap_elements(mut, t.signature);
    } catch (const std::exception&) {
      return;  // an element size with no defined conversion
    }
    data = mut;
  }
  const std::uint64_t hash = XXH3_64bits(data.data(), data.size());
  // After the PMPI call (the usual case) the event's fixed part is written: the hash goes
  // straight in. One taken before it (MPI_Sendrecv_replace overwrites its buffer) waits for
  // commit.
  if (t2_)
    emit_send_hash(hash, data.size(), tag);
  else
    ts_->add_send_hash(hash, data.size(), tag);
}

void Call::emit_send_hashes() {
  for (const auto& h : ts_->send_hashes) emit_send_hash(h.hash, h.bytes, h.tag);
  ts_->send_hashes.clear();
}

void Call::emit_signature(TypeInfo& t) {
  heavy_ = true;
  begin_extra(Extra::datatype_signature);
  put_uint(t.id);
  put_uint(static_cast<std::uint64_t>(t.size));
  put_uint(t.signature.size());
  for (const auto& r : t.signature) {
    put_uint(r.elem_size);
    put_uint(r.repeat);
  }
  t.signature_written = true;
  t.light_copy = t.contiguous;
}

void Call::define_datatype(MPI_Datatype type) {
  TypeInfo& t = rec_->types.info(type);
  if (!t.signature_written) emit_signature(t);
}

void Call::capture(const RecvLayout& layout, std::uint64_t slot) {
  for (const RecvBlock& b : layout) capture_block(b.base, b.count, b.type, slot);
}

void Call::capture_block(const void* base, MPI_Count count, MPI_Datatype type, std::uint64_t slot) {
  capture_typed(base, count, type, rec_->types.info(type), slot);
}

void Call::capture_typed(const void* base, MPI_Count count, MPI_Datatype type, TypeInfo& t,
                         std::uint64_t slot) {
  if (!rec_->payload_on || count <= 0 || base == MPI_IN_PLACE) return;
  if (!t.signature_written) emit_signature(t);
  auto data = packed(base, count, type, t, ts_->pack_buf);
  if (data.empty()) return;
  if (t.contiguous && data.size() >= kFirstReadBytes) end_after_first_read(data);
  if (rec_->convert_payload) {
    // Converting at write time, as the seed allows: the trace then reads natively there.
    if (data.data() != ts_->pack_buf.data()) ts_->pack_buf.assign(data.begin(), data.end());
    const std::span<std::byte> mut(ts_->pack_buf.data(), data.size());
    if (!t.signature.empty()) swap_elements(mut, t.signature);
    data = mut;
  }
  if (data.size() > kLightBytes || !t.contiguous) heavy_ = true;
  ts_->append_payload(data);
  put_payload_extra(slot, t.id, count, data.size());
}

void Call::end_after_first_read(std::span<const std::byte> data) noexcept {
  if (t2_ == 0) return;
  const std::uint64_t excess = first_read_excess(data, rec_->clock);
  if (excess == 0) return;
  t2_ += excess;
  // Recorded apart as well, so that a model can tell it from the transfer.
  ts_->add_first_read_ns(rec_->clock.duration_ns(excess));
}

void Call::hash_send_before(const void* buf, MPI_Count count, MPI_Datatype type, int peer) {
  if (peer == MPI_PROC_NULL) return;  // nothing to hash (hash_send): no pre-work either
  mark_pre_work();
  if (!rec_->multiple) return hash_send(buf, count, type, peer);
  // Not held across the PMPI call: another thread may have to run for it to complete.
  std::lock_guard lock(rec_->shared_mu);
  hash_send(buf, count, type, peer);
}

void Call::contribute(const contribution::Blocks& blocks) {
  if (!rec_->options.send_hashes) return;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const contribution::Block& b = blocks[i];
    hash_send_typed(b.base, b.count, b.type, rec_->types.info(b.type),
                    event_format::Extra::contribution_hash);
  }
}

void Call::contribute_before(const contribution::Blocks& blocks) {
  if (!rec_->options.send_hashes || blocks.empty()) return;
  mark_pre_work();
  if (!rec_->multiple) return contribute(blocks);
  std::lock_guard lock(rec_->shared_mu);  // as in hash_send_before
  contribute(blocks);
}

void Call::track_contribution(MPI_Request r, contribution::Blocks blocks) {
  RequestInfo* info = created_ ? created_ : rec_->requests.newest(r);
  if (!info || blocks.empty()) return;
  info->contribution = std::move(blocks);
  rec_->persistent_contributions = true;
}

void Call::start_contributions(const MPI_Request* r, std::int64_t n) {
  if (!rec_->persistent_contributions || !rec_->options.send_hashes || !r) return;
  std::unique_lock<std::mutex> lock;
  if (rec_->multiple) lock = std::unique_lock(rec_->shared_mu);
  bool timed = false;
  for (std::int64_t i = 0; i < n; ++i) {
    const RequestInfo* info = rec_->requests.find({r[i], 0});
    if (!info || info->contribution.empty()) continue;
    if (!timed) mark_pre_work();
    timed = true;
    contribute(info->contribution);
  }
}

void Call::track_message(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type,
                         bool persistent) {
  RequestInfo* info = created_ ? created_ : rec_->requests.newest(r);
  if (!info) return;
  info->kind = RequestKind::recv;
  info->persistent = persistent;
  info->recv = {buf, count, type};
}

void Call::track_sendrecv(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type) {
  track_message(r, buf, count, type, false);
  RequestInfo* info = created_ ? created_ : rec_->requests.newest(r);
  if (info) info->status_unset = true;
}

void Call::track_collective(MPI_Request r, RecvLayout layout, bool persistent) {
  RequestInfo* info = created_ ? created_ : rec_->requests.newest(r);
  if (!info) return;
  info->kind = RequestKind::collective;
  info->persistent = persistent;
  info->layout = std::move(layout);
}

void Call::track_persistent_send(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type,
                                 int peer) {
  RequestInfo* info = created_ ? created_ : rec_->requests.newest(r);
  if (!info) return;
  info->persistent = true;
  if (peer == MPI_PROC_NULL) return;  // its starts send nothing: no hash (hash_send)
  info->kind = RequestKind::send;
  info->send_buf = buf;
  info->send_count = count;
  info->send_type = type;
}

void Call::complete_request(std::uint64_t slot, RequestInfo* info, const MPI_Status* status) {
  if (!info) return;
  capture_received(slot, *info, status, false);
  if (!info->persistent) {
    rec_->requests.retire(info);
    resolved_r_ = nullptr;  // the table changed: a later resolve() starts again
  }
}

void Call::peek_request(MPI_Request r, const MPI_Status* status) {
  if (RequestInfo* info = rec_->requests.find({r, 0})) capture_received(0, *info, status, true);
}

void Call::capture_received(std::uint64_t slot, RequestInfo& req, const MPI_Status* status,
                            bool peek) {
  if (req.captured) {
    if (!peek) req.captured = false;  // the completion after the peek: recorded then
    return;
  }
  req.captured = peek;
  const RequestInfo* info = &req;
  if (info->kind == RequestKind::recv && info->status_unset) {
    const RecvBlock& b = info->recv;
    TypeInfo& t = rec_->types.info(b.type);
    if (b.count > 0 && t.size > 0) capture_typed(b.base, b.count, b.type, t, slot);
  } else if (info->kind == RequestKind::recv && status && status != MPI_STATUS_IGNORE &&
             !status_cancelled(status) && status->MPI_SOURCE != MPI_PROC_NULL) {
    const RecvBlock& b = info->recv;
    const MPI_Count bytes = status_bytes(status);
    TypeInfo& t = rec_->types.info(b.type);
    // Never past the posted buffer, whatever a status says.
    if (bytes > 0 && t.size > 0)
      capture_typed(b.base, std::min((bytes + t.size - 1) / t.size, b.count), b.type, t, slot);
  } else if (info->kind == RequestKind::collective) {
    capture(info->layout, slot);
  }
}

void Call::complete_one(MPI_Request r, const MPI_Status* status) {
  complete_request(0, rec_->requests.find({r, 0}), status);
}

void Call::complete_all(std::int64_t n, const MPI_Request* r, const MPI_Status* statuses) {
  RequestInfo* const* info = resolve(r, n);
  if (!info) return;
  // Retiring one request leaves the others' pointers valid: the whole array completes on the
  // table as it was before the call, as its slots were resolved.
  for (std::int64_t i = 0; i < n; ++i)
    complete_request(static_cast<std::uint64_t>(i), info[i], statuses + i);
}

void Call::complete_index(const MPI_Request* r, int index, const MPI_Status* status) {
  if (!r || index == MPI_UNDEFINED || index < 0) return;
  complete_request(static_cast<std::uint64_t>(index), request_at(r, index), status);
}

void Call::complete_some(const MPI_Request* r, std::int64_t nreq, int outcount, const int* indices,
                         const MPI_Status* statuses) {
  if (outcount == MPI_UNDEFINED || !r || !indices) return;
  RequestInfo* const* info = resolve(r, nreq);
  if (!info) return;
  for (int k = 0; k < outcount; ++k) {
    const int i = indices[k];
    if (i < 0 || i >= nreq) continue;
    complete_request(static_cast<std::uint64_t>(i), info[i], statuses + k);
  }
}

void Call::start(MPI_Request r) {
  const RequestInfo* info = rec_->requests.find({r, 0});
  if (info && info->kind == RequestKind::send)
    hash_send(info->send_buf, info->send_count, info->send_type, 0);  // not to PROC_NULL
}

void Call::start_all(std::int64_t n, const MPI_Request* r) {
  for (std::int64_t i = 0; r && i < n; ++i) start(r[i]);
}

void Call::release(MPI_Request r) {
  rec_->requests.retire(rec_->requests.find({r, 0}));
  resolved_r_ = nullptr;
}

}  // namespace encore::dump
