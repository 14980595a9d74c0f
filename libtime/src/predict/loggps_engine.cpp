// The `loggps` discrete-event engine (see loggps_engine.hpp for the timing rules).
#include "encore/predict/loggps_engine.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "call_class.hpp"
#include "channel_table.hpp"
#include "comm_table.hpp"
#include "scheduler.hpp"
#include <fmt/format.h>
#include <mpi.h>

#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/rank_context.hpp"

namespace encore::predict {
namespace {

using Time = std::int64_t;

std::uint64_t request_key(std::uint16_t thread, std::uint64_t index) {
  return (static_cast<std::uint64_t>(thread) << 48) | (index + 1);  // never 0: "no request"
}

struct Request {
  Time t = 0;     // completion time
  Time cost = 0;  // the call's own cost (collectives), for the wait split
  Time posted = 0;
  std::uint32_t comm = 0;
  // A receive posted to a channel: its source's world rank and tag (to take it back from the
  // channel if a Wait* says it was cancelled).
  std::uint32_t src = 0;
  std::int32_t tag = 0;
  bool complete = false;
  // A receive whose source or tag was a wildcard: matched once a Wait* names its status.
  bool unresolved = false;
  bool live = false;
  // A failed Test of it was released unparked (run()): its later failed Tests keep their
  // recorded durations without waiting for it.
  bool polls_unparked = false;
  std::uint32_t next_free = 0;  // of a free slot: the next free one (kNoSlot: none)
};

using Slot = std::uint32_t;
constexpr Slot kNoSlot = ~0u;

// A rank's open requests in slots reused through a free list (threaded through the slots).
// Messages, collectives and the current call carry the slot number, so only a Wait* naming an MPI
// request searches, and it searches 8-byte keys, not whole entries.
class RequestTable {
 public:
  // `key` 0: an internal request, never looked up by key.
  [[gnu::always_inline]] Slot add(std::uint64_t key) {
    Slot i;
    if (free_ != kNoSlot) {
      i = free_;
      free_ = slots_[i].next_free;
      slots_[i] = Request{};
      keys_[i] = key;
    } else {
      i = static_cast<Slot>(slots_.size());
      slots_.emplace_back();
      keys_.push_back(key);
    }
    slots_[i].live = true;
    if (key != 0) hint_[key % kHint] = i;
    return i;
  }
  // Keys are unique among live slots: the hint, else a search.
  [[gnu::always_inline]] Slot find(std::uint64_t key) const {
    if (const Slot h = hint_[key % kHint]; h < keys_.size() && keys_[h] == key) return h;
    return search(key);
  }
  [[gnu::noinline]] Slot search(std::uint64_t key) const {
    for (std::size_t i = keys_.size(); i-- > 0;)
      if (keys_[i] == key) return static_cast<Slot>(i);
    return kNoSlot;
  }
  Request& operator[](Slot i) { return slots_[i]; }
  [[gnu::always_inline]] void erase(Slot i) {
    slots_[i].live = false;
    slots_[i].next_free = free_;
    keys_[i] = 0;
    free_ = i;
  }

