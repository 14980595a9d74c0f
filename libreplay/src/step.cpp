#include "step.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "replay_attributes.hpp"
#include "replay_topology.hpp"
#include <fmt/format.h>

#include "encore/byte_order.hpp"
#include "encore/event_format.hpp"
#include "encore/event_text.hpp"

namespace encore::replay {

namespace ef = event_format;

void Step::cannot_start() {
  const FunctionInfo& f = function_table()[id_];
  if (!rep_) {
    std::fprintf(stderr, "encore replay: %s called before MPI_Init\n", f.name);
    std::exit(kReplayErrorExit);
  }
  if (rep_->in_callback())
    rep_->fail(fmt::format(
        "{} called from an attribute callback: not implemented yet (the recorded run did not "
        "record it)",
        f.name));
  rep_->fail(fmt::format("{} called after MPI_Finalize", f.name));
}

void Step::wrong_event() {
  const FunctionInfo& f = function_table()[id_];
  if (!ev_) {
    const std::string why = rep_->end_problem();
    rep_->fail(fmt::format(
        "the trace of rank {} ends after event {}{}; the program went on "
        "with {}",
        rep_->options().rank, rep_->index(), why.empty() ? "" : " (" + why + ")", f.name));
  }
  diverge(fmt::format("the program called {}", f.name));
}

void Step::pace_out() const noexcept {
  const Event& ev = rep_->current();
  if (ev.end_ns <= ev.start_ns) return;
  const std::uint64_t until = paced_from_ + (ev.end_ns - ev.start_ns);
  // A spin, as MPICH's own wait was in the real run: it keeps the core as the rank kept it.
  while (monotonic_ns() < until) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
}

void Step::mismatch(int i, std::int64_t value, std::string text) {
  if (!mismatches_) mismatches_ = std::make_unique<std::vector<Mismatch>>();
  mismatches_->push_back({i, value, std::move(text)});
}

void Step::buf_mismatch(int i, const void* p) {
  mismatch(
      i, static_cast<std::int64_t>(p == MPI_IN_PLACE ? ef::BufFlag::in_place : ef::BufFlag::normal),
      {});
}

void Step::in_datatypes(int i, const MPI_Datatype* p) {
  if (skip(i) || !p) return;
  const auto& rec = arg(i).list;
  for (std::size_t k = 0; k < rec.size(); ++k) {
    if (rep_->datatype_id(p[k]) != static_cast<std::uint32_t>(rec[k])) {
      mismatch(
          i, 0,
          fmt::format("[{}]={}", k, handle_name(HandleKind::datatype, rep_->datatype_id(p[k]))));
      return;
    }
  }
}

std::string Step::recorded_call() const {
  std::string out =
      fmt::format("{}({})", function_table()[ev_->function].name, describe_args(*ev_));
  if (ev_->callsite) out += fmt::format(" at call site #{}", *ev_->callsite);
  return out;
}

void Step::diverge(const std::string& what) {
  // Threads that called MPI at once made their calls in an order no replay can make again.
  const char* threads = rep_->thread_multiple()
                            ? " (the recorded run was MPI_THREAD_MULTIPLE: replaying threads "
                              "that call MPI concurrently is not supported yet)"
                            : "";
  rep_->fail(fmt::format("divergence at event {} of rank {}: the trace has {}; {}{}", rep_->index(),
                         rep_->options().rank, recorded_call(), what, threads));
}

void Step::report_mismatches() {
  // The program's call: the recorded one with the arguments that differ put in.
  Event actual = *ev_;
  std::string arrays;
  for (const auto& m : *mismatches_) {
    if (m.text.empty())
      actual.args[static_cast<std::size_t>(m.param)].scalar = m.value;
    else
      arrays += fmt::format(
          ", {}{}", function_table()[id_].params[static_cast<std::size_t>(m.param)].name, m.text);
  }
  const FunctionInfo& f = function_table()[id_];
  for (std::size_t i = 0; i < f.params.size(); ++i)
    if (is_output(f.params[i].role)) actual.args[i].present = false;
  actual.payloads.clear();
  actual.send_hashes.clear();
  actual.rc = 0;
  diverge(fmt::format("the program called {}({}){}", function_table()[id_].name,
                      describe_args(actual), arrays));
}

// Outputs ---------------------------------------------------------------------------------------

void Step::out_comm(int i, MPI_Comm* p) {
  if (!p) return;
  const ArgValue& a = arg(i);
  const auto id = static_cast<std::uint32_t>(a.scalar);
  if (id == ef::kNullId) {
    *p = MPI_COMM_NULL;
    return;
  }
  CommState st;
  st.id = id;
  st.members = a.list;
  st.size = static_cast<int>(a.list.size());
  st.inter = (a.flags & 1) != 0;
  st.remote_size = static_cast<int>(a.remote.size());
  st.rank = -1;
  for (std::size_t k = 0; k < a.list.size(); ++k)
    if (a.list[k] == static_cast<std::int64_t>(rep_->options().rank)) st.rank = static_cast<int>(k);
  *p = rep_->new_comm(st);
}

std::optional<std::int64_t> Step::recorded_predefined(int i) const {
  const HandleKind kind = function_table()[id_].params[static_cast<std::size_t>(i)].handle_kind;
  const std::int64_t id = arg(i).scalar;
  if (id == event_format::kNullId) return null_handle(kind);
  const auto predefined = predefined_handles(kind);
  if (id >= event_format::kFirstPredefinedId &&
      static_cast<std::uint64_t>(id - event_format::kFirstPredefinedId) < predefined.size())
    return predefined[static_cast<std::size_t>(id - event_format::kFirstPredefinedId)].value;
  return std::nullopt;
}

void Step::out_group(int i, MPI_Group* p) {
  if (!p) return;
  const auto known = recorded_predefined(i);
  *p = static_cast<MPI_Group>(known ? *known : rep_->new_handle(0x88100000u));
}

void Step::out_datatype(int i, MPI_Datatype* p) {
  if (!p) return;
  // A name for the recorded type until the constructor's hook builds it with the engine (types
  // from calls without a hook, such as MPI_Type_match_size, keep only the name).
  pending_type_id_ = static_cast<std::uint32_t>(arg(i).scalar);
  const auto handle = static_cast<MPI_Datatype>(rep_->new_handle(0x8c200000u));
  rep_->bind_datatype(pending_type_id_, handle);
  *p = handle;
}

void Step::engine_failed(const std::exception& e) {
  rep_->fail(fmt::format("event {} ({}): {}", rep_->index(), function_table()[id_].name, e.what()));
}

void Step::local_pack(const void* inbuf, MPI_Count incount, MPI_Datatype type, void* outbuf,
                      MPI_Count position, bool external) {
  try {
    auto& engine = rep_->types().engine();
    const MPI_Count bytes =
        external ? engine.pack_external_size(incount, type) : engine.pack_size(incount, type);
    auto* out = static_cast<std::byte*>(outbuf) + (position - bytes);
    if (external)
      engine.pack_external(inbuf, incount, type, out);
    else
      engine.pack(inbuf, incount, type, out);
  } catch (const std::exception& e) {
    engine_failed(e);
  }
}

void Step::local_unpack(const void* inbuf, MPI_Count position, void* outbuf, MPI_Count outcount,
                        MPI_Datatype type, bool external) {
  try {
    auto& engine = rep_->types().engine();
    const MPI_Count bytes =
        external ? engine.pack_external_size(outcount, type) : engine.pack_size(outcount, type);
    const auto* in = static_cast<const std::byte*>(inbuf) + (position - bytes);
    if (external)
      engine.unpack_external(in, outcount, type, outbuf);
    else
      engine.unpack(in, outcount, type, outbuf);
  } catch (const std::exception& e) {
    engine_failed(e);
  }
}

void Step::out_op(int i, MPI_Op* p) {
  if (p) *p = rep_->new_op(static_cast<std::uint32_t>(arg(i).scalar));
}

void Step::out_request(int i, MPI_Request* p) {
  (void)i;
  if (p) *p = rep_->new_request(rep_->index());
}

void Step::out_statuses(int i, MPI_Status* p) {
  if (!p || p == MPI_STATUSES_IGNORE) return;
  const auto& rec = arg(i).statuses;
  for (std::size_t k = 0; k < rec.size(); ++k) write_status(rec[k], p + k);
}

void Step::out_string(int i, char* p) {
  if (!p) return;
  const std::string& s = arg(i).text;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
}

void Step::free_comm(int i, MPI_Comm* p) {
  (void)i;
  if (!p) return;
  if (ok()) rattr::release(*p);  // delete callbacks, before the handle goes
  rep_->free_comm(*p);
  *p = MPI_COMM_NULL;
}

void Step::free_group(int i, MPI_Group* p) {
  (void)i;
  if (p) *p = MPI_GROUP_NULL;
}

void Step::free_datatype(int i, MPI_Datatype* p) {
  (void)i;
  if (!p) return;
  if (ok()) rattr::release(*p);
  rep_->unbind_datatype(*p);
  try {
    if (rep_->types().engine().is_valid(*p)) rep_->types().engine().free(*p);
  } catch (const std::exception& e) {
    engine_failed(e);
  }
  *p = MPI_DATATYPE_NULL;
}

void Step::free_op(int i, MPI_Op* p) {
  (void)i;
  if (!p) return;
  rep_->forget_user_op(*p);
  *p = MPI_OP_NULL;
}

void Step::reduce_local(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype type,
                        MPI_Op op) {
  const std::string why =
      encore::replay::reduce_local(inbuf, inoutbuf, count, type, op, rep_->user_op(op));
  if (!why.empty()) rep_->fail(fmt::format("event {} (MPI_Reduce_local): {}", rep_->index(), why));
}

void Step::alloc_mem(MPI_Aint size, void* baseptr) {
  void* p = std::malloc(size > 0 ? static_cast<std::size_t>(size) : 1);
  if (!p)
    rep_->fail(
        fmt::format("event {} (MPI_Alloc_mem): out of memory for {} bytes", rep_->index(), size));
  std::memcpy(baseptr, &p, sizeof p);  // baseptr is a void**, typed void* by MPI
}

void Step::local_contents(MPI_Datatype type, MPI_Count max_integers, MPI_Count max_addresses,
                          MPI_Count max_datatypes, int* integers, MPI_Aint* addresses,
                          MPI_Datatype* datatypes) {
  try {
    const Contents c = rep_->types().engine().contents(type);
    const auto put = [](const auto& from, MPI_Count room, auto* to) {
      if (to) std::copy_n(from.begin(), std::min<MPI_Count>(room, std::ssize(from)), to);
    };
    put(c.ints, max_integers, integers);
    put(c.addrs, max_addresses, addresses);
    put(c.types, max_datatypes, datatypes);
  } catch (const std::exception& e) {
    engine_failed(e);
  }
}

void Step::detach_buffer(void* buffer_addr) {
  void* b = std::exchange(rep_->attached_buffer(), nullptr);
  std::memcpy(buffer_addr, &b, sizeof b);
}

std::int64_t Step::null_value(int i) const {
  return null_handle(function_table()[id_].params[static_cast<std::size_t>(i)].handle_kind);
}

void Step::commit_datatype(int i, MPI_Datatype t) {
  (void)i;
  try {
    if (rep_->types().engine().is_valid(t)) rep_->types().engine().commit(t);
  } catch (const std::exception& e) {
    engine_failed(e);
  }
}

double Step::ret_double() const {
  const auto n = function_table()[id_].params.size();
  return n == 0 ? 0.0 : ev_->args[n - 1].real;  // the return value is the last "parameter"
}

std::int64_t Step::ret_value() const {
  const auto n = function_table()[id_].params.size();
  return n == 0 ? 0 : ev_->args[n - 1].scalar;
}

void Step::unsupported() {
  rep_->fail(fmt::format("{} is not supported (rank {}, event {})", function_table()[id_].name,
                         rep_->options().rank, rep_->index()));
}

CommState& Step::comm(MPI_Comm c) {
  CommState* s = rep_->comm(c);
  if (!s) rep_->fail(fmt::format("event {}: unknown communicator handle {}", rep_->index(), c));
  return *s;
}

// Data ------------------------------------------------------------------------------------------

bool Step::hash_of(const void* buf, MPI_Count count, MPI_Datatype type, std::uint64_t& hash,
                   MPI_Count& bytes) {
  try {
    // Hashes are of the data in the byte order of the rank's payload stream: in the other
    // order than this host's, the data is converted first (or, if it cannot be, not checked).
    if (rep_->payload_swapped()) [[unlikely]]
      return rep_->types().engine().hash_packed_swapped(buf, count, type, rep_->scratch(), hash,
                                                        bytes);
    hash = rep_->types().engine().hash_packed(buf, count, type, bytes);
    return true;
  } catch (const std::exception& e) {
    rep_->fail(fmt::format("event {}: {}", rep_->index(), e.what()));
  }
}

void Step::hash_send(const void* buf, MPI_Count count, MPI_Datatype type) {
  // An MPI_Startall of several persistent sends recorded one hash each, in request order.
  const auto& hashes = ev_->send_hashes;
  const SendHash& h = hashes[std::min<std::size_t>(next_send_hash_++, hashes.size() - 1)];
  MPI_Count bytes = 0;
  std::uint64_t mine = 0;
  if (!hash_of(buf, count, type, mine, bytes)) return;
  if (next_send_hash_ > hashes.size() || mine != h.hash ||
      static_cast<std::uint64_t>(bytes) != h.bytes) {
    rep_->warn_send_mismatch(fmt::format(
        "event {} ({}{}): the data sent differs from the recorded run (numerical divergence "
        "between machines or compilers?)",
        rep_->index(), function_table()[id_].name,
        ev_->callsite ? fmt::format(", call site #{}", *ev_->callsite) : ""));
  }
}

void Step::check_contribution(const contribution::Blocks& blocks) {
  const auto& hashes = ev_->contribution_hashes;
  // None recorded: a trace from before format 1.4, or recorded with ENCORE_SEND_HASH=0.
  if (hashes.empty()) return;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const contribution::Block& b = blocks[i];
    MPI_Count bytes = 0;
    std::uint64_t mine = 0;
    const std::size_t at = next_contribution_++;
    if (!hash_of(b.base, b.count, b.type, mine, bytes)) continue;
    if (at >= hashes.size() || hashes[at].hash != mine ||
        hashes[at].bytes != static_cast<std::uint64_t>(bytes)) {
      rep_->warn_contribution_mismatch(fmt::format(
          "event {} ({}{}): the data contributed to the collective differs from the recorded "
          "run (block {} of {}, {} bytes; numerical divergence between machines or "
          "compilers?)",
          rep_->index(), function_table()[id_].name,
          ev_->callsite ? fmt::format(", call site #{}", *ev_->callsite) : "", i + 1, blocks.size(),
          bytes));
      return;  // one report a collective
    }
  }
}

