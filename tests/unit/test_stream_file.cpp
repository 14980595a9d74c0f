#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"
#include "encore/stream_file.hpp"

namespace encore {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class StreamFileTest : public TempDirTest {};

std::vector<std::byte> payload_for(std::size_t i, std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<std::byte>((k % 13) * (i + 1));
  return out;
}

struct Written {
  std::vector<std::uint64_t> chunk_offsets;  // start of each chunk, trailer included
  std::uint64_t size = 0;
};

// Six events chunks over two threads (alternating), optionally a trailer.
Written write_events(const fs::path& path, int level, bool trailer = true) {
  FileHeader fh;
  fh.kind = StreamKind::events;
  fh.rank = 3;
  StreamFileWriter w(path, fh);
  Written out;
  std::uint64_t seq[2] = {0, 0}, first[2] = {0, 0};
  for (std::size_t i = 0; i < 6; ++i) {
    ChunkHeader h;
    h.kind = ChunkKind::events;
    h.thread = static_cast<std::uint16_t>(i % 2);
    h.seq = seq[h.thread]++;
    h.first = first[h.thread];
    h.count = static_cast<std::uint32_t>(10 + i);
    first[h.thread] += h.count;
    out.chunk_offsets.push_back(w.size());
    w.append(make_chunk(h, payload_for(i, 500 + 100 * i), level));
  }
  if (trailer) {
    out.chunk_offsets.push_back(w.size());
    w.append(make_trailer(6));
  }
  out.size = w.size();
  w.close();
  return out;
}

std::vector<std::byte> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}

void write_file(const fs::path& p, std::span<const std::byte> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

TEST_F(StreamFileTest, RoundTripRawAndZstd) {
  for (const int level : {kNoCompression, 3}) {
    const fs::path p = dir_ / "rank-00003.events";
    const Written w = write_events(p, level);
    EXPECT_EQ(fs::file_size(p), w.size);

    StreamFileReader r(p);
    EXPECT_EQ(r.header().rank, 3u);
    EXPECT_EQ(r.header().kind, StreamKind::events);
    EXPECT_EQ(r.header().byte_order, host_byte_order());
    Chunk c;
    for (std::size_t i = 0; i < 6; ++i) {
      ASSERT_EQ(r.next(c), ReadResult::chunk) << r.damage().message;
      EXPECT_EQ(c.index, i);
      EXPECT_EQ(c.offset, w.chunk_offsets[i]);
      EXPECT_EQ(c.header.thread, i % 2);
      EXPECT_EQ(c.header.count, 10 + i);
      EXPECT_EQ(std::vector<std::byte>(c.data.begin(), c.data.end()),
                payload_for(i, 500 + 100 * i));
      if (level != kNoCompression) {
        EXPECT_EQ(c.header.codec, Codec::zstd);
      }
    }
    ASSERT_EQ(r.next(c), ReadResult::chunk);
    EXPECT_EQ(c.header.kind, ChunkKind::trailer);
    EXPECT_TRUE(r.saw_trailer());
    EXPECT_EQ(r.next(c), ReadResult::end);
    EXPECT_EQ(r.next(c), ReadResult::end);
    EXPECT_EQ(r.stats().chunks, 7u);
    EXPECT_EQ(r.stats().file_bytes, w.size);
    EXPECT_EQ(r.stats().entries, 10u + 11 + 12 + 13 + 14 + 15);
  }
}

TEST_F(StreamFileTest, SkipWalksHeadersAndReachesChunkK) {
  const fs::path p = dir_ / "s.events";
  const Written w = write_events(p, 3);
  StreamFileReader r(p);
  ChunkHeader h;
  for (int i = 0; i < 4; ++i) ASSERT_EQ(r.skip(h), ReadResult::chunk);
  EXPECT_EQ(r.offset(), w.chunk_offsets[4]);
  Chunk c;
  ASSERT_EQ(r.next(c), ReadResult::chunk);
  EXPECT_EQ(c.index, 4u);
  EXPECT_EQ(std::vector<std::byte>(c.data.begin(), c.data.end()), payload_for(4, 900));
  ASSERT_EQ(r.skip(h, true), ReadResult::chunk);
  ASSERT_EQ(r.skip(h, true), ReadResult::chunk);
  EXPECT_EQ(h.kind, ChunkKind::trailer);
  EXPECT_EQ(r.skip(h), ReadResult::end);
}

TEST_F(StreamFileTest, CleanEndWithoutTrailerIsReported) {
  const fs::path p = dir_ / "cut.events";
  write_events(p, 3, false);
  StreamFileReader r(p);
  Chunk c;
  int n = 0;
  while (r.next(c) == ReadResult::chunk) ++n;
  EXPECT_EQ(n, 6);
  EXPECT_EQ(r.next(c), ReadResult::end);
  EXPECT_FALSE(r.saw_trailer());
}

TEST_F(StreamFileTest, TruncationAtEveryOffsetOfLastChunk) {
  const fs::path full = dir_ / "full.events";
  const Written w = write_events(full, 3, false);
  const auto bytes = read_file(full);
  const std::uint64_t last = w.chunk_offsets.back();
  const fs::path p = dir_ / "rank-00003.events";
  for (std::uint64_t cut = last; cut < w.size; ++cut) {
    write_file(p, std::span(bytes).first(cut));
    for (const bool skipping : {false, true}) {
      StreamFileReader r(p);
      Chunk c;
      ChunkHeader h;
      int good = 0;
      ReadResult res;
      while ((res = skipping ? r.skip(h) : r.next(c)) == ReadResult::chunk) ++good;
      EXPECT_EQ(good, 5) << "cut " << cut;
      if (cut == last) {
        EXPECT_EQ(res, ReadResult::end);  // a cut between chunks looks like a clean end
        continue;
      }
      ASSERT_EQ(res, ReadResult::damage) << "cut " << cut;
      EXPECT_EQ(r.damage().kind, DamageKind::truncated)
          << "cut " << cut << ": " << r.damage().message;
      EXPECT_EQ(r.damage().offset, last);
      EXPECT_EQ(r.damage().chunk_index, 5u);
      EXPECT_NE(r.damage().message.find("rank-00003.events: chunk 5:"), std::string::npos)
          << r.damage().message;
      EXPECT_EQ(r.next(c), ReadResult::damage);  // the reader stays stopped
    }
  }
}

TEST_F(StreamFileTest, FlippedBitsInFileAreCorrupt) {
  const fs::path full = dir_ / "full.events";
  const Written w = write_events(full, 3);
  const auto bytes = read_file(full);
  const fs::path p = dir_ / "bad.events";
  // Every byte of chunk 2 (one bit each); the chunks before stay readable.
  for (std::uint64_t off = w.chunk_offsets[2]; off < w.chunk_offsets[3]; ++off) {
    auto bad = bytes;
    bad[off] ^= std::byte{0x10};
    write_file(p, bad);
    StreamFileReader r(p);
    Chunk c;
    int good = 0;
    ReadResult res;
    while ((res = r.next(c)) == ReadResult::chunk) ++good;
    ASSERT_EQ(res, ReadResult::damage) << "offset " << off;
    EXPECT_EQ(good, 2) << "offset " << off;
    EXPECT_EQ(r.damage().offset, w.chunk_offsets[2]);
    // A flipped size bit can push the body past the end of the file.
    EXPECT_TRUE(r.damage().kind == DamageKind::corrupt || r.damage().kind == DamageKind::truncated)
        << r.damage().message;
  }
}

TEST_F(StreamFileTest, MissingChunkIsASequenceGap) {
  const fs::path full = dir_ / "full.events";
  const Written w = write_events(full, 3);
  auto bytes = read_file(full);
  // Drop chunk 2 (thread 0, seq 1).
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(w.chunk_offsets[2]),
              bytes.begin() + static_cast<std::ptrdiff_t>(w.chunk_offsets[3]));
  const fs::path p = dir_ / "gap.events";
  write_file(p, bytes);
  StreamFileReader r(p);
  ChunkHeader h;
  int good = 0;
  ReadResult res;
  while ((res = r.skip(h)) == ReadResult::chunk) ++good;
  EXPECT_EQ(good, 3);  // chunks 0, 1, and 3 (thread 1 seq 1)
  ASSERT_EQ(res, ReadResult::damage);
  EXPECT_EQ(r.damage().kind, DamageKind::sequence_gap) << r.damage().message;
  EXPECT_EQ(r.damage().chunk_index, 3u);
}

