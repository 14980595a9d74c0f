#include <filesystem>
#include <fstream>
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"
#include "encore/stream_file.hpp"
#include "encore/stream_repack.hpp"

namespace encore {
namespace {

namespace fs = std::filesystem;

class StreamRepack : public TempDirTest {};

// Compressible bytes for chunk i; chunk 2 is noise, which zstd cannot shrink.
std::vector<std::byte> body(std::size_t i) {
  std::vector<std::byte> out(4000 + 500 * i);
  std::uint64_t x = 0x9e3779b97f4a7c15ull * (i + 1);
  for (std::size_t k = 0; k < out.size(); ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out[k] = static_cast<std::byte>(i == 2 ? x : (k / 64) % 7);
  }
  return out;
}

// Five raw payload chunks on two threads and a trailer with a body, as capture writes them
// when it compresses after the run.
void write_raw(const fs::path& path, bool trailer = true) {
  StreamFileWriter w(path, FileHeader{.kind = StreamKind::payload, .rank = 1});
  std::uint64_t seq[2] = {}, first[2] = {};
  ChunkCompressor c;
  for (std::size_t i = 0; i < 5; ++i) {
    ChunkHeader h;
    h.kind = ChunkKind::payload;
    h.thread = static_cast<std::uint16_t>(i % 2);
    h.seq = seq[h.thread]++;
    h.first = first[h.thread];
    h.aux = 77 + i;
    const auto raw = body(i);
    first[h.thread] += raw.size();
    const FramedChunk f = c.frame(h, raw, kNoCompression);
    w.append(f.header, f.body);
  }
  const std::vector<std::byte> tail{std::byte{1}, std::byte{2}, std::byte{3}};
  if (trailer) w.append(make_trailer(5, tail));
  w.close();
}

std::vector<Chunk> read_all(const fs::path& path) {
  StreamFileReader r(path);
  std::vector<Chunk> out;
  Chunk c;
  while (r.next(c) == ReadResult::chunk) out.push_back(c);
  EXPECT_EQ(r.next(c), ReadResult::end) << r.damage().message;
  EXPECT_TRUE(r.saw_trailer());
  return out;
}

TEST_F(StreamRepack, CompressesEveryChunkThatShrinksAndKeepsContentsAndHeaders) {
  const fs::path p = dir_ / "rank-00001.payload";
  write_raw(p);
  const auto before = read_all(p);
  const auto size_before = fs::file_size(p);
  const RepackStats s = repack_stream(p, 1);
  EXPECT_EQ(s.chunks, 5u);
  EXPECT_EQ(s.bytes_before, size_before);
  EXPECT_EQ(s.bytes_after, fs::file_size(p));
  EXPECT_LT(s.bytes_after, s.bytes_before / 2);
  EXPECT_FALSE(fs::exists(p.string() + ".packing"));
  const auto after = read_all(p);
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    const ChunkHeader &a = after[i].header, &b = before[i].header;
    EXPECT_EQ(after[i].data, before[i].data) << i;
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.thread, b.thread);
    EXPECT_EQ(a.seq, b.seq);
    EXPECT_EQ(a.first, b.first);
    EXPECT_EQ(a.aux, b.aux);
    EXPECT_EQ(a.raw_size, b.raw_size);
    // The noise chunk and the trailer stay raw; the others are stored compressed.
    EXPECT_EQ(a.codec, i == 2 || i == 5 ? Codec::raw : Codec::zstd) << i;
  }
}

TEST_F(StreamRepack, WritingAFramedChunkInTwoPiecesGivesTheSameBytesAsMakeChunk) {
  ChunkHeader h;
  h.kind = ChunkKind::events;
  h.count = 9;
  for (const int level : {kNoCompression, 1, 3}) {
    const auto raw = body(1);
    ChunkCompressor c;
    std::vector<std::byte> whole;
    c.make_chunk(h, raw, level, whole);
    const FramedChunk f = c.frame(h, raw, level);
    std::vector<std::byte> joined(f.header.begin(), f.header.end());
    joined.insert(joined.end(), f.body.begin(), f.body.end());
    EXPECT_EQ(joined, whole) << level;
    EXPECT_EQ(f.size(), whole.size());
    if (level == kNoCompression) {
      EXPECT_EQ(f.body.data(), raw.data());  // not copied
    }
  }
}