 private:
  static constexpr std::size_t kHint = 16;
  std::vector<Request> slots_;
  std::vector<std::uint64_t> keys_;  // 0 for internal and free slots
  Slot free_ = kNoSlot;              // the free slots, a list through Request::next_free
  // The slot last given to a key, by key % kHint: a Wait usually names recent requests.
  std::array<Slot, kHint> hint_ = [] {
    std::array<Slot, kHint> a;
    a.fill(kNoSlot);
    return a;
  }();
};

struct SendPost {
  std::uint32_t rank;
  Slot req;  // kNoSlot: nobody waits for the send's completion (eager)
  Time inject;
  Time x;  // transfer_ns of the message, worked out once by the sender
  bool sync;
};
struct RecvPost {
  std::uint32_t rank;
  Slot req;
  Time posted;
};
// A probe sees the send after those the receives queued before it take.
struct ProbePost {
  std::uint32_t rank;
  Slot req;
  Time posted;
  std::size_t skip;  // sends still to go to earlier receives
};

struct Collective {
  CollKind kind = CollKind::barrier;
  bool nonblocking = false;  // an Iallreduce...: its own gamma
  std::size_t root = 0;
  std::uint64_t bytes = 0;
  std::size_t arrived = 0;
  std::vector<Time> arrive;
  std::vector<std::pair<std::uint32_t, Slot>> members;  // (rank, request) by comm rank
};

using Channels = ChannelTable<SendPost, RecvPost, ProbePost>;
constexpr std::size_t kHints = 4;  // channels remembered per rank and direction, by peer

// What an MPI_Send_init (Bsend, Rsend, Ssend) or MPI_Recv_init set up: each MPI_Start of the
// request posts it as an Isend or Irecv would.
struct PersistentSetUp {
  std::int64_t comm = 0;  // the communicator's id, looked up at each start
  std::int64_t peer = 0;
  std::int64_t tag = 0;
  std::uint64_t bytes = 0;  // sent (the *_init's count and datatype)
  const CallClass* send =
      nullptr;  // the send mode's class (Isend, Ibsend, Issend); none: a receive
};

struct RankState : RankCursor {
  CommTable comms;
  // By the request's key (its *_init event); forgotten at MPI_Request_free.
  std::unordered_map<std::uint64_t, PersistentSetUp> persistent;
  std::optional<RankContext> ctx;  // datatype sizes for message sizes
  RequestTable requests;
  std::unordered_map<std::uint32_t, std::uint64_t> coll_seq;  // per communicator key
  Time t = 0;                                                 // end of the previous call
  Time start = 0, base_end = 0, cost = 0;
  Time nic_free = 0;
  std::vector<Slot> keys;          // requests the current call waits for
  const CallClass* cls = nullptr;  // of the current call
  bool coll_cost = false;
  // The current call is an MPI_Test that found its request not done in the recording: it
  // waits until the model knows when the request completes (see post_failed_test).
  Slot poll = kNoSlot;
  std::array<Channels::Hint, kHints> send_hints, recv_hints;  // by peer % kHints
};

class Engine {
 public:
  Engine(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& p, PredictSink& sink)
      : p_(p),
        o_(p.overhead_ns()),
        L_(p.latency_ns()),
        gap_(static_cast<Time>(p.g)),
        sink_(sink),
        registry_(static_cast<std::uint32_t>(feeds.size())),
        ranks_(feeds.size()),
        sched_(ranks_) {
    for (std::uint32_t r = 0; r < feeds.size(); ++r) {
      ranks_[r].feed = feeds[r].get();
      ranks_[r].comms = CommTable(r, registry_);
      ranks_[r].ctx.emplace(r, static_cast<std::uint32_t>(feeds.size()));
    }
  }

  EngineStats run() {
    sched_.wake_all();
    sched_.drain([this](std::uint32_t r) { return try_finish(r); });
    // Ranks parked at a failed Test whose request only completes after calls the rank makes
    // later (a pattern where the loop itself feeds the peer): released with the Test's
    // recorded duration, as before polls waited, and the request's later polls with them.
    for (bool released = true; released;) {
      released = false;
      for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
        RankState& s = ranks_[r];
        if (s.done || s.poll == kNoSlot) continue;
        s.requests[s.poll].polls_unparked = true;
        ++stats_.polls_released;
        sched_.wake(r);
        released = true;
      }
      if (released) sched_.drain([this](std::uint32_t r) { return try_finish(r); });
    }
    std::string blocked;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      const RankState& s = ranks_[r];
      if (s.done) continue;
      if (!blocked.empty()) blocked += "; ";
      blocked += fmt::format("rank {} at {} #{}", r, s.ev.info().name, s.ev.index);
    }
    if (!blocked.empty())
      throw Error(
          "loggps model: ranks wait on each other forever (a pattern the model does "
          "not cover; try --model logged): " +
          blocked);
    return stats_;
  }

 private:
  [[gnu::always_inline]] void wake(std::uint32_t r) { sched_.wake(r); }

  static Slot internal(RankState& s) { return s.requests.add(0); }

  [[gnu::always_inline]] void complete(std::uint32_t rank, Slot slot, Time t, Time cost = 0) {
    if (slot == kNoSlot) return;
    Request& q = ranks_[rank].requests[slot];
    if (!q.live) return;
    q.complete = true;
    q.t = t;
    q.cost = cost;
    wake(rank);
  }

  void note_in_flight() {
    stats_.max_in_flight =
        std::max<std::uint64_t>(stats_.max_in_flight, in_flight_messages_ + collectives_.size());
  }

