// One MPI call being recorded. The generated shims drive it: begin() and end() bracket the PMPI
// call, put_*() encode arguments by role (encore/event_format.hpp), and the hooks add what the
// call means beyond its arguments: received payloads, send hashes, request bookkeeping. The
// destructor commits the event to the thread's stream.
//
// Timing: two clock reads per call (before and after PMPI), a third after our own work on heavy
// calls and one light call in 64. The raw ticks go to the thread's segment as they are
// (RawTimes); the writer thread turns them into gap, duration and overhead, charging what the
// tool spends after PMPI to the next event, so corrected timestamps exclude it (the seed's
// s'_k = s_k - sum_{i<k} o_i).
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>

#include "recorder.hpp"
#include "recv_layout.hpp"
#include <mpi.h>

#include "encore/collective_contribution.hpp"
#include "encore/event_format.hpp"
#include "encore/mpi_table.hpp"
#include "encore/varint.hpp"

// Inlined: a light send hashes a few bytes, less work than a call into the library.
#define XXH_INLINE_ALL
#include <xxhash.h>

// The per-call path is a handful of small steps: inlined into every shim, not called.
#define ENCORE_HOT __attribute__((always_inline)) inline

namespace encore::dump {

class LeanPoll;

class Call {
 public:
  ENCORE_HOT explicit Call(fn::Id id) noexcept : id_(id) {
    rec_ = Recorder::get();
    if (!rec_) return;
    ts_ = tls_stream;
    if (!ts_) {
      ts_ = rec_->register_thread();
      if (!ts_) return;
    }
    if (ts_->in_tool) return;
    if (ts_->lean.n) ts_->lean_fold();  // the lean polls before this call
    ts_->in_tool = true;
    active_ = true;
    // The body is encoded straight into the events segment (no copy at commit); an event too
    // large for the room left moves to the scratch buffer (grow()).
    buf_ = ts_->body_cursor();
    cap_ = ts_->body_room();
    in_place_ = buf_ != nullptr && cap_ >= kHeadBytes;
    if (!in_place_) {
      buf_ = ts_->scratch.data();
      cap_ = ts_->scratch.size();  // at least kHeadBytes (ThreadStream)
    }
    // The head's function id is a constant of the shim; commit() adds the flags.
    const auto head = static_cast<std::uint32_t>(id) << event_format::kHeadFlagBits;
    event_format::write_head(head, buf_);
    pos_ = kHeadBytes;
  }
  ENCORE_HOT ~Call() {
    if (active_) commit();
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  bool active() const noexcept { return active_; }
  bool ok() const noexcept { return rc_ == MPI_SUCCESS; }

  // Work the tool does before the PMPI call (copying request arrays, MPI_Finalize's own
  // communication) starts here; it is charged as overhead, not as the call's duration.
  void mark_pre_work() noexcept { t0_ = rec_->clock.ticks(); }
  // A plain thread (ThreadStream::plain) only reads the TSC here: one test, not three.
  ENCORE_HOT void begin() noexcept {
    if (ts_->plain) [[likely]] {
      t1_ = __rdtsc();
      return;
    }
    if (rec_->counters_on) read_counters();
    t1_ = rec_->clock.ticks();
  }
  ENCORE_HOT void end(int rc) noexcept {
    if (ts_->plain) [[likely]] {
      t2_ = __rdtsc();
      rc_ = rc;
    } else {
      t2_ = rec_->clock.ticks();
      rc_ = rc;
      if (rec_->multiple) lock_shared();
    }
    if (rc != MPI_SUCCESS) [[unlikely]]
      put_int(rc);
  }

  // Failed polls (MPI_Iprobe, MPI_Test... that found nothing) come in runs of identical calls.
  // The shims of those functions call repeat_poll() after end(): when this one fails like the
  // thread's previous event, with the same function and arguments (`a`, `b` and a request
  // array summarise them exactly), it commits its raw times and the 2-byte repeat head only
  // (format 1.2) and the shim returns. Else the shim encodes the call and ends with
  // finish_poll(), which commits it and, if it failed, makes it the template of a run.
  static std::uint64_t poll_pair(std::int64_t lo, std::int64_t hi) noexcept {
    return static_cast<std::uint32_t>(lo) | static_cast<std::uint64_t>(hi) << 32;
  }
  ENCORE_HOT bool repeat_poll(bool failed, std::uint64_t a, std::uint64_t b,
                              const MPI_Request* r = nullptr, std::int64_t n = 0) noexcept {
    const ThreadStream::PollKey& k = ts_->poll_key;
    if (!failed || ts_->poll_at != ts_->events() || k.a != a || k.b != b || k.fn != id_ ||
        !in_place_ || !ts_->times_fit())
      return false;
    if (n > 0 &&
        (ts_->poll_requests.size() != static_cast<std::size_t>(n) ||
         std::memcmp(ts_->poll_requests.data(), r, sizeof *r * ts_->poll_requests.size()) != 0))
      return false;
    buf_[0] = std::byte{event_format::kRepeatHead0};
    buf_[1] = std::byte{event_format::kRepeatHead1};
    pos_ = kHeadBytes;
    RawTimes* t = ts_->times_cursor();
    t->flags = ts_->prev_flags | ts_->poll_flags;
    t->prev_t3 = ts_->prev_t3;
    t->t0 = t0_;
    t->t1 = t1_;
    t->t2 = t2_;
    ts_->commit_in_place(kHeadBytes);
    ts_->poll_at = ts_->events();
    finish_light();
    active_ = false;
    ts_->lean_open(r, n);
    return true;
  }
  ENCORE_HOT void finish_poll(bool failed, std::uint64_t a, std::uint64_t b,
                              const MPI_Request* r = nullptr, std::int64_t n = 0) {
    // Only a template the writer can find again: in place, in the segment, with no extras.
    const std::size_t at = ts_->body_offset();
    // commit_work() covers per-call extras (ThreadStream::set_extras_every_call).
    const bool keep = failed && in_place_ && ts_->times_fit() && !extras_ && !ts_->commit_work() &&
                      pos_ < RawTimes::kRepeatMaxLen && at < RawTimes::kRepeatMaxAt;
    const std::size_t len = pos_;
    commit();
    active_ = false;
    if (keep) ts_->start_poll_run(id_, a, b, len, at, r, n);
  }
  // A poll whose PMPI call the lean path made (LeanPoll) but could not append (it found
  // something or failed): recorded in full with the times taken there.
  ENCORE_HOT void resume(std::uint64_t t1, std::uint64_t t2, int rc) noexcept {
    t1_ = t1;
    t2_ = t2;
    rc_ = rc;
    if (rec_->multiple) lock_shared();
    if (rc != MPI_SUCCESS) [[unlikely]]
      put_int(rc);
  }

  // Fields: scalar arguments written through a local cursor into room reserved once for the
  // run of them (the generated shims know each field's bound), so the cursor stays in a
  // register and no field checks the room.
  struct Fields {
    std::byte* p;
    ENCORE_HOT void s(std::int64_t v) noexcept { p += encode_svarint(v, p); }
    ENCORE_HOT void u(std::uint64_t v) noexcept { p += encode_uvarint(v, p); }
  };
  ENCORE_HOT Fields fields(std::size_t bound) noexcept {
    reserve(bound);
    return {buf_ + pos_};
  }
  ENCORE_HOT void close(Fields w) noexcept { pos_ = static_cast<std::size_t>(w.p - buf_); }
  static std::uint8_t buf_flag(const void* p) noexcept {
    using event_format::BufFlag;
    if (p == MPI_IN_PLACE) return static_cast<std::uint8_t>(BufFlag::in_place);
    if (p == MPI_BOTTOM) return static_cast<std::uint8_t>(BufFlag::bottom);
    return static_cast<std::uint8_t>(BufFlag::normal);
  }
  ENCORE_HOT std::uint32_t comm_id(MPI_Comm c) const noexcept { return rec_->comm_ids.lookup(c); }
  std::uint32_t group_id(MPI_Group g) const noexcept { return rec_->group_ids.lookup(g); }
  ENCORE_HOT std::uint32_t datatype_id(MPI_Datatype t) const noexcept { return rec_->types.id(t); }
  std::uint32_t op_id(MPI_Op o) const noexcept { return rec_->op_ids.lookup(o); }
  template <class H>
  std::uint32_t handle_id(HandleKind k, H h) {
    return rec_->ids(k).lookup(handle_value(h));
  }

  // Scalars and buffers --------------------------------------------------------------------
  ENCORE_HOT void put_int(std::int64_t v) noexcept {
    reserve(kMaxVarintBytes);
    pos_ += encode_svarint(v, buf_ + pos_);
  }
  template <class T>
  void put_int_ptr(const T* p) noexcept {
    put_int(p ? static_cast<std::int64_t>(*p) : 0);
  }
  ENCORE_HOT void put_uint(std::uint64_t v) noexcept {
    reserve(kMaxVarintBytes);
    pos_ += encode_uvarint(v, buf_ + pos_);
  }
  ENCORE_HOT void put_buf(const void* p) noexcept {
    using event_format::BufFlag;
    BufFlag f = BufFlag::normal;
    if (p == MPI_IN_PLACE)
      f = BufFlag::in_place;
    else if (p == MPI_BOTTOM)
      f = BufFlag::bottom;
    put_uint(static_cast<std::uint8_t>(f));
  }
  template <class T>
  void put_ints(const T* p, std::int64_t n) {
    if (!p || n < 0 || p == reinterpret_cast<const T*>(MPI_UNWEIGHTED) ||
        p == reinterpret_cast<const T*>(MPI_WEIGHTS_EMPTY))
      n = 0;
    put_uint(static_cast<std::uint64_t>(n));
    for (std::int64_t i = 0; i < n; ++i) put_int(static_cast<std::int64_t>(p[i]));
  }
  void put_double(double v) noexcept {
    reserve(8);
    store_le(buf_ + pos_, std::bit_cast<std::uint64_t>(v));
    pos_ += 8;
  }
  void put_string(const char* s);
  void put_absent(Role role);

  // Handles ---------------------------------------------------------------------------------
  ENCORE_HOT void put_comm(MPI_Comm c) noexcept { put_uint(rec_->comm_ids.lookup(c)); }
  void put_new_comm(MPI_Comm c);
  void put_freed_comm(MPI_Comm c);
  void put_group(MPI_Group g) noexcept { put_uint(rec_->group_ids.lookup(g)); }
  void put_new_group(MPI_Group g);
  void put_freed_group(MPI_Group g) { put_uint(rec_->group_ids.release(g)); }
  ENCORE_HOT void put_datatype(MPI_Datatype t) noexcept { put_uint(rec_->types.id(t)); }
  void put_new_datatype(MPI_Datatype t) { put_uint(rec_->types.create(t)); }
  void put_freed_datatype(MPI_Datatype t) { put_uint(rec_->types.release(t)); }
  void put_datatypes(const MPI_Datatype* t, std::int64_t n);
  void put_op(MPI_Op o) noexcept { put_uint(rec_->op_ids.lookup(o)); }
  void put_new_op(MPI_Op o) { put_uint(rec_->op_ids.create(o)); }
  void put_freed_op(MPI_Op o) { put_uint(rec_->op_ids.release(o)); }
  template <class H>
  void put_handle(HandleKind k, H h) {
    put_uint(rec_->ids(k).lookup(handle_value(h)));
  }
  template <class H>
  void put_new_handle(HandleKind k, H h) {
    put_uint(rec_->ids(k).create(handle_value(h)));
  }
  template <class H>
  void put_freed_handle(HandleKind k, H h) {
    put_uint(rec_->ids(k).release(handle_value(h)));
  }

  // Requests and statuses -------------------------------------------------------------------
  void put_new_request(MPI_Request r);
  void put_request(MPI_Request r);
  void put_requests(const MPI_Request* r, std::int64_t n);
  // `cancellable` false: the status of a call that completes no request (a blocking receive,
  // a probe), whose cancelled bit MPI does not define (MPICH leaves a probe's as it was): not
  // recorded.
  ENCORE_HOT void put_status(const MPI_Status* s, bool ignored, bool cancellable = true) noexcept {
    if (!s || s == MPI_STATUS_IGNORE) {
      put_status_fields(ignored ? event_format::kStatusIgnored : 0, 0, 0, 0);
      return;
    }
    // MPI_ERROR is set only by multiple-completion calls that fail, whose outputs are not
    // recorded: the field is recorded as 0 rather than as whatever the memory held.
    put_status_fields((ignored ? event_format::kStatusIgnored : 0) |
                          (cancellable && status_cancelled(s) ? event_format::kStatusCancelled : 0),
                      s->MPI_SOURCE, s->MPI_TAG, status_bytes(s));
  }
  // The same into fields (at most 32 bytes).
  ENCORE_HOT void put_status(Fields& w, const MPI_Status* s, bool ignored,
                             bool cancellable = true) noexcept {
    unsigned bits = ignored ? event_format::kStatusIgnored : 0;
    if (!s || s == MPI_STATUS_IGNORE) {
      w.p[0] = static_cast<std::byte>(bits);
      std::memset(w.p + 1, 0, 4);  // source, tag, count, error: all 0
      w.p += 5;
      return;
    }
    if (cancellable && status_cancelled(s)) bits |= event_format::kStatusCancelled;
    w.u(bits);
    w.s(s->MPI_SOURCE);
    w.s(s->MPI_TAG);
    w.u(static_cast<std::uint64_t>(status_bytes(s)));
    *w.p++ = std::byte{0};  // error: svarint 0
  }
  static MPI_Count status_bytes(const MPI_Status* s) noexcept {
    // MPICH keeps the byte count in count_lo and the high bits of count_hi_and_cancelled.
    return (static_cast<MPI_Count>(s->count_hi_and_cancelled >> 1) << 32) +
           static_cast<MPI_Count>(static_cast<unsigned>(s->count_lo));
  }
  static bool status_cancelled(const MPI_Status* s) noexcept {
    return (s->count_hi_and_cancelled & 1) != 0;
  }
  void put_statuses(const MPI_Status* s, std::int64_t n, bool ignored);
  // Statuses of completion calls: only the fields MPI defines for the request's kind.
  void put_completion_status(const MPI_Status* s, bool ignored, MPI_Request r);
  void put_completion_status_at(const MPI_Status* s, bool ignored, const MPI_Request* r, int index);
  void put_completion_statuses(const MPI_Status* s, std::int64_t n, bool ignored,
                               const MPI_Request* r, std::int64_t nreq, const int* indices);
  const MPI_Request* copy_requests(const MPI_Request* r, std::int64_t n);
  // The same after LeanPoll made the call: no pre-work to time, the requests as they were.
  const MPI_Request* copy_requests(const LeanPoll& lean, std::int64_t n);
  MPI_Status* scratch_statuses(std::int64_t n);

  // Communicator facts used for array lengths and root tests --------------------------------
  std::int64_t comm_size(MPI_Comm c) { return rec_->comm(c).size; }
  std::int64_t send_peers(MPI_Comm c, bool neighbor);
  std::int64_t recv_peers(MPI_Comm c, bool neighbor);
  std::int64_t cart_ndims(MPI_Comm c);
  bool is_root(int root, MPI_Comm c);
  template <class T>
  std::int64_t sum(const T* p, std::int64_t n) {
    std::int64_t s = 0;
    for (std::int64_t i = 0; p && i < n; ++i) s += p[i];
    return s;
  }

  // Hooks -----------------------------------------------------------------------------------
  // Copying or hashing this little contiguous data costs a few ns: such a call still counts
  // as light (its post-work is estimated, not measured; see commit()), and light sends and
  // receives are hashed and copied inline.
  static constexpr std::size_t kLightBytes = 256;
  // A send to MPI_PROC_NULL moves nothing, so a replay has nothing to check: no hash (halo
  // codes send most of their boundary rows there).
  ENCORE_HOT void hash_send(const void* buf, MPI_Count count, MPI_Datatype type, int peer) {
    if (!rec_->options.send_hashes || count <= 0 || buf == MPI_IN_PLACE || peer == MPI_PROC_NULL)
      return;
    TypeInfo& t = rec_->types.info(type);
    const auto bytes = static_cast<std::size_t>(count * t.size);
    if (t.contiguous && bytes <= kLightBytes && t2_ && !rec_->convert_payload) [[likely]] {
      const std::byte* data = static_cast<const std::byte*>(buf) + t.true_lb;
      // A constant length lets the compiler drop XXH3's dispatch on it: the 8-byte message
      // (a double, a long) is the common tiny one. The same hash either way.
      emit_send_hash(bytes == 8 ? XXH3_64bits(data, 8) : XXH3_64bits(data, bytes), bytes);
      return;
    }
    hash_send_typed(buf, count, type, t);
  }
  // A send hash taken before the PMPI call (the buffer is overwritten by it): timed as
  // pre-work, and under the shared tables' lock like the rest of the recording.
  void hash_send_before(const void* buf, MPI_Count count, MPI_Datatype type, int peer);
  // A collective's contribution (collective_contribution.hpp), one hash a block: after the
  // call, or before it when the input is in the receive buffer, which the call overwrites.
  void contribute(const contribution::Blocks& blocks);
  void contribute_before(const contribution::Blocks& blocks);
  // A persistent collective's: kept with its request, hashed before each MPI_Start(all).
  void track_contribution(MPI_Request r, contribution::Blocks blocks);
  void start_contributions(const MPI_Request* r, std::int64_t n);
  // A probe found its message: the light receive of it need not look first (recv_call).
  void message_found() noexcept { ts_->recv_helped_at = ts_->events_total(); }
  ENCORE_HOT void capture_message(const void* buf, MPI_Count count, MPI_Datatype type,
                                  const MPI_Status* status) {
    (void)count;
    // Blocking receives only, which are never cancelled: their cancelled bit is not looked at.
    if (!status || status->MPI_SOURCE == MPI_PROC_NULL) return;
    const MPI_Count bytes = status_bytes(status);
    if (bytes <= 0) return;
    TypeInfo& t = rec_->types.info(type);
    if (t.size <= 0) return;
    if (static_cast<std::size_t>(bytes) <= kLightBytes && t.light_copy && rec_->copy_payload &&
        bytes % t.size == 0) [[likely]] {
      ts_->append_payload(
          {static_cast<const std::byte*>(buf) + t.true_lb, static_cast<std::size_t>(bytes)});
      put_payload_extra(0, t.id, bytes / t.size, static_cast<std::uint64_t>(bytes));
      return;
    }
    // A partial last element is packed whole and cut to the bytes that arrived.
    capture_typed(buf, (bytes + t.size - 1) / t.size, type, t, 0);
  }
  void capture(const RecvLayout& layout, std::uint64_t slot = 0);
  // capture(layout::whole(...)) without building the layout.
  void capture_whole(const void* buf, MPI_Count count, MPI_Datatype type) {
    if (buf != MPI_IN_PLACE) capture_block(buf, count, type, 0);
  }
  void capture_block(const void* base, MPI_Count count, MPI_Datatype type, std::uint64_t slot);
  // An MPI_Isendrecv(_replace)'s receive: recorded whole at completion (RequestInfo::status_unset).
  void track_sendrecv(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type);
  void track_message(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type,
                     bool persistent);
  void track_collective(MPI_Request r, RecvLayout layout, bool persistent);
  void track_persistent_send(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type,
                             int peer);
  // MPI_Request_get_status that said done: the data is the program's to read from now on.
  void peek_request(MPI_Request r, const MPI_Status* status);
  void complete_one(MPI_Request r, const MPI_Status* status);
  void complete_all(std::int64_t n, const MPI_Request* r, const MPI_Status* statuses);
  void complete_index(const MPI_Request* r, int index, const MPI_Status* status);
  void complete_some(const MPI_Request* r, std::int64_t nreq, int outcount, const int* indices,
                     const MPI_Status* statuses);
  void start(MPI_Request r);
  void start_all(std::int64_t n, const MPI_Request* r);
  void release(MPI_Request r);
  void define_datatype(MPI_Datatype t);
  // Results outside the arguments (call_results.cpp): a predefined attribute key's value
  // (C's MPI_Comm_get_attr stores a pointer to it), a new distributed graph's neighbours.
  void attribute_value(int keyval, std::int64_t value);
  void attribute_value(int keyval, const void* attribute_val, int flag);
  void neighbours(MPI_Comm comm);

  Recorder& recorder() noexcept { return *rec_; }
  // MPI_Init's shim times PMPI_Init before the recorder exists.
  void set_begin(std::uint64_t t1) noexcept { t1_ = t1; }
  // The tool worked since the PMPI call returned (MPI_Init: starting the recorder): read the
  // clock at commit so that work is charged as overhead, not left in the next compute gap.
  void mark_heavy() noexcept { heavy_ = true; }
  void end_at(std::uint64_t t2, int rc) noexcept {
    t2_ = t2;
    rc_ = rc;
    if (rc != MPI_SUCCESS) put_int(rc);
  }

 private:
  template <class H>
  static std::int64_t handle_value(H h) noexcept {
    if constexpr (std::is_pointer_v<H>)
      return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(h));
    else
      return static_cast<std::int64_t>(h);
  }
  ENCORE_HOT void reserve(std::size_t n) {
    if (pos_ + n > cap_) [[unlikely]]
      grow(n);
  }
  void grow(std::size_t n);
  void lock_shared() noexcept {
    rec_->shared_mu.lock();
    locked_ = &rec_->shared_mu;
  }
  // Inlined into every shim: what a light call needs; the rest is out of line.
  ENCORE_HOT void commit() noexcept {
    if (ts_->commit_work()) [[unlikely]]  // per-call extras included
      commit_extras();
    if (extras_) put_uint(0);
    // The flags are the head's low bits, in its first byte (the id was written at the start).
    if (rc_ != MPI_SUCCESS) [[unlikely]]
      buf_[0] |= std::byte{event_format::kHasError};
    if (extras_) buf_[0] |= std::byte{event_format::kHasExtras};
    if (in_place_ && ts_->times_fit()) [[likely]] {
      // The body is already in place; the raw times go to the segment's times region.
      RawTimes* t = ts_->times_cursor();
      t->flags = ts_->prev_flags;
      t->prev_t3 = ts_->prev_t3;
      t->t0 = t0_;
      t->t1 = t1_;
      t->t2 = t2_;
      ts_->commit_in_place(pos_);
    } else {
      commit_moved({ts_->prev_flags, ts_->prev_t3, t0_, t1_, t2_});
    }
    finish_light();
  }
  ENCORE_HOT void finish_light() noexcept {
    if (locked_) locked_->unlock();
    // The clock read that closes our work costs as much as the rest of a light call's
    // recording, so it is taken after heavy work (payloads, hashes, packing, new objects,
    // stalls) and on one light call in kTailSample; the writer charges the other light calls
    // the median of the last sampled ones (TimeEncoder).
    constexpr unsigned kTailSample = 64;
    if (ts_->sealed) [[unlikely]] {
      ts_->sealed = false;
      heavy_ = true;
    }
    if (heavy_ || ++ts_->light_calls >= kTailSample) [[unlikely]]
      measure_tail();
    else
      ts_->prev_flags = 0;
    ts_->in_tool = false;
  }
  void commit_extras() noexcept;
  void commit_moved(const RawTimes& times) noexcept;
  void measure_tail() noexcept;
  void put_call_extras() noexcept;
  void read_counters() noexcept;
  void emit_send_hashes();
  ENCORE_HOT void begin_extra(event_format::Extra tag) noexcept {
    extras_ = true;
    put_uint(static_cast<std::uint8_t>(tag));
  }
  void emit_send_hash(std::uint64_t hash, std::uint64_t bytes,
                      event_format::Extra tag = event_format::Extra::send_hash) noexcept {
    extras_ = true;
    reserve(1 + 8 + kMaxVarintBytes);
    std::byte* p = buf_ + pos_;
    p[0] = static_cast<std::byte>(tag);
    store_le(p + 1, hash);
    pos_ += 9 + encode_uvarint(bytes, p + 9);
  }
  void hash_send_typed(const void* buf, MPI_Count count, MPI_Datatype type, TypeInfo& t,
                       event_format::Extra tag = event_format::Extra::send_hash);
  ENCORE_HOT void put_payload_extra(std::uint64_t slot, std::uint32_t type_id, MPI_Count count,
                                    std::uint64_t bytes) noexcept {
    extras_ = true;
    Fields w = fields(1 + 4 * kMaxVarintBytes);
    *w.p++ = static_cast<std::byte>(event_format::Extra::payload);
    w.u(slot);
    w.u(type_id);
    w.u(static_cast<std::uint64_t>(count));
    w.u(bytes);
    close(w);
  }
  void capture_typed(const void* base, MPI_Count count, MPI_Datatype type, TypeInfo& t,
                     std::uint64_t slot);
  // The first read of a large received message's bytes is the run's, not the tool's: after a
  // rendezvous transfer the lines can be in the sender's cache (MPICH over UCX seems to write
  // them from the sender's core) and whoever reads them first brings them over, 1.3 ns a byte on
  // session 23's host (8 MB: 10.9 ms, then 0.22 ms). The capture's copy comes first; without
  // this its first read went into the overhead taken out of the timeline, and the program's
  // next segment, finding the bytes already here, ran faster than in a plain run (collectives:
  // 15 of a plain 58 ms). So a read of every line is timed, then a second one, and the call's
  // end moves on by the difference (what the first read cost beyond lines already here).
  static constexpr std::size_t kFirstReadBytes = std::size_t{64} << 10;
  void end_after_first_read(std::span<const std::byte> data) noexcept;
  // The requests of an array, resolved once per call (RequestTable::resolve): the request
  // references, the statuses and the completions of one call share the pointers. Null when
  // the array is empty.
  RequestInfo* const* resolve(const MPI_Request* r, std::int64_t n);
  // The request of r[index] (0 <= index), from the call's resolved array when it has one.
  RequestInfo* request_at(const MPI_Request* r, int index);
  // Captures what a completed request received and retires it unless it is persistent.
  void complete_request(std::uint64_t slot, RequestInfo* info, const MPI_Status* status);
  // A receive's or a collective's data, at its completion or when MPI_Request_get_status
  // says it is done (`peek`: then only once, and not again at the completion).
  void capture_received(std::uint64_t slot, RequestInfo& req, const MPI_Status* status, bool peek);
  // A request reference: 0 for none; the distance back to its creating event, shifted, on the
  // same thread; else 1, the thread and the event.
  static constexpr std::size_t kRequestRefMax = 1 + 2 * kMaxVarintBytes;
  ENCORE_HOT void put_request_ref(Fields& w, const RequestInfo* info) noexcept {
    if (!info) {
      *w.p++ = std::byte{0};
    } else if (info->thread == ts_->index()) {
      w.u((ts_->events() - info->event) << 1);
    } else {
      *w.p++ = std::byte{1};
      w.u(info->thread);
      w.u(info->event);
    }
  }
  void put_request_ref(const RequestInfo* info);
  ENCORE_HOT void put_status_fields(unsigned bits, std::int64_t source, std::int64_t tag,
                                    MPI_Count bytes) noexcept {
    reserve(5 * kMaxVarintBytes);
    pos_ += encode_uvarint(bits, buf_ + pos_);
    pos_ += encode_svarint(source, buf_ + pos_);
    pos_ += encode_svarint(tag, buf_ + pos_);
    pos_ += encode_uvarint(static_cast<std::uint64_t>(bytes), buf_ + pos_);
    buf_[pos_++] = std::byte{0};  // error: svarint 0
  }
  // Only a receive defines source, tag and count, and not once it was cancelled; a send only
  // whether it was cancelled; other requests nothing. Undefined fields are recorded as 0, not
  // as stale memory. A null request gets MPI's empty status, which is defined.
  static constexpr std::size_t kStatusMax = 32;  // put_status(Fields&...)
  ENCORE_HOT void put_request_status(Fields& w, const MPI_Status* s, bool ignored,
                                     const RequestInfo* info, bool null_request) noexcept {
    const bool cancelled = !null_request && s && s != MPI_STATUS_IGNORE && status_cancelled(s);
    if (null_request || ((!info || info->kind == RequestKind::recv) && !cancelled)) {
      put_status(w, s, ignored);
      return;
    }
    const unsigned bits =
        (ignored ? event_format::kStatusIgnored : 0) |
        (cancelled && (!info || info->kind == RequestKind::send || info->kind == RequestKind::recv)
             ? event_format::kStatusCancelled
             : 0);
    w.u(bits);
    std::memset(w.p, 0, 4);  // source, tag, count, error: all 0
    w.p += 4;
  }
  void put_request_status(const MPI_Status* s, bool ignored, const RequestInfo* info,
                          bool null_request);
  void put_members(MPI_Group g);
  void emit_signature(TypeInfo& t);

