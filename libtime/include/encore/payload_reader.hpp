// Streaming access to one rank's payload stream file (rank-NNNNN.payload): the bytes each
// recording thread received, addressed by (thread, offset in that thread's byte stream).
//
// A payload file holds chunks of several threads, interleaved in any order; the chunks of one
// thread come in order and `first` in their header is the offset of their first byte. Reads
// are forward-only per thread (the order in which events refer to their payloads), so the
// reader keeps one cursor per thread, each holding at most that thread's current chunk:
// memory stays at one chunk per thread whatever the trace length. A cursor walks the file
// reading only the headers of other threads' chunks.
//
// With read_ahead(), a thread of its own reads, checks and decompresses one thread's next chunk
// while the caller works on the current one (a replay: the other core is idle), so memory is
// two chunks for that thread. What callers see is the same, errors included: a chunk loaded
// ahead that the next read does not want, or that failed, is walked again as without it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "encore/byte_order.hpp"
#include "encore/stream_file.hpp"

namespace encore {

class RankPayloadReader {
 public:
  using Sink = std::function<void(std::span<const std::byte>)>;

  // Opens and validates the file header (magic, version, kind payload). Throws Error.
  explicit RankPayloadReader(const std::filesystem::path& payload_file);
  ~RankPayloadReader();
  RankPayloadReader(RankPayloadReader&&) noexcept;
  RankPayloadReader& operator=(RankPayloadReader&&) noexcept;
  RankPayloadReader(const RankPayloadReader&) = delete;
  RankPayloadReader& operator=(const RankPayloadReader&) = delete;

  // Delivers bytes [offset, offset + n) of `thread`'s payload stream to `sink`, in one or
  // more pieces, in order. Per thread, offsets must not decrease from one call to the next
  // (bytes in between are skipped). Throws Error naming the file, the chunk and the file
  // offset when the bytes are not in the file: the stream is cut or damaged before them, or
  // the request goes backwards. Bytes already given to the sink stay given.
  void read(std::uint16_t thread, std::uint64_t offset, std::uint64_t n, const Sink& sink);

  // The same without a copy when the bytes lie in one chunk: true and `out` a view of them,
  // valid until the next read of this thread; false (nothing consumed) when they span
  // chunks, for read() to gather. Throws Error as read() does.
  bool view(std::uint16_t thread, std::uint64_t offset, std::uint64_t n,
            std::span<const std::byte>& out) {
    return view_hot(thread, offset, n, out) || view_slow(thread, offset, n, out);
  }
  // Inline and never throwing: the next bytes of the chunk the last view came from (a
  // replayed receive); false when view() has more to do.
  bool view_hot(std::uint16_t thread, std::uint64_t offset, std::uint64_t n,
                std::span<const std::byte>& out) noexcept {
    if (hot_.data && thread == hot_.thread && offset >= *hot_.low && offset >= hot_.first &&
        offset <= hot_.end && n <= hot_.end - offset && n > 0) {
      *hot_.low = offset;
      out = {hot_.data + (offset - hot_.first), static_cast<std::size_t>(n)};
      return true;
    }
    return false;
  }

  // The same, into a vector (replaced). For small reads.
  std::vector<std::byte> read(std::uint16_t thread, std::uint64_t offset, std::uint64_t n);

  // Loads `thread`'s chunks one ahead on a thread of this reader's, starting with its first
  // chunk now. Call once, before reading; the thread is joined by the destructor.
  void read_ahead(std::uint16_t thread = 0);
  // Time the calling thread spent loading chunks or waiting for one loaded ahead: what reading
  // the payload cost the reads.
  std::chrono::nanoseconds load_time() const noexcept { return load_time_; }

  const FileHeader& header() const noexcept { return header_; }
  // Byte order of the host that wrote the payloads (the receiving rank's).
  ByteOrder byte_order() const noexcept { return header_.byte_order; }
  const std::string& path() const noexcept { return path_; }

 private:
  struct Cursor;
  struct Ahead;
  Cursor& cursor(std::uint16_t thread);
  // Loads the thread's next chunk; false at a clean end of file. Throws Error on damage.
  bool next_chunk(Cursor& c, std::uint16_t thread, std::uint64_t wanted);
  // The chunk loaded ahead, if it is the one `wanted` needs; false: load it the usual way.
  bool take_ahead(Cursor& c, std::uint64_t wanted, bool& ended);
  void stop_ahead() noexcept;
  // Checks that a read at `offset` does not go backwards and moves the cursor's floor.
  Cursor& start_read(std::uint16_t thread, std::uint64_t offset);
  [[noreturn]] void missing(const Cursor& c, std::uint16_t thread, std::uint64_t offset,
                            std::uint64_t want_end) const;
  [[noreturn]] void backwards(const Cursor& c, std::uint16_t thread, std::uint64_t offset) const;

  bool view_slow(std::uint16_t thread, std::uint64_t offset, std::uint64_t n,
                 std::span<const std::byte>& out);

  // The chunk the last view came from; data is null when there is none (a chunk was loaded
  // since). `low` is that thread's cursor floor, which the fast path moves as read() does.
  struct Hot {
    const std::byte* data = nullptr;
    std::uint16_t thread = 0;
    std::uint64_t first = 0, end = 0;
    std::uint64_t* low = nullptr;
  };
  Hot hot_;
  std::string path_;
  FileHeader header_;
  int fd_ = -1;                                   // for peeking at chunk headers
  std::vector<std::unique_ptr<Cursor>> cursors_;  // by thread index
  std::unique_ptr<Ahead> ahead_;                  // the read-ahead thread, if started
  std::chrono::nanoseconds load_time_{0};
};

}  // namespace encore
