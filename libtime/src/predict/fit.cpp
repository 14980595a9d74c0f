#include "encore/predict/fit.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "call_class.hpp"
#include "completions.hpp"
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/predict/clock_offsets.hpp"
#include "encore/predict/collectives.hpp"
#include "encore/rank_context.hpp"

namespace encore::predict {
namespace {

// With an even count, the mean of the middle two: the upper one alone took the larger of two
// reductions' gammas (the collectives example has exactly two above S).
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

// A rendezvous pair's transfer time (n-1)G under the engine's rule: the data moves once the
// handshake is done, at the send's start + o + L when the receive was waiting, else at the
// receive's post, and the receive ends 2o + 2L after it has moved.
double rendezvous_transfer(std::int64_t send_start, std::int64_t recv_start, std::int64_t recv_end,
                           const LogGPSParams& p) {
  const double handshake =
      std::max(static_cast<double>(send_start) + p.o + p.L, static_cast<double>(recv_start));
  return std::max(0.0, static_cast<double>(recv_end) - handshake - 2 * p.o - 2 * p.L);
}

// o: the mean of the small sends' durations, each above the 99th percentile counted as that
// percentile. A run pays every send's cost, and their durations are skewed (master_worker 512 16
// 1024, plain: a worker's first send after a tile median 300 ns, its second 70 ns with a mean of
// 300; the recording's small sends median 60 ns, mean 198): the median charged each send 60 ns
// where the plain run's sends cost 200-350 on average. Capped rather than whole, since a few
// of a recording's sends are stretched by microseconds to milliseconds (the writer thread
// taking the core: up to 34 us in a quiet recording), which would move the mean of a short run.
double capped_mean(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto at = v.begin() + static_cast<std::ptrdiff_t>(v.size() * 99 / 100);
  std::nth_element(v.begin(), at, v.end());
  const double cap = *at;
  double sum = 0;
  for (const double d : v) sum += std::min(d, cap);
  return sum / static_cast<double>(v.size());
}

// The tenth percentile: what a machine's load does to a message (the receiver descheduled,
// the sender preempted) only ever adds time, so the low end is the network's own latency.
double low_quantile(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 10), v.end());
  return v[v.size() / 10];
}

using Envelope = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint64_t>;
struct SendSample {
  std::int64_t start;
  std::uint64_t bytes;
  bool buffered;  // Bsend: never waits for its receive, whatever the size
  // A blocking standard-mode send (Send, Rsend) and its end: whether it returned before its
  // receive was posted tells its protocol (fit_threshold).
  bool blocking = false;
  std::int64_t end = 0;
  // A Sendrecv's send half: queued whatever its size, so that its envelope's sends and
  // receives pair in order; below S its pair is no sample of L (the rule of fit_params).
  bool sendrecv = false;
};
// A receive's completion: `start` is when the rank began waiting for it (a blocking receive's
// start; a Wait*'s; a Test* loop's first unsuccessful poll), `end` the completing call's end.
// Receives completed by one call share its `group`: its end is the last of them to arrive, so
// only the group's tightest sample says anything of L.
struct RecvSample {
  std::int64_t start, end;
  std::uint64_t group;
  std::int64_t posted;  // when the receive was posted (an Irecv's own call)
};
// An Irecv not yet completed, by request (thread, event index).
struct PendingRecv {
  std::uint64_t comm_id;
  std::int64_t source, tag;  // as posted: wildcards resolved by the completing call's status
  std::int64_t posted = 0;
  // Without wildcards, its place in its envelope's queue, taken when posted: MPI matches
  // in posting order, whatever order the Wait*s complete them in.
  std::deque<RecvSample>* queue = nullptr;
  std::size_t pos = 0;
};
// A posted receive not (yet) completed: never a sample (it counts as a late one).
inline constexpr RecvSample kUnfinished{std::numeric_limits<std::int64_t>::max(), 0, 0,
                                        std::numeric_limits<std::int64_t>::max()};