void Step::track_contribution(MPI_Request r, contribution::Blocks blocks) {
  if (RequestState* st = rep_->request(r)) st->contribution = std::move(blocks);
}

std::int64_t StepComms::send_peers(MPI_Comm m, bool neighbor) {
  if (neighbor) return rtopo::out_degree(s, m);
  const CommState& c = s.comm(m);
  return c.inter ? c.remote_size : c.size;
}

void Step::unpack_payload(const PayloadRef& p, const RecvBlock& b) {
  std::span<const std::byte> bytes;
  // Straight from the payload chunk when it holds all of the bytes in this host's order.
  if (rep_->payload_swapped() || !rep_->view_payload(p.offset, p.bytes, bytes)) {
    std::vector<std::byte>& scratch = rep_->scratch();
    scratch.clear();
    rep_->read_payload(p.offset, p.bytes, [&scratch](std::span<const std::byte> piece) {
      scratch.insert(scratch.end(), piece.begin(), piece.end());
    });
    bytes = scratch;
  }
  try {
    if (rep_->payload_swapped()) {
      // Recorded in the other byte order: converted element by element with the type's
      // signature (documented limits: long double and packed bytes have no defined conversion).
      const auto runs = rep_->types().engine().signature(b.type, 4096);
      if (runs.empty())
        throw std::runtime_error(
            "cannot convert received data of this datatype to this host's "
            "byte order");
      swap_elements(rep_->scratch(), runs);
    }
    rep_->types().unpack(bytes, b.count, b.type, b.base);
  } catch (const std::exception& e) {
    rep_->fail(fmt::format("event {}: {}", rep_->index(), e.what()));
  }
}

