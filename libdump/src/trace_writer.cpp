#include "trace_writer.hpp"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <utility>

#include "light_body.hpp"
#include "segment_records.hpp"

#include "encore/clock.hpp"
#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/stream_repack.hpp"
#include "encore/varint.hpp"

namespace encore::dump {

TraceWriter::TraceWriter(const std::filesystem::path& events, const std::filesystem::path& payload,
                         std::uint32_t rank, ByteOrder payload_order, int event_level,
                         int payload_level, bool compress_after, std::uint64_t flush_interval_ns,
                         SegmentPool& pool, const Clock& clock)
    : rank_(rank),
      events_(
          events,
          FileHeader{.kind = StreamKind::events, .byte_order = host_byte_order(), .rank = rank}),
      payload_(payload,
               FileHeader{.kind = StreamKind::payload, .byte_order = payload_order, .rank = rank}),
      event_level_(event_level),
      payload_level_(payload_level),
      compress_after_(compress_after),
      flush_interval_ns_(flush_interval_ns),
      pool_(pool),
      clock_(clock) {}

TraceWriter::~TraceWriter() {
  stop_ = true;
  notify();
  if (thread_.joinable()) thread_.join();
}

TraceWriter::StreamState& TraceWriter::add_stream(ThreadStream* stream) {
  std::lock_guard lock(streams_mu_);
  streams_.push_back({stream, TimeEncoder(clock_)});
  return streams_.back();
}

void TraceWriter::start() {
  last_tail_flush_ = monotonic_ns();
  thread_ = std::thread([this] { run(); });
  // Named here, not by the thread itself, so it has its name by the time MPI_Init returns:
  // apart from its rank in perf, top -H and ps -L.
  pthread_setname_np(thread_.native_handle(), "encore-writer");
}

void TraceWriter::notify() {
  {
    std::lock_guard lock(wake_mu_);
    wake_flag_ = true;
  }
  wake_.notify_one();
}

void TraceWriter::run() {
  // Tails are flushed twice per interval so no committed event waits longer than one.
  const auto period = std::chrono::nanoseconds(flush_interval_ns_ / 2);
  while (!stop_) {
    {
      std::unique_lock lock(wake_mu_);
      wake_.wait_for(lock, period, [this] { return wake_flag_ || stop_.load(); });
      wake_flag_ = false;
    }
    if (stop_) break;
    const std::uint64_t now = monotonic_ns();
    const bool tails = now - last_tail_flush_ >= flush_interval_ns_ / 2;
    if (tails) last_tail_flush_ = now;
    bool want_payload = false;
    bool want_events = false;
    {
      std::lock_guard io(io_mu_);
      drain(tails);
      want_payload = std::exchange(want_payload_, false);
      want_events = std::exchange(want_events_, false);
    }
    // Outside io_mu_: populating a segment takes a while, and a crash handler that finds
    // io_mu_ taken writes nothing.
    if (want_payload) pool_.prepare(StreamKind::payload);
    if (want_events) pool_.prepare(StreamKind::events);
  }
}

void TraceWriter::flush_now() {
  std::lock_guard io(io_mu_);
  drain(true);
}

void TraceWriter::drain(bool tails) {
  std::vector<StreamState*> states;
  {
    std::lock_guard lock(streams_mu_);
    for (auto& st : streams_) states.push_back(&st);
  }
  for (StreamState* st : states) {
    // The stream's thread keeps out of its events while they are drained (help), from the
    // snapshot on: it would otherwise encode events past the snapshot's mark.
    std::lock_guard help(help_mu_);
    auto p = st->stream->pending();
    // A thread about to want a segment finds one ready (run() prepares it): it neither
    // allocates nor populates one in its call.
    want_payload_ = want_payload_ || p.wants_more(StreamKind::payload);
    want_events_ = want_events_ || p.wants_more(StreamKind::events);
    // Payload first: an event chunk on disk should not refer to payload that is not (and the
    // events only up to the snapshot's mark, see Pending::current_events_upto).
    for (Segment* s : p.sealed_payload) {
      drain_segment(*st, s, s->published());
      pool_.release(s);
    }
    if (tails && p.current_payload)
      drain_segment(*st, p.current_payload, p.current_payload->published());
    for (Segment* s : p.sealed_events) {
      drain_segment(*st, s, s->published());
      pool_.release(s);
    }
    if (tails && p.current_events) drain_segment(*st, p.current_events, p.current_events_upto);
  }
}

void TraceWriter::help(StreamState& st, Segment* current) noexcept {
  std::unique_lock lock(help_mu_, std::try_to_lock);
  if (!lock.owns_lock() || current == nullptr) return;
  if (help_.segment() != current) {
    // Another segment's chunk is under way (the writer finishes it), or the stream's encoder
    // is not yet at this segment's flushed mark (a sealed one waits for the writer).
    const Mark from = current->flushed();
    if (help_.segment() != nullptr || from.events != st.times_events) return;
    if (current->published().times <= from.times) return;
    try {
      help_.begin(*current, from, st.times);  // allocates its buffers the first time
    } catch (...) {
      help_.reset();  // out of memory: the writer does it all
      return;
    }
  }
  help_.add(current->published().times, kHelpEvents);
}

namespace {

// The interleaved layout a crash handler writes: a prefix (the layout and the times' length),
// each event's three timing varints, then the bodies. It cannot allocate, so the chunk is
// never gathered in memory: `emit` gets it piece by piece, the times encoded by `enc` (a copy
// for the passes that only measure or hash it) and the light calls' bodies on the stack.
template <class Emit>
void times_pieces(const Segment& s, const Mark& from, const Mark& to, TimeEncoder& enc, Emit emit) {
  for_each_record(s.times_data() + from.times, s.times_data() + to.times, [&](const auto& r) {
    std::byte tmp[3][kMaxVarintBytes];
    std::byte* cursor[3] = {tmp[0], tmp[1], tmp[2]};
    enc.encode(r, cursor);
    for (unsigned i = 0; i < 3; ++i)
      emit(std::span<const std::byte>(tmp[i], static_cast<std::size_t>(cursor[i] - tmp[i])));
  });
}
template <class Emit>
void interleaved_pieces(const Segment& s, const Mark& from, const Mark& to, TimeEncoder& enc,
                        std::size_t times_bytes, Emit emit) {
  std::byte prefix[1 + kMaxVarintBytes];
  prefix[0] = std::byte{event_format::kInterleavedTimes};
  emit(std::span<const std::byte>(prefix, 1 + encode_uvarint(times_bytes, prefix + 1)));
  times_pieces(s, from, to, enc, emit);
  for_each_body(s, from, to, emit);
}

// Gathers small pieces into writes of a few KiB (a crash handler's chunk is mostly varints).
class FdWriter {
 public:
  explicit FdWriter(int fd) noexcept : fd_(fd) {}
  void put(std::span<const std::byte> piece) noexcept {
    if (used_ + piece.size() > sizeof buf_) flush();
    if (piece.size() > sizeof buf_) {
      if (ok_) ok_ = write_fully(fd_, piece) == 0;
      return;
    }
    std::memcpy(buf_ + used_, piece.data(), piece.size());
    used_ += piece.size();
  }
  void flush() noexcept {
    if (ok_ && used_) ok_ = write_fully(fd_, {buf_, used_}) == 0;
    used_ = 0;
  }