std::uint64_t request_key(std::uint64_t thread, std::uint64_t index) {
  return (thread << 48) ^ index;
}
// One collective as its members recorded it (uncorrected times). A nonblocking one (Iallreduce
// ...) starts at its call and ends with the Wait* or Test* that completed it.
struct CollSample {
  CollKind kind;
  bool nonblocking;
  std::size_t root;
  std::uint64_t bytes;
  std::vector<std::int64_t> start, end;
  std::size_t seen = 0;
};
using CollKey = std::pair<std::uint64_t, std::uint64_t>;  // (comm id, sequence)
// A nonblocking collective a rank started and has not completed: its sample, its place in it.
struct PendingColl {
  CollKey key;
  std::size_t me;
};
// A collective's per-rank block (collective_block) from the recorded hashes and payloads when
// the event has them, else from its counts and types.
std::uint64_t collective_bytes(const RankContext& ctx, const Event& ev, CollKind kind,
                               std::size_t p) {
  std::uint64_t sent = 0;
  for (const auto& h : ev.send_hashes) sent += h.bytes;
  std::uint64_t got = ev.payload_bytes();
  if (ev.send_hashes.empty() || ev.payloads.empty()) {
    const MessageBytes mb = message_bytes(ctx, ev);
    if (ev.send_hashes.empty()) sent = mb.sent;
    if (ev.payloads.empty()) got = mb.received;
  }
  return collective_block(kind, sent, got, p);
}
inline constexpr std::size_t kMaxCollSamples = 4096;  // bounds the fit's memory and time
// Irecvs followed to their completion per rank: each costs a lookup at its Wait* and a
// queued sample (about 1800 instructions in all), so a rank's first ones only (a prefix
// keeps the in-order pairing right), about 16 Ki in all.
inline std::size_t max_irecvs_per_rank(std::uint32_t nprocs) {
  return std::max<std::size_t>(64, 16384 / std::max<std::uint32_t>(nprocs, 1));
}

// Every `stride`-th of the values offered, at most kCap kept: when full, every other one is
// dropped and the stride doubles, so what is kept stays spread evenly over the whole run.
class EvenSample {
 public:
  static constexpr std::size_t kCap = 65536;
  void offer(double v) {
    if (offered_++ % stride_ != 0) return;
    kept_.push_back(v);
    if (kept_.size() < kCap) return;
    for (std::size_t k = 0; 2 * k < kept_.size(); ++k) kept_[k] = kept_[2 * k];
    kept_.resize(kCap / 2);
    stride_ *= 2;
  }
  const std::vector<double>& kept() const { return kept_; }
  std::uint64_t offered() const { return offered_; }

 private:
  std::vector<double> kept_;
  std::uint64_t offered_ = 0, stride_ = 1;
};

std::int64_t last_end(const CollSample& cs) {
  return *std::max_element(cs.end.begin(), cs.end.end());
}

// g: the time from one small send's start to the next's where the rank sent them back to
// back (the second starting within kBurstGap of the first's end), the median: the pace at
// which the rank injects messages when nothing else holds it back.
inline constexpr std::int64_t kBurstGap = 200;  // ns
struct Burst {
  std::uint32_t thread = std::numeric_limits<std::uint32_t>::max();  // none
  std::int64_t start = 0, end = 0;
};

// S from what the blocking standard sends did when their receive was posted late. One that
// returned before its receive was posted sent eagerly: S is at least its size. One that lasted
// until its receive was posted and ended soon after (within as long again as it had waited)
// waited for it. A size class is taken for rendezvous (S below
// its smallest such send) only when at least kMinWaiting of its sends waited and they are
// three quarters of its sends with a late receive, all larger than every eager one: an eager
// send can look so when preempted, and a first message to a peer waits for the connection to
// be made (the ring example's first token: S fell to 4 B on that one send); an early return
// cannot be faked. Between the two bounds MPI libraries put their threshold at a power of two:
// the one nearest the prior (the default) in ratio, the prior itself where the bounds allow.
struct ThresholdFit {
  std::uint64_t S;
  std::uint64_t eager = 0, waiting = 0, ignored = 0;  // samples
  std::uint64_t largest_eager = 0, smallest_waiting = 0;
};

inline constexpr std::int64_t kProtocolMargin = 1000;  // ns: clock offsets' error, jitter
inline constexpr std::uint64_t kMinWaiting = 3;

std::uint64_t choose_threshold(std::uint64_t lo, std::uint64_t hi, std::uint64_t prior) {
  // Messages larger than S are rendezvous: lo (eager) <= S < hi (waited).
  if (prior >= lo && prior < hi) return prior;
  std::uint64_t best = 0;
  const auto distance = [&](std::uint64_t v) {
    return std::abs(std::log2(static_cast<double>(v)) - std::log2(static_cast<double>(prior)));
  };
  for (std::uint64_t v = std::bit_ceil(std::max<std::uint64_t>(lo, 1)); v != 0 && v < hi; v <<= 1)
    if (best == 0 || distance(v) < distance(best)) best = v;
  return best != 0 ? best : lo;
}

