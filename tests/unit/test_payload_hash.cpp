#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "encore/payload_hash.hpp"

namespace encore {
namespace {

// Traces hold send hashes from capture and replay compares them, possibly on another CPU: the
// dispatched long-input code must give XXH3-64's value at every length and alignment.
TEST(PayloadHash, IsXxh3AtEveryLengthAndAlignment) {
  std::vector<unsigned char> buf(70000);
  std::uint64_t x = 88172645463325252ull;
  for (auto& b : buf) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<unsigned char>(x);
  }
  for (std::size_t n = 0; n < 1100; ++n)
    for (std::size_t at : {0, 1, 7})
      ASSERT_EQ(payload_hash(&buf[at], n), XXH3_64bits(&buf[at], n)) << n << " at " << at;
  for (std::size_t n : {4096u, 4097u, 65536u, 69999u})
    EXPECT_EQ(payload_hash(buf.data(), n), XXH3_64bits(buf.data(), n)) << n;
  EXPECT_NE(payload_hash(buf.data(), 4096), payload_hash(buf.data() + 1, 4096));
}

}  // namespace
}  // namespace encore
