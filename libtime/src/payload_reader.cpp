#include "encore/payload_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "encore/error.hpp"

namespace encore {

struct RankPayloadReader::Cursor {
  explicit Cursor(const std::string& path) : reader(path) {}
  StreamFileReader reader;  // walks the whole file; reads bodies of this thread's chunks only
  Chunk chunk;              // the thread's current chunk, if loaded
  bool loaded = false;
  std::uint64_t low = 0;         // reads must not start before this offset
  std::uint64_t stream_end = 0;  // end of the thread's bytes seen so far
};

RankPayloadReader::RankPayloadReader(const std::filesystem::path& payload_file)
    : path_(payload_file.string()) {
  // Validates the header (and reports a missing file) with the usual messages.
  StreamFileReader probe(payload_file);
  header_ = probe.header();
  if (header_.kind != StreamKind::payload)
    throw Error(format_in(path_, "not a payload stream (stream kind " +
                                     std::string(to_string(header_.kind)) + ")"));
  do {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw Error(format_in(path_, "cannot open: " + errno_text(errno)));
}

RankPayloadReader::~RankPayloadReader() {
  if (fd_ >= 0) ::close(fd_);
}

RankPayloadReader::RankPayloadReader(RankPayloadReader&& other) noexcept
    : hot_(std::exchange(other.hot_, {})),
      path_(std::move(other.path_)),
      header_(other.header_),
      fd_(std::exchange(other.fd_, -1)),
      cursors_(std::move(other.cursors_)) {}

RankPayloadReader& RankPayloadReader::operator=(RankPayloadReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    hot_ = std::exchange(other.hot_, {});
    path_ = std::move(other.path_);
    header_ = other.header_;
    fd_ = std::exchange(other.fd_, -1);
    cursors_ = std::move(other.cursors_);
  }
  return *this;
}

RankPayloadReader::Cursor& RankPayloadReader::cursor(std::uint16_t thread) {
  if (thread >= cursors_.size()) cursors_.resize(std::size_t{thread} + 1);
  auto& c = cursors_[thread];
  if (!c) c = std::make_unique<Cursor>(path_);
  return *c;
}

bool RankPayloadReader::next_chunk(Cursor& c, std::uint16_t thread, std::uint64_t wanted) {
  StreamFileReader& r = c.reader;
  c.loaded = false;
  hot_ = {};  // the chunk buffer is about to change
  for (;;) {
    // Peek at the next header to decide whether its body is worth reading. Anything odd
    // (short or bad header) goes through next(), which classifies the damage.
    bool body = true;
    const std::uint64_t at = r.offset();
    if (at < r.file_size() && r.file_size() - at >= kChunkHeaderSize) {
      std::byte raw[kChunkHeaderSize];
      ssize_t got;
      do {
        got = ::pread(fd_, raw, kChunkHeaderSize, static_cast<off_t>(at));
      } while (got < 0 && errno == EINTR);
      ChunkHeader h;
      if (got == static_cast<ssize_t>(kChunkHeaderSize) && parse_header(raw, h) &&
          header_problem(h).empty()) {
        const bool mine = h.kind == ChunkKind::payload && h.thread == thread;
        body = mine && h.first + h.raw_size > wanted;
      }
    }
    ReadResult res;
    ChunkHeader h;
    if (body) {
      res = r.next(c.chunk);
      h = c.chunk.header;
    } else {
      res = r.skip(h, /*verify_checksum=*/false);
    }
    switch (res) {
      case ReadResult::end:
        return false;
      case ReadResult::damage:
        throw Error(r.damage().message);
      case ReadResult::chunk:
        break;
    }
    if (h.kind != ChunkKind::payload || h.thread != thread) continue;
    c.stream_end = h.first + h.raw_size;
    if (body) {
      c.loaded = true;
      return true;
    }
  }
}

void RankPayloadReader::backwards(const Cursor& c, std::uint16_t thread,
                                  std::uint64_t offset) const {
  throw Error(format_in(path_, "payload of thread " + std::to_string(thread) + ": read at byte " +
                                   std::to_string(offset) + " goes back before byte " +
                                   std::to_string(c.low) + " (reads are forward-only)"));
}

void RankPayloadReader::missing(const Cursor& c, std::uint16_t thread, std::uint64_t offset,
                                std::uint64_t want_end) const {
  const std::string what =
      "chunk " + std::to_string(c.reader.chunk_index()) + ": payload of thread " +
      std::to_string(thread) + " ends at byte " + std::to_string(c.stream_end) + ", bytes " +
      std::to_string(offset) + ".." + std::to_string(want_end) + " are not in the file" +
      (c.reader.saw_trailer() ? "" : " (stream cut short)");
  throw Error::at(path_, what, c.reader.offset());
}

RankPayloadReader::Cursor& RankPayloadReader::start_read(std::uint16_t thread,
                                                         std::uint64_t offset) {
  Cursor& c = cursor(thread);
  if (offset < c.low) backwards(c, thread, offset);
  c.low = offset;
  return c;
}

void RankPayloadReader::read(std::uint16_t thread, std::uint64_t offset, std::uint64_t n,
                             const Sink& sink) {
  if (n == 0) return;
  Cursor& c = start_read(thread, offset);
  const std::uint64_t want_end = offset + n;
  while (offset < want_end) {
    if (c.loaded) {
      const std::uint64_t first = c.chunk.header.first;
      const std::uint64_t end = first + c.chunk.data.size();
      if (offset < first) backwards(c, thread, offset);
      if (offset < end) {
        const std::uint64_t k = std::min(end, want_end) - offset;
        sink(std::span<const std::byte>(c.chunk.data).subspan(offset - first, k));
        offset += k;
        continue;
      }
    }
    if (!next_chunk(c, thread, offset)) missing(c, thread, offset, want_end);
  }
}

bool RankPayloadReader::view_slow(std::uint16_t thread, std::uint64_t offset, std::uint64_t n,
                                  std::span<const std::byte>& out) {
  if (n == 0) {
    out = {};
    return true;
  }
  Cursor& c = start_read(thread, offset);
  for (;;) {
    if (c.loaded) {
      const std::uint64_t first = c.chunk.header.first;
      const std::uint64_t end = first + c.chunk.data.size();
      if (offset < first) backwards(c, thread, offset);
      if (offset < end) {
        if (end - offset < n) return false;
        out = std::span<const std::byte>(c.chunk.data).subspan(offset - first, n);
        hot_ = {c.chunk.data.data(), thread, first, end, &c.low};
        return true;
      }
    }
    if (!next_chunk(c, thread, offset)) missing(c, thread, offset, offset + n);
  }
}

std::vector<std::byte> RankPayloadReader::read(std::uint16_t thread, std::uint64_t offset,
                                               std::uint64_t n) {
  std::vector<std::byte> out;
  read(thread, offset, n, [&](std::span<const std::byte> piece) {
    out.insert(out.end(), piece.begin(), piece.end());
  });
  return out;
}

}  // namespace encore
