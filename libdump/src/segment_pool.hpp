// The memory budget of a rank's capture: segments are allocated lazily up to the budget and
// recycled by the writer thread. When none is free the application waits (never drops data)
// and the time it waited is accounted as a stall.
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

  // A segment of the kind, waiting if the budget is used up. `must_have` lets a thread that
  // owns no segment of this kind yet get one even over budget, so no thread can deadlock.
  // Returns the ns spent waiting in `stalled_ns`.
  // A segment larger than usual is allocated when `min_capacity` asks for it.
  Segment* acquire(StreamKind kind, bool must_have, std::uint64_t& stalled_ns,
                   std::size_t min_capacity = 0);
  void release(Segment* segment);

  std::uint64_t allocated_bytes() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::uint64_t budget_;
  std::uint64_t allocated_ = 0;
  std::vector<std::unique_ptr<Segment>> owned_;
  std::vector<Segment*> free_events_;
  std::vector<Segment*> free_payload_;
};

}  // namespace encore::dump
