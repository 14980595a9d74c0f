// The `logged` models: the seed's (every call keeps its recorded duration, loggps_engine.hpp)
// and the compensated one (logged_model.hpp).
#include "encore/predict/logged_model.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "call_class.hpp"
#include "channel_table.hpp"
#include "comm_table.hpp"
#include "scheduler.hpp"
#include <mpi.h>

#include "encore/rank_context.hpp"

namespace encore::predict {

std::int64_t solo_cost(const Event& ev, const RankContext& ctx, const LogGPSParams& p) {
  const CallClass& cls = classify(ev.function);
  const std::int64_t d = static_cast<std::int64_t>(ev.end_ns - ev.start_ns);
  if (logged_as_local(cls.op)) return d;
  switch (cls.op) {
    case Op::local:
      return d;
    case Op::probe:  // waits for a message: its own part is o, as a receive's
      return probe_found(ev) ? p.overhead_ns() : d;
    case Op::wait:
    case Op::test:
      return 0;
    case Op::recv:
    case Op::irecv:
      return p.overhead_ns();
    case Op::send:
    case Op::isend:
      // What message_bytes finds for a successful point-to-point send whose data was hashed.
      if (ev.rc == 0 && !ev.send_hashes.empty() && cls.modelled_p2p) {
        std::uint64_t sent = 0;
        for (const auto& h : ev.send_hashes) sent += h.bytes;
        return p.overhead_ns() + p.transfer_ns(sent);
      }
      [[fallthrough]];
    default: {
      const MessageBytes mb = message_bytes(ctx, ev);
      return p.overhead_ns() + p.transfer_ns(mb.sent + mb.received);
    }
  }
}

EngineStats run_logged(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& params,
                       PredictSink& sink) {
  EngineStats stats;
  Event ev;
  for (std::uint32_t r = 0; r < feeds.size(); ++r) {
    RankContext ctx(r, static_cast<std::uint32_t>(feeds.size()));
    std::int64_t t = 0, compute = 0;
    while (feeds[r]->next(ev, compute)) {
      const std::int64_t start = t + compute;
      const std::int64_t d = static_cast<std::int64_t>(ev.end_ns - ev.start_ns);
      const std::int64_t wait = std::clamp<std::int64_t>(d - solo_cost(ev, ctx, params), 0, d);
      if (shapes_context(ev)) ctx.observe(ev);
      sink.on_event(r, ev, compute, start, start + d, wait);
      t = start + d;
      ++stats.events;
    }
  }
  return stats;
}

// ---- compensated form (logged_model.hpp) ----
namespace {

using Time = std::int64_t;

std::uint64_t request_key(std::uint16_t thread, std::uint64_t index) {
  return (static_cast<std::uint64_t>(thread) << 48) | (index + 1);  // never 0: "no request"
}
constexpr std::uint64_t kInternal = 1ull << 63;

// Another rank's moment a call cannot end before: recorded (common clock) and predicted.
struct Gate {
  Time rec = 0, pred = 0;
};

struct Request {
  bool complete = false;
  std::vector<Gate> gates;
  bool unresolved = false;  // a wildcard receive, matched once a Wait* names its status
  std::uint32_t comm = 0;
  Gate posted;
};

struct SendPost {
  std::uint32_t rank;
  std::uint64_t req;  // 0: the send does not wait for its receive (eager)
  Gate at;
};
struct RecvPost {
  std::uint32_t rank;
  std::uint64_t req;
  Gate at;
};

struct Collective {
  std::size_t arrived = 0;
  std::vector<Gate> arrive;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> members;  // (rank, request) by comm rank
  std::vector<bool> done;                                        // completed on arrival
};

struct RankState : RankCursor {
  CommTable comms;
  std::optional<RankContext> ctx;
  std::unordered_map<std::uint64_t, Request> requests;
  std::unordered_map<std::uint32_t, std::uint64_t> coll_seq;
  Time t = 0;
  Gate start;  // of the current call
  Time rec_end = 0;
  std::vector<std::uint64_t> keys;  // requests the current call waits for
  std::uint64_t next_internal = kInternal;
};

// Whether member `i` of a collective depends on the others' arrival, and on whose.
bool needs_all(CollKind kind, bool large) {
  switch (kind) {
    case CollKind::bcast:
    case CollKind::scatter:
    case CollKind::reduce:
    case CollKind::gather:
      return large;  // small: a tree of eager sends, only the data's direction matters
    default:
      return true;
  }
}
bool waits_on_arrival(CollKind kind, bool large, bool root) {
  if (needs_all(kind, large)) return true;
  const bool from_root = kind == CollKind::bcast || kind == CollKind::scatter;
  return from_root != root;  // bcast/scatter: non-roots wait; reduce/gather: the root waits
}

class Compensated {
 public:
  Compensated(std::vector<std::unique_ptr<RankFeed>>& feeds, const LogGPSParams& p,
              const ClockOffsets& clocks, PredictSink& sink)
      : p_(p),
        clocks_(clocks),
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