 private:
  int fd_;
  bool ok_ = true;
  std::size_t used_ = 0;
  std::byte buf_[4096];
};

}  // namespace

void TraceWriter::drain_segment(StreamState& st, Segment* s, const Mark& upto) {
  Mark& done = s->flushed();
  if (upto.bytes <= done.bytes && upto.times <= done.times) {
    // A released segment must not stay the helped one (nothing was encoded ahead here).
    if (s->kind() == StreamKind::events && help_.segment() == s) help_.reset();
    return;
  }
  std::span<const std::byte> raw(s->data() + done.bytes, upto.bytes - done.bytes);
  const std::uint64_t base = st.times.end_ns();
  if (s->kind() == StreamKind::events) {
    // The chunk its thread has begun (help), or one built here in one go.
    EventsChunk& chunk = help_.segment() == s ? help_ : own_;
    if (&chunk == &own_) own_.begin(*s, done, st.times);
    raw = chunk.finish(upto, assembly_);
    st.times = chunk.encoder();
    st.times_events = upto.events;
    chunk.reset();
  }
  ChunkHeader h;
  h.thread = st.stream->index();
  if (s->kind() == StreamKind::events) {
    h.kind = ChunkKind::events;
    h.seq = st.event_seq++;
    h.first = done.events;
    h.base = base;
    h.count = static_cast<std::uint32_t>(upto.events - done.events);
    h.aux = done.payload;
    write_chunk(events_, h, raw, compress_after_ ? kNoCompression : event_level_);
  } else {
    h.kind = ChunkKind::payload;
    h.seq = st.payload_seq++;
    h.first = done.payload;
    // Received data is often floating point, which zstd shrinks by 10-25% at a few hundred
    // MB/s: when a chunk barely compresses, store the next ones raw (at memory speed) and
    // try again every kRawRun chunks.
    constexpr unsigned kRawRun = 8;
    const bool try_compress = st.payload_raw_left == 0 && !compress_after_;
    const std::size_t stored = write_chunk(payload_, h, raw, try_compress ? payload_level_ : 0);
    if (!try_compress)
      --st.payload_raw_left;
    else if (!compress_after_ && stored > raw.size() - raw.size() / 8)
      st.payload_raw_left = kRawRun;
  }
  done = upto;
}

std::size_t TraceWriter::write_chunk(StreamFileWriter& file, const ChunkHeader& h,
                                     std::span<const std::byte> raw, int level) {
  if (!failure_.empty()) return 0;  // after a write error the data can no longer land anywhere
  try {
    const FramedChunk f = compressor_.frame(h, raw, level);
    file.append(f.header, f.body);
    ++stats_.chunks;
    stats_.raw_bytes += raw.size();
    stats_.stored_bytes += f.size();
    return f.size();
  } catch (const Error& e) {
    fail(e.what());
    return 0;
  }
}

void TraceWriter::fail(const std::string& message) {
  failure_ = message;
  std::fprintf(stderr, "encore: rank %u: capture stopped, its trace ends here: %s\n", rank_,
               message.c_str());
}

void TraceWriter::finish(EndStatus status) {
  if (finished_) return;
  stop_ = true;
  notify();
  if (thread_.joinable()) thread_.join();
  std::lock_guard io(io_mu_);
  std::vector<std::byte> body;
  {
    std::lock_guard lock(streams_mu_);
    for (auto& st : streams_) st.stream->seal_all();
  }
  drain(true);  // first: the overhead sums are the writer's
  finished_ = true;
  {
    std::lock_guard lock(streams_mu_);
    ByteWriter w(body);
    w.put_uvarint(static_cast<std::uint8_t>(status));
    w.put_uvarint(streams_.size());
    for (auto& st : streams_) {
      w.put_uvarint(st.stream->events_total());
      w.put_uvarint(st.stream->payload_bytes());
      w.put_uvarint(st.times.overhead_ns());
      w.put_uvarint(st.stream->total_stall_ns());
    }
  }
  if (!failure_.empty()) return;
  try {
    std::uint64_t event_chunks = 0;
    std::uint64_t payload_chunks = 0;
    for (auto& st : streams_) {
      event_chunks += st.event_seq;
      payload_chunks += st.payload_seq;
    }
    const auto ev_trailer = make_trailer(event_chunks, body);
    events_.append(ev_trailer);
    const auto pl_trailer = make_trailer(payload_chunks, body);
    payload_.append(pl_trailer);
    stats_.stored_bytes += ev_trailer.size() + pl_trailer.size();
    events_.close();
    payload_.close();
  } catch (const Error& e) {
    fail(e.what());
    return;
  }
  if (compress_after_ && status == EndStatus::complete) compress_files();
}

void TraceWriter::compress_files() {
  // Each stream is replaced only once its compressed copy is whole; a failure leaves it raw,
  // which every reader takes as well.
  const std::pair<const std::string*, int> files[] = {{&events_.path(), event_level_},
                                                      {&payload_.path(), payload_level_}};
  for (const auto& [path, level] : files) {
    try {
      const RepackStats r = repack_stream(*path, level);
      const std::uint64_t saved =
          r.bytes_before > r.bytes_after ? r.bytes_before - r.bytes_after : 0;
      stats_.stored_bytes -= std::min(saved, stats_.stored_bytes);
    } catch (const Error& e) {
      std::fprintf(stderr, "encore: rank %u: stream left uncompressed: %s\n", rank_, e.what());
    }
  }
}

void TraceWriter::emergency_flush() noexcept {
  // Only if the writer thread is not in the middle of a write: interleaving would corrupt.
  if (!io_mu_.try_lock()) return;
  for (auto& st : streams_) {
    // Sealed segments not drained yet, then the current ones, in stream order as in drain().
    const auto p = st.stream->pending();
    for (Segment* s : p.sealed_payload) emergency_write(st, s, s->published());
    if (p.current_payload) emergency_write(st, p.current_payload, p.current_payload->published());
    for (Segment* s : p.sealed_events) emergency_write(st, s, s->published());
    if (p.current_events) emergency_write(st, p.current_events, p.current_events_upto);
  }
  io_mu_.unlock();
}

void TraceWriter::emergency_write(StreamState& st, Segment* s, const Mark& upto) noexcept {
  Mark& done = s->flushed();
  if (upto.bytes <= done.bytes && upto.times <= done.times) return;
  const bool ev = s->kind() == StreamKind::events;
  ChunkHeader h;
  h.thread = st.stream->index();
  h.kind = ev ? ChunkKind::events : ChunkKind::payload;
  h.seq = ev ? st.event_seq++ : st.payload_seq++;
  h.first = ev ? done.events : done.payload;
  h.base = ev ? st.times.end_ns() : 0;
  h.count = ev ? static_cast<std::uint32_t>(upto.events - done.events) : 0;
  h.aux = ev ? done.payload : 0;
  const int fd = ev ? events_.fd() : payload_.fd();
  std::byte header[kChunkHeaderSize];
  if (!ev) {
    const std::span<const std::byte> data(s->data() + done.bytes, upto.bytes - done.bytes);
    if (!write_raw_chunk_header(h, data, header)) return;
    if (write_fully(fd, {header, kChunkHeaderSize}) == 0) write_fully(fd, data);
    done = upto;
    return;
  }
  // Three passes over copies of the time encoder (the times' length, the chunk's, its
  // checksum), then the write, which moves the stream's encoder on.
  std::size_t times_bytes = 0;
  {
    TimeEncoder enc = st.times;
    times_pieces(*s, done, upto, enc,
                 [&](std::span<const std::byte> piece) { times_bytes += piece.size(); });
  }
  std::size_t size = 0;
  {
    TimeEncoder enc = st.times;
    interleaved_pieces(*s, done, upto, enc, times_bytes,
                       [&](std::span<const std::byte> piece) { size += piece.size(); });
  }
  RawChunkHeader checksum;
  if (!checksum.start(h, size, header)) return;
  {
    TimeEncoder enc = st.times;
    interleaved_pieces(*s, done, upto, enc, times_bytes,
                       [&](std::span<const std::byte> piece) { checksum.add(piece); });
  }
  checksum.finish(header);
  if (write_fully(fd, {header, kChunkHeaderSize}) == 0) {
    FdWriter out(fd);
    interleaved_pieces(*s, done, upto, st.times, times_bytes,
                       [&](std::span<const std::byte> piece) { out.put(piece); });
    out.flush();
  }
  done = upto;
}

std::uint64_t TraceWriter::overhead_ns() {
  std::lock_guard io(io_mu_);
  std::lock_guard lock(streams_mu_);
  std::uint64_t sum = 0;
  for (const auto& st : streams_) sum += st.times.overhead_ns();
  return sum;
}

WriterStats TraceWriter::stats() const {
  std::lock_guard io(io_mu_);
  return stats_;
}

}  // namespace encore::dump
