// Payload chunks appended past the page cache (DirectWriter) read back exactly as buffered ones
// would, whatever their sizes and however they mix with buffered appends (the trailer, the crash
// handler's raw chunks), and the file never holds a byte past its last chunk.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "direct_writer.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/chunk_codec.hpp"
#include "encore/stream_file.hpp"

namespace encore::dump {
namespace {

namespace fs = std::filesystem;

class DirectWriterTest : public TempDirTest {};

std::vector<std::byte> bytes_for(std::size_t i, std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<std::byte>((k * 7 + i * 31) % 251);
  return out;
}

// Whether this directory's file system takes an O_DIRECT write of one aligned block.
bool takes_direct_writes(const fs::path& dir) {
  const fs::path probe = dir / "probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  void* block = std::aligned_alloc(4096, 4096);
  const bool ok = ::write(fd, block, 4096) == 4096;
  std::free(block);
  ::close(fd);
  fs::remove(probe);
  return ok;
}

struct Appended {
  std::vector<std::vector<std::byte>> data;  // each chunk's raw bytes, in order
};

TEST_F(DirectWriterTest, ChunksOfAnySizeMixedWithBufferedOnesReadBack) {
  const fs::path path = dir_ / "rank-00000.payload";
  StreamFileWriter file(path, FileHeader{.kind = StreamKind::payload, .rank = 0});
  const std::size_t max_chunk = kChunkHeaderSize + (1u << 20);
  DirectWriter direct(file, max_chunk, true);
  Appended out;
  std::uint64_t seq = 0, first = 0;
  auto fields = [&](std::size_t n) {
    ChunkHeader h;
    h.kind = ChunkKind::payload;
    h.seq = seq++;
    h.first = first;
    first += n;
    return h;
  };
  // Sizes that end a chunk before, at and past block boundaries, and one that fills the
  // staging buffer; every third chunk goes out buffered, one compressed through append().
  const std::size_t sizes[] = {0,     1,   4000,     4032, 4096,  4095, 8191,
                               12345, 100, 1u << 20, 3,    70000, 4033};
  for (std::size_t i = 0; i < std::size(sizes); ++i) {
    std::vector<std::byte> data = bytes_for(i, sizes[i]);
    const ChunkHeader h = fields(data.size());
    ASSERT_TRUE(direct.takes(kChunkHeaderSize + data.size()));
    if (i % 3 == 2) {
      file.append(make_chunk(h, data, kNoCompression));
    } else if (i == 7) {
      std::vector<std::byte> chunk = make_chunk(h, data, 1);
      direct.append(std::span(chunk).first(kChunkHeaderSize),
                    std::span(chunk).subspan(kChunkHeaderSize));
    } else {
      EXPECT_EQ(direct.append_raw(h, data), kChunkHeaderSize + data.size());
    }
    out.data.push_back(std::move(data));
    // Nothing past the last chunk, at any point.
    ASSERT_EQ(fs::file_size(path), file.size()) << "after chunk " << i;
  }
  EXPECT_FALSE(direct.takes(max_chunk + 1));
  file.append(make_trailer(std::size(sizes)));
  file.close();
  EXPECT_EQ(direct.used(), takes_direct_writes(dir_));

  StreamFileReader reader(path);
  Chunk c;
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    ASSERT_EQ(reader.next(c), ReadResult::chunk)
        << "chunk " << i << ": " << reader.damage().message;
    ASSERT_EQ(c.header.raw_size, out.data[i].size()) << i;
    EXPECT_TRUE(std::equal(out.data[i].begin(), out.data[i].end(), c.data.data())) << i;
  }
  ASSERT_EQ(reader.next(c), ReadResult::chunk) << reader.damage().message;
  EXPECT_EQ(c.header.kind, ChunkKind::trailer);
  EXPECT_EQ(reader.next(c), ReadResult::end) << reader.damage().message;
}

TEST_F(DirectWriterTest, OffLeavesEveryChunkToTheBufferedPath) {
  StreamFileWriter file(dir_ / "p", FileHeader{.kind = StreamKind::payload});
  const DirectWriter direct(file, 1 << 20, false);
  EXPECT_FALSE(direct.takes(100));
  EXPECT_FALSE(direct.used());
}

}  // namespace
}  // namespace encore::dump
