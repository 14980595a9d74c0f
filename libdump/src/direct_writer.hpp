// Chunks appended to a stream file past the page cache (O_DIRECT). A buffered write() of a
// payload chunk costs the writer thread a copy into freshly allocated page-cache pages and the
// kernel's bookkeeping for each of them (on this machine 30 to 230 ms of CPU per 160 MB,
// taken from the rank whose core the writer shares), and later the writeback and the
// reclaiming. Here the writer copies the chunk once into an aligned staging buffer, taking its
// checksum from the copy while it is in cache, and the device reads it from there.
//
// O_DIRECT writes whole blocks at block-aligned offsets, while chunks end anywhere: the partial
// block at the stream's end goes out through the file's ordinary descriptor, and the next chunk
// rewrites that block, directly, with the staged bytes in front of its own. So the file never
// holds a byte past its last chunk, and a process killed at any point leaves what a buffered
// writer would: whole chunks, then at most a cut one. The ordinary descriptor's offset is kept
// at the stream's end, so buffered appends (the trailer, the crash handler's raw chunks) go on
// where the direct ones stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "encore/chunk.hpp"
#include "encore/stream_file.hpp"

namespace encore::dump {

class DirectWriter {
 public:
  // Staging room for chunks of up to `max_chunk` bytes, header included (larger ones are left to
  // the buffered path). Allocated at the first append.
  DirectWriter(StreamFileWriter& file, std::size_t max_chunk, bool enabled);
  ~DirectWriter();
  DirectWriter(const DirectWriter&) = delete;
  DirectWriter& operator=(const DirectWriter&) = delete;

  // Whether a chunk of `bytes` (header included) can go out directly: the option is on, the file
  // system took O_DIRECT, and it fits the staging buffer.
  bool takes(std::size_t bytes) const noexcept;
  // Appends a raw chunk of `data` (sizes, codec and checksum filled in from `fields` and the
  // data, the checksum taken from the staged copy). Returns the bytes appended.
  std::size_t append_raw(const ChunkHeader& fields, std::span<const std::byte> data);
  // Appends a chunk framed elsewhere (a compressed one).
  void append(std::span<const std::byte> header, std::span<const std::byte> body);

  // Whether chunks went out directly (false where the file system refused O_DIRECT, or after it
  // refused a write: then everything went on through the buffered path).
  bool used() const noexcept { return direct_bytes_ > 0; }

 private:
  // Puts the file's bytes from the last block boundary to its end at the front of the staging
  // buffer; returns how many.
  std::size_t stage_partial_block(std::uint64_t block_start, std::uint64_t end);
  void write_staged(std::uint64_t block_start, std::size_t staged, std::size_t added);
  [[noreturn]] void fail(const char* what, int err, std::uint64_t offset);

  StreamFileWriter& file_;
  std::size_t max_chunk_;
  std::size_t capacity_;  // staging bytes: a partial block and a chunk, a multiple of the block
  bool enabled_;
  int fd_ = -1;                 // the file opened again with O_DIRECT
  std::byte* stage_ = nullptr;  // block-aligned
  std::uint64_t end_ = 0;       // the file's end after the last direct append
  std::uint64_t direct_bytes_ = 0;
};

}  // namespace encore::dump