  static constexpr std::size_t kHeadBytes = 2;  // uvarint head, always 2 bytes
  // Only what is read before it is written gets an initial value: the rest is set by the
  // constructor once the call is active (an inactive Call reads nothing but active_).
  fn::Id id_;
  Recorder* rec_;
  ThreadStream* ts_;
  bool active_ = false;
  bool in_place_;  // buf_ is the events segment itself, not the scratch buffer
  bool extras_ = false;
  bool heavy_ = false;  // the tool did more than encode: measure its time exactly
  int rc_ = MPI_SUCCESS;
  std::uint64_t t0_ = 0;  // before pre-work, when a call has any
  std::uint64_t t1_ = 0;
  std::uint64_t t2_ = 0;  // 0 until the PMPI call returned (hash_send)
  std::byte* buf_;
  std::size_t cap_;
  std::size_t pos_;
  std::mutex* locked_ = nullptr;             // the shared tables' lock, held from end() to commit()
  RequestInfo* created_ = nullptr;           // the request this call created (put_new_request)
  const MPI_Request* resolved_r_ = nullptr;  // the array ts_->resolved holds, while valid
  std::int64_t resolved_n_ = 0;
};

// The lean path of a poll that continues the thread's open run (ThreadStream::LeanRun): no
// Call, no encoding, two clock reads around the PMPI call and a 32-byte record. The generated
// shims of the six poll functions try it first; when the poll finds something (or fails), the
// shim records it through a Call with the times taken here (Call::resume).
// An MPI_Iprobe (overlay's LIGHT_FOUND_POLLS) that does not continue a run takes the same
// path on a thread where light calls may (LeanPoll::opens): it does not append, and
// LightCall::probe records it, as the template of a new run when it failed.
class LeanPoll {
 public:
  ENCORE_HOT LeanPoll(fn::Id id, std::uint64_t a, std::uint64_t b) noexcept {
    ThreadStream* ts = tls_stream;
    if (!ts) return;
    entry(ts);
    if (ts->lean_continues(id, a, b)) [[likely]]
      ts_ = ts;
  }
  struct Opens {};
  static constexpr Opens opens{};
  ENCORE_HOT LeanPoll(fn::Id id, std::uint64_t a, std::uint64_t b, Opens) noexcept {
    ThreadStream* ts = tls_stream;
    if (!ts) return;
    entry(ts);
    if (ts->lean_continues(id, a, b)) [[likely]] {
      ts_ = ts;
    } else if (ts->light_allowed && !ts->in_tool) {
      ts_ = ts;
      opening_ = true;
    }
  }
  ENCORE_HOT LeanPoll(fn::Id id, std::uint64_t a, std::uint64_t b, const MPI_Request* r,
                      std::int64_t n) noexcept {
    ThreadStream* ts = tls_stream;
    if (!ts) return;
    entry(ts);
    if (ts->lean_continues(id, a, b, r, n)) [[likely]]
      ts_ = ts;
  }
  bool open() const noexcept { return ts_ != nullptr; }
  bool called() const noexcept { return t2_ != 0; }
  std::uint64_t t1() const noexcept { return t1_; }
  std::uint64_t t2() const noexcept { return t2_; }
  ThreadStream* stream() const noexcept { return ts_; }
  // The request array the run's polls passed (the PMPI call may have changed the caller's).
  const MPI_Request* requests() const noexcept { return ts_->lean.req; }
  // Storage for the status of a caller's MPI_STATUS_IGNORE, kept for the Call path.
  MPI_Status* status() noexcept { return &status_.s; }
  // Storage for the statuses of a caller's MPI_STATUSES_IGNORE (Call::scratch_statuses).
  MPI_Status* statuses(std::int64_t n) { return ts_->scratch_statuses(n); }
  // The PMPI call runs as the tool's: MPI calls it makes (a generalized request's callbacks)
  // are not recorded, as under a Call.
  ENCORE_HOT void begin() noexcept {
    ts_->in_tool = true;
    t1_ = __rdtsc();
  }
  // Appends the poll if it failed like the run's; else the shim records it (LightCall::probe
  // or a Call), as it does a poll that opens a run.
  ENCORE_HOT bool end(bool failed) noexcept {
    t2_ = __rdtsc();
    if (failed && !opening_) [[likely]] {
      ts_->lean_append(t1_, t2_, t0_);
      return true;
    }
    ts_->in_tool = false;
    return false;
  }