TEST_F(StreamRepack, AStreamCutShortIsLeftAsItWas) {
  const fs::path p = dir_ / "cut.payload";
  write_raw(p);
  fs::resize_file(p, fs::file_size(p) - 1000);  // inside the last data chunk: trailer gone too
  const auto size = fs::file_size(p);
  try {
    repack_stream(p, 1);
    FAIL() << "a damaged stream was repacked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cut.payload"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("left uncompressed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(p), size);
  EXPECT_FALSE(fs::exists(p.string() + ".packing"));
}

TEST_F(StreamRepack, AStreamWithoutTrailerIsLeftAsItWas) {
  const fs::path p = dir_ / "open.payload";
  write_raw(p, false);
  const auto size = fs::file_size(p);
  EXPECT_THROW(repack_stream(p, 1), Error);
  EXPECT_EQ(fs::file_size(p), size);
  EXPECT_FALSE(fs::exists(p.string() + ".packing"));
}

// What readers find in a stream that may be cut: its chunks' contents and where it stops.
struct Walk {
  std::vector<std::vector<std::byte>> data;
  ReadResult last;
  DamageKind damage = DamageKind::corrupt;
  std::uint64_t damaged_chunk = 0;
};

Walk walk(const fs::path& path) {
  StreamFileReader r(path);
  Walk w;
  Chunk c;
  while ((w.last = r.next(c)) == ReadResult::chunk)
    w.data.emplace_back(c.data.begin(), c.data.end());
  if (w.last == ReadResult::damage) {
    w.damage = r.damage().kind;
    w.damaged_chunk = r.damage().chunk_index;
  }
  return w;
}

TEST_F(StreamRepack, SalvageKeepsACutLastChunkAfterThePackedOnes) {
  const fs::path p = dir_ / "killed.payload";
  write_raw(p, false);
  fs::resize_file(p, fs::file_size(p) - 1000);  // a kill while the last chunk was written
  const Walk before = walk(p);
  ASSERT_EQ(before.last, ReadResult::damage);
  ASSERT_EQ(before.damage, DamageKind::truncated);
  const RepackStats s = repack_stream(p, 1, RepackScope::salvage);
  EXPECT_FALSE(s.trailer);
  EXPECT_EQ(s.chunks, 4u);
  EXPECT_EQ(s.shrunk, 3u);  // chunk 2 is noise
  EXPECT_EQ(s.tail_bytes, kChunkHeaderSize + body(4).size() - 1000);
  EXPECT_LT(s.bytes_after, s.bytes_before);
  const Walk after = walk(p);
  EXPECT_EQ(after.data, before.data);
  EXPECT_EQ(after.last, ReadResult::damage);
  EXPECT_EQ(after.damage, DamageKind::truncated);
  EXPECT_EQ(after.damaged_chunk, before.damaged_chunk);
  EXPECT_FALSE(fs::exists(p.string() + ".packing"));
}

TEST_F(StreamRepack, SalvagePacksAStreamWithoutTrailer) {
  const fs::path p = dir_ / "open.payload";
  write_raw(p, false);
  const Walk before = walk(p);
  const RepackStats s = repack_stream(p, 1, RepackScope::salvage);
  EXPECT_FALSE(s.trailer);
  EXPECT_EQ(s.tail_bytes, 0u);
  EXPECT_EQ(s.chunks, 5u);
  const Walk after = walk(p);
  EXPECT_EQ(after.data, before.data);
  EXPECT_EQ(after.last, ReadResult::end);
}

TEST_F(StreamRepack, SalvageLeavesDamageBeforeTheEndAlone) {
  const fs::path p = dir_ / "flipped.payload";
  write_raw(p, false);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(p) / 3));
    f.put('\x5a');  // inside a middle chunk: chunks after it are whole
  }
  const auto size = fs::file_size(p);
  try {
    repack_stream(p, 1, RepackScope::salvage);
    FAIL() << "a stream damaged in the middle was repacked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("left uncompressed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(p), size);
  EXPECT_FALSE(fs::exists(p.string() + ".packing"));
}

TEST_F(StreamRepack, AMissingFileIsAnError) {
  EXPECT_THROW(repack_stream(dir_ / "nothing.events", 3), Error);
}

}  // namespace
}  // namespace encore
