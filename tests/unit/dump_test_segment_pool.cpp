// SegmentPool's memory: segments come with their pages faulted in (the application thread that
// fills them takes no page fault), a segment prepared ahead (by the writer thread) is the one
// the next acquire hands out, and preparing never takes the pool past its budget.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "segment_memory.hpp"
#include "segment_pool.hpp"
#include "thread_stream.hpp"
#include <gtest/gtest.h>

namespace encore::dump {
namespace {

TEST(SegmentPool, AllocatedSegmentsArePopulated) {
  SegmentPool pool(64u << 20);
  std::uint64_t stalled = 0;
  const Segment* payload = pool.acquire(StreamKind::payload, true, stalled);
  const Segment* events = pool.acquire(StreamKind::events, true, stalled);
  EXPECT_TRUE(segment_memory_resident(payload->data(), payload->capacity()));
  EXPECT_TRUE(segment_memory_resident(events->data(), events->capacity()));
}

TEST(SegmentPool, PopulatingCanBeTurnedOffForAKind) {
  SegmentPool pool(64u << 20);
  pool.set_populate(StreamKind::payload, false);
  std::uint64_t stalled = 0;
  const Segment* payload = pool.acquire(StreamKind::payload, true, stalled);
  EXPECT_FALSE(segment_memory_resident(payload->data(), payload->capacity()));
}

TEST(SegmentPool, APreparedSegmentIsHandedOutAndTheBudgetHolds) {
  // Room for one events segment and two payload segments.
  SegmentPool pool(kEventSegmentBytes + 2 * kPayloadSegmentBytes);
  std::uint64_t stalled = 0;
  pool.acquire(StreamKind::events, true, stalled);
  Segment* first = pool.acquire(StreamKind::payload, true, stalled);
  EXPECT_EQ(pool.allocated_bytes(), kEventSegmentBytes + kPayloadSegmentBytes);

  EXPECT_TRUE(pool.prepare(StreamKind::payload));
  EXPECT_EQ(pool.allocated_bytes(), kEventSegmentBytes + 2 * kPayloadSegmentBytes);
  EXPECT_FALSE(pool.prepare(StreamKind::payload));  // one is ready: no second
  EXPECT_FALSE(pool.prepare(StreamKind::events));   // over budget

  // The prepared one is handed out: no allocation, already resident.
  Segment* next = pool.acquire(StreamKind::payload, false, stalled);
  EXPECT_NE(next, first);
  EXPECT_EQ(pool.allocated_bytes(), kEventSegmentBytes + 2 * kPayloadSegmentBytes);
  EXPECT_TRUE(segment_memory_resident(next->data(), next->capacity()));
  EXPECT_FALSE(pool.prepare(StreamKind::payload));  // none free, but the budget is used up
  EXPECT_EQ(pool.allocated_bytes(), kEventSegmentBytes + 2 * kPayloadSegmentBytes);

  // A recycled segment counts as ready.
  pool.release(first);
  EXPECT_FALSE(pool.prepare(StreamKind::payload));
  EXPECT_EQ(pool.acquire(StreamKind::payload, false, stalled), first);
  EXPECT_EQ(stalled, 0u);
}

TEST(SegmentPool, AThreadWantsAnotherSegmentOnceItsCurrentOneIsHalfFull) {
  SegmentPool pool(64u << 20);
  ThreadStream ts(0, pool);
  const std::vector<std::byte> block(std::size_t{64} * 1024, std::byte{3});
  for (std::size_t n = 0; n + block.size() < kPayloadSegmentBytes / 2; n += block.size())
    ts.append_payload(block);
  EXPECT_FALSE(ts.pending().wants_more(StreamKind::payload));
  ts.append_payload(block);
  EXPECT_TRUE(ts.pending().wants_more(StreamKind::payload));
  EXPECT_FALSE(ts.pending().wants_more(StreamKind::events));
}

}  // namespace
}  // namespace encore::dump
