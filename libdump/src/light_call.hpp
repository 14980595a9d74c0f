// The lean path of a light call: an MPI_Send of at most Call::kLightBytes of a contiguous type,
// an MPI_Recv of at most that many bytes of a light-copy type, a query (MPI_Get_count,
// MPI_Get_elements, MPI_Type_size: query()), an MPI_Isend of a contiguous type or an MPI_Irecv
// (isend(), irecv()), on a plain thread (TSC clock,
// no PAPI counters, no call sites, not MPI_THREAD_MULTIPLE). No Call: two clock reads around
// the PMPI call, the handle ids looked up (a handle may be freed and its value reused), the
// send hashed or the received bytes copied to the payload segment, and one fixed record
// (LightTimes) in the times region, published like any event. The writer thread encodes the
// body (encode_light_body) and splices it in at the record's body offset. Anything else (an
// error, a larger or derived type, a full segment, pending extras) goes to the shim's Call
// path with the times already taken (Call::resume), as a lean poll that found something.
#pragma once

#include "call.hpp"
#include "light_record.hpp"

namespace encore::dump {

class LightCall {
 public:
  ENCORE_HOT LightCall() noexcept {
    ThreadStream* ts = tls_stream;
    if (ts && ts->light_allowed && !ts->in_tool) [[likely]]
      ts_ = ts;
  }
  // A poll of a lean run that found something (LeanPoll made the call and took its times):
  // recorded here if it is an MPI_Iprobe that succeeded (probe()).
  ENCORE_HOT explicit LightCall(const LeanPoll& lean) noexcept
      : ts_(lean.stream()), t1_(lean.t1()), t2_(lean.t2()) {}
  bool open() const noexcept { return ts_ != nullptr; }
  bool called() const noexcept { return t2_ != 0; }
  std::uint64_t t1() const noexcept { return t1_; }
  std::uint64_t t2() const noexcept { return t2_; }
  // Storage for the status of a caller's MPI_STATUS_IGNORE, kept for the Call path.
  MPI_Status* status() noexcept { return &status_; }
  // The PMPI call runs as the tool's (MPI calls it makes are not recorded, as under a Call).
  ENCORE_HOT void begin() noexcept {
    ts_->in_tool = true;
    t1_ = __rdtsc();
  }

  // Records the send if it is light; else (false) the shim records it through a Call.
  ENCORE_HOT bool send(int rc, fn::Id id, const void* buf, int count, MPI_Datatype type, int dest,
                       int tag, MPI_Comm comm) {
    t2_ = __rdtsc();
    Recorder* rec = Recorder::get();
    if (rc != MPI_SUCCESS || !ready(rec)) [[unlikely]]
      return give_up();
    TypeInfo& t = rec->types.info(type);
    LightTimes* r = record();
    r->flags = RawTimes::kLight | ts_->prev_flags;
    if (rec->options.send_hashes && count > 0 && buf != MPI_IN_PLACE && dest != MPI_PROC_NULL) {
      const auto bytes = static_cast<std::size_t>(count * t.size);
      // Hashed in another byte order (convert_payload): Call::hash_send_typed's work.
      if (!t.contiguous || bytes > Call::kLightBytes || rec->convert_payload) [[unlikely]]
        return give_up();
      const std::byte* data = static_cast<const std::byte*>(buf) + t.true_lb;
      if (bytes >= 4 && bytes <= 8) [[likely]] {
        // A send of 4 to 8 bytes (an int, a double) leaves them in the record, as two
        // overlapping 4-byte words: the writer hashes them (LightTimes::kUnhashed).
        std::uint32_t lo, hi;
        std::memcpy(&lo, data, 4);
        std::memcpy(&hi, data + bytes - 4, 4);
        r->word = lo | std::uint64_t{hi} << 32;
        r->flags |= LightTimes::kExtra | LightTimes::kUnhashed;
      } else {
        r->word = XXH3_64bits(data, bytes);
        r->flags |= LightTimes::kExtra;
      }
      r->bytes = static_cast<std::uint32_t>(bytes);
    }
    r->kind = LightTimes::send;
    r->bits = Call::buf_flag(buf);
    fill(r, id, count, t.id, dest, tag, rec->comm_ids.lookup(comm));
    return true;
  }