ThresholdFit fit_threshold(const std::map<Envelope, std::deque<SendSample>>& sends,
                           const std::map<Envelope, std::deque<RecvSample>>& recvs,
                           std::uint64_t prior) {
  ThresholdFit t{prior};
  struct Class {
    std::uint64_t late = 0, waited = 0, smallest = 0;  // smallest size that waited
  };
  std::map<std::uint64_t, Class> classes;  // by size class (bit width)
  for (const auto& [env, rq] : recvs) {
    const auto it = sends.find(env);
    if (it == sends.end()) continue;
    const auto& sq = it->second;
    for (std::size_t i = 0; i < std::min(sq.size(), rq.size()); ++i) {
      const SendSample& s = sq[i];
      const RecvSample& q = rq[i];
      if (!s.blocking || s.buffered || q.posted == kUnfinished.posted) continue;
      if (s.end + kProtocolMargin < q.posted) {
        ++t.eager;
        t.largest_eager = std::max(t.largest_eager, s.bytes);
        continue;
      }
      const std::int64_t late = q.posted - s.start;
      if (late <= kProtocolMargin) continue;  // not late enough to tell
      Class& c = classes[std::bit_width(s.bytes)];
      ++c.late;
      if (s.end >= q.posted && s.end - q.posted <= late) {
        c.smallest = c.waited == 0 ? s.bytes : std::min(c.smallest, s.bytes);
        ++c.waited;
      }
    }
  }
  std::uint64_t hi = std::numeric_limits<std::uint64_t>::max();
  for (const auto& [cls, c] : classes) {
    if (c.waited >= kMinWaiting && 4 * c.waited >= 3 * c.late && c.smallest > t.largest_eager) {
      t.waiting += c.waited;
      hi = std::min(hi, c.smallest);
    } else {
      t.ignored += c.waited;
    }
  }
  if (t.waiting != 0) t.smallest_waiting = hi;
  if (t.eager != 0 || t.waiting != 0) t.S = choose_threshold(t.largest_eager, hi, prior);
  return t;
}

}  // namespace

FitReport fit_params(const TraceDir& capture, const Manifest& manifest) {
  return fit_params(capture, manifest, fit_events_per_rank(manifest.nprocs));
}

