// The writer thread: drains every application thread's segments into checksummed, compressed
// chunks of the rank's events and payload files, off the application's critical path. It
// flushes sealed segments as soon as they arrive and the unfinished tail of every current
// segment at least once per flush interval, so a killed process loses at most that much.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "events_chunk.hpp"
#include "raw_times.hpp"
#include "scratch_buffer.hpp"
#include "segment_pool.hpp"
#include "thread_stream.hpp"

#include "encore/chunk_codec.hpp"
#include "encore/stream_file.hpp"

namespace encore::dump {

// How a rank's capture ended, as written in the trailer of both stream files.
enum class EndStatus : std::uint8_t { complete = 0, aborted = 1, exited = 2, crashed = 3 };

struct WriterStats {
  std::uint64_t chunks = 0;
  std::uint64_t raw_bytes = 0;     // event and payload bytes before compression
  std::uint64_t stored_bytes = 0;  // on disk, chunk headers included
};

class TraceWriter {
 public:
  TraceWriter(const std::filesystem::path& events, const std::filesystem::path& payload,
              std::uint32_t rank, ByteOrder payload_order, int event_level, int payload_level,
              bool compress_after, std::uint64_t flush_interval_ns, SegmentPool& pool,
              const Clock& clock);
  ~TraceWriter();

  struct StreamState;
  // The stream's state here, for help().
  StreamState& add_stream(ThreadStream* stream);
  void start();
  // Wakes the thread to drain sealed segments now.
  void notify();
  // Drains everything on the calling thread (the writer thread keeps out meanwhile).
  void flush_now();
  // Seals and drains every stream, writes the trailers and closes the files; after a complete
  // run with compress_after, compresses them (repack_stream).
  void finish(EndStatus status);
  // Best effort from a signal handler: writes committed but unflushed bytes as raw chunks.
  void emergency_flush() noexcept;

  WriterStats stats() const;
  // Overhead charged so far to the events written (all of them after flush_now()).
  std::uint64_t overhead_ns();
  const std::string& failure() const noexcept { return failure_; }  // empty if all went well

  // Called by a stream's own thread while it waits (a run of failed polls): encodes up to
  // kHelpEvents of its published events ahead of this thread, into the chunk the writer
  // finishes, when no other stream's is under way and the writer is not draining. On a node
  // whose ranks busy-poll every core, the writer's work is taken from some rank whole, while
  // the waiting thread's only delays finding its message by a fraction of a poll.
  static constexpr std::uint64_t kHelpEvents = 8;
  void help(StreamState& st, Segment* current) noexcept;

  struct StreamState {
    ThreadStream* stream;
    TimeEncoder times;  // the thread's raw times become gap, duration, overhead here
    std::uint64_t event_seq = 0;
    std::uint64_t payload_seq = 0;
    unsigned payload_raw_left = 0;  // chunks to store raw before trying compression again
    // The stream's events `times` has encoded (under help_mu_): a helping thread may begin a
    // chunk of its current segment only if the segment is flushed up to there. (A segment's
    // address says nothing: the pool hands a released one out again.)
    std::uint64_t times_events = 0;
  };

 private:
  void run();
  void drain(bool tails);
  void drain_segment(StreamState& st, Segment* s, const Mark& upto);
  void emergency_write(StreamState& st, Segment* s, const Mark& upto) noexcept;
  // Returns the bytes written (0 if nothing was).
  std::size_t write_chunk(StreamFileWriter& file, const ChunkHeader& h,
                          std::span<const std::byte> raw, int level);
  void fail(const std::string& message);
  void compress_files();

  std::uint32_t rank_;
  StreamFileWriter events_;
  StreamFileWriter payload_;
  ChunkCompressor compressor_;
  ScratchBuffer assembly_;  // an events chunk: its timing columns put together, its bodies
  EventsChunk own_;         // a chunk the writer builds in one go
  // A chunk a helping thread began, of one segment of one stream at a time (help_mu_).
  EventsChunk help_;
  std::mutex help_mu_;
  int event_level_;
  int payload_level_;
  bool compress_after_;  // chunks go out raw now and are compressed in finish()
  std::uint64_t flush_interval_ns_;
  SegmentPool& pool_;
  const Clock& clock_;

  mutable std::mutex io_mu_;  // one drainer at a time
  std::mutex streams_mu_;
  std::deque<StreamState> streams_;  // stable addresses: drain() keeps pointers
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool wake_flag_ = false;
  // Set by drain() (under io_mu_), taken by run(), which prepares a segment of the kind.
  bool want_payload_ = false;
  bool want_events_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::uint64_t last_tail_flush_ = 0;
  WriterStats stats_;
  std::string failure_;
  bool finished_ = false;
};

}  // namespace encore::dump
