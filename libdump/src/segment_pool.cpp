#include "segment_pool.hpp"

#include <algorithm>

#include "encore/clock.hpp"

namespace encore::dump {

Segment* SegmentPool::acquire(StreamKind kind, bool must_have, std::uint64_t& stalled_ns,
                              std::size_t min_capacity) {
  stalled_ns = 0;
  const std::size_t size = std::max(
      min_capacity, kind == StreamKind::events ? kEventSegmentBytes : kPayloadSegmentBytes);
  std::unique_lock lock(mu_);
  auto& free_list = kind == StreamKind::events ? free_events_ : free_payload_;
  std::uint64_t waited_since = 0;
  for (;;) {
    const auto fits = std::find_if(free_list.begin(), free_list.end(),
                                   [&](const Segment* s) { return s->capacity() >= size; });
    if (fits != free_list.end()) {
      Segment* s = *fits;
      free_list.erase(fits);
      if (waited_since) stalled_ns = monotonic_ns() - waited_since;
      return s;
    }
    if (allocated_ + size <= budget_ || must_have) {
      owned_.push_back(std::make_unique<Segment>(kind, size));
      allocated_ += size;
      if (waited_since) stalled_ns = monotonic_ns() - waited_since;
      return owned_.back().get();
    }
    if (!waited_since) waited_since = monotonic_ns();
    freed_.wait(lock);
  }
}

void SegmentPool::release(Segment* segment) {
  {
    std::lock_guard lock(mu_);
    (segment->kind() == StreamKind::events ? free_events_ : free_payload_).push_back(segment);
  }
  freed_.notify_all();
}

std::uint64_t SegmentPool::allocated_bytes() const {
  std::lock_guard lock(mu_);
  return allocated_;
}

}  // namespace encore::dump