  [[gnu::always_inline]] void match(const SendPost& s, const RecvPost& r) {
    const Time o = o_, L = L_, x = s.x;
    Time recv_done;
    if (!s.sync) {
      recv_done = std::max(r.posted, s.inject + o + x + L) + o;
    } else {
      const Time t_wait = std::max<Time>(r.posted - s.inject - (o + L), 0);  // PerWiz
      const Time handshake = s.inject + o + L + t_wait;
      const Time send_done = handshake + L + o + x;
      complete(s.rank, s.req, send_done);
      recv_done = send_done + L + o;
    }
    complete(r.rank, r.req, recv_done);
    ++stats_.messages;
  }

  [[gnu::always_inline]] void post_send(std::uint32_t rank, std::uint32_t dst, std::uint32_t comm,
                                        std::int64_t tag, SendPost s) {
    auto& channel = channels_.get({rank, dst, comm, tag}, ranks_[rank].send_hints[dst % kHints]);
    if (!channel.probes.empty()) [[unlikely]]
      std::erase_if(channel.probes, [&](ProbePost& p) {
        if (p.skip > 0) return --p.skip, false;
        complete(p.rank, p.req, probe_done(s, p.posted));
        return true;
      });
    if (!channel.recvs.empty()) {
      const RecvPost r = channel.recvs.pop();
      --in_flight_messages_;
      match(s, r);
      return;
    }
    channel.sends.push(s);
    ++in_flight_messages_;
    note_in_flight();
  }

  [[gnu::always_inline]] void post_recv(std::uint32_t src, std::uint32_t rank, std::uint32_t comm,
                                        std::int64_t tag, RecvPost r) {
    auto& channel = channels_.get({src, rank, comm, tag}, ranks_[rank].recv_hints[src % kHints]);
    if (!channel.sends.empty()) {
      const SendPost s = channel.sends.pop();
      --in_flight_messages_;
      match(s, r);
      return;
    }
    channel.recvs.push(r);
    ++in_flight_messages_;
    note_in_flight();
  }

  // A probe posted at `posted` that finds send `s`: its envelope is there at o + L after the
  // injection (and the data after x, which an eager message brings along); the probe ends o
  // after both it and the envelope are there, as a receive does.
  Time probe_done(const SendPost& s, Time posted) const {
    return std::max(posted, s.inject + o_ + L_ + (s.sync ? 0 : s.x)) + o_;
  }

  // Probe, or an Iprobe that found its message (one that did not costs nothing, post()):
  // waits for the next send of its channel that no receive posted before it takes, without
  // taking it. Returns false where the model keeps the recorded duration instead: a wildcard
  // the status does not resolve.
  bool post_probe(std::uint32_t rank, const CommInfo& c, const EventArgs& a) {
    RankState& s = ranks_[rank];
    if (!probe_found(s.ev)) return false;
    std::int64_t src = a.scalar(Role::peer), tag = a.scalar(Role::tag);
    if (const ArgValue* st = a.get(Role::status_out); st && !st->statuses.empty()) {
      if (src == MPI_ANY_SOURCE) src = st->statuses[0].source;
      if (tag == MPI_ANY_TAG) tag = st->statuses[0].tag;
    }
    const auto world = src == MPI_ANY_SOURCE || tag == MPI_ANY_TAG ? std::nullopt : c.world(src);
    if (!world) return false;
    auto& channel = channels_.get({*world, rank, c.key, tag}, s.recv_hints[*world % kHints]);
    const Slot req = internal(s);
    s.keys.push_back(req);
    s.cost = o_;
    if (!channel.sends.empty())  // then no receive is queued
      complete(rank, req, probe_done(channel.sends.front(), s.start));
    else
      channel.probes.push_back({rank, req, s.start, channel.recvs.size()});
    return true;
  }

  bool waits_for_receive(const CallClass& cls, std::uint64_t bytes) const {
    return cls.sync || (!cls.buffered && p_.rendezvous(bytes));
  }

  // Starts a send of the current call (x: transfer_ns(bytes)); returns the request to wait
  // for (kNoSlot if none).
  [[gnu::always_inline]] Slot start_send(std::uint32_t rank, const CommInfo& c, std::int64_t peer,
                                         std::int64_t tag, std::uint64_t bytes, Time x,
                                         const CallClass& cls, Slot req, Time at) {
    RankState& s = ranks_[rank];
    const auto dst = c.world(peer);
    if (!dst) {  // MPI_PROC_NULL
      complete(rank, req, at + o_);
      return kNoSlot;
    }
    const Time inject = std::max(at, s.nic_free);
    s.nic_free = inject + gap_;
    const bool sync = waits_for_receive(cls, bytes);
    if (!sync) {
      // A buffered send returns once its data is in the attached buffer; the transfer (x,
      // which its receive waits for) goes on without it.
      complete(rank, req, inject + (cls.buffered ? start_cost(s) : o_ + x));
      req = kNoSlot;
    }
    post_send(rank, *dst, c.key, tag, {rank, req, inject, x, sync});
    return req;
  }

