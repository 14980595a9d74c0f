#include "direct_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "encore/error.hpp"

namespace encore::dump {

namespace {

// O_DIRECT's unit: offsets, lengths and buffer addresses are multiples of it. 4 KiB covers the
// usual logical block sizes (512 or 4096) and file system blocks; a device that wants more
// refuses the first write, and the writer goes on buffered.
constexpr std::size_t kBlock = 4096;
// The checksum is taken from the staged copy in pieces small enough to still be in L1.
constexpr std::size_t kHashPiece = 32 << 10;

}  // namespace

DirectWriter::DirectWriter(StreamFileWriter& file, std::size_t max_chunk, bool enabled)
    : file_(file),
      max_chunk_(max_chunk),
      capacity_((max_chunk + 2 * kBlock - 1) / kBlock * kBlock),
      enabled_(enabled) {
  if (!enabled_) return;
  do {
    fd_ = ::open(file_.path().c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  // Where the file system refuses (tmpfs), every chunk takes the buffered path.
}

DirectWriter::~DirectWriter() {
  if (fd_ >= 0) ::close(fd_);
  std::free(stage_);
}

bool DirectWriter::takes(std::size_t bytes) const noexcept {
  return fd_ >= 0 && file_.is_open() && bytes <= max_chunk_;
}

std::size_t DirectWriter::stage_partial_block(std::uint64_t block_start, std::uint64_t end) {
  if (stage_ == nullptr) {
    stage_ = static_cast<std::byte*>(std::aligned_alloc(kBlock, capacity_));
    if (stage_ == nullptr) throw Error(format_in(file_.path(), "no memory for direct writes"));
    end_ = ~std::uint64_t{0};
  }
  const auto partial = static_cast<std::size_t>(end - block_start);
  // After a direct append the block's bytes are still at the front; after a buffered one they
  // are read back (a direct read: the kernel writes the dirty page out first).
  if (partial == 0 || end == end_) return partial;
  ssize_t n;
  do {
    n = ::pread(fd_, stage_, kBlock, static_cast<off_t>(block_start));
  } while (n < 0 && errno == EINTR);
  if (n < 0) fail("read back failed", errno, block_start);
  if (static_cast<std::size_t>(n) != partial) fail("read back came up short", EIO, block_start);
  return partial;
}

std::size_t DirectWriter::append_raw(const ChunkHeader& fields, std::span<const std::byte> data) {
  const std::uint64_t end = file_.size();
  const std::uint64_t block_start = end / kBlock * kBlock;
  const std::size_t partial = stage_partial_block(block_start, end);
  std::byte header[kChunkHeaderSize];
  RawChunkHeader checksum;
  if (!checksum.start(fields, data.size(), header))
    throw Error(format_at(file_.path(), "chunk exceeds the 64 MiB chunk limit", end));
  std::byte* body = stage_ + partial + kChunkHeaderSize;
  for (std::size_t at = 0; at < data.size(); at += kHashPiece) {
    const std::size_t n = std::min(kHashPiece, data.size() - at);
    std::memcpy(body + at, data.data() + at, n);
    checksum.add({body + at, n});
  }
  checksum.finish(header);
  std::memcpy(stage_ + partial, header, kChunkHeaderSize);
  write_staged(block_start, partial, kChunkHeaderSize + data.size());
  return kChunkHeaderSize + data.size();
}

void DirectWriter::append(std::span<const std::byte> header, std::span<const std::byte> body) {
  const std::uint64_t end = file_.size();
  const std::uint64_t block_start = end / kBlock * kBlock;
  const std::size_t partial = stage_partial_block(block_start, end);
  std::memcpy(stage_ + partial, header.data(), header.size());
  if (!body.empty()) std::memcpy(stage_ + partial + header.size(), body.data(), body.size());
  write_staged(block_start, partial, header.size() + body.size());
}

void DirectWriter::write_staged(std::uint64_t block_start, std::size_t staged, std::size_t added) {
  const std::size_t total = staged + added;
  const std::size_t whole = total / kBlock * kBlock;
  std::size_t done = 0;
  while (done < whole) {
    const ssize_t n =
        ::pwrite(fd_, stage_ + done, whole - done, static_cast<off_t>(block_start + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && done == 0) {
      // The file system takes O_DIRECT opens but not these writes: buffered from now on.
      ::close(fd_);
      fd_ = -1;
      break;
    }
    if (n <= 0) fail("write failed", n < 0 ? errno : ENOSPC, block_start + done);
    done += static_cast<std::size_t>(n);
  }
  // The rest (the partial block, or everything if direct writes were refused) through the
  // ordinary descriptor, which is left at the stream's end.
  const int fd = file_.fd();
  if (::lseek(fd, static_cast<off_t>(block_start + done), SEEK_SET) < 0)
    fail("seek failed", errno, block_start + done);
  if (const int err = write_fully(fd, {stage_ + done, total - done}); err != 0)
    fail("write failed", err, block_start + done);
  direct_bytes_ += done;
  file_.note_appended(added);
  end_ = block_start + total;
  // The new partial block moves to the front for the next append.
  if (fd_ >= 0 && done < total) std::memmove(stage_, stage_ + done, total - done);
}

void DirectWriter::fail(const char* what, int err, std::uint64_t offset) {
  throw Error(format_at(file_.path(), std::string(what) + ": " + errno_text(err), offset));
}

}  // namespace encore::dump