 private:
  // The poll that will be sampled reads the clock on entry too: its sample then holds its
  // pre-work, the key compare included (ThreadStream::lean_sample_end).
  ENCORE_HOT void entry(const ThreadStream* ts) noexcept {
    if (ts->lean_samples_next()) [[unlikely]]
      t0_ = __rdtsc();
  }

  ThreadStream* ts_ = nullptr;
  bool opening_ = false;  // the call does not continue a run: it may open one
  std::uint64_t t0_ = 0;  // entry, on the poll that lean_append samples
  std::uint64_t t1_ = 0;
  std::uint64_t t2_ = 0;
  // A caller's MPI_STATUS_IGNORE. MPICH's probe sets source, tag and count but leaves the
  // cancelled bit as it finds it: cleared here, or a found message's status would carry
  // whatever the stack held (seen as "cancelled" now and then, which also sent the poll to the
  // Call path). One store a poll.
  struct IgnoredStatus {
    MPI_Status s;
    IgnoredStatus() noexcept { s.count_hi_and_cancelled = 0; }
  } status_;
};

// The communicator facts a collective's contribution depends on, as the recorder knows them.
struct CallComms {
  Call& c;
  int rank(MPI_Comm m) { return c.recorder().comm(m).rank; }
  bool inter(MPI_Comm m) { return c.recorder().comm(m).inter; }
  std::int64_t local_size(MPI_Comm m) { return c.recorder().comm(m).size; }
  std::int64_t send_peers(MPI_Comm m, bool neighbor) { return c.send_peers(m, neighbor); }
  MPI_Aint extent(MPI_Datatype t) { return c.recorder().types.info(t).extent; }
};

}  // namespace encore::dump