  // Posts a receive; a wildcard source or tag waits for the status a Wait* reports.
  [[gnu::always_inline]] void start_recv(std::uint32_t rank, const CommInfo& c, std::int64_t peer,
                                         std::int64_t tag, const StatusRecord* status, Slot req,
                                         Time at) {
    std::int64_t src = peer, t = tag;
    if (status) {
      if (src == MPI_ANY_SOURCE) src = status->source;
      if (t == MPI_ANY_TAG) t = status->tag;
    }
    if (src == MPI_ANY_SOURCE || t == MPI_ANY_TAG) {
      Request& q = ranks_[rank].requests[req];
      q.unresolved = true;
      q.comm = c.key;
      q.posted = at;
      return;
    }
    const auto world = c.world(src);
    if (!world) {
      complete(rank, req, at + o_);
      return;
    }
    Request& q = ranks_[rank].requests[req];
    q.comm = c.key;
    q.posted = at;
    q.src = *world;
    q.tag = static_cast<std::int32_t>(t);
    post_recv(*world, rank, c.key, t, {rank, req, at});
  }

  // A Wait* says the receive was cancelled: it never matched, and will not take a later
  // message. Done o after it was posted. The engine matches a rank's messages as far ahead
  // as its peers have gone, not in time order: where a message the receive never had was
  // matched with it already, the model cannot go on (the message belongs to a later receive).
  void cancel_recv(std::uint32_t rank, Slot slot) {
    Request& q = ranks_[rank].requests[slot];
    if (q.complete)
      throw Error(fmt::format(
          "loggps model: rank {} at {} #{}: a receive it cancelled was matched with a message "
          "of rank {} sent later (a pattern the model does not cover; try --model logged)",
          rank, ranks_[rank].ev.info().name, ranks_[rank].ev.index, q.src));
    auto& channel = channels_.get({q.src, rank, q.comm, q.tag});
    if (channel.recvs.erase_first(
            [&](const RecvPost& r) { return r.rank == rank && r.req == slot; }))
      --in_flight_messages_;
    complete(rank, slot, q.posted + o_);
  }

  void resolve(std::uint32_t rank, Slot slot, const StatusRecord& st) {
    RankState& s = ranks_[rank];
    Request& q = s.requests[slot];
    if (!q.unresolved) return;
    q.unresolved = false;
    const CommInfo* c = s.comms.by_key(q.comm);
    const auto world = c ? c->world(st.source) : std::nullopt;
    if (!world) {
      complete(rank, slot, q.posted + o_);
      return;
    }
    q.src = *world;
    q.tag = static_cast<std::int32_t>(st.tag);
    post_recv(*world, rank, c->key, st.tag, {rank, slot, q.posted});
  }

  void arrive(std::uint32_t rank, const CommInfo& c, CollKind kind, bool nonblocking,
              std::size_t root, std::uint64_t bytes, Slot req, Time at) {
    RankState& s = ranks_[rank];
    const std::uint64_t seq = s.coll_seq[c.key]++;
    auto [it, fresh] = collectives_.try_emplace({c.key, seq});
    Collective& col = it->second;
    const std::size_t p = c.members->size();
    if (fresh) {
      col.kind = kind;
      col.nonblocking = nonblocking;
      col.root = root;
      col.arrive.assign(p, 0);
      col.members.assign(p, {0, 0});
      note_in_flight();
    }
    col.arrive[c.index] = at;
    col.members[c.index] = {rank, req};
    col.bytes = std::max(col.bytes, bytes);
    if (++col.arrived < p) return;
    const auto ends =
        collective_end_times(col.kind, col.arrive, col.root, col.bytes, p_, col.nonblocking);
    const std::vector<Time>& solo = solo_ends(col, p);
    for (std::size_t i = 0; i < p; ++i)
      complete(col.members[i].first, col.members[i].second, ends[i], solo[i]);
    collectives_.erase(it);
    ++stats_.collectives;
  }

