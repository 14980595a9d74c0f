#include "aligned_compute.hpp"

#include <algorithm>
#include <cmath>

#include "call_class.hpp"
#include "completions.hpp"
#include "segment_share.hpp"

namespace encore::predict {
namespace {

// A Test* that completed nothing, an Iprobe that found nothing: their number depends on
// timing, not on the program's work.
bool unsuccessful_poll(const Event& ev) {
  const CallClass& c = classify(ev.function);
  if (c.op == Op::test) return !completes(c, ev);
  if (c.op == Op::probe || c.op == Op::mprobe) return !probe_found(ev);
  return false;
}

std::int64_t gap(const Event& ev, std::int64_t& prev_end) {
  const std::int64_t g =
      std::max<std::int64_t>(static_cast<std::int64_t>(ev.start_ns) - prev_end, 0);
  prev_end = static_cast<std::int64_t>(ev.end_ns);
  return g;
}

}  // namespace

AlignedCompute::LineUp::LineUp(const std::filesystem::path& source_capture,
                               const std::optional<std::filesystem::path>& source_profile,
                               const StallSpread* stalls)
    : cap_(source_capture), spread_(stalls) {
  if (source_profile) rep_.emplace(*source_profile);
}

AlignedCompute::LineUp::Step AlignedCompute::LineUp::step(const Event& ev) {
  Step s;
  s.kind = {prev_fn_, ev.function};
  prev_fn_ = ev.function;
  const bool first = std::exchange(first_, false);
  if (unsuccessful_poll(ev) || source_ended_) {
    prev_matched_ = false;
    return s;
  }
  // The source's next call that is not an unsuccessful poll (its profile follows call for
  // call: measure_scale checked it); skipping one leaves the segment not aligned.
  bool clean = true;
  for (;;) {
    if (!cap_.next(a_) || (rep_ && !rep_->next(b_))) {
      source_ended_ = true;
      prev_matched_ = false;
      return s;
    }
    s.source_gap = gap(a_, prev_a_);
    if (rep_) s.source_replayed = spread_(gap(b_, prev_b_), b_.stall_ns);
    if (!unsuccessful_poll(a_)) break;
    clean = false;
  }
  const bool matched = a_.function == ev.function && a_.thread == ev.thread &&
                       (!a_.callsite || !ev.callsite || *a_.callsite == *ev.callsite);
  s.aligned = matched && prev_matched_ && clean && !first;
  prev_matched_ = matched;
  return s;
}

AlignedCompute::AlignedCompute(const TraceDir& capture, std::uint32_t rank, std::uint32_t source,
                               const std::filesystem::path& source_profile,
                               const StallSpread* source_stalls)
    : line_(capture.events_path(source), source_profile, source_stalls) {
  LineUp pre(capture.events_path(source), std::nullopt);
  RankEventReader own(capture.events_path(rank));
  Event ev;
  std::int64_t prev_end = 0;
  std::map<Kind, SegmentShare> pairs;
  while (own.next(ev)) {
    const std::int64_t g = gap(ev, prev_end);
    const LineUp::Step s = pre.step(ev);
    if (s.aligned) pairs[s.kind].add(g, s.source_gap);
  }
  for (const auto& [kind, share] : pairs)
    if (const std::optional<double> m = share.median()) shares_.emplace(kind, *m);
}

std::optional<std::int64_t> AlignedCompute::next(const Event& ev) {
  const LineUp::Step s = line_.step(ev);
  if (!s.aligned) return std::nullopt;
  const auto it = shares_.find(s.kind);
  if (it == shares_.end()) return std::nullopt;
  // Not the same work (a root's share, a rank that waits in compute): the source's segments
  // say little of this rank's, and a small captured share would magnify its replay's noise.
  const double share = it->second;
  if (share < kMinShare || share > kMaxShare) return std::nullopt;
  ++aligned_;
  // The source's gap of this kind one occurrence earlier (the first takes its own): the same
  // gaps, so the same sum and spread, but not drawn at the same moment. Two ranks' noise is
  // independent, and at each exchange the run waits for the larger of the two gaps; a copy of
  // the source's gap at the same step would wait for neither. Only where the capture says the
  // two steps are the same work (their captured gaps alike): phases of different work that
  // alternate between the same calls stay in step, while the replay's noise, however large,
  // is moved.
  const auto prev = previous_.try_emplace(s.kind, Previous{s.source_gap, s.source_replayed}).first;
  const Previous earlier = std::exchange(prev->second, Previous{s.source_gap, s.source_replayed});
  const auto captured = static_cast<double>(s.source_gap);
  const auto before = static_cast<double>(earlier.captured);
  const bool alike = before >= kMinLag * captured && before <= kMaxLag * captured;
  const auto now = static_cast<double>(s.source_replayed);
  const auto lagged = static_cast<double>(earlier.replayed);
  return std::llround((alike ? lagged : now) * share);
}

}  // namespace encore::predict
