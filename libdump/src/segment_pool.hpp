// The memory budget of a rank's capture: segments are allocated lazily up to the budget and
// recycled by the writer thread. When none is free the application waits (never drops data)
// and the time it waited is accounted as a stall.
// A segment's pages are faulted in when it is allocated (segment_memory.hpp), and the writer
// thread allocates the next segment of a kind ahead of need (prepare()), so the application
// thread neither first-touches a page nor allocates while it records; recycled segments stay
// resident.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "segment.hpp"

namespace encore::dump {

inline constexpr std::size_t kEventSegmentBytes = 1u << 20;
inline constexpr std::size_t kPayloadSegmentBytes = 4u << 20;

class SegmentPool {
 public:
  explicit SegmentPool(std::uint64_t budget_bytes) : budget_(budget_bytes) {}

  // Whether new segments of the kind get their pages faulted in when allocated (the default).
  // A rank that records no payload leaves its one payload segment untouched.
  void set_populate(StreamKind kind, bool on);

  // A segment of the kind, waiting if the budget is used up. `must_have` lets a thread that
  // owns no segment of this kind yet get one even over budget, so no thread can deadlock.
  // Returns the ns spent waiting in `stalled_ns`.
  // A segment larger than usual is allocated when `min_capacity` asks for it.
  Segment* acquire(StreamKind kind, bool must_have, std::uint64_t& stalled_ns,
                   std::size_t min_capacity = 0);
  void release(Segment* segment);

  // Allocates a segment of the kind's usual size into the free list, populated, if none is
  // free and the budget has room: the writer thread calls it when a thread will soon want one.
  // Returns whether it allocated one.
  bool prepare(StreamKind kind);

  std::uint64_t allocated_bytes() const;

 private:
  // Allocates outside the lock (populating takes a while); the budget is reserved before.
  Segment* allocate(std::unique_lock<std::mutex>& lock, StreamKind kind, std::size_t size);
  std::vector<Segment*>& free_list(StreamKind kind) {
    return kind == StreamKind::events ? free_events_ : free_payload_;
  }

  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::uint64_t budget_;
  std::uint64_t allocated_ = 0;
  bool populate_events_ = true;
  bool populate_payload_ = true;
  std::vector<std::unique_ptr<Segment>> owned_;
  std::vector<Segment*> free_events_;
  std::vector<Segment*> free_payload_;
};

}  // namespace encore::dump