  LoggedStats run() {
    sched_.wake_all();
    do sched_.drain([this](std::uint32_t r) { return try_finish(r); });
    while (release_earliest());
    return stats_;
  }

 private:
  void wake(std::uint32_t r) { sched_.wake(r); }

  // No rank can go on: lets the blocked call that starts earliest go without its gates.
  bool release_earliest() {
    RankState* best = nullptr;
    std::uint32_t best_rank = 0;
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      RankState& s = ranks_[r];
      if (s.done || !s.have) continue;
      if (!best || s.start.pred < best->start.pred) {
        best = &s;
        best_rank = r;
      }
    }
    if (!best) return false;
    for (const std::uint64_t k : best->keys) {
      const auto it = best->requests.find(k);
      if (it != best->requests.end()) it->second.complete = true;
    }
    ++stats_.released;
    wake(best_rank);
    return true;
  }

  std::uint64_t internal(RankState& s) {
    const std::uint64_t k = s.next_internal++;
    s.requests[k] = {};
    return k;
  }

  void complete(std::uint32_t rank, std::uint64_t key, const Gate* gate) {
    if (key == 0) return;
    auto& reqs = ranks_[rank].requests;
    const auto it = reqs.find(key);
    if (it == reqs.end()) return;  // released earlier, or a request no call waits for
    it->second.complete = true;
    if (gate) it->second.gates.push_back(*gate);
    wake(rank);
  }

  void match(const SendPost& s, const RecvPost& r) {
    complete(r.rank, r.req, &s.at);
    complete(s.rank, s.req, &r.at);
    ++stats_.messages;
  }

  void post_send(std::uint32_t src, std::uint32_t dst, std::uint32_t comm, std::int64_t tag,
                 const SendPost& s) {
    auto& channel = channels_.get({src, dst, comm, tag});
    if (!channel.recvs.empty()) return match(s, channel.recvs.pop());
    channel.sends.push(s);
  }

  void post_recv(std::uint32_t src, std::uint32_t dst, std::uint32_t comm, std::int64_t tag,
                 const RecvPost& r) {
    auto& channel = channels_.get({src, dst, comm, tag});
    if (!channel.sends.empty()) return match(channel.sends.pop(), r);
    channel.recvs.push(r);
  }

  static std::uint64_t sent_bytes(const Event& ev, const RankContext& ctx) {
    if (!ev.send_hashes.empty()) {
      std::uint64_t n = 0;
      for (const auto& h : ev.send_hashes) n += h.bytes;
      return n;
    }
    return message_bytes(ctx, ev).sent;
  }

  // A send of the current call; `req` completes when it may (at once when eager).
  void start_send(std::uint32_t rank, const CommInfo& c, std::int64_t peer, std::int64_t tag,
                  const CallClass& cls, std::uint64_t req) {
    RankState& s = ranks_[rank];
    const auto dst = c.world(peer);
    const bool waits = cls.sync || (!cls.buffered && p_.rendezvous(sent_bytes(s.ev, *s.ctx)));
    if (!dst || !waits) complete(rank, req, nullptr);
    if (dst) post_send(rank, *dst, c.key, tag, {rank, waits ? req : 0, s.start});
  }

  void start_recv(std::uint32_t rank, const CommInfo& c, std::int64_t peer, std::int64_t tag,
                  const StatusRecord* status, std::uint64_t req) {
    RankState& s = ranks_[rank];
    std::int64_t src = peer, t = tag;
    if (status) {
      if (src == MPI_ANY_SOURCE) src = status->source;
      if (t == MPI_ANY_TAG) t = status->tag;
    }
    if (src == MPI_ANY_SOURCE || t == MPI_ANY_TAG) {
      Request& q = s.requests[req];
      q.unresolved = true;
      q.comm = c.key;
      q.posted = s.start;
      return;
    }
    const auto world = c.world(src);
    if (!world) return complete(rank, req, nullptr);
    post_recv(*world, rank, c.key, t, {rank, req, s.start});
  }

  void resolve(std::uint32_t rank, std::uint64_t key, Request& q, const StatusRecord* st) {
    q.unresolved = false;
    const CommInfo* c = ranks_[rank].comms.by_key(q.comm);
    const auto world = c && st ? c->world(st->source) : std::nullopt;
    if (!world) return complete(rank, key, nullptr);
    post_recv(*world, rank, c->key, st->tag, {rank, key, q.posted});
  }

