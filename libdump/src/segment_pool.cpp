#include "segment_pool.hpp"

#include <algorithm>

#include "encore/clock.hpp"

namespace encore::dump {

namespace {

std::size_t usual_size(StreamKind kind) {
  return kind == StreamKind::events ? kEventSegmentBytes : kPayloadSegmentBytes;
}

}  // namespace

void SegmentPool::set_populate(StreamKind kind, bool on) {
  std::lock_guard lock(mu_);
  (kind == StreamKind::events ? populate_events_ : populate_payload_) = on;
}

Segment* SegmentPool::allocate(std::unique_lock<std::mutex>& lock, StreamKind kind,
                               std::size_t size) {
  allocated_ += size;
  const bool populate = kind == StreamKind::events ? populate_events_ : populate_payload_;
  lock.unlock();
  std::unique_ptr<Segment> s;
  try {
    s = std::make_unique<Segment>(kind, size, populate);
  } catch (...) {
    lock.lock();
    allocated_ -= size;
    throw;
  }
  lock.lock();
  owned_.push_back(std::move(s));
  return owned_.back().get();
}

Segment* SegmentPool::acquire(StreamKind kind, bool must_have, std::uint64_t& stalled_ns,
                              std::size_t min_capacity) {
  stalled_ns = 0;
  const std::size_t size = std::max(min_capacity, usual_size(kind));
  std::unique_lock lock(mu_);
  auto& free = free_list(kind);
  std::uint64_t waited_since = 0;
  for (;;) {
    const auto fits = std::find_if(free.begin(), free.end(),
                                   [&](const Segment* s) { return s->capacity() >= size; });
    if (fits != free.end()) {
      Segment* s = *fits;
      free.erase(fits);
      if (waited_since) stalled_ns = monotonic_ns() - waited_since;
      return s;
    }
    if (allocated_ + size <= budget_ || must_have) {
      Segment* s = allocate(lock, kind, size);
      if (waited_since) stalled_ns = monotonic_ns() - waited_since;
      return s;
    }
    if (!waited_since) waited_since = monotonic_ns();
    freed_.wait(lock);
  }
}

bool SegmentPool::prepare(StreamKind kind) {
  const std::size_t size = usual_size(kind);
  std::unique_lock lock(mu_);
  const auto& free = free_list(kind);
  const bool have = std::any_of(free.begin(), free.end(),
                                [&](const Segment* s) { return s->capacity() >= size; });
  if (have || allocated_ + size > budget_) return false;
  Segment* s = allocate(lock, kind, size);
  free_list(kind).push_back(s);
  lock.unlock();
  freed_.notify_all();
  return true;
}

void SegmentPool::release(Segment* segment) {
  {
    std::lock_guard lock(mu_);
    free_list(segment->kind()).push_back(segment);
  }
  freed_.notify_all();
}

std::uint64_t SegmentPool::allocated_bytes() const {
  std::lock_guard lock(mu_);
  return allocated_;
}

}  // namespace encore::dump