void Step::fill_slot(std::uint64_t slot, std::span<const RecvBlock> blocks) {
  std::size_t next = 0;
  for (const PayloadRef& p : ev_->payloads) {
    if (p.slot != slot) continue;
    while (next < blocks.size() && (blocks[next].count <= 0 || blocks[next].base == MPI_IN_PLACE))
      ++next;
    if (next == blocks.size())
      rep_->fail(
          fmt::format("event {}: the trace holds more received data than the call's "
                      "buffers describe",
                      rep_->index()));
    unpack_payload(p, blocks[next++]);
  }
}

void Step::fill_message_slow(void* buf, MPI_Count count, MPI_Datatype type) {
  const RecvBlock block{buf, count, type};  // no vector: this runs on every receive
  // The usual case, one piece of data for a real buffer: no search.
  if (ev_->payloads.size() == 1 && ev_->payloads[0].slot == 0 && count > 0 && buf != MPI_IN_PLACE)
    unpack_payload(ev_->payloads[0], block);
  else
    fill_slot(0, {&block, 1});
}

void Step::fill(const RecvBlocks& blocks) { fill_slot(0, blocks); }

void Step::track_message(MPI_Request r, void* buf, MPI_Count count, MPI_Datatype type,
                         bool persistent) {
  if (RequestState* st = rep_->request(r)) {
    st->kind = RequestKind::recv;
    st->persistent = persistent;
    st->layout = {{buf, count, type}};
  }
}