  void arrive(std::uint32_t rank, const CommInfo& c, CollKind kind, std::size_t root,
              std::uint64_t req) {
    RankState& s = ranks_[rank];
    const std::uint64_t seq = s.coll_seq[c.key]++;
    auto [it, fresh] = collectives_.try_emplace({c.key, seq});
    Collective& col = it->second;
    const std::size_t p = c.members->size();
    if (fresh) {
      col.arrive.assign(p, {});
      col.members.assign(p, {0, 0});
      col.done.assign(p, false);
    }
    const MessageBytes mb = message_bytes(*s.ctx, s.ev);
    const bool large = p_.rendezvous(std::max(mb.sent, mb.received));
    col.arrive[c.index] = s.start;
    col.members[c.index] = {rank, req};
    if (!waits_on_arrival(kind, large, c.index == root)) {
      col.done[c.index] = true;
      complete(rank, req, nullptr);
    }
    if (++col.arrived < p) return;
    for (std::size_t i = 0; i < p; ++i) {
      if (col.done[i]) continue;
      const bool all = needs_all(kind, large);
      for (std::size_t j = 0; j < p; ++j)
        if (j != i && (all || j == root))
          complete(col.members[i].first, col.members[i].second, &col.arrive[j]);
      complete(col.members[i].first, col.members[i].second, nullptr);
    }
    collectives_.erase(it);
    ++stats_.collectives;
  }

  void post(std::uint32_t rank) {
    RankState& s = ranks_[rank];
    const Event& ev = s.ev;
    const CallClass& cls = classify(ev.function);
    s.keys.clear();
    const CommInfo* c = nullptr;
    if (cls.op != Op::wait && cls.op != Op::test && !logged_as_local(cls.op) &&
        cls.op != Op::probe) {
      c = s.comms.find(static_cast<std::uint64_t>(scalar_of(ev, Role::comm, 0, 0)));
      if (!c || ev.rc != 0) return;
    }
    const std::uint64_t own = request_key(ev.thread, ev.index);
    const auto status = [&]() -> const StatusRecord* {
      const ArgValue* st = arg_of(ev, Role::status_out);
      return st && !st->statuses.empty() ? &st->statuses[0] : nullptr;
    };
    switch (cls.op) {
      case Op::local:
      case Op::probe:  // keeps its recorded duration, as every call here
      case Op::psend_init:
      case Op::precv_init:
      case Op::start:
      case Op::free_request:
      case Op::isendrecv:
      case Op::mprobe:
        break;
      case Op::send:
        s.keys.push_back(internal(s));
        start_send(rank, *c, scalar_of(ev, Role::peer), scalar_of(ev, Role::tag), cls,
                   s.keys.back());
        break;
      case Op::isend:
        s.requests[own] = {};
        start_send(rank, *c, scalar_of(ev, Role::peer), scalar_of(ev, Role::tag), cls, own);
        break;
      case Op::recv:
        s.keys.push_back(internal(s));
        start_recv(rank, *c, scalar_of(ev, Role::peer), scalar_of(ev, Role::tag), status(),
                   s.keys.back());
        break;
      case Op::irecv:
        s.requests[own] = {};
        start_recv(rank, *c, scalar_of(ev, Role::peer), scalar_of(ev, Role::tag), nullptr, own);
        break;
      case Op::sendrecv: {
        const std::uint64_t sreq = internal(s), rreq = internal(s);
        s.keys = {sreq, rreq};
        start_send(rank, *c, scalar_of(ev, Role::peer, 0), scalar_of(ev, Role::tag, 0),
                   classify(fn::Send), sreq);
        start_recv(rank, *c, scalar_of(ev, Role::peer, 1), scalar_of(ev, Role::tag, 1), status(),
                   rreq);
        break;
      }
      case Op::wait:
      case Op::test:
        post_completion(rank, cls);
        break;
      case Op::coll:
      case Op::comm_create:
        s.keys.push_back(internal(s));
        arrive(rank, *c, cls.op == Op::coll ? cls.coll : CollKind::barrier,
               static_cast<std::size_t>(scalar_of(ev, Role::root)), s.keys.back());
        break;
      case Op::icoll:
        s.requests[own] = {};
        arrive(rank, *c, cls.coll, static_cast<std::size_t>(scalar_of(ev, Role::root)), own);
        break;
    }
  }

