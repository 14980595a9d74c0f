// Writes one rank's events (and payload) streams from decoded Events: what the replay profile,
// the predictor and hand-made test traces use. Single-threaded; events of several threads may
// be interleaved (each thread gets its own chunk sequence, as libdump writes them). The
// encoding is the one decode_event() reads (encore/event_format.hpp); libdump's hot path has
// its own generated encoder and does not go through here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <span>
#include <vector>

#include "encore/byte_order.hpp"
#include "encore/chunk_codec.hpp"
#include "encore/event.hpp"
#include "encore/stream_file.hpp"
#include "encore/varint.hpp"

namespace encore {

// Appends the body of `e` (head, rc, arguments, extras; not the three timing fields) to `out`.
// Payload extras are written from e.payloads (slot, datatype, count, bytes; offsets are
// implied by the order). Throws Error if an argument cannot be encoded (e.g. a function id
// outside the table).
void encode_event_body(const Event& e, std::vector<std::byte>& out);

struct RankWriterOptions {
  ByteOrder payload_order = host_byte_order();
  int level = 3;                       // zstd level; 0 stores chunks raw
  std::size_t chunk_events = 4096;     // events per chunk (at most)
  std::size_t chunk_bytes = 1u << 20;  // raw bytes per chunk (about)
};

class RankTraceWriter {
 public:
  // Creates (truncates) the two stream files of `rank`. Throws Error.
  RankTraceWriter(const std::filesystem::path& events_file,
                  const std::filesystem::path& payload_file, std::uint32_t rank,
                  RankWriterOptions options = {});
  ~RankTraceWriter();  // closes without a trailer if close() was not called (a cut stream)
  RankTraceWriter(const RankTraceWriter&) = delete;
  RankTraceWriter& operator=(const RankTraceWriter&) = delete;

  // Appends `e` to the stream of thread e.thread. Uses e.start_ns, e.end_ns (corrected, must
  // not go backwards within a thread) and e.overhead_ns; e.index is ignored (events are
  // numbered in write order per thread). `payload` holds the bytes of e.payloads, in order
  // (their total must equal e.payload_bytes()). Throws Error.
  void write(const Event& e, std::span<const std::byte> payload = {});

  // The same for a body already encoded (encode_event_body()'s format, e.g. a recorded body
  // passed through copy_body_new_extras()) that refers to no payload bytes. Throws Error.
  void write_body(std::uint16_t thread, std::uint64_t start_ns, std::uint64_t end_ns,
                  std::uint64_t overhead_ns, std::span<const std::byte> body);

  // Many such bodies of one thread at once (the replay profile collects them per call and
  // writes them in batches): `bodies` holds them back to back, events[i].bytes each. The
  // chunks come out as if they had been written one by one. Throws Error.
  struct BodyTimes {
    std::uint64_t start_ns;
    std::uint64_t end_ns;
    std::uint64_t overhead_ns;
    std::size_t bytes;
  };
  void write_bodies(std::uint16_t thread, std::span<const BodyTimes> events,
                    std::span<const std::byte> bodies);

  // Writes the events and payload held so far as chunks, so that a process killed later
  // leaves them readable (the replay profile calls it about once a second). Throws Error.
  void flush();

  // Writes pending chunks and the trailers (end status 0 = complete, as libdump's) and closes.
  void close(std::uint8_t end_status = 0);

  std::uint64_t events() const noexcept { return events_; }
  std::uint64_t payload_bytes() const noexcept { return payload_bytes_; }

 private:
  // An append-only byte column written through a pointer: a few bytes per event, without
  // std::vector's general insert. Storage grows geometrically and is kept after clear().
  class Column {
   public:
    [[gnu::always_inline]] void put_uvarint(std::uint64_t v) {
      room(kMaxVarintBytes);
      size_ += encode_uvarint(v, buf_.data() + size_);
    }
    [[gnu::always_inline]] void put(std::span<const std::byte> bytes) {
      room(bytes.size());
      if (!bytes.empty()) std::memcpy(buf_.data() + size_, bytes.data(), bytes.size());
      size_ += bytes.size();
    }
    // Room for n bytes written through the pointer, then used() with where writing ended.
    std::byte* tail(std::size_t n) {
      room(n);
      return buf_.data() + size_;
    }
    void used(const std::byte* end) noexcept {
      size_ = static_cast<std::size_t>(end - buf_.data());
    }
    std::span<const std::byte> view() const noexcept { return {buf_.data(), size_}; }
    std::size_t size() const noexcept { return size_; }
    void clear() noexcept { size_ = 0; }

   private:
    [[gnu::always_inline]] void room(std::size_t n) {
      if (buf_.size() - size_ < n) grow(n);
    }
    void grow(std::size_t n) { buf_.resize(std::max(2 * buf_.size(), size_ + n + 256)); }
    std::vector<std::byte> buf_;  // its size is the capacity; size_ bytes are in use
    std::size_t size_ = 0;
  };

  struct ThreadState {
    std::uint64_t events = 0;         // written so far (also the next event's index)
    std::uint64_t payload = 0;        // bytes written so far
    std::uint64_t overhead_ns = 0;    // sum of overhead_ns
    std::uint64_t end_ns = 0;         // corrected end of the last event
    std::uint64_t chunk_first = 0;    // index of the first event in the open chunk
    std::uint64_t chunk_base = 0;     // end_ns before the open chunk
    std::uint64_t chunk_payload = 0;  // payload offset before the open chunk
    std::uint64_t payload_first = 0;  // payload offset of the open payload chunk
    std::uint64_t event_seq = 0;
    std::uint64_t payload_seq = 0;
    Column gap, duration, overhead, body;
    std::vector<std::byte> payload_buf;
  };
  ThreadState& thread_state(std::uint16_t thread, std::uint64_t start_ns, std::uint64_t end_ns);
  void put_times(ThreadState& t, std::uint64_t start_ns, std::uint64_t end_ns,
                 std::uint64_t overhead_ns);
  void end_event(std::uint16_t thread, ThreadState& t);
  void flush_events(std::uint16_t thread, ThreadState& t);
  void flush_payload(std::uint16_t thread, ThreadState& t);

  StreamFileWriter events_file_;
  StreamFileWriter payload_file_;
  RankWriterOptions options_;
  ChunkCompressor compressor_;
  std::vector<std::byte> chunk_buf_, assembly_, encoded_;
  std::map<std::uint16_t, ThreadState> threads_;
  ThreadState* last_ = nullptr;  // the thread written last (map nodes do not move)
  std::uint16_t last_thread_ = 0;
  std::uint64_t event_chunks_ = 0;
  std::uint64_t payload_chunks_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t payload_bytes_ = 0;
  bool closed_ = false;
};

}  // namespace encore