  // Records the MPI_Iprobe that found a message (after LeanPoll), or, when it found nothing,
  // the first failed poll of a run (`a` and `b` its key, as Call::repeat_poll's); else
  // (false) the shim records it through a Call.
  ENCORE_HOT bool probe(int rc, fn::Id id, int source, int tag, MPI_Comm comm, int flag,
                        const MPI_Status* status, bool ignored, std::uint64_t a, std::uint64_t b) {
    if (rc == MPI_SUCCESS && !flag) return opens_run(id, source, tag, comm, ignored, a, b);
    Recorder* rec = Recorder::get();
    // A probe's cancelled bit means nothing (MPICH may leave it as it was): not looked at.
    if (rc != MPI_SUCCESS || !flag || !ts_->light_allowed || !ready(rec)) [[unlikely]]
      return give_up();
    const MPI_Count bytes = Call::status_bytes(status);
    if (bytes < 0 || bytes > MPI_Count{0xffffffff}) [[unlikely]]
      return give_up();
    LightTimes* r = record();
    r->flags = RawTimes::kLight | ts_->prev_flags;
    r->bytes = static_cast<std::uint32_t>(bytes);
    r->word = static_cast<std::uint32_t>(status->MPI_SOURCE) |
              std::uint64_t{static_cast<std::uint32_t>(status->MPI_TAG)} << 32;
    r->kind = LightTimes::probe;
    r->bits = static_cast<std::uint8_t>((ignored ? event_format::kStatusIgnored : 0) << 4);
    fill(r, id, flag, 0, source, tag, rec->comm_ids.lookup(comm));
    ts_->recv_helped_at = ts_->events_total();  // the receive of this message need not look
    return true;
  }

  // A failed MPI_Iprobe that continues no run: the template of a new one, so its body is
  // encoded here, in place, as the Call path encodes it (encode_light_body of the probe,
  // flag 0, no status), with a RawTimes record: a repeat copies it, the writer finds it
  // (RawTimes::kRepeatAt). No LightTimes record: nothing is left for the writer to encode.
  ENCORE_HOT bool opens_run(fn::Id id, int source, int tag, MPI_Comm comm, bool ignored,
                            std::uint64_t a, std::uint64_t b) {
    Recorder* rec = Recorder::get();
    const std::size_t at = ts_->body_offset();
    if (!ready(rec) || ts_->body_room() < kLightBodyMax || at >= RawTimes::kRepeatMaxAt)
        [[unlikely]]
      return give_up();
    LightTimes r{};
    r.word = 0;
    r.count = 0;  // the flag
    r.peer = source;
    r.tag = tag;
    r.comm_id = rec->comm_ids.lookup(comm);
    r.bytes = 0;
    r.fn = static_cast<std::uint16_t>(id);
    r.kind = LightTimes::probe;
    r.bits = static_cast<std::uint8_t>((ignored ? event_format::kStatusIgnored : 0) << 4);
    const std::size_t len = encode_light_body_inline(r, ts_->body_cursor());
    commit_body(len);
    sample_tail();
    ts_->start_poll_run(id, a, b, len, at, nullptr, 0);
    ts_->in_tool = false;
    return true;
  }

  // The light MPI_Recv's own call, in place of PMPI_Recv. A receive that may wait while the
  // thread has published events since it last helped its writer (ThreadStream::kRecvHelpFrom)
  // first looks for its message (PMPI_Iprobe, same source, tag and communicator): if it is not
  // there yet, the thread does a slice of the writer's work on those events (TraceWriter::help,
  // as a run of failed polls does) before it blocks. The receive itself is always PMPI_Recv:
  // on this one thread (the light path is never taken under MPI_THREAD_MULTIPLE) it matches
  // the message the probe looked for, and it returns, and raises on the communicator's error
  // handler, exactly what it would have alone. (MPI_Irecv and MPI_Wait would not: MPICH raises
  // a failed wait's error, a truncation, as fatal whatever the communicator's handler.)
  ENCORE_HOT int recv_call(void* buf, int count, MPI_Datatype type, int source, int tag,
                           MPI_Comm comm, MPI_Status* status) {
    const std::uint64_t events = ts_->events_total();
    if (events - ts_->recv_helped_at >= ThreadStream::kRecvHelpFrom && ts_->on_wait &&
        valid_peer(source, tag, comm)) [[unlikely]] {
      int found = 1;
      if (PMPI_Iprobe(source, tag, comm, &found, MPI_STATUS_IGNORE) == MPI_SUCCESS && !found) {
        ts_->recv_helped_at = events;
        ts_->on_wait();
      }
    }
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
  }

