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
  const std::vector<std::byte> block(64 * 1024, std::byte{7});
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

}  // namespace
}  // namespace encore::dump
