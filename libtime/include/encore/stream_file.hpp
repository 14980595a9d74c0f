// Stream files on disk: a FileHeader followed by chunks. The writer appends
// chunk bytes; the reader yields chunks one at a time with bounded memory and
// reports the first damage it meets (truncation, corruption, missing chunks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "encore/byte_buffer.hpp"
#include "encore/chunk.hpp"
#include "encore/chunk_codec.hpp"
#include "encore/stream_header.hpp"

namespace encore {

// Writes every byte, retrying short writes and EINTR. Returns 0 or an errno
// value. Async-signal-safe: crash handlers use it to dump the last buffer.
int write_fully(int fd, std::span<const std::byte> bytes) noexcept;

class StreamFileWriter {
 public:
  StreamFileWriter() = default;
  // Creates or truncates `path` and writes the file header. Throws Error.
  StreamFileWriter(const std::filesystem::path& path, const FileHeader& header);
  // Closes without reporting errors: call close() to learn about them.
  ~StreamFileWriter();
  StreamFileWriter(StreamFileWriter&& other) noexcept;
  StreamFileWriter& operator=(StreamFileWriter&& other) noexcept;
  StreamFileWriter(const StreamFileWriter&) = delete;
  StreamFileWriter& operator=(const StreamFileWriter&) = delete;

  // Appends bytes (normally whole chunks). Throws Error naming the file, the
  // offset and the system's reason ("No space left on device"). After a
  // failure the file may end in a partial chunk, so every later call throws.
  void append(std::span<const std::byte> bytes);
  // Appends two pieces with one system call where it can (a chunk's header and body).
  void append(std::span<const std::byte> first, std::span<const std::byte> second);
  // Flushes file data to stable storage (fdatasync). Throws Error.
  void sync();
  // Closes the file; throws Error if the kernel reports a deferred failure.
  void close();

  bool is_open() const noexcept { return fd_ >= 0; }
  int fd() const noexcept { return fd_; }
  std::uint64_t size() const noexcept { return size_; }  // bytes written, header included
  const std::string& path() const noexcept { return path_; }

 private:
  [[noreturn]] void fail(std::string_view what, int err);

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string path_;
  std::string failure_;  // set once a write failed
};

enum class DamageKind : std::uint8_t {
  truncated,     // the file ends inside a chunk header or body
  corrupt,       // bad magic, sizes, checksum, kind, or undecodable data
  sequence_gap,  // a chunk is missing: seq or the trailer's count does not follow on
};
std::string_view to_string(DamageKind kind) noexcept;

struct Damage {
  DamageKind kind = DamageKind::corrupt;
  std::uint64_t offset = 0;       // file offset of the damaged chunk's header
  std::uint64_t chunk_index = 0;  // its position in the file, from 0
  std::string message;            // "<path>: chunk <i>: <what> at offset <n>"
};

enum class ReadResult : std::uint8_t { chunk, end, damage };

// One chunk as yielded by StreamFileReader::next. Pass the same object on
// every call: its buffer is reused, so memory stays at one chunk.
struct Chunk {
  ChunkHeader header;
  std::uint64_t index = 0;   // position in the file, from 0
  std::uint64_t offset = 0;  // file offset of its header
  ByteBuffer data;           // raw (decompressed) contents; bytes past them are not zeroed
};

struct StreamStats {
  std::uint64_t chunks = 0;        // chunks accepted, trailer included
  std::uint64_t file_bytes = 0;    // header + chunk bytes accepted
  std::uint64_t stored_bytes = 0;  // chunk bodies as stored
  std::uint64_t raw_bytes = 0;     // chunk bodies decompressed
  std::uint64_t entries = 0;       // sum of chunk counts (events or payload entries)
};

class StreamFileReader {
 public:
  // Opens and validates the file header. Throws Error for a missing or
  // unreadable file, bad magic, or an unsupported major version.
  explicit StreamFileReader(const std::filesystem::path& path);
  ~StreamFileReader();
  StreamFileReader(StreamFileReader&& other) noexcept;
  StreamFileReader& operator=(StreamFileReader&& other) noexcept;
  StreamFileReader(const StreamFileReader&) = delete;
  StreamFileReader& operator=(const StreamFileReader&) = delete;

  // Reads, verifies and decompresses the next chunk. Once it returns end or
  // damage it keeps returning the same. Throws Error only for I/O errors.
  ReadResult next(Chunk& out);
  // Walks to the next chunk reading only its header, unless verify_checksum
  // (then the body is read and hashed, still not decompressed). Reports the
  // same damage as next() except what only decompression can find.
  ReadResult skip(ChunkHeader& out, bool verify_checksum = false);

  const FileHeader& header() const noexcept { return header_; }
  const std::string& path() const noexcept { return path_; }
  std::uint64_t file_size() const noexcept { return file_size_; }
  std::uint64_t offset() const noexcept { return offset_; }             // next chunk's header
  std::uint64_t chunk_index() const noexcept { return stats_.chunks; }  // next chunk's index
  bool saw_trailer() const noexcept { return saw_trailer_; }            // the writer closed cleanly
  const Damage& damage() const noexcept { return damage_; }  // valid after ReadResult::damage
  const StreamStats& stats() const noexcept { return stats_; }

 private:
  struct ThreadState {
    std::uint64_t next_seq = 0;
    std::uint64_t next_first = 0;
  };
  enum class State : std::uint8_t { reading, ended, damaged };

  ReadResult advance(ChunkHeader& h, ByteBuffer* body, bool read_body);
  ReadResult report(DamageKind kind, std::string_view what);
  std::size_t read_at(std::byte* buf, std::size_t n, std::uint64_t offset);

  int fd_ = -1;
  std::string path_;
  FileHeader header_;
  std::uint64_t file_size_ = 0;
  std::uint64_t offset_ = 0;
  State state_ = State::reading;
  bool saw_trailer_ = false;
  std::uint64_t data_chunks_ = 0;
  std::vector<ThreadState> threads_;
  ByteBuffer stored_;  // compressed body, reused
  ChunkDecompressor decompressor_;
  Damage damage_;
  StreamStats stats_;
};

}  // namespace encore