TEST_F(StreamFileTest, TrailerCountingTooManyChunksIsAGap) {
  const fs::path p = dir_ / "t.events";
  {
    FileHeader fh;
    StreamFileWriter w(p, fh);
    w.append(make_trailer(1));
    w.close();
  }
  StreamFileReader r(p);
  ChunkHeader h;
  ASSERT_EQ(r.skip(h), ReadResult::damage);
  EXPECT_EQ(r.damage().kind, DamageKind::sequence_gap);
}

TEST_F(StreamFileTest, DataAfterTrailerIsCorrupt) {
  const fs::path p = dir_ / "t.events";
  {
    StreamFileWriter w(p, FileHeader{});
    w.append(make_trailer(0));
    w.append(make_trailer(0));
    w.close();
  }
  StreamFileReader r(p);
  ChunkHeader h;
  ASSERT_EQ(r.skip(h), ReadResult::chunk);
  ASSERT_EQ(r.skip(h), ReadResult::damage);
  EXPECT_EQ(r.damage().kind, DamageKind::corrupt);
}

TEST_F(StreamFileTest, WrongChunkKindForStreamIsCorrupt) {
  const fs::path p = dir_ / "k.payload";
  FileHeader fh;
  fh.kind = StreamKind::payload;
  StreamFileWriter w(p, fh);
  ChunkHeader h;
  h.kind = ChunkKind::events;
  w.append(make_chunk(h, payload_for(0, 10), kNoCompression));
  w.close();
  StreamFileReader r(p);
  Chunk c;
  ASSERT_EQ(r.next(c), ReadResult::damage);
  EXPECT_EQ(r.damage().kind, DamageKind::corrupt);
}

