// ThreadStream's seal flag: a segment sealed while the application thread records (on_seal
// wakes the writer and yields to it) makes the sealing call measure its tail, so the writer's
// drain is charged as the tool's overhead (Call::finish_light, LightCall::sample_tail). The
// flag is what they read: set by every seal, of the payload or the events segment.
#include <cstddef>
#include <vector>

#include "segment_pool.hpp"
#include "thread_stream.hpp"
#include <gtest/gtest.h>

namespace encore::dump {
namespace {

TEST(ThreadStreamSeal, APayloadSegmentFilledUpSetsTheFlagAndCallsTheHook) {
  SegmentPool pool(64u << 20);
  ThreadStream ts(0, pool);
  int hooks = 0;
  ts.on_seal = [&hooks] { ++hooks; };
  const std::vector<std::byte> block(std::size_t{64} * 1024, std::byte{7});
  std::size_t appended = 0;
  while (appended + block.size() <= kPayloadSegmentBytes) {
    ts.append_payload(block);
    appended += block.size();
  }
  EXPECT_FALSE(ts.sealed);  // exactly full: nothing sealed yet
  EXPECT_EQ(hooks, 0);
  ts.append_payload(block);
  EXPECT_TRUE(ts.sealed);
  EXPECT_EQ(hooks, 1);
  ts.sealed = false;  // as the sealing call does once it has measured its tail
  ts.append_payload(block);
  EXPECT_FALSE(ts.sealed);
  EXPECT_EQ(hooks, 1);
}

// on_half: the writer is told once a payload segment is half full (it prepares the next one
// then); the light path's payload_fits() stops at the half until it has been told.
TEST(ThreadStreamSeal, HalfAPayloadSegmentCallsTheHalfHookOncePerSegment) {
  SegmentPool pool(64u << 20);
  ThreadStream ts(0, pool);
  int halves = 0;
  ts.on_half = [&halves] { ++halves; };
  const std::vector<std::byte> block(std::size_t{64} * 1024, std::byte{5});
  const std::size_t half = kPayloadSegmentBytes / 2;
  for (std::size_t n = 0; n < half; n += block.size()) ts.append_payload(block);
  EXPECT_EQ(halves, 0);  // exactly half: not past it
  EXPECT_FALSE(ts.payload_fits(1));
  ts.append_payload(block);
  EXPECT_EQ(halves, 1);
  EXPECT_TRUE(ts.payload_fits(1));
  for (std::size_t n = half + block.size(); n < kPayloadSegmentBytes; n += block.size())
    ts.append_payload(block);
  EXPECT_EQ(halves, 1);
  // The next segment: its own half.
  for (std::size_t n = 0; n <= half; n += block.size()) ts.append_payload(block);
  EXPECT_EQ(halves, 2);
}

// A segment is sealed before its successor is set (roll_payload, roll_events): a writer that
// looks in between (here from the seal hook, where the writer is woken) must find it sealed
// only, not also current, or it would drain it again after releasing it to the pool.
TEST(ThreadStreamSeal, ASegmentBeingRolledOverIsNotAlsoTheCurrentOne) {
  SegmentPool pool(64u << 20);
  ThreadStream ts(0, pool);
  ThreadStream::Pending seen;
  int hooks = 0;
  ts.on_seal = [&] {
    seen = ts.pending();
    ++hooks;
  };
  const std::vector<std::byte> block(std::size_t{64} * 1024, std::byte{3});
  for (std::size_t n = 0; n <= kPayloadSegmentBytes; n += block.size()) ts.append_payload(block);
  ASSERT_EQ(hooks, 1);
  ASSERT_EQ(seen.sealed_payload.size(), 1u);
  EXPECT_EQ(seen.current_payload, nullptr);
  EXPECT_NE(seen.current_events, nullptr);  // the events segment was not rolled over
  const ThreadStream::Pending after = ts.pending();
  EXPECT_TRUE(after.sealed_payload.empty());
  ASSERT_NE(after.current_payload, nullptr);
  EXPECT_NE(after.current_payload, seen.sealed_payload[0]);
  // The same for the events segment, filled with small events.
  seen = {};
  const std::vector<std::byte> body(200, std::byte{1});
  RawTimes t{};
  while (hooks == 1) ts.append_event(t, body);
  ASSERT_EQ(seen.sealed_events.size(), 1u);
  EXPECT_EQ(seen.current_events, nullptr);
  EXPECT_EQ(seen.current_payload, after.current_payload);
  EXPECT_NE(ts.pending().current_events, seen.sealed_events[0]);
}

// The writer drains a snapshot's payload first, then its events (TraceWriter::drain): the
// events only up to the mark the snapshot took, since the thread goes on recording meanwhile.
// That mark names no payload beyond what the snapshot's payload segments held, even when the
// thread then fills its payload segment, rolls it over and records an event naming the new
// one: otherwise a rank killed between the two drains left an events chunk on disk whose
// received data was not ("received data missing" in replay instead of a cut trace).
TEST(ThreadStreamSeal, ASnapshotsEventsMarkNamesOnlyPayloadItsSegmentsHold) {
  SegmentPool pool(64u << 20);
  ThreadStream ts(0, pool);
  const std::vector<std::byte> block(std::size_t{64} * 1024, std::byte{9});
  const std::vector<std::byte> body(16, std::byte{1});
  const RawTimes t{};
  ts.append_payload(block);
  ts.append_event(t, body);
  const ThreadStream::Pending p = ts.pending();
  ASSERT_NE(p.current_events, nullptr);
  ASSERT_NE(p.current_payload, nullptr);
  const std::uint64_t held = p.current_payload->published().payload;
  EXPECT_EQ(p.current_events_upto.events, 1u);
  EXPECT_EQ(p.current_events_upto.payload, held);
  // The thread goes on: past its payload segment's end, then an event naming the new one.
  for (std::size_t n = 0; n <= kPayloadSegmentBytes; n += block.size()) ts.append_payload(block);
  ts.append_event(t, body);
  EXPECT_EQ(ts.pending().sealed_payload.size(), 1u);       // the snapshot's segment, rolled over
  EXPECT_GT(p.current_events->published().payload, held);  // what a late read would name
  EXPECT_EQ(p.current_events_upto.payload, held);
  EXPECT_EQ(p.current_events_upto.events, 1u);
}

}  // namespace
}  // namespace encore::dump
