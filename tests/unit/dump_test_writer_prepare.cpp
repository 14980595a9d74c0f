// The writer thread prepares the next payload segment once a thread has filled half of its
// current one (ThreadStream::on_half wakes it; SegmentPool::prepare makes the segment), so the
// thread's roll takes a populated segment instead of allocating one in its call.
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "segment_pool.hpp"
#include "temp_dir_test.hpp"
#include "thread_stream.hpp"
#include "trace_writer.hpp"
#include <gtest/gtest.h>

#include "encore/clock.hpp"

namespace encore::dump {
namespace {

class WriterPrepare : public TempDirTest {};

TEST_F(WriterPrepare, AHalfFullPayloadSegmentGetsTheNextOnePrepared) {
  Clock clock(ClockSource::monotonic);
  clock.calibrate(0);
  SegmentPool pool(64u << 20);
  ThreadStream ts(0, pool);
  // A flush interval far longer than the test: only the half-full wake-up can make it drain.
  TraceWriter writer(dir_ / "e", dir_ / "p", 0, host_byte_order(), 1, 1, true, 3'600'000'000'000ull,
                     pool, clock);
  ts.on_half = [&writer] { writer.notify(); };
  writer.add_stream(&ts);
  writer.start();
  const auto before = pool.allocated_bytes();
  const std::vector<std::byte> block(std::size_t{64} * 1024, std::byte{9});
  for (std::size_t n = 0; n <= kPayloadSegmentBytes / 2; n += block.size())
    ts.append_payload(block);
  // The writer works on its own thread: give it up to 20 s (it takes milliseconds).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool.allocated_bytes() == before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(pool.allocated_bytes(), before + kPayloadSegmentBytes);
  writer.finish(EndStatus::complete);
}

}  // namespace
}  // namespace encore::dump