  // Each member's end had all arrived at 0 (its own cost): the same for every instance of a
  // collective with the same shape, so the last one is kept.
  const std::vector<Time>& solo_ends(const Collective& col, std::size_t p) {
    SoloEnds& c = solo_;
    if (c.valid && c.kind == col.kind && c.nonblocking == col.nonblocking && c.root == col.root &&
        c.bytes == col.bytes && c.p == p)
      return c.ends;
    c.zeros.assign(p, 0);
    c.ends = collective_end_times(col.kind, c.zeros, col.root, col.bytes, p_, col.nonblocking);
    c.kind = col.kind;
    c.nonblocking = col.nonblocking;
    c.root = col.root;
    c.bytes = col.bytes;
    c.p = p;
    c.valid = true;
    return c.ends;
  }

  // What the call sent and received; the recorded hashes and payloads when the trace has them
  // (the common case, and much cheaper than working sizes out from counts and types).
  static MessageBytes sizes_of(const CallClass& cls, const Event& ev, const RankContext& ctx) {
    if (!cls.sized) return {};
    const bool sends = cls.op != Op::coll && cls.op != Op::icoll;
    if (!ev.send_hashes.empty() && (sends || !ev.payloads.empty())) {
      MessageBytes mb;
      for (const auto& h : ev.send_hashes) mb.sent += h.bytes;
      mb.received = ev.payload_bytes();
      return mb;
    }
    return message_bytes(ctx, ev);
  }

  // Per-rank block size of a collective (see collectives.hpp).
  static std::uint64_t coll_bytes(CollKind kind, const MessageBytes& mb, std::size_t p) {
    return collective_block(kind, mb.sent, mb.received, p);
  }

  // The own time of a call that starts a transfer and returns without waiting for a peer (a
  // nonblocking send or receive, a buffered send): its recorded duration, at least o. Its work
  // is local (a derived datatype's packing, the copy into a shared-memory cell or into the
  // attached buffer), which the capture timed at what it costs on the machine, as it times a
  // local call; o, fitted from small blocking sends, holds none of it. halo2d's Isends of
  // vector columns took 2-3 us each in plain runs (o 150 ns), ring's 1.6 MB Bsend 4.4 ms
  // (a fresh buffer's page faults; 0.16 ms as a copy at the eager G).
  Time start_cost(const RankState& s) const {
    return std::max(o_, static_cast<Time>(s.ev.end_ns - s.ev.start_ns));
  }

  // A call the model does not re-time: its recorded duration, all of it its own cost.
  void post_local(RankState& s) {
    s.cost = static_cast<Time>(s.ev.end_ns - s.ev.start_ns);
    s.base_end = s.start + s.cost;
  }