  // Whether a probe for (source, tag) on `comm` raises no error, which PMPI_Recv would raise
  // again (a user's error handler would run twice, or a fatal one would name MPI_Iprobe): a
  // communicator the tool saw created (an invalid one would raise in any call on it), a source
  // of its group (the remote group of an intercommunicator) or MPI_ANY_SOURCE, a tag from 0 to
  // MPI_TAG_UB or MPI_ANY_TAG (not MPI_PROC_NULL: nothing to wait for).
  static bool valid_peer(int source, int tag, MPI_Comm comm) noexcept {
    const Recorder* rec = Recorder::get();
    if (comm == MPI_COMM_NULL || rec == nullptr ||
        rec->comm_ids.lookup(comm) == event_format::kUnknownId)
      return false;
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > tag_ub())) return false;
    if (source == MPI_ANY_SOURCE) return true;
    int inter = 0;
    int size = 0;
    return source >= 0 && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS &&
           (inter ? PMPI_Comm_remote_size(comm, &size) : PMPI_Comm_size(comm, &size)) ==
               MPI_SUCCESS &&
           source < size;
  }
  // MPI_TAG_UB of this run (at least 32767, the standard's minimum), read once.
  static int tag_ub() noexcept {
    static const int ub = [] {
      void* value = nullptr;
      int flag = 0;
      return PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag) == MPI_SUCCESS && flag &&
                     value
                 ? *static_cast<const int*>(value)
                 : 32767;
    }();
    return ub;
  }

  // Records the receive if it is light; else (false) the shim records it through a Call.
  ENCORE_HOT bool recv(int rc, fn::Id id, const void* buf, int count, MPI_Datatype type, int source,
                       int tag, MPI_Comm comm, const MPI_Status* status, bool ignored) {
    t2_ = __rdtsc();
    Recorder* rec = Recorder::get();
    if (rc != MPI_SUCCESS || !ready(rec)) [[unlikely]]  // a blocking receive: never cancelled
      return give_up();
    const MPI_Count bytes = Call::status_bytes(status);
    if (bytes < 0 || bytes > static_cast<MPI_Count>(Call::kLightBytes)) [[unlikely]]
      return give_up();
    TypeInfo& t = rec->types.info(type);
    LightTimes* r = record();
    r->flags = RawTimes::kLight | ts_->prev_flags;
    r->elems = 0;
    if (bytes > 0 && status->MPI_SOURCE != MPI_PROC_NULL) {
      // As Call::capture_message's light path; anything else takes the Call path.
      const auto n = static_cast<std::size_t>(bytes);
      if (t.size <= 0 || !t.light_copy || !rec->copy_payload || bytes % t.size != 0 ||
          !ts_->payload_fits(n)) [[unlikely]]
        return give_up();
      ts_->append_payload({static_cast<const std::byte*>(buf) + t.true_lb, n});
      r->elems = static_cast<std::uint32_t>(bytes / t.size);
      r->flags |= LightTimes::kExtra;
    }
    r->bytes = static_cast<std::uint32_t>(bytes);
    r->word = static_cast<std::uint32_t>(status->MPI_SOURCE) |
              std::uint64_t{static_cast<std::uint32_t>(status->MPI_TAG)} << 32;
    r->kind = LightTimes::recv;
    r->bits = static_cast<std::uint8_t>(Call::buf_flag(buf) |
                                        (ignored ? event_format::kStatusIgnored : 0) << 4);
    fill(r, id, count, t.id, source, tag, rec->comm_ids.lookup(comm));
    return true;
  }

  // Records a query call whose result is `value` (MPI_Get_count, MPI_Get_elements of a status;
  // MPI_Type_size), its body encoded in place as the Call path encodes it (the status, the
  // datatype's id, the result) with a RawTimes record, as opens_run does: a few varints, less
  // than a LightTimes record and the writer's encoding of it. Else (false) the shim records it
  // through a Call.
  ENCORE_HOT bool query(int rc, fn::Id id, const MPI_Status* status, MPI_Datatype type,
                        std::int64_t value) {
    t2_ = __rdtsc();
    if (!status || status == MPI_STATUS_IGNORE) [[unlikely]]
      return give_up();
    std::byte* p;
    if (!query_begin(rc, id, p)) [[unlikely]]
      return give_up();
    p += encode_uvarint(Call::status_cancelled(status) ? event_format::kStatusCancelled : 0, p);
    p += encode_svarint(status->MPI_SOURCE, p);
    p += encode_svarint(status->MPI_TAG, p);
    p += encode_uvarint(static_cast<std::uint64_t>(Call::status_bytes(status)), p);
    *p++ = std::byte{0};  // error: svarint 0
    return query_end(p, type, value);
  }
  ENCORE_HOT bool query(int rc, fn::Id id, MPI_Datatype type, std::int64_t value) {
    t2_ = __rdtsc();
    std::byte* p;
    if (!query_begin(rc, id, p)) [[unlikely]]
      return give_up();
    return query_end(p, type, value);
  }

  // Records a nonblocking send or receive (MPI_Isend, MPI_Irecv) that succeeded and needs no
  // packing: its body (the arguments and, for a send, the hash extra) encoded in place as the
  // Call path encodes it, with a RawTimes record, and the new request added to the table, as
  // Call::put_new_request and track_message do. A hash of more than Call::kLightBytes is
  // heavy work: the call then reads its tail as a heavy call does. Else (false) the shim
  // records it through a Call.
  ENCORE_HOT bool isend(int rc, fn::Id id, const void* buf, int count, MPI_Datatype type, int dest,
                        int tag, MPI_Comm comm, const MPI_Request* request) {
    t2_ = __rdtsc();
    Recorder* rec = Recorder::get();
    if (!post_ready(rc, rec)) [[unlikely]]
      return give_up();
    TypeInfo& t = rec->types.info(type);
    LightTimes r{};
    bool heavy = false;
    if (rec->options.send_hashes && count > 0 && buf != MPI_IN_PLACE && dest != MPI_PROC_NULL) {
      const auto bytes = static_cast<std::size_t>(count * t.size);
      if (!t.contiguous || bytes > 0xffffffffu || rec->convert_payload) [[unlikely]]
        return give_up();
      r.word = XXH3_64bits(static_cast<const std::byte*>(buf) + t.true_lb, bytes);
      r.bytes = static_cast<std::uint32_t>(bytes);
      r.flags = LightTimes::kExtra;
      heavy = bytes > Call::kLightBytes;
    }
    const std::size_t len = post(r, id, buf, count, t.id, dest, tag, rec->comm_ids.lookup(comm));
    add_request(rec, *request);
    return finish_body(len, heavy);
  }
  ENCORE_HOT bool irecv(int rc, fn::Id id, void* buf, int count, MPI_Datatype type, int source,
                        int tag, MPI_Comm comm, const MPI_Request* request) {
    t2_ = __rdtsc();
    Recorder* rec = Recorder::get();
    if (!post_ready(rc, rec)) [[unlikely]]
      return give_up();
    LightTimes r{};
    const std::size_t len =
        post(r, id, buf, count, rec->types.id(type), source, tag, rec->comm_ids.lookup(comm));
    if (RequestInfo* info = add_request(rec, *request)) {
      info->kind = RequestKind::recv;
      info->recv = {buf, count, type};
    }
    return finish_body(len, false);
  }

 private:
  ENCORE_HOT bool post_ready(int rc, Recorder* rec) noexcept {
    return rc == MPI_SUCCESS && ready(rec) && ts_->body_room() >= kLightBodyMax;
  }
  // The body of a send-shaped record (no status) in place; returns its length.
  ENCORE_HOT std::size_t post(LightTimes& r, fn::Id id, const void* buf, int count,
                              std::uint32_t type_id, int peer, int tag,
                              std::uint32_t comm_id) noexcept {
    r.kind = LightTimes::send;
    r.bits = Call::buf_flag(buf);
    r.count = count;
    r.peer = peer;
    r.tag = tag;
    r.type_id = type_id;
    r.comm_id = comm_id;
    r.fn = static_cast<std::uint16_t>(id);
    return encode_light_body_inline(r, ts_->body_cursor());
  }
  // This event's request (committed next: its index is the stream's event count).
  ENCORE_HOT RequestInfo* add_request(Recorder* rec, MPI_Request request) {
    if (request == MPI_REQUEST_NULL) return nullptr;
    RequestInfo& info = rec->requests.add(request);
    info.thread = ts_->index();
    info.event = ts_->events();
    return &info;
  }
  // Commits a body encoded in place (`len` bytes) with a RawTimes record of the call's times.
  ENCORE_HOT void commit_body(std::size_t len) noexcept {
    RawTimes* t = ts_->times_cursor();
    t->flags = ts_->prev_flags;
    t->prev_t3 = ts_->prev_t3;
    t->t0 = 0;
    t->t1 = t1_;
    t->t2 = t2_;
    ts_->commit_in_place(len);
  }
  // The same, then the tail: read now after heavy work, else sampled (as Call::finish_light).
  ENCORE_HOT bool finish_body(std::size_t len, bool heavy) noexcept {
    commit_body(len);
    if (heavy)
      measure_tail();
    else
      sample_tail();
    ts_->in_tool = false;
    return true;
  }
  // A query's body is at most the head, a status, a datatype id and an int.
  static constexpr std::size_t kQueryBodyMax = 2 + 5 * kMaxVarintBytes + 2 * kMaxVarintBytes;
  ENCORE_HOT bool query_begin(int rc, fn::Id id, std::byte*& p) noexcept {
    if (rc != MPI_SUCCESS || !ready(Recorder::get()) || ts_->body_room() < kQueryBodyMax)
      return false;
    p = ts_->body_cursor();
    const std::uint32_t head = static_cast<std::uint32_t>(id) << event_format::kHeadFlagBits;
    event_format::write_head(head, p);
    p += 2;
    return true;
  }
  ENCORE_HOT bool query_end(std::byte* p, MPI_Datatype type, std::int64_t value) noexcept {
    p += encode_uvarint(Recorder::get()->types.id(type), p);
    p += encode_svarint(value, p);
    return finish_body(static_cast<std::size_t>(p - ts_->body_cursor()), false);
  }
  // Whether the record can be appended now: the thread's lean polls counted first.
  ENCORE_HOT bool ready(const Recorder* rec) noexcept {
    if (ts_->lean.n) ts_->lean_fold();
    return rec && ts_->light_fits() && !ts_->commit_work();
  }
  ENCORE_HOT LightTimes* record() noexcept {
    return reinterpret_cast<LightTimes*>(ts_->light_cursor());
  }
  ENCORE_HOT bool give_up() noexcept {
    ts_->in_tool = false;
    return false;
  }
  // The common fields, the commit, and the tail's sample as Call::finish_light.
  ENCORE_HOT void fill(LightTimes* r, fn::Id id, int count, std::uint32_t type_id, int peer,
                       int tag, std::uint32_t comm_id) noexcept {
    r->prev_t3 = ts_->prev_t3;
    r->t1 = t1_;
    r->t2 = t2_;
    r->body_at = ts_->body_offset();
    r->count = count;
    r->peer = peer;
    r->tag = tag;
    r->type_id = type_id;
    r->comm_id = comm_id;
    r->fn = static_cast<std::uint16_t>(id);
    ts_->commit_light();
    sample_tail();
    ts_->in_tool = false;
  }
  // The tail read now, as a heavy call's (Call::finish_light).
  ENCORE_HOT void measure_tail() noexcept {
    ts_->sealed = false;
    ts_->prev_t3 = __rdtsc();
    ts_->prev_flags = RawTimes::kPrevMeasured;
  }
  ENCORE_HOT void sample_tail() noexcept {
    constexpr unsigned kTailSample = 64;
    if (ts_->sealed) [[unlikely]] {  // its payload sealed a segment: timed as a heavy call
      measure_tail();
      return;
    }
    if (++ts_->light_calls >= kTailSample) [[unlikely]] {
      ts_->light_calls = 0;
      ts_->prev_t3 = __rdtsc();
      ts_->prev_flags = RawTimes::kPrevMeasured | RawTimes::kPrevLightSample;
    } else {
      ts_->prev_flags = 0;
    }
  }

  ThreadStream* ts_ = nullptr;
  std::uint64_t t1_ = 0;
  std::uint64_t t2_ = 0;
  MPI_Status status_;
};

}  // namespace encore::dump