void Step::track_persistent_send(MPI_Request r, const void* buf, MPI_Count count, MPI_Datatype type,
                                 int peer) {
  if (RequestState* st = rep_->request(r)) {
    st->kind = RequestKind::send;
    st->persistent = true;
    st->send_buf = buf;
    st->send_count = count;
    st->send_type = type;
    st->send_peer = peer;
  }
}

void Step::track_collective(MPI_Request r, RecvBlocks blocks, bool persistent) {
  if (RequestState* st = rep_->request(r)) {
    st->kind = RequestKind::collective;
    st->persistent = persistent;
    st->layout = std::move(blocks);
  }
}

bool Step::test_says_done() const {
  // Test, Testany, Testall and Request_get_status report completion in `flag`.
  const FunctionInfo& f = function_table()[id_];
  for (std::size_t i = 0; i < f.params.size(); ++i)
    if (std::string_view(f.params[i].name) == "flag") return ev_->args[i].scalar != 0;
  return true;
}

void Step::complete_one(MPI_Request* r) {
  if (!r || *r == MPI_REQUEST_NULL || !test_says_done()) return;
  RequestState* st = rep_->request(*r);
  if (!st) return;
  if (st->kind == RequestKind::recv || st->kind == RequestKind::collective)
    fill_slot(0, st->layout);
  if (!st->persistent) {
    rep_->drop_request(*r);
    *r = MPI_REQUEST_NULL;
  }
}

