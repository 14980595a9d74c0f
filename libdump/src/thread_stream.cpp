#include "thread_stream.hpp"

#include <algorithm>

namespace encore::dump {

ThreadStream::ThreadStream(std::uint16_t index, SegmentPool& pool) : index_(index), pool_(pool) {
  std::uint64_t stalled = 0;
  set_events(pool_.acquire(StreamKind::events, true, stalled));
  ev_->reset({});
  pl_ = pool_.acquire(StreamKind::payload, true, stalled);
  pl_->reset({});
  pl_room_ = pl_->capacity() / 2;
  scratch.resize(4096);  // Call writes an event's head there before any reserve
}

void ThreadStream::seal(Segment* s, bool events) {
  {
    std::lock_guard lock(mu_);
    (events ? sealed_events_ : sealed_payload_).push_back(s);
  }
  sealed = true;
  if (on_seal) on_seal();
}

void ThreadStream::roll_events(std::size_t need) {
  const Mark end = ev_->published();
  std::uint64_t stalled = 0;
  seal(ev_, true);
  // An event larger than a segment (an enormous Alltoallv count array) gets a larger one.
  Segment* next = pool_.acquire(StreamKind::events, false, stalled, 4 * need + 64);
  next->reset(end);
  stall_ns_ += stalled;
  total_stall_ns_ += stalled;
  if (stall_ns_) commit_work_ = true;
  {
    std::lock_guard lock(mu_);
    set_events(next);
  }
  ev_used_ = 0;
  ev_times_ = 0;
}

void ThreadStream::roll_payload() {
  const Mark end{pl_used_, 0, payload_, 0};
  seal(pl_, false);
  std::uint64_t stalled = 0;
  Segment* next = pool_.acquire(StreamKind::payload, false, stalled);
  next->reset(end);
  stall_ns_ += stalled;
  total_stall_ns_ += stalled;
  if (stall_ns_) commit_work_ = true;
  {
    std::lock_guard lock(mu_);
    pl_ = next;
  }
  pl_used_ = 0;
  pl_room_ = pl_->capacity() / 2;
}

std::uint64_t ThreadStream::append_payload_past_room(std::span<const std::byte> bytes) {
  const std::uint64_t at = pl_used_ + bytes.size() > pl_->capacity() ? append_payload_split(bytes)
                                                                     : append_payload_here(bytes);
  if (pl_used_ > pl_->capacity() / 2 && pl_room_ < pl_->capacity()) {
    pl_room_ = pl_->capacity();
    if (on_half) on_half();
  }
  return at;
}

std::uint64_t ThreadStream::append_payload_split(std::span<const std::byte> bytes) {
  const std::uint64_t at = payload_;
  while (!bytes.empty()) {
    if (pl_used_ == pl_->capacity()) roll_payload();
    const std::size_t n = std::min(bytes.size(), pl_->capacity() - pl_used_);
    std::memcpy(pl_->data() + pl_used_, bytes.data(), n);
    commit_payload(n);
    bytes = bytes.subspan(n);
  }
  return at;
}

MPI_Status* ThreadStream::scratch_statuses(std::int64_t n) {
  const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(MPI_Status);
  if (status_scratch.size() < bytes) status_scratch.resize(bytes);
  return reinterpret_cast<MPI_Status*>(status_scratch.data());
}

void ThreadStream::lean_open(const MPI_Request* r, std::int64_t n) noexcept {
  // A run's records need no previous tail (prev_flags) and its template in this segment.
  if (!lean_allowed || prev_flags != 0 || n > kLeanRequests || !ev_) return;
  const std::uint64_t room =
      std::min({(ev_->times_capacity() - ev_times_) / kLeanTimesBytes,
                (ev_->body_capacity() - ev_used_) / kLeanBodyBytes, kRunMaxPolls});
  if (room == 0) return;
  lean.at = events_;
  lean.flags = poll_flags | RawTimes::kLean;
  lean.word = Segment::run_word(events_);
  lean.n = 0;
  lean.room = room;
  lean.run = &ev_->run();
  lean.times = ev_->times_data() + ev_times_;
  lean.body = ev_->body_data() + ev_used_;
  lean.nreq = n > 0 ? n : 0;
  if (n > 0) std::copy_n(r, n, lean.req);
  lean.timed = false;  // the first poll follows the template, a light call's tail or a Call's
}

void ThreadStream::lean_follow(std::uint64_t t2, std::uint64_t t3, bool sampled) noexcept {
  if (!clock) return;
  const std::uint64_t n2 = clock->to_ns(t2);
  lean.last_t2 = n2;
  if (sampled) {
    const std::uint64_t own = clock->to_ns(t3);
    lean_tails.add(own > n2 ? own - n2 : 0);
    lean.next_t3 = std::max(own, n2);
  } else {
    lean.next_t3 = n2 + lean_tails.median;
  }
  lean.timed = true;
}

void ThreadStream::seal_all() {
  std::lock_guard lock(mu_);
  lean.at = ~std::uint64_t{0};
  if (pl_) sealed_payload_.push_back(pl_);
  if (ev_) sealed_events_.push_back(ev_);
  pl_ = nullptr;
  set_events(nullptr);
}

void ThreadStream::set_events(Segment* s) noexcept {
  ev_ = s;
  body_ = s ? s->body_data() : nullptr;
  times_ = s ? s->times_data() : nullptr;
  body_cap_ = s ? s->body_capacity() : 0;
  times_cap_ = s ? s->times_capacity() : 0;
}

ThreadStream::Pending ThreadStream::pending() {
  Pending p;
  std::lock_guard lock(mu_);
  p.sealed_events.assign(sealed_events_.begin(), sealed_events_.end());
  p.sealed_payload.assign(sealed_payload_.begin(), sealed_payload_.end());
  sealed_events_.clear();
  sealed_payload_.clear();
  // A segment being rolled over is sealed before its successor is set (the thread may wait
  // for memory in between): until then it is not the current one as well, else the writer
  // would drain it again after releasing it, when the pool may have handed it out anew.
  const auto in = [](const std::vector<Segment*>& v, const Segment* s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  p.current_events = in(p.sealed_events, ev_) ? nullptr : ev_;
  p.current_payload = in(p.sealed_payload, pl_) ? nullptr : pl_;
  // Under mu_: a payload roll sets its new segment under mu_ too, so no payload the mark
  // refers to can be in a segment this snapshot does not list.
  if (p.current_events) p.current_events_upto = p.current_events->published();
  return p;
}

bool ThreadStream::Pending::wants_more(StreamKind kind) const {
  if (kind == StreamKind::payload)
    return !sealed_payload.empty() || (current_payload && current_payload->published().bytes >=
                                                              current_payload->capacity() / 2);
  if (!sealed_events.empty()) return true;
  if (!current_events) return false;
  const Mark m = current_events->published();
  return m.bytes >= current_events->body_capacity() / 2 ||
         m.times >= current_events->times_capacity() / 2;
}

}  // namespace encore::dump
