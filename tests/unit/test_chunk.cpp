#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "encore/chunk.hpp"
#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"

namespace encore {
namespace {

std::vector<std::byte> compressible(std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i / 16) % 7);
  return out;
}

std::vector<std::byte> noise(std::size_t n) {
  std::vector<std::byte> out(n);
  std::uint64_t x = 88172645463325252ull;
  for (auto& b : out) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<std::byte>(x >> 24);
  }
  return out;
}

ChunkHeader sample_fields() {
  ChunkHeader h;
  h.kind = ChunkKind::events;
  h.thread = 3;
  h.seq = 17;
  h.first = 123456789;
  h.base = 987654321012ull;
  h.count = 42;
  h.aux = 5555;
  return h;
}

std::vector<std::byte> unpack(const std::vector<std::byte>& chunk) {
  const ChunkHeader h = verify_chunk(chunk);
  ByteBuffer raw;
  ChunkDecompressor d;
  d.unpack(h, std::span(chunk).subspan(kChunkHeaderSize), raw);
  return {raw.begin(), raw.end()};
}

TEST(Chunk, HeaderLayoutIsLittleEndianAtDocumentedOffsets) {
  ChunkHeader h = sample_fields();
  h.stored_size = h.raw_size = 10;
  h.checksum = 0x1122334455667788ull;
  std::byte b[kChunkHeaderSize];
  encode_header(h, b);
  EXPECT_EQ(std::memcmp(b, "ECHK", 4), 0);
  EXPECT_EQ(b[4], std::byte{1});
  EXPECT_EQ(b[5], std::byte{0});
  EXPECT_EQ(b[6], std::byte{3});
  EXPECT_EQ(b[8], std::byte{17});
  EXPECT_EQ(b[16], std::byte{10});
  EXPECT_EQ(b[20], std::byte{10});
  EXPECT_EQ(b[40], std::byte{42});
  EXPECT_EQ(b[56], std::byte{0x88});
  const ChunkHeader back = decode_header(b);
  EXPECT_EQ(back.seq, 17u);
  EXPECT_EQ(back.first, 123456789u);
  EXPECT_EQ(back.base, 987654321012ull);
  EXPECT_EQ(back.aux, 5555u);
  EXPECT_EQ(back.checksum, h.checksum);
}

TEST(Chunk, RawRoundTrip) {
  const auto data = compressible(1000);
  const auto chunk = make_chunk(sample_fields(), data, kNoCompression);
  const ChunkHeader h = verify_chunk(chunk);
  EXPECT_EQ(h.codec, Codec::raw);
  EXPECT_EQ(h.raw_size, 1000u);
  EXPECT_EQ(h.stored_size, 1000u);
  EXPECT_EQ(h.count, 42u);
  EXPECT_EQ(unpack(chunk), data);
}

TEST(Chunk, ZstdRoundTrip) {
  const auto data = compressible(200000);
  ChunkCompressor c;
  std::vector<std::byte> chunk;
  c.make_chunk(sample_fields(), data, 3, chunk);
  const ChunkHeader h = verify_chunk(chunk);
  EXPECT_EQ(h.codec, Codec::zstd);
  EXPECT_LT(h.stored_size, h.raw_size);
  EXPECT_EQ(unpack(chunk), data);
  // The same compressor is reusable.
  c.make_chunk(sample_fields(), std::span(data).first(5000), 1, chunk);
  EXPECT_EQ(unpack(chunk), std::vector<std::byte>(data.begin(), data.begin() + 5000));
}

TEST(Chunk, IncompressibleAndEmptyDataStoredRaw) {
  const auto data = noise(4096);
  const auto chunk = make_chunk(sample_fields(), data, 19);
  EXPECT_EQ(verify_chunk(chunk).codec, Codec::raw);
  EXPECT_EQ(unpack(chunk), data);
  const auto empty = make_chunk(sample_fields(), {}, 3);
  EXPECT_EQ(empty.size(), kChunkHeaderSize);
  EXPECT_EQ(verify_chunk(empty).codec, Codec::raw);
}

TEST(Chunk, SignalSafeHeaderMatchesMakeChunk) {
  const auto data = noise(777);
  std::byte header[kChunkHeaderSize];
  ASSERT_TRUE(write_raw_chunk_header(sample_fields(), data, header));
  const auto chunk = make_chunk(sample_fields(), data, kNoCompression);
  EXPECT_EQ(std::memcmp(header, chunk.data(), kChunkHeaderSize), 0);
}