FitReport fit_params(const TraceDir& capture, const Manifest& manifest, std::uint64_t per_rank) {
  FitReport f;
  f.params.source = "fit from " + capture.root().string();
  EvenSample small_sends;
  EvenSample send_gaps;                                               // g
  std::map<std::uint64_t, std::pair<std::uint64_t, double>> fastest;  // size class -> (bytes, ns)
  std::map<Envelope, std::deque<SendSample>> sends;
  std::map<Envelope, std::deque<RecvSample>> recvs;
  std::map<CollKey, CollSample> colls;
  // The last send's queue: a rank's sends mostly repeat their envelope (map nodes stay put).
  std::pair<Envelope, std::deque<SendSample>*> last_sends{};
  std::uint64_t groups = 0;  // completing calls seen (RecvSample::group)
  const std::size_t max_irecvs = max_irecvs_per_rank(manifest.nprocs);
  const ClockOffsets clocks(manifest);
  for (std::uint32_t r = 0; r < manifest.nprocs; ++r) {
    // Per communicator id, blocking and nonblocking collectives alike (as the engine counts).
    std::map<std::uint64_t, std::uint64_t> coll_seq;
    std::unordered_map<std::uint64_t, PendingRecv> irecvs;
    std::unordered_map<std::uint64_t, PendingColl> icolls;  // started, not yet completed
    std::int64_t polling_since = -1;  // the current run of unsuccessful Test* calls began
    std::size_t followed = 0;         // Irecvs followed on this rank
    Burst burst;                      // the previous event, if a small send
    RankEventReader reader(capture.events_path(r));
    RankContext ctx(r, manifest.nprocs);
    Event ev;
    std::uint64_t i = 0;
    for (; reader.next(ev); ++i) {
      // Sends' durations and collectives over the whole trace (their memory is bounded);
      // pairs, which queue every message until its peer's rank is read, from the first
      // `per_rank` events only.
      const bool pairing = i < per_rank;
      const CallClass& c = classify(ev.function);
      // Pairs compare two ranks' moments: uncorrected times, since what a receive waited for
      // is the sender's wall clock, the capture's work on either side included.
      // (The offset at that time: two ranks' clocks drift apart over a run.)
      const auto local_start = static_cast<std::int64_t>(ev.raw_start_ns);
      const std::int64_t raw_start = local_start + clocks.at(r, local_start);
      // Peers as world ranks; the communicator's id is the same on every rank of an SPMD
      // program, which is what the pairing below assumes.
      // (Looked up only for the calls measured below: most of a trace is waits and polls.)
      // (Beyond the first `per_rank` events a send's peer is not looked up: no pair.)
      const bool measured =
          ev.rc == 0 &&
          (c.op == Op::coll || c.op == Op::icoll ||
           (pairing && (c.op == Op::send || c.op == Op::isend || c.op == Op::sendrecv ||
                        c.op == Op::recv || (c.op == Op::irecv && followed < max_irecvs))));
      const std::uint64_t comm_id =
          measured ? static_cast<std::uint64_t>(scalar_of(ev, Role::comm)) : 0;
      const CommInfo* comm = measured ? ctx.comm(comm_id) : nullptr;
      const auto world_of = [&](std::int64_t peer) -> std::int64_t {
        if (!comm || peer < 0 || peer >= comm->size()) return -1;
        return comm->members[static_cast<std::size_t>(peer)];
      };
      // (Without the first read of what the call received: the rank's own time after the
      // transfer, no part of L, G or a collective's gamma.)
      const std::uint64_t duration = ev.end_ns - ev.start_ns;
      const std::int64_t raw_end =
          raw_start + static_cast<std::int64_t>(duration - std::min(duration, ev.first_read_ns));
      // (A send to MPI_PROC_NULL returns at once whatever its size: no sample of o or G.)
      bool small_send = false;
      if (ev.rc == 0 && (c.op == Op::send || c.op == Op::isend) && !c.sync &&
          scalar_of(ev, Role::peer) != MPI_PROC_NULL) {
        const std::uint64_t n = message_bytes(ctx, ev).sent;
        const double d = static_cast<double>(ev.end_ns - ev.start_ns);
        small_send = n <= 1024 && !c.buffered;
        if (n <= 1024) small_sends.offer(d);
        auto [it, fresh] = fastest.try_emplace(std::bit_width(n), n, d);
        if (!fresh && d < it->second.second) it->second = {n, d};
        const std::int64_t dst = world_of(scalar_of(ev, Role::peer));
        if (dst >= 0) {
          const Envelope env{r, dst, scalar_of(ev, Role::tag), comm_id};
          if (last_sends.second == nullptr || last_sends.first != env)
            last_sends = {env, &sends[env]};
          last_sends.second->push_back({raw_start, n, c.buffered, c.op == Op::send, raw_end});
        }
      } else if (ev.rc == 0 && c.op == Op::sendrecv) {
        // Its duration holds its receive too, so it is no sample of o or G. Queued whatever its
        // size (S is not fitted yet): the pairing takes a rendezvous-size one as a large pair,
        // what large shifts are made of, and leaves a smaller one out of L.
        const std::uint64_t n = message_bytes(ctx, ev).sent;
        const std::int64_t dst = world_of(scalar_of(ev, Role::peer, 0));
        if (dst >= 0)
          sends[{r, dst, scalar_of(ev, Role::tag, 0), comm_id}].push_back(
              {.start = raw_start, .bytes = n, .buffered = false, .sendrecv = true});
      }
      // g: a small send right after another (nothing in between), from start to start.
      if (small_send && burst.thread == ev.thread && raw_start - burst.end <= kBurstGap)
        send_gaps.offer(static_cast<double>(raw_start - burst.start));
      burst = small_send ? Burst{ev.thread, raw_start, raw_end} : Burst{};
      if (ev.rc == 0 && (c.op == Op::recv || c.op == Op::sendrecv)) {
        const ArgValue* st = arg_of(ev, Role::status_out);
        const std::int64_t src =
            st && !st->statuses.empty() ? world_of(st->statuses[0].source) : -1;
        if (src >= 0)
          recvs[{src, r, st->statuses[0].tag, comm_id}].push_back(
              {raw_start, raw_end, groups++, raw_start});
      } else if (ev.rc == 0 && c.op == Op::irecv && comm && followed < max_irecvs) {
        ++followed;
        PendingRecv pr{comm_id, scalar_of(ev, Role::peer), scalar_of(ev, Role::tag), raw_start};
        if (const std::int64_t src = world_of(pr.source); src >= 0 && pr.tag != MPI_ANY_TAG) {
          pr.queue = &recvs[{src, r, pr.tag, comm_id}];
          pr.pos = pr.queue->size();
          pr.queue->push_back(kUnfinished);
        }
        irecvs[request_key(ev.thread, ev.index)] = pr;
      } else if (ev.rc == 0 && (c.op == Op::wait || c.op == Op::test) &&
                 (!irecvs.empty() || !icolls.empty())) {
        // An Irecv completed here was waited for from this call's start, or from the first
        // poll of a Test* loop that had not found it yet.
        if (completes(c, ev)) {
          const std::int64_t since =
              c.op == Op::test && polling_since >= 0 ? polling_since : raw_start;
          const std::uint64_t group = groups++;
          for_each_completed(c, ev, [&](const RequestRef& ref, const StatusRecord* st) {
            // A nonblocking collective ends here for this member.
            if (const auto ic = icolls.find(request_key(ref.thread, ref.event));
                ic != icolls.end()) {
              if (const auto cs = colls.find(ic->second.key); cs != colls.end()) {
                cs->second.end[ic->second.me] = raw_end;
                ++cs->second.seen;
              }
              icolls.erase(ic);
              return;
            }
            const auto it = irecvs.find(request_key(ref.thread, ref.event));
            if (it == irecvs.end()) return;
            const PendingRecv pr = it->second;
            irecvs.erase(it);
            if (st && (st->bits & event_format::kStatusCancelled)) return;
            if (pr.queue) {
              (*pr.queue)[pr.pos] = {since, raw_end, group, pr.posted};
              return;
            }
            const std::int64_t source = pr.source == MPI_ANY_SOURCE && st ? st->source : pr.source;
            const std::int64_t tag = pr.tag == MPI_ANY_TAG && st ? st->tag : pr.tag;
            const CommInfo* in = ctx.comm(pr.comm_id);
            if (!in || source < 0 || source >= in->size() || tag == MPI_ANY_TAG) return;
            const std::int64_t src = in->members[static_cast<std::size_t>(source)];
            recvs[{src, r, tag, pr.comm_id}].push_back({since, raw_end, group, pr.posted});
          });
        }
      }
      // A Test* that found nothing extends the polling run; any other call ends it.
      if (c.op == Op::test && ev.rc == 0 && !completes(c, ev)) {
        if (polling_since < 0) polling_since = raw_start;
      } else {
        polling_since = -1;
      }
      if (ev.rc == 0 && (c.op == Op::coll || c.op == Op::icoll) && comm && comm->size() > 1 &&
          comm->rank >= 0) {
        // Above S a collective's time is mostly its bytes: a sample of G where no
        // point-to-point rendezvous pair gives one (kept whatever its size until every
        // member was read, since a member may not know the size: a Bcast's receivers).
        // A nonblocking one's end is its completing call's, below.
        const bool nonblocking = c.op == Op::icoll;
        const std::size_t p = comm->members.size(), me = static_cast<std::size_t>(comm->rank);
        const CollKey key{comm_id, coll_seq[comm_id]++};
        auto it = colls.find(key);
        if (it == colls.end() && colls.size() < kMaxCollSamples) {
          const auto root =
              static_cast<std::size_t>(std::max<std::int64_t>(0, scalar_of(ev, Role::root)));
          it = colls
                   .emplace(key,
                            CollSample{c.coll, nonblocking, root, 0, std::vector<std::int64_t>(p),
                                       std::vector<std::int64_t>(p)})
                   .first;
        }
        if (it != colls.end() && it->second.kind == c.coll &&
            it->second.nonblocking == nonblocking && me < it->second.start.size()) {
          CollSample& cs = it->second;
          cs.bytes = std::max(cs.bytes, collective_bytes(ctx, ev, c.coll, p));
          cs.start[me] = raw_start;
          if (nonblocking) {
            icolls[request_key(ev.thread, ev.index)] = {key, me};
          } else {
            cs.end[me] = raw_end;
            ++cs.seen;
          }
        }
      }
      ctx.observe(ev);
    }
    f.events_read += i;
    if (i > per_rank) ++f.ranks_cut;
  }
  f.events_per_rank = per_rank;
  LogGPSParams& p = f.params;
  // S first: which sizes the eager G line and the rendezvous classes take depends on it.
  const ThresholdFit threshold = fit_threshold(sends, recvs, p.S);
  p.S = threshold.S;
  f.threshold_eager = threshold.eager;
  f.threshold_waiting = threshold.waiting;
  f.threshold_ignored = threshold.ignored;
  f.largest_eager_bytes = threshold.largest_eager;
  f.smallest_waiting_bytes = threshold.smallest_waiting;
  if (threshold.eager == 0 && threshold.waiting == 0)
    f.notes += fmt::format(
        "S: no blocking send that returned before its receive was posted or that waited for "
        "it{}, default; ",
        threshold.ignored == 0
            ? ""
            : fmt::format(" ({} waited, too few in their size class to count)", threshold.ignored));
  f.gap_samples = send_gaps.offered();
  if (f.gap_samples != 0)
    p.g = median(send_gaps.kept());
  else
    f.notes += "g: no small sends back to back, 0; ";
  f.send_samples = small_sends.offered();
  // The other parameters are fitted with the median send's overhead, the o of the fast pairs L
  // comes from (with the mean, ring's L went from 49 ns to 0: each pair's 2o over-subtracted);
  // the model then charges every call the mean (below).
  if (f.send_samples != 0) p.o = median(small_sends.kept());
  // G: least squares over the fastest send of each size class (eager sizes only).
  std::vector<std::pair<double, double>> pts;
  for (const auto& [cls, v] : fastest)
    if (v.first <= p.S) pts.emplace_back(static_cast<double>(v.first), v.second);
  f.size_classes = pts.size();
  if (pts.size() >= 2) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [x, y] : pts) {
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double k = static_cast<double>(pts.size());
    const double den = k * sxx - sx * sx;
    if (den > 0) p.G = std::max(0.0, (k * sxy - sx * sy) / den);
    // Without small sends (a halo exchange's rows and columns), o is where the send
    // durations' line meets size 0.
    if (f.send_samples == 0 && den > 0) {
      p.o = std::max(0.0, (sy - p.G * sx) / k);
      f.notes += "o: no small sends, the intercept of the sizes' line; ";
    }
  } else {
    f.notes += "G: fewer than two send sizes, default; ";
  }
  if (f.send_samples == 0 && pts.size() < 2) f.notes += "o: no small sends, default; ";
  // L: eager pairs matched in order per (source, destination, tag, communicator id). Pairs
  // above S (rendezvous) give each size class its own G once L is known.
  // One sample per completing call: its receives' tightest (a Waitall ends when its last
  // message arrives, so the others' samples only add their lead over it).
  struct Latency {
    double l;
    std::int64_t src, dst;
  };
  std::unordered_map<std::uint64_t, Latency> lat_by_group;
  struct LargePair {
    std::uint64_t bytes;
    std::int64_t send_start, recv_start, recv_end;
    std::uint64_t group;
  };
  std::vector<LargePair> large;  // timed once L is known
  for (auto& [env, rq] : recvs) {
    auto it = sends.find(env);
    if (it == sends.end()) continue;
    auto& sq = it->second;
    const std::size_t n = std::min(sq.size(), rq.size());
    for (std::size_t i = 0; i < n; ++i) {
      ++f.pairs;
      const SendSample& s = sq[i];
      const RecvSample& q = rq[i];
      // A receive posted late says nothing of L, nor of G: in a recording its lateness is
      // mostly the peer's own capture work and descheduling, which a plain run does not have.
      if (q.start > s.start) continue;
      if (p.rendezvous(s.bytes)) {
        if (!s.buffered) large.push_back({s.bytes, s.start, q.start, q.end, q.group});
        continue;
      }
      // A small Sendrecv's pair is left out of L: in an exchange of Sendrecvs the receiving half
      // ends with its own rank's send half, so its end is not only this message's arrival.
      if (s.sendrecv) continue;
      const double x = s.bytes == 0 ? 0 : static_cast<double>(s.bytes - 1) * p.G;
      const double l = static_cast<double>(q.end - s.start) - 2 * p.o - x;
      auto [at, fresh] =
          lat_by_group.try_emplace(q.group, Latency{l, std::get<0>(env), std::get<1>(env)});
      if (!fresh) at->second.l = std::min(at->second.l, l);
    }
  }
  std::vector<double> lat;
  lat.reserve(lat_by_group.size());
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> by_direction;
  for (const auto& [group, g] : lat_by_group) {
    lat.push_back(g.l);
    by_direction[{g.src, g.dst}].push_back(g.l);
  }
  f.latency_samples = lat.size();
  // The manifest's clock offsets are estimates (a few us off on a loaded machine, more than
  // L itself): a pair of ranks measured both ways is off by +e one way and -e the other, so
  // the mean of its two directions' low ends cancels it.
  std::vector<double> both_ways;
  for (const auto& [dir, v] : by_direction)
    if (dir.first < dir.second)
      if (const auto back = by_direction.find({dir.second, dir.first}); back != by_direction.end())
        both_ways.push_back((low_quantile(v) + low_quantile(back->second)) / 2);
  f.latency_rank_pairs = both_ways.size();
  if (!lat.empty()) {
    p.L = std::max(0.0, both_ways.empty() ? low_quantile(lat) : median(both_ways));
    if (p.L > kMaxPlausibleL) {
      // No interconnect takes that long: the recording's machine was loaded (a receiver
      // descheduled for most pairs). The fastest pair is the best witness left.
      const double fastest_pair = std::max(0.0, *std::min_element(lat.begin(), lat.end()));
      const double was = p.L;
      p.L = fastest_pair <= kMaxPlausibleL ? fastest_pair : LogGPSParams{}.L;
      f.warnings += fmt::format(
          "L fitted at {:.1f} us, above the {:.0f} us no interconnect takes (a loaded "
          "recording?): using {} ({:.0f} ns); ",
          was / 1000, kMaxPlausibleL / 1000,
          fastest_pair <= kMaxPlausibleL ? "the fastest pair" : "the default", p.L);
    }
  } else {
    f.notes += "L: no send matched with a waiting receive, default; ";
  }
  // Per size class above S: G = the median of rendezvous_transfer / (n-1) over the class's
  // waiting pairs. Not the low end as for L: a run pays every transfer's copies. Not the mean
  // over late receives too: that fits the recording's distortion (on the ring example it
  // took G from 0.35 to 1.5-3.6 ns/B and predicted 0.61-0.97 s for a 0.44 s plain run).
  // (Per completing call and class, its tightest pair, as for L.)
  std::map<std::pair<std::uint64_t, int>, double> by_group;
  for (const LargePair& l : large)
    if (l.bytes > 1) {
      const double g = rendezvous_transfer(l.send_start, l.recv_start, l.recv_end, p) /
                       static_cast<double>(l.bytes - 1);
      auto [at, fresh] =
          by_group.try_emplace({l.group, static_cast<int>(std::bit_width(l.bytes))}, g);
      if (!fresh) at->second = std::min(at->second, g);
    }
  std::map<int, std::vector<double>> by_class;
  for (const auto& [key, g] : by_group) by_class[key.second].push_back(g);
  for (const auto& [cls, g] : by_class) f.large_pairs += g.size();
  // Classes no rendezvous pair measured: from the collectives above S that do not reduce,
  // each the G with which its algorithm's last member ends when it did (collective_G),
  // attributed to the class of the largest message that algorithm sends. Reductions also
  // spend gamma per byte combining: they give G only when nothing else measured any class.
  std::map<int, std::vector<double>> from_colls, from_reductions;
  std::vector<const CollSample*> reductions, nonblocking_reductions;
  for (const auto& [key, cs] : colls) {
    // A member not read (cut trace, another id for the communicator), or too small.
    if (cs.seen != cs.start.size() || !p.rendezvous(cs.bytes)) continue;
    // Nonblocking ones give only their own gamma: whatever else runs between the start and the
    // completing call (compute, other messages) is in their span too.
    if (cs.nonblocking) {
      if (reduces(cs.kind)) nonblocking_reductions.push_back(&cs);
      continue;
    }
    if (reduces(cs.kind)) reductions.push_back(&cs);
    const auto g = collective_G(cs.kind, cs.start, cs.root, cs.bytes, p, last_end(cs));
    if (!g || !p.rendezvous(g->message)) continue;
    const int cls = static_cast<int>(std::bit_width(g->message));
    if (by_class.contains(cls)) continue;
    (reduces(cs.kind) ? from_reductions : from_colls)[cls].push_back(g->G);
  }
  const bool separable = !by_class.empty() || !from_colls.empty();
  for (auto& [cls, g] : separable ? from_colls : from_reductions) {
    f.collective_samples += g.size();
    by_class[cls] = std::move(g);
  }
  for (const auto& [cls, g] : by_class) {
    const std::uint64_t from = std::max<std::uint64_t>(p.S + 1, 1ull << (cls - 1));
    p.G_classes.push_back({from, median(g)});
  }
  // Rendezvous sizes below the smallest class measured move like it, not like eager ones.
  if (!p.G_classes.empty()) p.G_classes.front().from = p.S + 1;
  // gamma: the median over the reductions above S, with G known from the rest; the
  // nonblocking reductions' own likewise (unset without any: they take gamma).
  const auto gammas_of = [&](const std::vector<const CollSample*>& samples) {
    std::vector<double> out;
    if (separable)
      for (const CollSample* cs : samples)
        if (const auto g =
                collective_gamma(cs->kind, cs->start, cs->root, cs->bytes, p, last_end(*cs)))
          out.push_back(*g);
    return out;
  };
  const std::vector<double> gammas = gammas_of(reductions);
  f.reduction_samples = gammas.size();
  p.gamma = median(gammas);
  // Each kind's own where it has any (the kinds' algorithms and buffers differ: the
  // collectives example's Reduce fitted about twice its Allreduce's gamma); gamma, their
  // median, for the kinds without.
  std::map<CollKind, std::vector<const CollSample*>> by_kind;
  for (const CollSample* cs : reductions) by_kind[cs->kind].push_back(cs);
  if (by_kind.size() > 1)
    for (const auto& [kind, samples] : by_kind)
      if (const std::vector<double> g = gammas_of(samples); !g.empty())
        p.gamma_by_kind[std::string(to_string(kind))] = median(g);
  if (gammas.empty())
    f.notes += reductions.empty() ? "gamma: no reduction above S, 0; "
                                  : "gamma: no G measured apart from the reductions, 0; ";
  const std::vector<double> nb_gammas = gammas_of(nonblocking_reductions);
  f.nonblocking_reduction_samples = nb_gammas.size();
  if (!nb_gammas.empty()) p.gamma_nonblocking = median(nb_gammas);
  if (f.send_samples != 0) p.o = capped_mean(small_sends.kept());
  if (f.notes.ends_with("; ")) f.notes.resize(f.notes.size() - 2);
  return f;
}

