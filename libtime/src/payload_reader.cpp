#include "encore/payload_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "encore/background_worker.hpp"
#include "encore/error.hpp"

namespace encore {

namespace {

// Loads `thread`'s first chunk that ends after byte `wanted` of its stream into `into`, walking
// `r` from where it is and reading only the headers of the chunks it passes; `stream_end`
// follows the thread's chunks seen. False at a clean end of file. Throws Error on damage.
bool load_chunk(StreamFileReader& r, int fd, std::uint16_t thread, std::uint64_t wanted,
                Chunk& into, std::uint64_t& stream_end) {
  for (;;) {
    // Peek at the next header to decide whether its body is worth reading. Anything odd
    // (short or bad header) goes through next(), which classifies the damage.
    bool body = true;
    const std::uint64_t at = r.offset();
    if (at < r.file_size() && r.file_size() - at >= kChunkHeaderSize) {
      std::byte raw[kChunkHeaderSize];
      ssize_t got;
      do {
        got = ::pread(fd, raw, kChunkHeaderSize, static_cast<off_t>(at));
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
      res = r.next(into);
      h = into.header;
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
    stream_end = h.first + h.raw_size;
    if (body) return true;
  }
}

}  // namespace

struct RankPayloadReader::Cursor {
  explicit Cursor(const std::string& path) : reader(path) {}
  StreamFileReader reader;  // walks the whole file; reads bodies of this thread's chunks only
  Chunk chunk;              // the thread's current chunk, if loaded
  bool loaded = false;
  std::uint64_t low = 0;         // reads must not start before this offset
  std::uint64_t stream_end = 0;  // end of the thread's bytes seen so far
};

// The read-ahead thread and the chunk it loads for one cursor. From post() to take(), the
// cursor's reader, `chunk`, `stream_end` and `result` are the worker's; otherwise the
// caller's. A job the worker has not started when the caller needs it (the thread got no CPU:
// a busy machine) is taken back and done by the caller, which then never waits for a thread
// that is not running.
struct RankPayloadReader::Ahead {
  enum class Result : std::uint8_t { loaded, ended, failed };
  Cursor* cursor = nullptr;
  std::uint16_t thread = 0;
  int fd = -1;
  std::uint64_t wanted = 0;  // the job: the first chunk ending after this byte
  Chunk chunk;
  std::uint64_t stream_end = 0;
  Result result = Result::failed;
  BackgroundWorker worker;  // last: stopped before the job's fields go

  void load() noexcept {
    result = Result::failed;
    try {
      result = load_chunk(cursor->reader, fd, thread, wanted, chunk, stream_end) ? Result::loaded
                                                                                 : Result::ended;
    } catch (...) {
      // Walked again by the caller, who meets the error where a read without read-ahead does.
    }
  }
  // The worker is idle (never posted, or taken): the job's fields are the caller's.
  void schedule(std::uint64_t from) {
    wanted = from;
    stream_end = cursor->stream_end;
    worker.post();
  }
};

RankPayloadReader::RankPayloadReader(const std::filesystem::path& payload_file)
    : path_(payload_file.string()) {
  // Validates the header (and reports a missing file) with the usual messages.
  StreamFileReader probe(payload_file);
  header_ = probe.header();
  if (header_.kind != StreamKind::payload)
    throw Error(format_in(
        path_, "not a payload stream (stream kind " + std::string(to_string(header_.kind)) + ")"));
  do {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw Error(format_in(path_, "cannot open: " + errno_text(errno)));
}

RankPayloadReader::~RankPayloadReader() {
  stop_ahead();
  if (fd_ >= 0) ::close(fd_);
}

RankPayloadReader::RankPayloadReader(RankPayloadReader&& other) noexcept
    : hot_(std::exchange(other.hot_, {})),
      path_(std::move(other.path_)),
      header_(other.header_),
      fd_(std::exchange(other.fd_, -1)),
      cursors_(std::move(other.cursors_)),
      ahead_(std::move(other.ahead_)),
      load_time_(other.load_time_) {}

RankPayloadReader& RankPayloadReader::operator=(RankPayloadReader&& other) noexcept {
  if (this != &other) {
    stop_ahead();
    if (fd_ >= 0) ::close(fd_);
    hot_ = std::exchange(other.hot_, {});
    path_ = std::move(other.path_);
    header_ = other.header_;
    fd_ = std::exchange(other.fd_, -1);
    cursors_ = std::move(other.cursors_);
    ahead_ = std::move(other.ahead_);
    load_time_ = other.load_time_;
  }
  return *this;
}

void RankPayloadReader::read_ahead(std::uint16_t thread) {
  if (ahead_) return;
  auto a = std::make_unique<Ahead>();
  a->cursor = &cursor(thread);
  a->thread = thread;
  a->fd = fd_;
  if (!a->worker.start("encore-ahead", [p = a.get()] { p->load(); }))
    return;  // no thread: reads load their chunks themselves
  ahead_ = std::move(a);
  ahead_->schedule(ahead_->cursor->stream_end);
}

void RankPayloadReader::stop_ahead() noexcept {
  if (!ahead_) return;
  ahead_->worker.stop();
  ahead_.reset();
}

RankPayloadReader::Cursor& RankPayloadReader::cursor(std::uint16_t thread) {
  if (thread >= cursors_.size()) cursors_.resize(std::size_t{thread} + 1);
  auto& c = cursors_[thread];
  if (!c) c = std::make_unique<Cursor>(path_);
  return *c;
}

bool RankPayloadReader::take_ahead(Cursor& c, std::uint64_t wanted, bool& ended) {
  if (ahead_->worker.take() != BackgroundWorker::Taken::done) return false;  // done here
  switch (ahead_->result) {
    case Ahead::Result::ended:
      // No chunk of the thread ends after the current one, so none after `wanted` either.
      c.stream_end = ahead_->stream_end;
      ended = true;
      return false;
    case Ahead::Result::failed:
      // Walked again from the start, so that the read meets the same error at the same place as
      // without read-ahead (or none: the chunk that failed may be one the read skips unread).
      c.reader = StreamFileReader(path_);
      c.stream_end = 0;
      return false;
    case Ahead::Result::loaded:
      c.stream_end = ahead_->stream_end;
      if (c.stream_end <= wanted) return false;  // the read skips it: on from there
      std::swap(c.chunk, ahead_->chunk);
      return true;
  }
  return false;
}

bool RankPayloadReader::next_chunk(Cursor& c, std::uint16_t thread, std::uint64_t wanted) {
  const auto t0 = std::chrono::steady_clock::now();
  c.loaded = false;
  hot_ = {};  // the chunk buffer is about to change
  const bool mine = ahead_ && ahead_->cursor == &c;
  bool ended = false;
  bool ok = mine && take_ahead(c, wanted, ended);
  if (!ok && !ended) ok = load_chunk(c.reader, fd_, thread, wanted, c.chunk, c.stream_end);
  c.loaded = ok;
  if (ok && mine) ahead_->schedule(c.stream_end);
  load_time_ += std::chrono::steady_clock::now() - t0;
  return ok;
}

void RankPayloadReader::backwards(const Cursor& c, std::uint16_t thread,
                                  std::uint64_t offset) const {
  throw Error(format_in(path_, "payload of thread " + std::to_string(thread) + ": read at byte " +
                                   std::to_string(offset) + " goes back before byte " +
                                   std::to_string(c.low) + " (reads are forward-only)"));
}

void RankPayloadReader::missing(const Cursor& c, std::uint16_t thread, std::uint64_t offset,
                                std::uint64_t want_end) const {
  const std::string what = "chunk " + std::to_string(c.reader.chunk_index()) +
                           ": payload of thread " + std::to_string(thread) + " ends at byte " +
                           std::to_string(c.stream_end) + ", bytes " + std::to_string(offset) +
                           ".." + std::to_string(want_end) + " are not in the file" +
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
