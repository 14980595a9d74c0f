// The writer's encoder of light records (encode_light_body) has a fast path for bodies whose
// fields are each one varint byte; every body must be byte for byte what the general encoder
// (encode_light_body_inline, the Call path's bytes) writes, whatever the fields, and the send
// hash of 4 to 8 bytes kept in the record must be the XXH3 of those bytes.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "light_record.hpp"
#include <gtest/gtest.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

using encore::dump::kLightBodyMax;
using encore::dump::LightTimes;
using encore::dump::RawTimes;

namespace {

// Values on both sides of each varint length (zigzagged and not), the MPI constants and the
// extremes.
constexpr std::int64_t kEdges[] = {0,     1,       2,         -1,     -2,        63,
                                   64,    -64,     -65,       127,    128,       255,
                                   256,   8191,    8192,      16383,  16384,     -8192,
                                   -8193, 1 << 20, INT32_MAX, -32766, INT32_MIN, 0x7fffffff - 1};

template <class T>
T pick(std::mt19937_64& rng) {
  // Mostly small values, as programs pass them; edges and random bits otherwise.
  const unsigned how = rng() % 4;
  std::int64_t v;
  if (how == 0)
    v = kEdges[rng() % std::size(kEdges)];
  else if (how == 1)
    v = static_cast<std::int64_t>(rng());
  else
    v = static_cast<std::int64_t>(rng() % 40) - 4;
  return static_cast<T>(v);
}

LightTimes random_record(std::mt19937_64& rng) {
  LightTimes r;
  std::memset(&r, 0, sizeof r);
  r.kind = static_cast<std::uint8_t>(rng() % 3);
  r.flags = RawTimes::kLight;
  if (rng() % 4 != 0) r.flags |= LightTimes::kExtra;
  if (r.kind == LightTimes::send && rng() % 2) r.flags |= LightTimes::kUnhashed;
  r.word = rng();
  r.count = pick<std::int32_t>(rng);
  r.peer = pick<std::int32_t>(rng);
  r.tag = pick<std::int32_t>(rng);
  r.type_id = pick<std::uint32_t>(rng);
  r.comm_id = pick<std::uint32_t>(rng);
  r.bytes = pick<std::uint32_t>(rng);
  r.elems = pick<std::uint32_t>(rng);
  if (rng() % 2)
    r.word = static_cast<std::uint32_t>(pick<std::int32_t>(rng)) |
             std::uint64_t{static_cast<std::uint32_t>(pick<std::int32_t>(rng))} << 32;
  if (r.flags & LightTimes::kUnhashed) r.bytes = static_cast<std::uint32_t>(4 + rng() % 5);
  r.fn = static_cast<std::uint16_t>(rng() % 4096);
  r.bits = static_cast<std::uint8_t>(rng());
  return r;
}

}  // namespace

TEST(LightRecord, BodyIsTheGeneralEncodersForAnyFields) {
  std::mt19937_64 rng(20261123);
  unsigned differing = 0;
  for (int i = 0; i < 300000; ++i) {
    const LightTimes r = random_record(rng);
    std::vector<std::byte> fast(kLightBodyMax, std::byte{0xa5});
    std::vector<std::byte> general(kLightBodyMax, std::byte{0xa5});
    const std::size_t n = encore::dump::encode_light_body(r, fast.data());
    const std::size_t m = encore::dump::encode_light_body_inline(r, general.data());
    ASSERT_LE(n, kLightBodyMax);
    if (n != m || std::memcmp(fast.data(), general.data(), n) != 0) {
      if (++differing <= 5)
        ADD_FAILURE() << "kind " << int{r.kind} << " flags " << r.flags << " count " << r.count
                      << " peer " << r.peer << " tag " << r.tag << " type " << r.type_id << " comm "
                      << r.comm_id << " bytes " << r.bytes << " elems " << r.elems << " bits "
                      << int{r.bits} << " word " << r.word << ": " << n << " bytes, " << m
                      << " expected";
    }
  }
  EXPECT_EQ(differing, 0u);
}

TEST(LightRecord, KeptSendBytesHashAsTheBytesThemselves) {
  std::mt19937_64 rng(7);
  for (std::uint32_t n = 4; n <= 8; ++n) {
    for (int i = 0; i < 1000; ++i) {
      std::byte data[8];
      const std::uint64_t bits = rng();
      std::memcpy(data, &bits, sizeof data);
      std::uint32_t lo, hi;  // as LightCall::send keeps them
      std::memcpy(&lo, data, 4);
      std::memcpy(&hi, data + n - 4, 4);
      EXPECT_EQ(encore::dump::light_send_hash(lo | std::uint64_t{hi} << 32, n),
                XXH3_64bits(data, n))
          << n << " bytes";
    }
  }
}
