#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"
#include "encore/payload_reader.hpp"
#include "encore/stream_file.hpp"

namespace encore {
namespace {

namespace fs = std::filesystem;

// Every case runs without and with read-ahead: callers see the same bytes and errors.
class PayloadReaderTest : public TempDirTest, public ::testing::WithParamInterface<bool> {
 protected:
  RankPayloadReader open(const fs::path& path) {
    RankPayloadReader r(path);
    if (GetParam()) r.read_ahead(0);
    return r;  // moved: the read-ahead thread's state goes with it
  }
};

// Byte k of thread t's payload stream.
std::byte expected(std::uint16_t t, std::uint64_t k) {
  return static_cast<std::byte>((k * 7 + std::uint64_t{t} * 101 + (k >> 8)) & 0xff);
}

struct Layout {
  std::vector<std::uint64_t> chunk_offsets;  // file offset of every chunk header
  std::uint64_t totals[2] = {0, 0};          // bytes per thread
  std::uint64_t size = 0;
};

// Chunks of threads 0 and 1 interleaved (0,0,1,0,1,1,0,...) of varying sizes, compressible
// and not, then a trailer.
Layout write_payload(const fs::path& path, ByteOrder order, bool trailer = true) {
  FileHeader fh;
  fh.kind = StreamKind::payload;
  fh.byte_order = order;
  fh.rank = 1;
  StreamFileWriter w(path, fh);
  ChunkCompressor comp;
  Layout out;
  const std::uint16_t threads[] = {0, 0, 1, 0, 1, 1, 0, 1};
  const std::size_t sizes[] = {100, 3000, 50, 1, 4096, 0, 777, 2000};
  std::uint64_t seq[2] = {0, 0};
  std::vector<std::byte> chunk;
  for (std::size_t i = 0; i < std::size(threads); ++i) {
    const std::uint16_t t = threads[i];
    std::vector<std::byte> raw(sizes[i]);
    for (std::size_t k = 0; k < raw.size(); ++k) raw[k] = expected(t, out.totals[t] + k);
    ChunkHeader h;
    h.kind = ChunkKind::payload;
    h.thread = t;
    h.seq = seq[t]++;
    h.first = out.totals[t];
    h.count = 1;
    comp.make_chunk(h, raw, i % 2 ? kNoCompression : kDefaultZstdLevel, chunk);
    out.chunk_offsets.push_back(w.size());
    w.append(chunk);
    out.totals[t] += raw.size();
  }
  if (trailer) {
    out.chunk_offsets.push_back(w.size());
    w.append(make_trailer(std::size(threads)));
  }
  out.size = w.size();
  w.close();
  return out;
}

void expect_bytes(const std::vector<std::byte>& got, std::uint16_t t, std::uint64_t offset) {
  for (std::size_t k = 0; k < got.size(); ++k)
    ASSERT_EQ(got[k], expected(t, offset + k)) << "thread " << t << " byte " << offset + k;
}

TEST_P(PayloadReaderTest, ReadsTwoInterleavedThreadsAcrossChunks) {
  const auto path = dir_ / "rank-00001.payload";
  const Layout l = write_payload(path, ByteOrder::big);
  RankPayloadReader r = open(path);
  EXPECT_EQ(r.byte_order(), ByteOrder::big);
  EXPECT_EQ(r.header().rank, 1u);
  // Thread 1 first, although its chunks come after thread 0's in the file.
  expect_bytes(r.read(1, 0, 10), 1, 0);
  // Spans thread 0's first three chunks (100 + 3000 + 1 bytes).
  expect_bytes(r.read(0, 90, 3011), 0, 90);
  // Spans thread 1's chunks 0..1 and the empty chunk 2 to chunk 3.
  expect_bytes(r.read(1, 40, 4106 + 100), 1, 40);
  // The same offset again is fine (forward-only means "not before").
  expect_bytes(r.read(1, 40 + 4106, 5), 1, 40 + 4106);
  // Pieces arrive in order and add up.
  std::uint64_t pos = 3101;
  r.read(0, pos, 777, [&](std::span<const std::byte> piece) {
    for (std::size_t k = 0; k < piece.size(); ++k) ASSERT_EQ(piece[k], expected(0, pos + k));
    pos += piece.size();
  });
  EXPECT_EQ(pos, 3101u + 777u);
  EXPECT_EQ(l.totals[0], 3878u);
  // The very last byte of thread 1.
  expect_bytes(r.read(1, l.totals[1] - 1, 1), 1, l.totals[1] - 1);
  // Nothing to read is not an error, even past the end.
  EXPECT_TRUE(r.read(0, l.totals[0] + 10, 0).empty());
}

TEST_P(PayloadReaderTest, SkipsAheadWithoutReadingEverything) {
  const auto path = dir_ / "p.payload";
  const Layout l = write_payload(path, ByteOrder::little);
  RankPayloadReader r = open(path);
  EXPECT_EQ(r.byte_order(), ByteOrder::little);
  expect_bytes(r.read(0, 3500, 10), 0, 3500);
  expect_bytes(r.read(1, 5000, 100), 1, 5000);
  (void)l;
}

TEST_P(PayloadReaderTest, BytesPastTheEndAreAnError) {
  const auto path = dir_ / "p.payload";
  const Layout l = write_payload(path, ByteOrder::little);
  RankPayloadReader r = open(path);
  try {
    r.read(0, l.totals[0] - 5, 10, [](std::span<const std::byte>) {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path.string()), std::string::npos) << m;
    EXPECT_NE(m.find("chunk 9"), std::string::npos) << m;
    EXPECT_NE(m.find("at offset " + std::to_string(l.size)), std::string::npos) << m;
    EXPECT_NE(m.find("ends at byte " + std::to_string(l.totals[0])), std::string::npos) << m;
  }
}

TEST_P(PayloadReaderTest, BackwardsReadIsAnError) {
  const auto path = dir_ / "p.payload";
  write_payload(path, ByteOrder::little);
  RankPayloadReader r = open(path);
  expect_bytes(r.read(0, 3200, 4), 0, 3200);
  EXPECT_THROW(r.read(0, 10, 4), Error);
  // Other threads are independent.
  expect_bytes(r.read(1, 0, 4), 1, 0);
}

TEST_P(PayloadReaderTest, TruncatedFileDeliversWhatIsThereThenNamesTheCut) {
  const auto path = dir_ / "rank-00001.payload";
  const Layout l = write_payload(path, ByteOrder::little, /*trailer=*/false);
  // Cut in the middle of chunk 4 (thread 1's second chunk, 4096 bytes raw).
  const std::uint64_t cut = l.chunk_offsets[4] + kChunkHeaderSize + 100;
  fs::resize_file(path, cut);
  RankPayloadReader r = open(path);
  // Thread 0's chunks 0, 1, 3 are before the cut.
  expect_bytes(r.read(0, 0, 3101), 0, 0);
  // Thread 1: its first chunk is intact, its second is cut.
  expect_bytes(r.read(1, 0, 50), 1, 0);
  try {
    r.read(1, 50, 10, [](std::span<const std::byte>) {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path.string()), std::string::npos) << m;
    EXPECT_NE(m.find("chunk 4"), std::string::npos) << m;
    EXPECT_NE(m.find("at offset " + std::to_string(l.chunk_offsets[4])), std::string::npos) << m;
    EXPECT_NE(m.find("file ends inside the chunk body"), std::string::npos) << m;
  }
  // Thread 0's later chunk is behind the cut too.
  EXPECT_THROW(r.read(0, 3101, 1), Error);
}

TEST_P(PayloadReaderTest, CutAtAChunkBoundarySaysTheStreamEnds) {
  const auto path = dir_ / "p.payload";
  const Layout l = write_payload(path, ByteOrder::little, /*trailer=*/false);
  fs::resize_file(path, l.chunk_offsets[3]);  // chunks 0..2 only
  RankPayloadReader r = open(path);
  expect_bytes(r.read(0, 0, 3100), 0, 0);
  try {
    r.read(0, 3100, 1, [](std::span<const std::byte>) {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ends at byte 3100"), std::string::npos) << m;
    EXPECT_NE(m.find("cut short"), std::string::npos) << m;
  }
}

TEST_P(PayloadReaderTest, CorruptChunkIsReported) {
  const auto path = dir_ / "p.payload";
  const Layout l = write_payload(path, ByteOrder::little);
  {
    // Flip one byte in the body of chunk 1 (thread 0, raw codec).
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const long at = static_cast<long>(l.chunk_offsets[1] + kChunkHeaderSize + 10);
    std::fseek(f, at, SEEK_SET);
    const int c = std::fgetc(f);
    std::fseek(f, at, SEEK_SET);
    std::fputc(c ^ 0x10, f);
    std::fclose(f);
  }
  RankPayloadReader r = open(path);
  expect_bytes(r.read(0, 0, 100), 0, 0);
  try {
    r.read(0, 100, 1, [](std::span<const std::byte>) {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("chunk 1: checksum mismatch"), std::string::npos) << m;
    EXPECT_NE(m.find("at offset " + std::to_string(l.chunk_offsets[1])), std::string::npos) << m;
  }
}

TEST_P(PayloadReaderTest, RejectsEventsStreamsAndMissingFiles) {
  const auto ev = dir_ / "rank-00000.events";
  {
    FileHeader fh;
    fh.kind = StreamKind::events;
    StreamFileWriter w(ev, fh);
    w.close();
  }
  EXPECT_THROW(RankPayloadReader{ev}, Error);
  EXPECT_THROW(RankPayloadReader{dir_ / "missing.payload"}, Error);
}

TEST_P(PayloadReaderTest, ViewsBytesInOneChunkWithoutCopy) {
  const auto path = dir_ / "p.payload";
  const Layout l = write_payload(path, ByteOrder::little);
  RankPayloadReader r = open(path);
  std::span<const std::byte> v;
  // Inside thread 0's second chunk (bytes 100..3099): a view of the chunk.
  ASSERT_TRUE(r.view(0, 200, 50, v));
  ASSERT_EQ(v.size(), 50u);
  for (std::size_t k = 0; k < v.size(); ++k) ASSERT_EQ(v[k], expected(0, 200 + k));
  // Across the end of that chunk: false, and read() still gathers the same bytes.
  EXPECT_FALSE(r.view(0, 3090, 20, v));
  expect_bytes(r.read(0, 3090, 20), 0, 3090);
  // Nothing to view is a view of nothing; backwards and past the end are errors as in read().
  EXPECT_TRUE(r.view(1, 0, 0, v));
  EXPECT_TRUE(v.empty());
  EXPECT_THROW(r.view(0, 10, 4, v), Error);
  EXPECT_THROW(r.view(1, l.totals[1] + 1, 4, v), Error);
}

TEST_P(PayloadReaderTest, DamageInAChunkTheReadSkipsIsNotSeen) {
  // Thread 0's chunk 1 (bytes 100..3099, raw) damaged: a read that skips it reads its header
  // only, so it never sees the damage. Read-ahead loads that chunk whole and fails on it; the
  // read must still go on as without read-ahead.
  const auto path = dir_ / "p.payload";
  const Layout l = write_payload(path, ByteOrder::little);
  {
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const long at = static_cast<long>(l.chunk_offsets[1] + kChunkHeaderSize + 10);
    std::fseek(f, at, SEEK_SET);
    const int c = std::fgetc(f);
    std::fseek(f, at, SEEK_SET);
    std::fputc(c ^ 0x10, f);
    std::fclose(f);
  }
  RankPayloadReader r = open(path);
  expect_bytes(r.read(0, 0, 10), 0, 0);
  expect_bytes(r.read(0, 3200, 10), 0, 3200);  // in chunk 6, past chunks 1 and 3
  expect_bytes(r.read(1, 60, 100), 1, 60);
  // Thread 0's stream ends at byte 3878: the same message either way.
  try {
    r.read(0, l.totals[0], 1, [](std::span<const std::byte>) {});
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ends at byte 3878"), std::string::npos) << e.what();
  }
}

TEST_P(PayloadReaderTest, LoadTimeCountsTheReads) {
  const auto path = dir_ / "p.payload";
  write_payload(path, ByteOrder::little);
  RankPayloadReader r = open(path);
  EXPECT_EQ(r.load_time().count(), 0);
  expect_bytes(r.read(0, 0, 200), 0, 0);
  EXPECT_GT(r.load_time().count(), 0);
}

INSTANTIATE_TEST_SUITE_P(ReadAhead, PayloadReaderTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "Ahead" : "Plain";
                         });

}  // namespace
}  // namespace encore
