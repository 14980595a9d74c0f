#include "encore/chunk_codec.hpp"

#include <cstring>
#include <new>
#include <string>
#include <utility>

#include <zstd.h>

#include "encore/error.hpp"

namespace encore {

ChunkCompressor::ChunkCompressor() : ctx_(ZSTD_createCCtx()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
}
ChunkCompressor::~ChunkCompressor() { ZSTD_freeCCtx(ctx_); }
ChunkCompressor::ChunkCompressor(ChunkCompressor&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)),
      bound_buf_(std::move(other.bound_buf_)),
      bound_size_(std::exchange(other.bound_size_, 0)) {}
ChunkCompressor& ChunkCompressor::operator=(ChunkCompressor&& other) noexcept {
  std::swap(ctx_, other.ctx_);
  std::swap(bound_buf_, other.bound_buf_);
  std::swap(bound_size_, other.bound_size_);
  return *this;
}

FramedChunk ChunkCompressor::frame(const ChunkHeader& fields, std::span<const std::byte> raw,
                                   int zstd_level) {
  if (raw.size() > kMaxChunkBytes)
    throw Error("chunk of " + std::to_string(raw.size()) + " bytes exceeds the 64 MiB chunk limit");
  if (ctx_ == nullptr) throw Error("ChunkCompressor used after move");
  ChunkHeader h = fields;
  h.raw_size = static_cast<std::uint32_t>(raw.size());
  h.codec = Codec::raw;
  h.stored_size = h.raw_size;

  FramedChunk out;
  out.body = raw;
  if (zstd_level != kNoCompression && !raw.empty()) {
    const std::size_t bound = ZSTD_compressBound(raw.size());
    if (bound_size_ < bound) {
      bound_buf_.reset(new std::byte[bound]);  // default-initialised: no zero fill
      bound_size_ = bound;
    }
    const std::size_t n =
        ZSTD_compressCCtx(ctx_, bound_buf_.get(), bound, raw.data(), raw.size(), zstd_level);
    if (ZSTD_isError(n))
      throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    // Keep compressed bytes only if they save space; readers then never
    // need more than raw_size of input.
    if (n < raw.size()) {
      h.codec = Codec::zstd;
      h.stored_size = static_cast<std::uint32_t>(n);
      out.body = {bound_buf_.get(), n};
    }
  }
  h.checksum = 0;
  encode_header(h, out.header);
  h.checksum = chunk_checksum(out.header, out.body);
  encode_header(h, out.header);
  return out;
}

void ChunkCompressor::make_chunk(const ChunkHeader& fields, std::span<const std::byte> raw,
                                 int zstd_level, std::vector<std::byte>& out) {
  const FramedChunk f = frame(fields, raw, zstd_level);
  out.assign(f.header.begin(), f.header.end());
  out.insert(out.end(), f.body.begin(), f.body.end());
}

ChunkDecompressor::ChunkDecompressor() : ctx_(ZSTD_createDCtx()) {
  if (ctx_ == nullptr) throw std::bad_alloc();
}
ChunkDecompressor::~ChunkDecompressor() { ZSTD_freeDCtx(ctx_); }
ChunkDecompressor::ChunkDecompressor(ChunkDecompressor&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)) {}
ChunkDecompressor& ChunkDecompressor::operator=(ChunkDecompressor&& other) noexcept {
  std::swap(ctx_, other.ctx_);
  return *this;
}

void ChunkDecompressor::unpack(const ChunkHeader& h, std::span<const std::byte> stored,
                               ByteBuffer& raw_out) {
  if (stored.size() != h.stored_size) throw Error("stored bytes do not match the chunk header");
  if (h.raw_size > kMaxChunkBytes) throw Error("raw size exceeds the 64 MiB chunk limit");
  raw_out.clear();  // nothing to keep: a larger buffer is not copied into, nor zeroed
  raw_out.resize(h.raw_size);
  if (h.codec == Codec::raw) {
    if (h.raw_size != h.stored_size) throw Error("raw chunk with stored size != raw size");
    if (!stored.empty()) std::memcpy(raw_out.data(), stored.data(), stored.size());
    return;
  }
  if (h.codec != Codec::zstd) throw Error("unknown chunk codec");
  if (ctx_ == nullptr) throw Error("ChunkDecompressor used after move");
  // One-shot decompression writes straight into raw_out, bounded by raw_size.
  const std::size_t n =
      ZSTD_decompressDCtx(ctx_, raw_out.data(), raw_out.size(), stored.data(), stored.size());
  if (ZSTD_isError(n))
    throw Error(std::string("zstd decompression failed: ") + ZSTD_getErrorName(n));
  if (n != h.raw_size)
    throw Error("zstd data decompressed to " + std::to_string(n) + " bytes, header says " +
                std::to_string(h.raw_size));
}

std::vector<std::byte> make_chunk(const ChunkHeader& fields, std::span<const std::byte> raw,
                                  int zstd_level) {
  thread_local ChunkCompressor compressor;
  std::vector<std::byte> out;
  compressor.make_chunk(fields, raw, zstd_level, out);
  return out;
}

}  // namespace encore