  // Sets up the current call: its base end, own cost and the requests it waits for.
  [[gnu::always_inline]] void post(std::uint32_t rank) {
    RankState& s = ranks_[rank];
    const Event& ev = s.ev;
    const CallClass& cls = classify(ev.function);
    const EventArgs a(ev);
    s.cls = &cls;
    const Time o = o_;
    s.keys.clear();
    s.cost = 0;
    s.coll_cost = false;
    s.base_end = s.start;
    const CommInfo* c = nullptr;
    if (cls.needs_comm) {
      c = s.comms.find(static_cast<std::uint64_t>(a.scalar(Role::comm, 0, 0)));
      if (!c || ev.rc != 0) {
        post_local(s);
        return;
      }
    }
    const auto own = [&ev] { return request_key(ev.thread, ev.index); };
    const MessageBytes mb = sizes_of(cls, ev, *s.ctx);
    switch (cls.op) {
      case Op::local:
        post_local(s);
        break;
      case Op::send: {
        const std::uint64_t n = mb.sent;
        const Time x = p_.transfer_ns(n);
        const Slot req = internal(s);
        start_send(rank, *c, a.scalar(Role::peer), a.scalar(Role::tag), n, x, cls, req, s.start);
        s.keys.push_back(req);
        s.cost = waits_for_receive(cls, n) ? 2 * o + 2 * L_ + x
                 : cls.buffered            ? start_cost(s)
                                           : o + x;
        break;
      }
      case Op::isend: {
        const Slot req = s.requests.add(own());  // an event index: new on its thread
        start_send(rank, *c, a.scalar(Role::peer), a.scalar(Role::tag), mb.sent,
                   p_.transfer_ns(mb.sent), cls, req, s.start);
        s.cost = start_cost(s);
        s.base_end = s.start + s.cost;
        break;
      }
      case Op::mprobe:
        // A matched probe takes the message from its channel, as a receive; an MPI_Improbe
        // that found nothing costs nothing, as a failed MPI_Iprobe.
        if (!probe_found(ev)) {
          s.cost = 0;
          break;
        }
        [[fallthrough]];
      case Op::recv: {
        const ArgValue* st = a.get(Role::status_out);
        const Slot req = internal(s);
        start_recv(rank, *c, a.scalar(Role::peer), a.scalar(Role::tag),
                   st && !st->statuses.empty() ? &st->statuses[0] : nullptr, req, s.start);
        s.keys.push_back(req);
        s.cost = o;
        break;
      }
      case Op::irecv: {
        const Slot req = s.requests.add(own());  // an event index: new on its thread
        start_recv(rank, *c, a.scalar(Role::peer), a.scalar(Role::tag), nullptr, req, s.start);
        s.cost = start_cost(s);
        s.base_end = s.start + s.cost;
        break;
      }
      case Op::psend_init:
      case Op::precv_init: {
        PersistentSetUp& p = s.persistent[own()];
        p.comm = a.scalar(Role::comm, 0, 0);
        p.peer = a.scalar(Role::peer);
        p.tag = a.scalar(Role::tag);
        p.bytes = mb.sent;
        p.send = cls.op == Op::precv_init ? nullptr
                 : cls.sync               ? &classify(fn::Issend)
                 : cls.buffered           ? &classify(fn::Ibsend)
                                          : &classify(fn::Isend);
        post_local(s);
        break;
      }
      case Op::start:
        post_start(rank, a);
        break;
      case Op::free_request: {
        if (const ArgValue* r = a.get(Role::request_inout);
            r && !r->requests.empty() && !r->requests[0].null)
          s.persistent.erase(request_key(r->requests[0].thread, r->requests[0].event));
        post_local(s);
        break;
      }
      case Op::isendrecv: {
        // The receive under the request (its Wait* waits for it); the send goes out beside it,
        // an Isend whose completion nothing waits for.
        const Slot req = s.requests.add(own());  // an event index: new on its thread
        start_send(rank, *c, a.scalar(Role::peer, 0), a.scalar(Role::tag, 0), mb.sent,
                   p_.transfer_ns(mb.sent), classify(fn::Isend), kNoSlot, s.start);
        start_recv(rank, *c, a.scalar(Role::peer, 1), a.scalar(Role::tag, 1), nullptr, req,
                   s.start);
        s.cost = start_cost(s);
        s.base_end = s.start + s.cost;
        break;
      }
      case Op::probe:
        if (post_probe(rank, *c, a)) break;
        if (probe_found(ev)) {
          post_local(s);  // a wildcard its status does not resolve: as recorded
        } else {
          // A poll that found nothing: its time was part of a wait, which the model derives
          // from the message that ends the loop (the poll that finds it, or the receive after
          // it); kept, the loop lasted as long as the recording's whatever the model's
          // messages did (master_worker: the master's first loop kept the recording's 2.7 ms
          // start-up skew, +1.9 % on a 142 ms run). The loop keeps its count and its compute.
          s.cost = 0;
        }
        break;
      case Op::sendrecv: {
        const std::uint64_t n = mb.sent;
        const Time x = p_.transfer_ns(n);
        const Slot sreq = internal(s), rreq = internal(s);
        start_send(rank, *c, a.scalar(Role::peer, 0), a.scalar(Role::tag, 0), n, x,
                   classify(fn::Send), sreq, s.start);
        const ArgValue* st = a.get(Role::status_out);
        start_recv(rank, *c, a.scalar(Role::peer, 1), a.scalar(Role::tag, 1),
                   st && !st->statuses.empty() ? &st->statuses[0] : nullptr, rreq, s.start);
        s.keys = {sreq, rreq};
        s.cost = 2 * o + x + L_;
        break;
      }
      case Op::wait:
      case Op::test:
        post_completion(rank, cls, a);
        break;
      case Op::coll:
      case Op::comm_create: {
        const Slot req = internal(s);
        const CollKind kind = cls.op == Op::coll ? cls.coll : CollKind::barrier;
        const std::size_t p = c->members->size();
        arrive(rank, *c, kind, false, static_cast<std::size_t>(a.scalar(Role::root)),
               cls.op == Op::coll ? coll_bytes(kind, mb, p) : 0, req, s.start);
        s.keys.push_back(req);
        s.coll_cost = true;
        break;
      }
      case Op::icoll: {
        const Slot req = s.requests.add(own());  // an event index: new on its thread
        const std::size_t p = c->members->size();
        arrive(rank, *c, cls.coll, true, static_cast<std::size_t>(a.scalar(Role::root)),
               coll_bytes(cls.coll, mb, p), req, s.start);
        s.base_end = s.start + o;
        s.cost = o;
        break;
      }
    }
  }