TEST_F(StreamFileTest, PayloadFirstCountsBytes) {
  const fs::path p = dir_ / "rank-00000.payload";
  FileHeader fh;
  fh.kind = StreamKind::payload;
  StreamFileWriter w(p, fh);
  ChunkHeader h;
  h.kind = ChunkKind::payload;
  w.append(make_chunk(h, payload_for(0, 100), 3));
  h.seq = 1;
  h.first = 100;
  w.append(make_chunk(h, payload_for(1, 50), 3));
  h.seq = 2;
  h.first = 149;  // wrong: should be 150
  w.append(make_chunk(h, payload_for(2, 50), 3));
  w.close();
  StreamFileReader r(p);
  Chunk c;
  EXPECT_EQ(r.next(c), ReadResult::chunk);
  EXPECT_EQ(r.next(c), ReadResult::chunk);
  ASSERT_EQ(r.next(c), ReadResult::damage);
  EXPECT_EQ(r.damage().kind, DamageKind::corrupt);
}

TEST_F(StreamFileTest, RandomDamageNeverCrashes) {
  const fs::path full = dir_ / "full.events";
  write_events(full, 3);
  const auto bytes = read_file(full);
  const fs::path p = dir_ / "fuzz.events";
  std::uint64_t x = 0x2545f4914f6cdd1dull;
  const auto next_random = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  };
  for (int round = 0; round < 300; ++round) {
    auto bad = bytes;
    // Scribble a few random bytes after the file header, sometimes cut the file.
    for (int k = 0; k < 4; ++k)
      bad[kFileHeaderSize + next_random() % (bad.size() - kFileHeaderSize)] =
          static_cast<std::byte>(next_random());
    if (round % 3 == 0)
      bad.resize(kFileHeaderSize + next_random() % (bad.size() - kFileHeaderSize));
    write_file(p, bad);
    StreamFileReader r(p);
    Chunk c;
    ReadResult res;
    while ((res = r.next(c)) == ReadResult::chunk) {
    }
    if (res == ReadResult::damage) {
      EXPECT_FALSE(r.damage().message.empty());
    }
  }
}

TEST_F(StreamFileTest, NewerMajorVersionRejectedClearly) {
  const fs::path p = dir_ / "rank-00003.events";
  FileHeader fh;
  fh.major = 2;
  fh.minor = 0;
  StreamFileWriter(p, fh).close();
  try {
    StreamFileReader r(p);
    FAIL() << "accepted format 2.0";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              p.string() + ": format version 2.0 is newer than this reader (1.x)");
  }
}

TEST_F(StreamFileTest, HeaderOfAnotherRankRejected) {
  // Rank 3's stream under rank 2's name (files swapped or renamed): refused at open.
  const fs::path p = dir_ / "rank-00002.events";
  write_events(p, 0);
  try {
    StreamFileReader r(p);
    FAIL() << "accepted rank 3's stream as rank 2's";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": header says rank 3, expected rank 2");
  }
  // A name that is not a rank file's says nothing about the rank.
  const fs::path other = dir_ / "rank-00002.events.packing";
  write_events(other, 0);
  StreamFileReader r(other);
  EXPECT_EQ(r.header().rank, 3u);
}

TEST_F(StreamFileTest, NewerMinorVersionAccepted) {
  const fs::path p = dir_ / "m.events";
  FileHeader fh;
  fh.minor = 7;
  StreamFileWriter(p, fh).close();
  StreamFileReader r(p);
  EXPECT_EQ(r.header().minor, 7);
  Chunk c;
  EXPECT_EQ(r.next(c), ReadResult::end);
}

TEST_F(StreamFileTest, OpenErrorsNameTheFile) {
  const auto message = [](const fs::path& p) {
    try {
      StreamFileReader r(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const fs::path missing = dir_ / "rank-00009.events";
  EXPECT_EQ(message(missing), missing.string() + ": cannot open: No such file or directory");

  const fs::path junk = dir_ / "junk.events";
  write_file(junk, std::vector<std::byte>(64, std::byte{'x'}));
  EXPECT_EQ(message(junk), junk.string() + ": not an Encore stream file (bad magic)");

  const fs::path tiny = dir_ / "tiny.events";
  write_file(tiny, std::vector<std::byte>(5));
  EXPECT_NE(message(tiny).find("truncated file header (5 of 32 bytes)"), std::string::npos);
}

TEST_F(StreamFileTest, WriterErrorMessageSaysNoSpace) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    StreamFileWriter w("/dev/full", FileHeader{});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full: write failed: No space left on device"),
              std::string::npos)
        << e.what();
    return;
  }
  FAIL() << "no error";
}

TEST_F(StreamFileTest, WriteFullyHandlesLargeBuffers) {
  const fs::path p = dir_ / "big";
  std::vector<std::byte> big(8 << 20, std::byte{7});
  StreamFileWriter w(p, FileHeader{});
  w.append(big);
  w.sync();
  w.close();
  EXPECT_EQ(fs::file_size(p), kFileHeaderSize + big.size());
  EXPECT_THROW(w.append(big), Error);  // closed
}

}  // namespace
}  // namespace encore
