#include "encore/predict/collectives.hpp"

#include <algorithm>
#include <optional>

namespace encore::predict {
namespace {

using Times = std::vector<std::int64_t>;

struct Net {
  const LogGPSParams& p;
  double gamma = 0;                   // ns per byte combined: this collective's kind's
  mutable std::uint64_t largest = 0;  // the largest message sent (what a fitted G is for)
  Net(const LogGPSParams& params, CollKind kind, bool nonblocking = false)
      : p(params), gamma(params.gamma_for(to_string(kind), nonblocking)) {}
  std::int64_t combine_ns(std::uint64_t n) const {
    return round_ns(static_cast<double>(n) * gamma);
  }
  std::int64_t o() const { return p.overhead_ns(); }
  std::int64_t send_cost(std::uint64_t n) const {
    largest = std::max(largest, n);
    return o() + p.transfer_ns(n);
  }
  // Receiver ready at tr gets a message its sender started at ts; `combine`: a reduction's
  // receiver then combines the bytes into its buffer.
  std::int64_t recv_done(std::int64_t tr, std::int64_t ts, std::uint64_t n,
                         bool combine = false) const {
    return std::max(tr, ts + send_cost(n) + p.latency_ns()) + o() + (combine ? combine_ns(n) : 0);
  }
  struct Ends {
    std::int64_t send, recv;
  };
  // One message, its sender ready at ts and its receiver at tr. Eager: as send_cost and
  // recv_done. Rendezvous (n > S): the point-to-point engine's rule, since MPICH's collectives
  // are made of its point-to-point messages: the bytes move once the receiver is there (the
  // handshake at max(ts + o + L, tr)), the sender returns L + o + (n-1)G after it, the
  // receiver L + o after the sender. (A Reduce's non-root waited 50 ms for a late root in a
  // recording of the collectives example where the eager rule gave it 3 ms.)
  Ends message(std::int64_t ts, std::int64_t tr, std::uint64_t n, bool combine = false) const {
    const std::int64_t extra = combine ? combine_ns(n) : 0;
    if (!p.rendezvous(n)) return {ts + send_cost(n), recv_done(tr, ts, n, combine)};
    const std::int64_t L = p.latency_ns();
    const std::int64_t send = std::max(ts + o() + L, tr) + L + send_cost(n);
    return {send, send + L + o() + extra};
  }
  // Both partners of a sendrecv-shaped step ready at ti (this one) and tj (its peer, which
  // receives what this one sends and sends what it receives): when this one is done. Eager,
  // the receive follows the send (as before); rendezvous, both move at once.
  std::int64_t sendrecv_done(std::int64_t ti, std::int64_t to, std::int64_t from, std::uint64_t n,
                             bool combine) const {
    if (!p.rendezvous(n)) return recv_done(ti + send_cost(n), from, n, combine);
    return std::max(message(ti, to, n).send, message(from, ti, n, combine).recv);
  }
};

// Every rank sends to (i + d) and receives from (i - d), all at once (dissemination,
// recursive doubling, ring and pairwise steps are all of this shape).
void shift_round(Times& t, std::size_t d, std::uint64_t n, const Net& net, bool combine = false) {
  const std::size_t p = t.size();
  Times next(p);
  for (std::size_t i = 0; i < p; ++i) {
    const std::size_t from = (i + p - d % p) % p;
    next[i] = net.sendrecv_done(t[i], t[(i + d) % p], t[from], n, combine);
  }
  t.swap(next);
}

// Partners exchange at once (i with i ^ mask among the first `pof2` ranks).
void exchange_round(Times& t, std::size_t pof2, std::size_t mask, std::uint64_t n, const Net& net,
                    bool combine) {
  Times next(t.begin(), t.end());
  for (std::size_t i = 0; i < pof2; ++i)
    next[i] = net.sendrecv_done(t[i], t[i ^ mask], t[i ^ mask], n, combine);
  t.swap(next);
}

// v = rank relative to the root; abs_rank gives it back.
std::size_t abs_rank(std::size_t v, std::size_t root, std::size_t p) { return (v + root) % p; }

// Binomial tree from the root; `block(v)` is the bytes sent to relative rank v.
template <class Block>
void tree_down(Times& t, std::size_t root, const Net& net, Block block) {
  const std::size_t p = t.size();
  std::size_t top = 1;
  while (top < p) top <<= 1;
  for (std::size_t mask = top >> 1; mask > 0; mask >>= 1) {
    for (std::size_t v = 0; v < p; v += 2 * mask) {
      const std::size_t child = v + mask;
      if (child >= p) continue;
      const std::size_t a = abs_rank(v, root, p), c = abs_rank(child, root, p);
      const auto m = net.message(t[a], t[c], block(child, mask));
      t[c] = m.recv;
      t[a] = m.send;
    }
  }
}

// Binomial tree towards the root (reduce, gather).
template <class Block>
void tree_up(Times& t, std::size_t root, const Net& net, Block block, bool combine) {
  const std::size_t p = t.size();
  for (std::size_t mask = 1; mask < p; mask <<= 1) {
    for (std::size_t v = mask; v < p; v += 2 * mask) {
      const std::size_t a = abs_rank(v, root, p), parent = abs_rank(v - mask, root, p);
      const auto m = net.message(t[a], t[parent], block(v, mask), combine);
      t[parent] = m.recv;
      t[a] = m.send;
    }
  }
}

void doubling(Times& t, std::uint64_t n, const Net& net, bool grow, bool combine = false) {
  std::uint64_t size = n;
  for (std::size_t d = 1; d < t.size(); d <<= 1) {
    shift_round(t, d, size, net, combine);
    if (grow) size *= 2;
  }
}

void ring(Times& t, std::size_t steps, std::uint64_t n, const Net& net, bool combine = false) {
  for (std::size_t s = 0; s < steps; ++s) shift_round(t, 1, n, net, combine);
}

// The largest power of two not above p (p >= 1).
std::size_t pof2_below(std::size_t p) {
  std::size_t pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

// Recursive halving among v's ranks (a power of two): partners i ^ mask swap half of what is
// left each step and combine what they got. The sizes swapped, step by step.
std::vector<std::uint64_t> halving(Times& v, std::uint64_t bytes, const Net& net) {
  std::vector<std::uint64_t> sizes;
  for (std::size_t mask = 1, size = bytes; mask < v.size(); mask <<= 1) {
    size = (size + 1) / 2;
    sizes.push_back(size);
    exchange_round(v, v.size(), mask, size, net, true);
  }
  return sizes;
}

// Rabenseifner's allreduce as MPICH runs it: the ranks beyond the largest power of two hand
// their vector to a neighbour first; the pof2 others reduce-scatter by recursive halving
// (partners i ^ mask, half of what is left each step, combined) and allgather back by
// recursive doubling; then the neighbours get the result back.
void rabenseifner(Times& t, std::uint64_t bytes, const Net& net) {
  const std::size_t p = t.size();
  const std::size_t pof2 = pof2_below(p);
  const std::size_t rem = p - pof2;
  // Ranks 0 .. 2rem-1: even ones send to the odd ones and sit out (MPICH's layout); the
  // survivors are renumbered 0 .. pof2-1 for the exchanges.
  Times v(pof2);
  std::vector<std::size_t> real(pof2);
  for (std::size_t i = 1; i < 2 * rem; i += 2) {
    const auto m = net.message(t[i - 1], t[i], bytes, true);
    t[i] = m.recv;
    t[i - 1] = m.send;
  }
  for (std::size_t i = 0, k = 0; i < p; ++i) {
    if (i < 2 * rem && i % 2 == 0) continue;
    real[k] = i;
    v[k++] = t[i];
  }
  const std::vector<std::uint64_t> sizes = halving(v, bytes, net);
  for (std::size_t mask = pof2 >> 1, k = sizes.size(); mask > 0; mask >>= 1)
    exchange_round(v, pof2, mask, sizes[--k], net, false);
  for (std::size_t k = 0; k < pof2; ++k) t[real[k]] = v[k];
  for (std::size_t i = 0; i + 1 < 2 * rem; i += 2) {
    const auto m = net.message(t[i + 1], t[i], bytes);
    t[i + 1] = m.send;
    t[i] = m.recv;
  }
}

// MPICH's reduce for built-in operations above kReduceShort (reduce_scatter_gather,
// Rabenseifner's): the odd ranks below 2 rem hand their vector to their left neighbour, which
// combines it; the pof2 others reduce-scatter by recursive halving (as in rabenseifner()), each
// then holding 1/pof2 of the result; a binomial tree gathers those to the root, the sender at
// distance m (from pof2/2 down to 1) sending the bytes/(2m) it holds. An excluded root first
// gets rank 0's block and takes its place. So every member combines, and the non-root stays
// until its part reached the root.
void reduce_scatter_gather(Times& t, std::size_t root, std::uint64_t bytes, const Net& net) {
  const std::size_t p = t.size();
  const std::size_t pof2 = pof2_below(p);
  const std::size_t rem = p - pof2;
  for (std::size_t i = 1; i < 2 * rem; i += 2) {
    const auto m = net.message(t[i], t[i - 1], bytes, true);
    t[i - 1] = m.recv;
    t[i] = m.send;
  }
  const auto real = [&](std::size_t k) { return k < rem ? 2 * k : k + rem; };
  Times v(pof2);
  for (std::size_t k = 0; k < pof2; ++k) v[k] = t[real(k)];
  const std::vector<std::uint64_t> sizes = halving(v, bytes, net);
  for (std::size_t k = 0; k < pof2; ++k) t[real(k)] = v[k];
  // Which real rank plays each new rank in the gather, and the new rank of the root.
  std::vector<std::size_t> plays(pof2);
  for (std::size_t k = 0; k < pof2; ++k) plays[k] = real(k);
  std::size_t newroot = root < 2 * rem ? root / 2 : root - rem;
  if (root < 2 * rem && root % 2 != 0) {  // excluded: rank 0's block first
    const auto m = net.message(t[0], t[root], sizes.empty() ? bytes : sizes.back());
    t[root] = m.recv;
    t[0] = m.send;
    plays[0] = root;
    newroot = 0;
  }
  for (std::size_t mask = pof2 >> 1, k = sizes.size(); mask > 0; mask >>= 1) {
    const std::uint64_t n = sizes[--k];
    for (std::size_t rel = mask; rel < 2 * mask; ++rel) {  // senders, relative to the root
      const std::size_t from = plays[rel ^ newroot], to = plays[(rel ^ mask) ^ newroot];
      const auto m = net.message(t[from], t[to], n);
      t[to] = m.recv;
      t[from] = m.send;
    }
  }
}

}  // namespace

std::string_view to_string(CollKind kind) noexcept {
  switch (kind) {
    case CollKind::barrier:
      return "barrier";
    case CollKind::bcast:
      return "bcast";
    case CollKind::reduce:
      return "reduce";
    case CollKind::allreduce:
      return "allreduce";
    case CollKind::allgather:
      return "allgather";
    case CollKind::gather:
      return "gather";
    case CollKind::scatter:
      return "scatter";
    case CollKind::alltoall:
      return "alltoall";
    case CollKind::reduce_scatter:
      return "reduce_scatter";
    case CollKind::scan:
      return "scan";
  }
  return "?";
}

std::string_view algorithm_name(CollKind kind, std::uint64_t bytes, std::size_t p) {
  switch (kind) {
    case CollKind::barrier:
      return "dissemination";
    case CollKind::bcast:
      return bytes < kBcastShort || p < 8 ? "binomial tree" : "scatter + ring allgather";
    case CollKind::reduce:
      return bytes <= kReduceShort ? "binomial tree" : "reduce-scatter + gather";
    case CollKind::gather:
    case CollKind::scatter:
      return "binomial tree";
    case CollKind::allreduce:
      return bytes <= kAllreduceShort ? "recursive doubling" : "Rabenseifner";
    case CollKind::allgather:
      return bytes * p < kAllgatherShort ? "recursive doubling" : "ring";
    case CollKind::alltoall:
      return "pairwise exchange";
    case CollKind::reduce_scatter:
      return "ring";
    case CollKind::scan:
      return "recursive doubling";
  }
  return "?";
}

namespace {

void run(CollKind kind, Times& t, std::size_t root, std::uint64_t bytes, const Net& net) {
  const std::size_t p = t.size();
  if (p <= 1) return;
  root %= p;
  const std::uint64_t chunk = (bytes + p - 1) / p;
  const auto whole = [&](std::size_t, std::size_t) { return bytes; };
  // Gather/scatter move the blocks of a whole subtree: relative ranks v .. v + mask - 1.
  const auto subtree = [&](std::size_t v, std::size_t mask) {
    return bytes * std::min<std::uint64_t>(mask, p - v);
  };
  switch (kind) {
    case CollKind::barrier:
      doubling(t, 0, net, false);
      break;
    case CollKind::bcast:
      if (bytes < kBcastShort || p < 8) {
        tree_down(t, root, net, whole);
      } else {
        tree_down(t, root, net, [&](std::size_t v, std::size_t mask) {
          return chunk * std::min<std::uint64_t>(mask, p - v);
        });
        ring(t, p - 1, chunk, net);
      }
      break;
    case CollKind::reduce:
      if (bytes <= kReduceShort || bytes < p)
        tree_up(t, root, net, whole, true);
      else
        reduce_scatter_gather(t, root, bytes, net);
      break;
    case CollKind::gather:
      tree_up(t, root, net, subtree, false);
      break;
    case CollKind::scatter:
      tree_down(t, root, net, subtree);
      break;
    case CollKind::allreduce:
      if (bytes <= kAllreduceShort)
        doubling(t, bytes, net, false, true);
      else
        rabenseifner(t, bytes, net);
      break;
    case CollKind::allgather:
      if (bytes * p < kAllgatherShort)
        doubling(t, bytes, net, true);
      else
        ring(t, p - 1, bytes, net);
      break;
    case CollKind::alltoall:
      for (std::size_t d = 1; d < p; ++d) shift_round(t, d, bytes, net);
      break;
    case CollKind::reduce_scatter:
      ring(t, p - 1, chunk, net, true);
      break;
    case CollKind::scan:
      doubling(t, bytes, net, false, true);
      break;
  }
}

}  // namespace

std::uint64_t collective_block(CollKind kind, std::uint64_t sent, std::uint64_t got,
                               std::size_t p) {
  p = std::max<std::size_t>(p, 1);
  switch (kind) {
    case CollKind::bcast:
      return std::max(sent, got);
    case CollKind::scatter:
      return std::max(got, sent / p);
    case CollKind::alltoall:
      return sent / p;
    default:
      return sent;
  }
}

std::vector<std::int64_t> collective_end_times(CollKind kind, std::span<const std::int64_t> arrive,
                                               std::size_t root, std::uint64_t bytes,
                                               const LogGPSParams& params, bool nonblocking) {
  Times t(arrive.begin(), arrive.end());
  run(kind, t, root, bytes, Net{params, kind, nonblocking});
  return t;
}

namespace {

// The x in [0, kMaxFittedG] at which the non-decreasing `last(x)` reaches `last_end`: 0 when
// it is there already at 0, nullopt when not even at the bound.
template <class Last>
std::optional<double> bisect(Last last, std::int64_t last_end) {
  if (last(0) >= last_end) return 0.0;
  double lo = 0, hi = 1;
  while (last(hi) < last_end) {
    lo = hi;
    hi *= 2;
    if (hi > kMaxFittedG) return std::nullopt;  // ns per byte no memory copy takes
  }
  for (int i = 0; i < 40; ++i) {
    const double mid = (lo + hi) / 2;
    (last(mid) < last_end ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

bool reduces(CollKind kind) noexcept {
  return kind == CollKind::reduce || kind == CollKind::allreduce ||
         kind == CollKind::reduce_scatter || kind == CollKind::scan;
}

std::optional<CollectiveG> collective_G(CollKind kind, std::span<const std::int64_t> arrive,
                                        std::size_t root, std::uint64_t bytes,
                                        const LogGPSParams& params, std::int64_t last_end) {
  if (arrive.size() <= 1 || bytes == 0) return std::nullopt;
  LogGPSParams q = params;
  q.G_classes.clear();
  std::uint64_t largest = 0;
  // The last member's end for one G at every size: never decreasing in G (sums and maxima of
  // terms that grow with it), so a bisection finds where it reaches the recorded end.
  const auto last = [&](double g) {
    q.G = g;
    Times t(arrive.begin(), arrive.end());
    const Net net{q, kind};
    run(kind, t, root, bytes, net);
    largest = net.largest;
    return *std::max_element(t.begin(), t.end());
  };
  const auto g = bisect(last, last_end);
  if (!g) return std::nullopt;
  last(*g);
  return CollectiveG{*g, largest};
}

std::optional<double> collective_gamma(CollKind kind, std::span<const std::int64_t> arrive,
                                       std::size_t root, std::uint64_t bytes,
                                       const LogGPSParams& params, std::int64_t last_end) {
  if (arrive.size() <= 1 || bytes == 0 || !reduces(kind)) return std::nullopt;
  LogGPSParams q = params;
  q.gamma_by_kind.clear();  // the gamma tried, whatever the kind
  // Like G, every combine's time grows with gamma, and the end with it.
  const auto last = [&](double gamma) {
    q.gamma = gamma;
    Times t(arrive.begin(), arrive.end());
    run(kind, t, root, bytes, Net{q, kind});
    return *std::max_element(t.begin(), t.end());
  };
  return bisect(last, last_end);
}

}  // namespace encore::predict