  // MPI_Start(all): each persistent request set up by a *_init the model saw starts as an
  // Isend or Irecv of it (a request the model does not know keeps its recorded completion).
  void post_start(std::uint32_t rank, const EventArgs& a) {
    RankState& s = ranks_[rank];
    const auto start_one = [&](const RequestRef& ref) {
      if (ref.null) return;
      const std::uint64_t key = request_key(ref.thread, ref.event);
      const auto it = s.persistent.find(key);
      if (it == s.persistent.end()) return;
      const PersistentSetUp& p = it->second;
      const CommInfo* c = s.comms.find(static_cast<std::uint64_t>(p.comm));
      if (!c) return;
      const Slot req = s.requests.add(key);
      if (p.send)
        start_send(rank, *c, p.peer, p.tag, p.bytes, p_.transfer_ns(p.bytes), *p.send, req,
                   s.start);
      else
        start_recv(rank, *c, p.peer, p.tag, nullptr, req, s.start);
    };
    if (const ArgValue* one = a.get(Role::request_inout); one && !one->requests.empty())
      start_one(one->requests[0]);
    else if (const ArgValue* arr = a.get(Role::request_array))
      for (const RequestRef& ref : arr->requests) start_one(ref);
    s.cost = start_cost(s);
    s.base_end = s.start + s.cost;
  }

  // Wait*/Test*: the requests the recorded call completed, wildcard receives resolved by
  // their recorded statuses.
  [[gnu::always_inline]] void post_completion(std::uint32_t rank, const CallClass& cls,
                                              const EventArgs& a) {
    RankState& s = ranks_[rank];
    const bool any = cls.any, some = cls.some;
    if (cls.op == Op::test) {
      // Test(flag), Testall(flag), Testany(index, flag), Testsome(outcount, indices)
      const std::int64_t flag =
          some ? a.scalar(Role::int_out, 0) : a.scalar(Role::int_out, any ? 1 : 0);
      if (flag == 0 || (any && a.scalar(Role::int_out, 0) == MPI_UNDEFINED)) {
        post_local(s);
        if (!any && !some) post_failed_test(s, a);
        return;
      }
    }
    // Arguments looked up only where the function has them (the role index says which).
    const auto first = [&a]() -> const StatusRecord* {
      const ArgValue* st1 = a.get(Role::status_out);
      return st1 && !st1->statuses.empty() ? &st1->statuses[0] : nullptr;
    };
    if (const ArgValue* one = a.get(Role::request_inout); one && !one->requests.empty()) {
      wait_on(rank, one->requests[0], first());
      return;
    }
    const ArgValue* arr = a.get(Role::request_array);
    if (!arr) return;
    const ArgValue* stn = any ? nullptr : a.get(Role::status_array);
    // Sizes and data held in locals: the loops below store through the rank's state, so
    // the compiler would reload them from the Event on every turn.
    const StatusRecord* statuses = stn ? stn->statuses.data() : nullptr;
    const std::size_t n_statuses = stn ? stn->statuses.size() : 0;
    const auto nth_status = [statuses, n_statuses](std::size_t k) -> const StatusRecord* {
      return k < n_statuses ? statuses + k : nullptr;
    };
    if (any) {
      const std::int64_t i = a.scalar(Role::int_out, 0, -1);
      if (i >= 0 && static_cast<std::size_t>(i) < arr->requests.size())
        wait_on(rank, arr->requests[static_cast<std::size_t>(i)], first());
    } else if (some) {
      const ArgValue* idx = a.get(Role::int_array_out);
      if (idx)
        for (std::size_t k = 0; k < idx->list.size(); ++k) {
          const std::int64_t i = idx->list[k];
          if (i < 0 || static_cast<std::size_t>(i) >= arr->requests.size()) continue;
          wait_on(rank, arr->requests[static_cast<std::size_t>(i)], nth_status(k));
        }
    } else {
      const RequestRef* refs = arr->requests.data();
      const std::size_t n = arr->requests.size();
      for (std::size_t k = 0; k < n; ++k) wait_on(rank, refs[k], nth_status(k));
    }
  }

