// The first read of received bytes (first_read_excess): what a first pass over the lines cost
// beyond a second one. Bytes whose first read is slow for certain: a fresh private mapping,
// never touched, where each page's first read faults (the zero page is mapped then).
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "first_read.hpp"
#include <gtest/gtest.h>

namespace encore::dump {
namespace {

TEST(FirstRead, ChargesWhatTheFirstPassCostBeyondASecond) {
  constexpr std::size_t kBytes = 8u << 20;
  void* m = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  const std::span<const std::byte> data(static_cast<const std::byte*>(m), kBytes);
  const Clock clock{ClockSource::monotonic};  // ticks are ns
  const std::uint64_t fresh = first_read_excess(data, clock);
  const std::uint64_t again = first_read_excess(data, clock);  // every page mapped now
  // 2048 page faults: far more than 20 ns each, whatever the machine.
  EXPECT_GT(fresh, 2048u * 20u);
  EXPECT_LT(again * 4, fresh);
  munmap(m, kBytes);
}

TEST(FirstRead, ReadsEveryLineAndTheLastByte) {
  std::byte b[200] = {};
  b[0] = std::byte{1};
  b[64] = std::byte{2};
  b[128] = std::byte{4};
  b[199] = std::byte{8};
  b[100] = std::byte{16};  // not the first byte of a line: not read
  EXPECT_EQ(read_lines(b), 15u);
  EXPECT_EQ(read_lines({}), 0u);
}

}  // namespace
}  // namespace encore::dump
