// Building chunks (compress + frame + checksum) and unpacking their bytes.
// Each class owns one zstd context, reused for every chunk it handles.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "encore/byte_buffer.hpp"
#include "encore/chunk.hpp"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace encore {

// Level 0 means "do not compress" (codec raw). Other values are zstd levels,
// negative ones included (zstd's fast modes).
inline constexpr int kNoCompression = 0;
inline constexpr int kDefaultZstdLevel = 3;

// A chunk as two pieces, so a raw body can go to disk without being copied behind its header.
struct FramedChunk {
  std::array<std::byte, kChunkHeaderSize> header;
  std::span<const std::byte> body;  // the raw input, or the compressor's buffer
  std::size_t size() const noexcept { return header.size() + body.size(); }
};

class ChunkCompressor {
 public:
  ChunkCompressor();
  ~ChunkCompressor();
  ChunkCompressor(ChunkCompressor&& other) noexcept;
  ChunkCompressor& operator=(ChunkCompressor&& other) noexcept;
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;

  // Replaces `out` with a complete chunk: header + stored bytes. Copies every
  // header field from `fields` except codec, sizes and checksum, which it
  // computes. Falls back to codec raw when zstd does not shrink the data.
  // Throws Error if raw is larger than kMaxChunkBytes or zstd fails.
  void make_chunk(const ChunkHeader& fields, std::span<const std::byte> raw, int zstd_level,
                  std::vector<std::byte>& out);
  // The same chunk without assembling it: `body` stays valid while `raw` does and until the
  // next call.
  FramedChunk frame(const ChunkHeader& fields, std::span<const std::byte> raw, int zstd_level);

 private:
  ZSTD_CCtx_s* ctx_ = nullptr;
  // Room for zstd's worst case, kept uninitialised from chunk to chunk: sizing `out` to the
  // bound instead zero-filled it for every chunk.
  std::unique_ptr<std::byte[]> bound_buf_;
  std::size_t bound_size_ = 0;
};

class ChunkDecompressor {
 public:
  ChunkDecompressor();
  ~ChunkDecompressor();
  ChunkDecompressor(ChunkDecompressor&& other) noexcept;
  ChunkDecompressor& operator=(ChunkDecompressor&& other) noexcept;
  ChunkDecompressor(const ChunkDecompressor&) = delete;
  ChunkDecompressor& operator=(const ChunkDecompressor&) = delete;

  // Fills `raw_out` (resized to h.raw_size, without zeroing) from a chunk's stored bytes.
  // Needs a header that passed header_problem(). Throws Error if the bytes
  // do not decompress to exactly raw_size bytes.
  void unpack(const ChunkHeader& h, std::span<const std::byte> stored, ByteBuffer& raw_out);

 private:
  ZSTD_DCtx_s* ctx_ = nullptr;
};

// Convenience form using a per-thread ChunkCompressor.
std::vector<std::byte> make_chunk(const ChunkHeader& fields, std::span<const std::byte> raw,
                                  int zstd_level = kDefaultZstdLevel);

}  // namespace encore
