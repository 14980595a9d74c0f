#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/varint.hpp"

namespace encore {
namespace {

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

std::vector<std::byte> encode(std::uint64_t v) {
  std::byte buf[kMaxVarintBytes];
  return {buf, buf + encode_uvarint(v, buf)};
}

TEST(Varint, KnownEncodings) {
  EXPECT_EQ(encode(0), bytes({0x00}));
  EXPECT_EQ(encode(127), bytes({0x7f}));
  EXPECT_EQ(encode(128), bytes({0x80, 0x01}));
  EXPECT_EQ(encode(300), bytes({0xac, 0x02}));
  // The edges of the encoder's one- and two-byte shortcuts.
  EXPECT_EQ(encode(16383), bytes({0xff, 0x7f}));
  EXPECT_EQ(encode(16384), bytes({0x80, 0x80, 0x01}));
  EXPECT_EQ(encode(std::uint64_t{1} << 63),
            bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}));
  EXPECT_EQ(encode(UINT64_MAX),
            bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

// The branch-free encoder of values under 2^14 writes what the general one writes, for each.
TEST(Varint, ShortEncoderMatchesTheGeneralOne) {
  for (std::uint64_t v = 0; v < (1u << 14); ++v) {
    std::byte buf[2];
    const std::size_t n = encode_uvarint14(v, buf);
    ASSERT_EQ(std::vector<std::byte>(buf, buf + n), encode(v)) << v;
  }
}

TEST(Varint, RoundTripAndSize) {
  const std::uint64_t values[] = {
      0, 1, 127, 128, 16383, 16384, (1ull << 35) - 1, 1ull << 56, 1ull << 63, UINT64_MAX};
  std::vector<std::byte> buf;
  ByteWriter w(buf);
  for (auto v : values) {
    w.put_uvarint(v);
    EXPECT_EQ(encode(v).size(), uvarint_size(v)) << v;
  }
  ByteReader r(buf);
  for (auto v : values) EXPECT_EQ(r.read_uvarint(), v);
  EXPECT_TRUE(r.at_end());
}

TEST(Varint, Zigzag) {
  EXPECT_EQ(zigzag_encode(0), 0u);
  EXPECT_EQ(zigzag_encode(-1), 1u);
  EXPECT_EQ(zigzag_encode(1), 2u);
  EXPECT_EQ(zigzag_encode(-2), 3u);
  EXPECT_EQ(zigzag_encode(INT64_MAX), UINT64_MAX - 1);
  EXPECT_EQ(zigzag_encode(INT64_MIN), UINT64_MAX);
  for (std::int64_t v : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1}, std::int64_t{-64},
                         std::int64_t{64}, INT64_MIN, INT64_MAX, INT64_MIN + 1}) {
    EXPECT_EQ(zigzag_decode(zigzag_encode(v)), v);
    std::byte buf[kMaxVarintBytes];
    const std::size_t n = encode_svarint(v, buf);
    ByteReader r({buf, n});
    EXPECT_EQ(r.read_svarint(), v);
  }
}

TEST(Varint, TruncatedInputRejected) {
  const auto full = encode(UINT64_MAX);
  for (std::size_t len = 0; len < full.size(); ++len) {
    ByteReader r{std::span(full).first(len)};
    EXPECT_THROW(r.read_uvarint(), Error) << len;
    EXPECT_EQ(r.position(), 0u);
  }
}

TEST(Varint, OverlongInputRejected) {
  // Eleven bytes: continuation bit set on the tenth.
  const auto eleven = bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00});
  ByteReader r(eleven);
  EXPECT_THROW(r.read_uvarint(), Error);
  // Ten bytes whose last one carries bits beyond bit 63.
  const auto wide = bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02});
  ByteReader r2(wide);
  try {
    r2.read_uvarint();
    FAIL() << "accepted a 65-bit varint";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("64 bits"), std::string::npos) << e.what();
  }
}

TEST(Varint, NonMinimalWithinTenBytesAccepted) {
  const auto padded = bytes({0x81, 0x80, 0x00});
  ByteReader r(padded);
  EXPECT_EQ(r.read_uvarint(), 1u);
  EXPECT_TRUE(r.at_end());
}

TEST(ByteReader, FixedWidthLittleEndian) {
  std::vector<std::byte> buf;
  ByteWriter w(buf);
  w.put_u8(0xab);
  w.put_u16(0x1234);
  w.put_u32(0xdeadbeef);
  w.put_u64(0x0102030405060708ull);
  w.put_f64(-2.5);
  w.put_bytes(bytes({1, 2, 3}));
  ASSERT_EQ(buf.size(), 1u + 2 + 4 + 8 + 8 + 3);
  EXPECT_EQ(buf[1], std::byte{0x34});  // little-endian on any host
  EXPECT_EQ(buf[7], std::byte{0x08});

  ByteReader r(buf);
  EXPECT_EQ(r.read_u8(), 0xab);
  EXPECT_EQ(r.read_u16(), 0x1234);
  EXPECT_EQ(r.read_u32(), 0xdeadbeefu);
  EXPECT_EQ(r.read_u64(), 0x0102030405060708ull);
  EXPECT_EQ(r.read_f64(), -2.5);
  const auto tail = r.read_bytes(3);
  EXPECT_EQ(tail[2], std::byte{3});
  EXPECT_TRUE(r.at_end());
}

TEST(ByteReader, OverrunThrowsAndKeepsPosition) {
  const auto buf = bytes({1, 2, 3});
  ByteReader r(buf);
  EXPECT_THROW(r.read_u32(), Error);
  EXPECT_EQ(r.position(), 0u);
  EXPECT_EQ(r.read_u16(), 0x0201);
  EXPECT_THROW(r.read_u64(), Error);
  EXPECT_THROW(r.read_bytes(2), Error);
  EXPECT_THROW(r.skip(std::numeric_limits<std::size_t>::max()), Error);
  EXPECT_EQ(r.read_u8(), 3);
  EXPECT_THROW(r.read_u8(), Error);
  EXPECT_THROW(r.read_uvarint(), Error);
}

TEST(ByteReader, GarbageNeverCrashes) {
  // Deterministic pseudo-random bytes read with mixed calls: only Error may escape.
  std::vector<std::byte> buf(4096);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto& b : buf) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  for (std::size_t start = 0; start < 64; ++start) {
    ByteReader r{std::span(buf).subspan(start, 100)};
    try {
      for (;;) {
        r.read_uvarint();
        r.read_svarint();
        r.read_u32();
      }
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace encore
