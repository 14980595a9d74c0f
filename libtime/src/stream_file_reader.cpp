#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "encore/error.hpp"
#include "encore/stream_file.hpp"
#include "encore/trace_dir.hpp"

namespace encore {

std::string_view to_string(DamageKind kind) noexcept {
  switch (kind) {
    case DamageKind::truncated:
      return "truncated";
    case DamageKind::corrupt:
      return "corrupt";
    case DamageKind::sequence_gap:
      return "sequence gap";
  }
  return "unknown";
}

StreamFileReader::StreamFileReader(const std::filesystem::path& path) : path_(path.string()) {
  do {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw Error(format_in(path_, "cannot open: " + errno_text(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw Error(format_in(path_, "cannot stat: " + errno_text(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error(format_in(path_, "not a regular file"));
  }
  // The size is fixed at open: a file still being written is read up to here.
  file_size_ = static_cast<std::uint64_t>(st.st_size);
  try {
    std::byte bytes[kFileHeaderSize];
    const std::size_t got = read_at(bytes, kFileHeaderSize, 0);
    if (got < kFileHeaderSize)
      throw Error(format_in(path_, "truncated file header (" + std::to_string(got) + " of " +
                                       std::to_string(kFileHeaderSize) + " bytes)"));
    header_ = decode_file_header(bytes, path_);
    // A file named for a rank must hold that rank's stream: swapped or misnamed files would
    // give one rank's calls and payloads to another without any other sign.
    if (const auto named = parse_rank_file_name(path.filename().string());
        named && named->rank != header_.rank)
      throw Error(format_in(path_, "header says rank " + std::to_string(header_.rank) +
                                       ", expected rank " + std::to_string(named->rank)));
  } catch (...) {
    ::close(fd_);
    throw;
  }
  offset_ = kFileHeaderSize;
  stats_.file_bytes = kFileHeaderSize;
}

StreamFileReader::~StreamFileReader() {
  if (fd_ >= 0) ::close(fd_);
}

StreamFileReader::StreamFileReader(StreamFileReader&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      header_(other.header_),
      file_size_(other.file_size_),
      offset_(other.offset_),
      state_(other.state_),
      saw_trailer_(other.saw_trailer_),
      data_chunks_(other.data_chunks_),
      threads_(std::move(other.threads_)),
      stored_(std::move(other.stored_)),
      decompressor_(std::move(other.decompressor_)),
      damage_(std::move(other.damage_)),
      stats_(other.stats_) {}

StreamFileReader& StreamFileReader::operator=(StreamFileReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    header_ = other.header_;
    file_size_ = other.file_size_;
    offset_ = other.offset_;
    state_ = other.state_;
    saw_trailer_ = other.saw_trailer_;
    data_chunks_ = other.data_chunks_;
    threads_ = std::move(other.threads_);
    stored_ = std::move(other.stored_);
    decompressor_ = std::move(other.decompressor_);
    damage_ = std::move(other.damage_);
    stats_ = other.stats_;
  }
  return *this;
}

// Reads up to n bytes; fewer only at end of file. I/O errors are not damage
// (the file may be fine), so they throw.
std::size_t StreamFileReader::read_at(std::byte* buf, std::size_t n, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, buf + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(format_at(path_, "read failed: " + errno_text(errno), offset + got));
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

ReadResult StreamFileReader::report(DamageKind kind, std::string_view what) {
  state_ = State::damaged;
  damage_.kind = kind;
  damage_.offset = offset_;
  damage_.chunk_index = stats_.chunks;
  damage_.message = format_at(
      path_, "chunk " + std::to_string(stats_.chunks) + ": " + std::string(what), offset_);
  return ReadResult::damage;
}

ReadResult StreamFileReader::next(Chunk& out) {
  // Raw chunks are read straight into the caller's buffer; zstd ones into ours.
  const ReadResult r = advance(out.header, &out.data, true);
  if (r != ReadResult::chunk) return r;
  out.index = stats_.chunks;
  out.offset = offset_;
  if (out.header.codec == Codec::zstd) {
    try {
      decompressor_.unpack(out.header, stored_, out.data);
    } catch (const Error& e) {
      return report(DamageKind::corrupt, e.what());
    }
  }
  stats_.raw_bytes += out.header.raw_size;
  stats_.entries += out.header.count;
  stats_.chunks += 1;
  stats_.file_bytes += kChunkHeaderSize + out.header.stored_size;
  offset_ += kChunkHeaderSize + out.header.stored_size;
  return ReadResult::chunk;
}

ReadResult StreamFileReader::skip(ChunkHeader& out, bool verify_checksum) {
  const ReadResult r = advance(out, nullptr, verify_checksum);
  if (r != ReadResult::chunk) return r;
  stats_.raw_bytes += out.raw_size;
  stats_.entries += out.count;
  stats_.chunks += 1;
  stats_.file_bytes += kChunkHeaderSize + out.stored_size;
  offset_ += kChunkHeaderSize + out.stored_size;
  return ReadResult::chunk;
}

// Everything short of decompression. On success the chunk has passed every
// check and sequence state is updated; offset_/stats_ are left to the caller
// (next() can still find damage while decompressing).
ReadResult StreamFileReader::advance(ChunkHeader& h, ByteBuffer* body, bool read_body) {
  if (state_ == State::ended) return ReadResult::end;
  if (state_ == State::damaged) return ReadResult::damage;
  if (offset_ == file_size_) {
    state_ = State::ended;
    return ReadResult::end;
  }
  if (saw_trailer_) return report(DamageKind::corrupt, "data after the end-of-stream trailer");

  const std::uint64_t left = file_size_ - offset_;
  if (left < kChunkHeaderSize)
    return report(DamageKind::truncated, "file ends inside the chunk header (" +
                                             std::to_string(left) + " of " +
                                             std::to_string(kChunkHeaderSize) + " bytes)");
  std::byte raw_header[kChunkHeaderSize];
  if (read_at(raw_header, kChunkHeaderSize, offset_) < kChunkHeaderSize)
    return report(DamageKind::truncated, "file shrank while being read");
  if (!parse_header(raw_header, h)) return report(DamageKind::corrupt, "bad chunk magic");
  if (const std::string_view why = header_problem(h); !why.empty())
    return report(DamageKind::corrupt, why);
  const bool is_trailer = h.kind == ChunkKind::trailer;
  if (!is_trailer && static_cast<std::uint8_t>(h.kind) != static_cast<std::uint8_t>(header_.kind))
    return report(DamageKind::corrupt, std::string(to_string(h.kind)) + " chunk in a " +
                                           std::string(to_string(header_.kind)) + " stream");
  if (left - kChunkHeaderSize < h.stored_size)
    return report(DamageKind::truncated, "file ends inside the chunk body (" +
                                             std::to_string(left - kChunkHeaderSize) + " of " +
                                             std::to_string(h.stored_size) + " bytes)");

  if (read_body) {
    // Sizes were bounded by header_problem, so this allocation is too.
    ByteBuffer& buf = (body != nullptr && h.codec == Codec::raw) ? *body : stored_;
    buf.clear();  // as ChunkDecompressor::unpack: growth neither copies nor zeroes
    buf.resize(h.stored_size);
    if (read_at(buf.data(), h.stored_size, offset_ + kChunkHeaderSize) < h.stored_size)
      return report(DamageKind::truncated, "file shrank while being read");
    if (chunk_checksum(raw_header, buf) != h.checksum)
      return report(DamageKind::corrupt, "checksum mismatch");
  }

  if (is_trailer) {
    if (h.first != data_chunks_)
      return report(DamageKind::sequence_gap, "trailer counts " + std::to_string(h.first) +
                                                  " data chunks, the file holds " +
                                                  std::to_string(data_chunks_));
    saw_trailer_ = true;
  } else {
    if (h.thread >= threads_.size()) threads_.resize(std::size_t{h.thread} + 1);
    ThreadState& t = threads_[h.thread];
    if (h.seq != t.next_seq)
      return report(DamageKind::sequence_gap, "thread " + std::to_string(h.thread) +
                                                  " expected seq " + std::to_string(t.next_seq) +
                                                  ", found " + std::to_string(h.seq));
    if (h.first != t.next_first)
      return report(DamageKind::corrupt, "thread " + std::to_string(h.thread) + " expected first " +
                                             std::to_string(t.next_first) + ", found " +
                                             std::to_string(h.first));
    t.next_seq += 1;
    // Events chunks number events; payload chunks number bytes.
    t.next_first += h.kind == ChunkKind::events ? h.count : h.raw_size;
    data_chunks_ += 1;
  }
  return ReadResult::chunk;
}

}  // namespace encore