  // An MPI_Test that found its request not done: in the recording the loop around it polled
  // until then, but where the model completes the request sooner the rest of the loop's polls
  // would have found it. So the Test waits until the model knows the request's completion
  // (the loop's successful Test waits for it anyway), then costs nothing if the request was
  // done when it started, else its recorded duration. (Only a request the model created
  // and still holds, whose wildcard, if any, is resolved: an unresolved receive is matched by
  // the status of the call that completes it.)
  [[gnu::always_inline]] void post_failed_test(RankState& s, const EventArgs& a) {
    const ArgValue* one = a.get(Role::request_inout);
    if (!one || one->requests.size() != 1 || one->requests[0].null) return;
    const Slot slot = s.requests.find(request_key(one->requests[0].thread, one->requests[0].event));
    if (slot == kNoSlot) return;
    const Request& q = s.requests[slot];
    if (q.unresolved || q.polls_unparked) return;
    s.poll = slot;
  }

  // One request a Wait*/Test* completed: the current call waits for it.
  [[gnu::always_inline]] void wait_on(std::uint32_t rank, const RequestRef& ref,
                                      const StatusRecord* status) {
    if (ref.null) return;
    RankState& s = ranks_[rank];
    const Slot slot = s.requests.find(request_key(ref.thread, ref.event));
    if (slot == kNoSlot) return;  // created by a call the model keeps as recorded
    Request& q = s.requests[slot];
    if (status && (status->bits & event_format::kStatusCancelled)) {
      if (q.unresolved) {  // never posted to a channel
        q.unresolved = false;
        complete(rank, slot, q.posted + o_);
      } else {
        cancel_recv(rank, slot);
      }
    } else if (q.unresolved) {
      if (!status) {
        q.complete = true;
        q.t = q.posted + o_;
        q.cost = 0;
        q.unresolved = false;
        q.comm = 0;
        q.posted = 0;
      } else {
        resolve(rank, slot, *status);
      }
    }
    s.keys.push_back(slot);
  }

  [[gnu::always_inline]] bool try_finish(std::uint32_t rank) {
    RankState& s = ranks_[rank];
    if (!s.posted) {
      s.start = s.t + s.compute;
      s.posted = true;
      s.poll = kNoSlot;
      post(rank);
    }
    if (s.poll != kNoSlot) {
      const Request& q = s.requests[s.poll];
      if (!q.complete && !q.polls_unparked) return false;
      if (q.complete && q.t <= s.start) s.base_end = s.start;
      s.poll = kNoSlot;
    }
    for (const Slot k : s.keys) {
      const Request& q = s.requests[k];
      if (q.live && !q.complete) return false;
    }
    Time end = s.base_end, cost = s.cost;
    for (const Slot k : s.keys) {
      const Request& q = s.requests[k];
      if (!q.live) continue;  // named twice by one Wait*
      end = std::max(end, q.t);
      if (s.coll_cost) cost = q.cost;
      s.requests.erase(k);
    }
    // The first read of what the call received, on this rank's core, after the transfer
    // (the recording times it apart, format 1.3): the rank's own time, not a wait. In a plain
    // run the program's next segment pays it, a replay does not (it wrote the bytes itself).
    end += static_cast<Time>(s.ev.first_read_ns);
    cost += static_cast<Time>(s.ev.first_read_ns);
    const Time wait = std::clamp<Time>(end - s.start - cost, 0, end - s.start);
    const CallClass& cls = *s.cls;
    if (cls.observes_comms && (cls.op == Op::comm_create || s.ev.rc == 0)) s.comms.observe(s.ev);
    if (cls.shapes) s.ctx->observe(s.ev);
    sink_.on_event(rank, s.ev, s.compute, s.start, end, wait);
    ++stats_.events;
    s.t = end;
    s.have = false;
    return true;
  }

  const LogGPSParams& p_;
  const Time o_, L_, gap_;  // the parameters in whole ns, converted once
  PredictSink& sink_;
  CommRegistry registry_;
  std::vector<RankState> ranks_;
  Scheduler<RankState> sched_;
  Channels channels_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, Collective> collectives_;
  std::uint64_t in_flight_messages_ = 0;
  EngineStats stats_;
  struct SoloEnds {
    bool valid = false;
    CollKind kind = CollKind::barrier;
    bool nonblocking = false;
    std::size_t root = 0, p = 0;
    std::uint64_t bytes = 0;
    std::vector<Time> zeros, ends;
  } solo_;
};

}  // namespace

EngineStats run_loggps(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& params,
                       PredictSink& sink) {
  Engine e(feeds, params, sink);
  return e.run();
}

}  // namespace encore::predict