  // Wait*/Test*: the requests the recorded call completed (as the loggps engine reads them).
  void post_completion(std::uint32_t rank, const CallClass& cls) {
    RankState& s = ranks_[rank];
    const Event& ev = s.ev;
    const bool any = cls.any, some = cls.some;
    if (cls.op == Op::test) {
      const std::int64_t flag =
          some ? scalar_of(ev, Role::int_out, 0) : scalar_of(ev, Role::int_out, any ? 1 : 0);
      if (flag == 0 || (any && scalar_of(ev, Role::int_out, 0) == MPI_UNDEFINED)) return;
    }
    std::vector<std::pair<RequestRef, const StatusRecord*>> refs;
    const ArgValue* one = arg_of(ev, Role::request_inout);
    const ArgValue* arr = arg_of(ev, Role::request_array);
    const ArgValue* st1 = arg_of(ev, Role::status_out);
    const ArgValue* stn = arg_of(ev, Role::status_array);
    const StatusRecord* first = st1 && !st1->statuses.empty() ? &st1->statuses[0] : nullptr;
    const auto nth = [&](std::size_t k) -> const StatusRecord* {
      return stn && k < stn->statuses.size() ? &stn->statuses[k] : nullptr;
    };
    if (one && !one->requests.empty()) {
      refs.emplace_back(one->requests[0], first);
    } else if (arr && any) {
      const std::int64_t i = scalar_of(ev, Role::int_out, 0, -1);
      if (i >= 0 && static_cast<std::size_t>(i) < arr->requests.size())
        refs.emplace_back(arr->requests[static_cast<std::size_t>(i)], first);
    } else if (arr && some) {
      if (const ArgValue* idx = arg_of(ev, Role::int_array_out))
        for (std::size_t k = 0; k < idx->list.size(); ++k) {
          const std::int64_t i = idx->list[k];
          if (i >= 0 && static_cast<std::size_t>(i) < arr->requests.size())
            refs.emplace_back(arr->requests[static_cast<std::size_t>(i)], nth(k));
        }
    } else if (arr) {
      for (std::size_t k = 0; k < arr->requests.size(); ++k)
        refs.emplace_back(arr->requests[k], nth(k));
    }
    for (const auto& [ref, st] : refs) {
      if (ref.null) continue;
      const std::uint64_t key = request_key(ref.thread, ref.event);
      const auto it = s.requests.find(key);
      if (it == s.requests.end()) continue;  // made by a call the model keeps as recorded
      s.keys.push_back(key);
      if (it->second.unresolved) resolve(rank, key, it->second, st);
    }
  }

  bool try_finish(std::uint32_t rank) {
    RankState& s = ranks_[rank];
    const Event& ev = s.ev;
    const Time d = static_cast<Time>(ev.end_ns - ev.start_ns);
    if (!s.posted) {
      s.posted = true;
      const auto raw = static_cast<Time>(ev.raw_start_ns);
      s.start = {raw + clocks_.at(rank, raw), s.t + s.compute};
      s.rec_end = s.start.rec + d;
      post(rank);
    }
    for (const std::uint64_t k : s.keys) {
      const auto it = s.requests.find(k);
      if (it != s.requests.end() && !it->second.complete) return false;
    }
    Gate last = s.start;  // the latest kept gate, or the call's own start
    for (const std::uint64_t k : s.keys) {
      const auto it = s.requests.find(k);
      if (it == s.requests.end()) continue;
      for (const Gate& g : it->second.gates)
        if (g.rec <= s.rec_end) {
          last.rec = std::max(last.rec, g.rec);
          last.pred = std::max(last.pred, g.pred);
        }
      s.requests.erase(it);
    }
    const Time end = last.pred + (s.rec_end - last.rec);
    const Time span = end - s.start.pred;
    const Time wait = std::clamp<Time>(span - solo_cost(ev, *s.ctx, p_), 0, span);
    const CallClass& cls = classify(ev.function);
    if (cls.op == Op::comm_create || (cls.op == Op::local && ev.rc == 0)) s.comms.observe(ev);
    if (shapes_context(ev)) s.ctx->observe(ev);
    sink_.on_event(rank, ev, s.compute, s.start.pred, end, wait);
    ++stats_.events;
    s.t = end;
    s.have = false;
    return true;
  }

  const LogGPSParams& p_;
  const ClockOffsets& clocks_;
  PredictSink& sink_;
  CommRegistry registry_;
  std::vector<RankState> ranks_;
  Scheduler<RankState> sched_;
  ChannelTable<SendPost, RecvPost> channels_;
  std::map<std::pair<std::uint32_t, std::uint64_t>, Collective> collectives_;
  LoggedStats stats_;
};

}  // namespace

LoggedStats run_compensated(std::vector<std::unique_ptr<RankFeed>>& feeds,
                            const LogGPSParams& params, const ClockOffsets& clocks,
                            PredictSink& sink) {
  return Compensated(feeds, params, clocks, sink).run();
}

}  // namespace encore::predict
