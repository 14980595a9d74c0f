// One MPI call of the replayed program, matched against the next recorded event. The generated
// shims drive it: in_*() compare the call's inputs with the recorded ones (any difference is a
// divergence, reported with both calls), out_*() give back what the recorded call returned,
// and the hooks feed received data and complete requests as the real MPI did.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "replay_types.hpp"
#include "replayer.hpp"
#include <mpi.h>

#include "encore/clock.hpp"
#include "encore/collective_contribution.hpp"
#include "encore/event.hpp"
#include "encore/event_format.hpp"
#include "encore/mpi_table.hpp"

namespace encore::replay {

class Step {
 public:
  // Inline, cold paths out of line: every replayed call goes through both.
  [[gnu::always_inline]] explicit Step(fn::Id id) : id_(id), rep_(Replayer::get()) {
    if (!rep_ || rep_->blocked()) [[unlikely]]
      cannot_start();
    // Threads of an MPI_THREAD_MULTIPLE program call one at a time here, so that the replay's
    // state stays whole and a call out of the recorded order is reported as a divergence.
    if (rep_->thread_multiple()) [[unlikely]]
      lock_ = std::unique_lock(rep_->calls_mutex());
    profile_ = rep_->profile();
    if (profile_) enter_ = profile_->enter();
    if (rep_->paced()) [[unlikely]]
      paced_from_ = monotonic_ns();
    ev_ = rep_->peek();
    if (!ev_ || ev_->function != id) [[unlikely]]
      wrong_event();
  }
  [[gnu::always_inline]] ~Step() {
    if (paced_from_ != 0) [[unlikely]]
      pace_out();
    if (profile_)
      profile_->record(rep_->current(), rep_->current_body(), rep_->current_extras_at(), enter_);
    rep_->advance();
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  // Inputs --------------------------------------------------------------------------------
  // `Rooted` false: the generator knows parameter i is never root-only (most are), so the
  // function table's flags need not be read.
  template <bool Rooted = true>
  [[gnu::always_inline]] void in_buf(int i, const void* p) {
    if (skip<Rooted>(i)) return;
    const auto recorded = static_cast<event_format::BufFlag>(arg(i).scalar);
    if (recorded != event_format::BufFlag::absent &&
        (recorded == event_format::BufFlag::in_place) != (p == MPI_IN_PLACE)) [[unlikely]]
      buf_mismatch(i, p);
  }
  template <bool Rooted = true, class T>
  [[gnu::always_inline]] void in_value(int i, T v) {
    compare<Rooted>(i, static_cast<std::int64_t>(v));
  }
  template <bool Rooted = true>
  [[gnu::always_inline]] void in_comm(int i, MPI_Comm c) {
    compare<Rooted>(i, rep_->comm_id(c));
  }
  template <bool Rooted = true>
  [[gnu::always_inline]] void in_datatype(int i, MPI_Datatype t) {
    compare<Rooted>(i, rep_->datatype_id(t));
  }
  void in_op(int i, MPI_Op o) { compare(i, rep_->op_id(o)); }
  void in_freed_comm(int i, const MPI_Comm* p) {
    if (p) compare(i, rep_->comm_id(*p));
  }
  void in_freed_datatype(int i, const MPI_Datatype* p) {
    if (p) compare(i, rep_->datatype_id(*p));
  }
  template <class T>
  void in_values(int i, const T* p) {
    if (skip(i) || !p) return;
    const auto& rec = arg(i).list;
    for (std::size_t k = 0; k < rec.size(); ++k) {
      if (static_cast<std::int64_t>(p[k]) != rec[k]) {
        mismatch(i, 0,
                 "[" + std::to_string(k) + "]=" + std::to_string(static_cast<std::int64_t>(p[k])));
        return;
      }
    }
  }
  void in_datatypes(int i, const MPI_Datatype* p);
  // Ends the input checks: reports a divergence and stops if any input differed.
  void check() {
    if (mismatches_) [[unlikely]]
      report_mismatches();
  }

  // Outputs -------------------------------------------------------------------------------
  bool ok() const noexcept { return ev_->rc == 0; }
  int rc() const noexcept { return static_cast<int>(ev_->rc); }
  template <class T>
  void out_value(int i, T* p) {
    if (p) *p = static_cast<T>(arg(i).scalar);
  }
  template <class T>
  void out_values(int i, T* p) {
    if (!p) return;
    const auto& rec = arg(i).list;
    for (std::size_t k = 0; k < rec.size(); ++k) p[k] = static_cast<T>(rec[k]);
  }
  void out_comm(int i, MPI_Comm* p);
  void out_group(int i, MPI_Group* p);
  void out_datatype(int i, MPI_Datatype* p);
  void out_op(int i, MPI_Op* p);
  template <class H>
  void out_handle(int i, H* p) {
    if (!p) return;
    const auto known = recorded_predefined(i);
    const auto v = known ? *known : rep_->new_handle(0x7e000000u);
    if constexpr (std::is_pointer_v<H>)
      *p = reinterpret_cast<H>(static_cast<std::intptr_t>(v));
    else
      *p = static_cast<H>(v);
  }
  void out_request(int i, MPI_Request* p);
  // The handle output `i` as this library's predefined object (or null handle) where the
  // trace recorded one (MPI_ERRORS_RETURN, MPI_GROUP_EMPTY, MPI_MESSAGE_NO_PROC...): a
  // program may compare with it, or skip freeing it. Nothing for any other object.
  std::optional<std::int64_t> recorded_predefined(int i) const;
  void out_status(int i, MPI_Status* p) {
    if (p && p != MPI_STATUS_IGNORE && !arg(i).statuses.empty())
      write_status(arg(i).statuses.front(), p);
  }
  void out_statuses(int i, MPI_Status* p);
  void out_string(int i, char* p);
  void free_comm(int i, MPI_Comm* p);
  void free_group(int i, MPI_Group* p);
  void free_datatype(int i, MPI_Datatype* p);
  void free_op(int i, MPI_Op* p);
  template <class H>
  void free_handle(int i, H* p) {
    (void)i;
    if (!p) return;
    if constexpr (std::is_pointer_v<H>)
      *p = nullptr;
    else
      *p = static_cast<H>(null_value(i));
  }
  void commit_datatype(int i, MPI_Datatype t);
  // A derived datatype the recorded call created: built by the engine, named like the record.
  template <class Build>
  void new_type(MPI_Datatype* out, Build build) {
    if (!out) return;
    const MPI_Datatype placeholder = *out;
    try {
      *out = build(rep_->types().engine());
    } catch (const std::exception& e) {
      engine_failed(e);
    }
    rep_->unbind_datatype(placeholder);
    rep_->bind_datatype(pending_type_id_, *out);
  }
  // `position` is the recorded position after the call (int or MPI_Count in the _c forms);
  // `external`: MPI_(Un)pack_external's external32 representation.
  void local_pack(const void* inbuf, MPI_Count incount, MPI_Datatype type, void* outbuf,
                  MPI_Count position, bool external = false);
  void local_unpack(const void* inbuf, MPI_Count position, void* outbuf, MPI_Count outcount,
                    MPI_Datatype type, bool external = false);
  // Local calls computed here (local_reduction.hpp, memory, the attached send buffer).
  void user_op_created(MPI_Op op, MPI_User_function* f) {
    rep_->set_user_op(op, {reinterpret_cast<void*>(f), false});
  }
  void user_op_created(MPI_Op op, MPI_User_function_c* f) {
    rep_->set_user_op(op, {reinterpret_cast<void*>(f), true});
  }
  void reduce_local(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype type,
                    MPI_Op op);
  void alloc_mem(MPI_Aint size, void* baseptr);
  void free_mem(void* base) { std::free(base); }
  void attach_buffer(void* buffer) { rep_->attached_buffer() = buffer; }
  void detach_buffer(void* buffer_addr);
  // MPI_Type_get_contents from this machine's type engine: a type's addresses (MPI_Get_address,
  // MPI_BOTTOM) and handles are the replay's, not the recorded run's.
  void local_contents(MPI_Datatype type, MPI_Count max_integers, MPI_Count max_addresses,
                      MPI_Count max_datatypes, int* integers, MPI_Aint* addresses,
                      MPI_Datatype* datatypes);
  // MPI_Type_get_(true_)extent(_x) likewise: a lower bound may be an address.
  template <class T>
  void local_extent(MPI_Datatype type, T* lb, T* extent, bool true_extent) {
    try {
      auto& engine = rep_->types().engine();
      const auto e = true_extent ? engine.true_extent(type) : engine.extent(type);
      if (lb) *lb = static_cast<T>(e.lb);
      if (extent) *extent = static_cast<T>(e.extent);
    } catch (const std::exception& e) {
      engine_failed(e);
    }
  }
  double ret_double() const;
  std::int64_t ret_value() const;
  template <class T>
  T local(T v) {
    return v;
  }
  [[noreturn]] void unsupported();

  // Semantics beyond the arguments ------------------------------------------------------------
  // Inline, the rest out of line: a replayed send or receive runs these.
  // Nothing leaves the rank for an MPI_PROC_NULL peer: no hash to compute or check (traces from
  // before capture stopped recording one may still hold it). A send without a hash is not checked.
  void check_send(const void* buf, MPI_Count count, MPI_Datatype type, int peer) {
    if (peer != MPI_PROC_NULL && !ev_->send_hashes.empty() && count > 0 && buf != MPI_IN_PLACE)
      hash_send(buf, count, type);
  }
  void fill_message(void* buf, MPI_Count count, MPI_Datatype type) {
    // The usual receive: one piece of data, in this host's byte order and in one chunk, for
    // one block of a recently used committed type.
    const auto& p = ev_->payloads;
    std::span<const std::byte> bytes;
    if (p.size() == 1 && p[0].slot == 0 && count > 0 && buf != MPI_IN_PLACE &&
        !rep_->payload_swapped() && rep_->view_payload_hot(p[0].offset, p[0].bytes, bytes) &&
        rep_->types().engine().unpack_one_block(bytes.data(), static_cast<MPI_Count>(bytes.size()),
                                                count, type, buf)) [[likely]]
      return;
    fill_message_slow(buf, count, type);
  }
  void fill(const RecvBlocks& blocks);
  // One block or none (most collectives): the receive's inline path, no vector.
  void fill(const OneBlock& b) {
    if (b.present)
      fill_message(b.block.base, b.block.count, b.block.type);
    else
      fill_slot(0, {});
  }
  void track_message(MPI_Request r, void* buf, MPI_Count count, MPI_Datatype type, bool persistent);
  void track_persistent_send(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type,
                             int peer);
  void track_collective(MPI_Request r, RecvBlocks blocks, bool persistent);
  // A collective's contribution against the recorded hashes, before its receive blocks are
  // filled (in place, they are the input); a persistent one's at each MPI_Start(all).
  void check_contribution(const contribution::Blocks& blocks);
  void track_contribution(MPI_Request r, contribution::Blocks blocks);
  // MPI_Request_get_status: fills a receive's or a collective's buffers where it said done.
  void peek_request(MPI_Request r);
  void complete_one(MPI_Request* r);
  void complete_all(std::int64_t n, MPI_Request* r);
  void complete_index(MPI_Request* r, int index);
  void complete_some(MPI_Request* r, int outcount, const int* indices);
  void start(MPI_Request r);
  void start_all(std::int64_t n, MPI_Request* r);
  void release(MPI_Request* r);

  Replayer& replayer() noexcept { return *rep_; }
  CommState& comm(MPI_Comm c);

 private:
  std::unique_lock<std::mutex> lock_;  // first: released after the destructor's work
  const ArgValue& arg(int i) const { return ev_->args[static_cast<std::size_t>(i)]; }
  // Inline: they run for every argument of every call.
  template <bool Rooted = true>
  [[gnu::always_inline]] bool skip(int i) const {
    if constexpr (Rooted)
      if ((function_table()[id_].params[static_cast<std::size_t>(i)].flags & kParamRootOnly) != 0)
        return true;
    return !arg(i).present;
  }
  template <bool Rooted = true>
  [[gnu::always_inline]] void compare(int i, std::int64_t actual) {
    if (!skip<Rooted>(i) && arg(i).scalar != actual) [[unlikely]]
      mismatch(i, actual, {});
  }
  static void write_status(const StatusRecord& s, MPI_Status* out) {
    out->MPI_SOURCE = static_cast<int>(s.source);
    out->MPI_TAG = static_cast<int>(s.tag);
    out->MPI_ERROR = static_cast<int>(s.error);
    out->count_lo = static_cast<int>(s.bytes & 0xffffffffu);
    out->count_hi_and_cancelled = static_cast<int>(
        ((s.bytes >> 32) << 1) | ((s.bits & event_format::kStatusCancelled) ? 1 : 0));
  }
  void buf_mismatch(int i, const void* p);
  [[noreturn]] void report_mismatches();
  void hash_send(const void* buf, MPI_Count count, MPI_Datatype type);
  // False when the data cannot be hashed as the capture did (not checked then).
  bool hash_of(const void* buf, MPI_Count count, MPI_Datatype type, std::uint64_t& hash,
               MPI_Count& bytes);
  void fill_message_slow(void* buf, MPI_Count count, MPI_Datatype type);
  // A differing input: its value, or for arrays a text saying which element.
  void mismatch(int i, std::int64_t value, std::string text);
  [[noreturn]] void diverge(const std::string& what);
  [[noreturn]] void cannot_start();
  [[noreturn]] void wrong_event();
  std::string recorded_call() const;
  void fill_slot(std::uint64_t slot, std::span<const RecvBlock> blocks);
  void unpack_payload(const PayloadRef& p, const RecvBlock& b);
  bool test_says_done() const;
  [[noreturn]] void engine_failed(const std::exception& e);
  // ENCORE_REPLAY_PACE=recorded: spins until the call has lasted as long as the recorded one.
  void pace_out() const noexcept;
  std::int64_t null_value(int i) const;  // the null handle of parameter i's kind

  fn::Id id_;
  Replayer* rep_;
  ReplayProfile* profile_ = nullptr;
  const Event* ev_ = nullptr;
  struct Mismatch {
    int param;
    std::int64_t value;
    std::string text;
  };
  // Made on the first differing input only: most calls never build or free it.
  std::unique_ptr<std::vector<Mismatch>> mismatches_;
  std::uint32_t pending_type_id_ = 0;
  // The next recorded hash to compare (an MPI_Startall hashes one per started request).
  std::uint32_t next_send_hash_ = 0;
  std::uint32_t next_contribution_ = 0;
  std::uint64_t enter_ = 0;       // profile clock ticks when the program called
  std::uint64_t paced_from_ = 0;  // monotonic ns when the program called, if paced
};

// The communicator facts a collective's contribution depends on, as the replay knows them.
struct StepComms {
  Step& s;
  int rank(MPI_Comm m) { return s.comm(m).rank; }
  bool inter(MPI_Comm m) { return s.comm(m).inter; }
  std::int64_t local_size(MPI_Comm m) { return s.comm(m).size; }
  std::int64_t send_peers(MPI_Comm m, bool neighbor);
  MPI_Aint extent(MPI_Datatype t) { return s.replayer().types().extent(t); }
};

}  // namespace encore::replay