TEST(Chunk, EveryFlippedBitIsDetected) {
  for (const int level : {kNoCompression, 3}) {
    const auto chunk = make_chunk(sample_fields(), compressible(3000), level);
    for (std::size_t bit = 0; bit < chunk.size() * 8; ++bit) {
      auto bad = chunk;
      bad[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
      EXPECT_THROW(verify_chunk(bad), Error) << "level " << level << " bit " << bit;
    }
  }
}

TEST(Chunk, DecodeRejectsInvalidFields) {
  std::byte b[kChunkHeaderSize];
  const auto with = [&](auto change) {
    ChunkHeader h = sample_fields();
    change(h);
    encode_header(h, b);
  };
  with([](ChunkHeader&) {});
  EXPECT_NO_THROW(decode_header(b));
  with([](ChunkHeader& h) { h.kind = static_cast<ChunkKind>(4); });
  EXPECT_THROW(decode_header(b), Error);
  with([](ChunkHeader& h) { h.codec = static_cast<Codec>(2); });
  EXPECT_THROW(decode_header(b), Error);
  with([](ChunkHeader& h) { h.raw_size = h.stored_size = kMaxChunkBytes + 1; });
  EXPECT_THROW(decode_header(b), Error);
  with([](ChunkHeader& h) {
    h.codec = Codec::zstd, h.stored_size = 10, h.raw_size = kMaxChunkBytes + 1;
  });
  EXPECT_THROW(decode_header(b), Error);
  with([](ChunkHeader& h) { h.stored_size = 5, h.raw_size = 6; });  // raw codec sizes differ
  EXPECT_THROW(decode_header(b), Error);
  with([](ChunkHeader&) {});
  b[0] = std::byte{'X'};
  EXPECT_THROW(decode_header(b), Error);
}

TEST(Chunk, OversizedInputRefused) {
  std::vector<std::byte> big(std::size_t{kMaxChunkBytes} + 1);
  EXPECT_THROW(make_chunk(sample_fields(), big, kNoCompression), Error);
  std::byte header[kChunkHeaderSize];
  EXPECT_FALSE(write_raw_chunk_header(sample_fields(), big, header));
}

TEST(Chunk, LyingRawSizeIsCaughtByDecompressor) {
  const auto data = compressible(10000);
  const auto chunk = make_chunk(sample_fields(), data, 3);
  ChunkHeader h = verify_chunk(chunk);
  ByteBuffer raw;
  ChunkDecompressor d;
  h.raw_size -= 1;
  EXPECT_THROW(d.unpack(h, std::span(chunk).subspan(kChunkHeaderSize), raw), Error);
  h.raw_size += 2;
  EXPECT_THROW(d.unpack(h, std::span(chunk).subspan(kChunkHeaderSize), raw), Error);
}

// One buffer for chunk after chunk, as the stream readers use it: it grows without zeroing or
// copying what it held, so each chunk must come out whole, smaller after larger and larger
// after smaller, compressed and raw alike.
TEST(Chunk, ReusedBufferHoldsEachChunkExactly) {
  ByteBuffer raw;
  ChunkDecompressor d;
  for (const std::size_t n : {3000u, 100u, 70000u, 5u, 0u, 140000u, 70000u}) {
    for (const int level : {3, 0}) {
      auto data = compressible(n);
      for (std::size_t i = 0; i < n; i += 7) data[i] = std::byte{static_cast<unsigned char>(i)};
      const auto chunk = make_chunk(sample_fields(), data, level);
      const ChunkHeader h = verify_chunk(chunk);
      d.unpack(h, std::span(chunk).subspan(kChunkHeaderSize), raw);
      ASSERT_EQ(std::vector<std::byte>(raw.begin(), raw.end()), data)
          << n << " bytes, level " << level;
    }
  }
}

TEST(Chunk, TrailerCarriesDataChunkCount) {
  const auto t = make_trailer(12);
  const ChunkHeader h = verify_chunk(t);
  EXPECT_EQ(h.kind, ChunkKind::trailer);
  EXPECT_EQ(h.first, 12u);
  EXPECT_EQ(h.stored_size, 0u);
}

}  // namespace
}  // namespace encore