nlohmann::json to_json(const FitReport& f) {
  return {{"params", to_json(f.params)},
          {"send_samples", f.send_samples},
          {"size_classes", f.size_classes},
          {"pairs", f.pairs},
          {"latency_samples", f.latency_samples},
          {"latency_rank_pairs", f.latency_rank_pairs},
          {"large_pairs", f.large_pairs},
          {"collective_samples", f.collective_samples},
          {"reduction_samples", f.reduction_samples},
          {"nonblocking_reduction_samples", f.nonblocking_reduction_samples},
          {"threshold_eager", f.threshold_eager},
          {"threshold_waiting", f.threshold_waiting},
          {"threshold_ignored", f.threshold_ignored},
          {"largest_eager_bytes", f.largest_eager_bytes},
          {"smallest_waiting_bytes", f.smallest_waiting_bytes},
          {"gap_samples", f.gap_samples},
          {"events_read", f.events_read},
          {"events_per_rank", f.events_per_rank},
          {"ranks_cut", f.ranks_cut},
          {"notes", f.notes},
          {"warnings", f.warnings}};
}

std::string describe(const FitReport& f) {
  std::string by_kind;
  for (const auto& [kind, g] : f.params.gamma_by_kind)
    by_kind += fmt::format("{}{} {:.4f}", by_kind.empty() ? " (" : ", ", kind, g);
  if (!by_kind.empty()) by_kind += ")";
  std::string large;
  for (const SizeClassG& c : f.params.G_classes)
    large += fmt::format("{}G {:.4f} ns/B from {} B", large.empty() ? "" : ", ", c.G, c.from);
  std::vector<std::string> parts;
  parts.push_back(fmt::format(
      "o from {} small sends, G from {} size classes, L from {} of {} matched pairs (one per "
      "completing call whose receive was waiting)",
      f.send_samples, f.size_classes, f.latency_samples, f.pairs));
  const std::uint64_t late = f.threshold_eager + f.threshold_waiting + f.threshold_ignored;
  if (f.threshold_eager + f.threshold_waiting != 0)
    parts.push_back(fmt::format(
        "S from {} blocking sends whose receive was posted late: {} returned first{}, {} "
        "waited for it{}{}",
        late, f.threshold_eager,
        f.threshold_eager == 0 ? "" : fmt::format(" (up to {} B)", f.largest_eager_bytes),
        f.threshold_waiting,
        f.threshold_waiting == 0 ? "" : fmt::format(" (from {} B)", f.smallest_waiting_bytes),
        f.threshold_ignored == 0
            ? ""
            : fmt::format(" ({} more not counted: too few in their size class, or no larger "
                          "than an eager one)",
                          f.threshold_ignored)));
  if (f.gap_samples != 0)
    parts.push_back(fmt::format("g from {} small sends back to back", f.gap_samples));
  if (!f.notes.empty()) parts.push_back(f.notes);
  parts.push_back(large.empty() ? "no rendezvous pair with a waiting receive: one G for all sizes"
                                : fmt::format("above S, from {} rendezvous pairs and {} "
                                              "collectives: {}",
                                              f.large_pairs, f.collective_samples, large));
  if (f.reduction_samples != 0)
    parts.push_back(fmt::format("gamma {:.4f} ns/B from {} reductions{}", f.params.gamma,
                                f.reduction_samples, by_kind));
  if (f.nonblocking_reduction_samples != 0)
    parts.push_back(fmt::format("nonblocking reductions' gamma {:.4f} ns/B from {}",
                                f.params.gamma_for(true), f.nonblocking_reduction_samples));
  parts.push_back(fmt::format(
      "read {} events ({})", f.events_read,
      f.ranks_cut == 0 ? std::string("all of them for pairs")
                       : fmt::format("pairs from the first {} of each rank; {} rank{} had more",
                                     f.events_per_rank, f.ranks_cut, f.ranks_cut == 1 ? "" : "s")));
  if (!f.warnings.empty()) parts.push_back("warning: " + f.warnings);
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace encore::predict