void Step::peek_request(MPI_Request r) {
  // The data, if the recorded call said done: the capture recorded it then, not at the
  // completion (whose event holds none).
  if (r == MPI_REQUEST_NULL || !test_says_done()) return;
  const RequestState* st = rep_->request(r);
  if (st && (st->kind == RequestKind::recv || st->kind == RequestKind::collective))
    fill_slot(0, st->layout);
}

void Step::complete_all(std::int64_t n, MPI_Request* r) {
  if (!r || !test_says_done()) return;
  for (std::int64_t i = 0; i < n; ++i) {
    if (r[i] == MPI_REQUEST_NULL) continue;
    RequestState* st = rep_->request(r[i]);
    if (!st) continue;
    if (st->kind == RequestKind::recv || st->kind == RequestKind::collective)
      fill_slot(static_cast<std::uint64_t>(i), st->layout);
    if (!st->persistent) {
      rep_->drop_request(r[i]);
      r[i] = MPI_REQUEST_NULL;
    }
  }
}

void Step::complete_index(MPI_Request* r, int index) {
  if (!r || index < 0 || !test_says_done()) return;
  RequestState* st = rep_->request(r[index]);
  if (!st) return;
  if (st->kind == RequestKind::recv || st->kind == RequestKind::collective)
    fill_slot(static_cast<std::uint64_t>(index), st->layout);
  if (!st->persistent) {
    rep_->drop_request(r[index]);
    r[index] = MPI_REQUEST_NULL;
  }
}

void Step::complete_some(MPI_Request* r, int outcount, const int* indices) {
  if (!r || !indices || outcount == MPI_UNDEFINED) return;
  for (int k = 0; k < outcount; ++k) complete_index(r, indices[k]);
}

void Step::start(MPI_Request r) {
  RequestState* st = rep_->request(r);
  if (st && st->kind == RequestKind::send)
    check_send(st->send_buf, st->send_count, st->send_type, st->send_peer);
  else if (st && !st->contribution.empty())
    check_contribution(st->contribution);
}

void Step::start_all(std::int64_t n, MPI_Request* r) {
  for (std::int64_t i = 0; r && i < n; ++i) start(r[i]);
}

void Step::release(MPI_Request* r) {
  if (!r) return;
  rep_->drop_request(*r);
  *r = MPI_REQUEST_NULL;
}

}  // namespace encore::replay
