#include "trace_writer.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

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

void TraceWriter::add_stream(ThreadStream* stream) {
  std::lock_guard lock(streams_mu_);
  streams_.push_back({stream, TimeEncoder(clock_)});
}

void TraceWriter::start() {
  last_tail_flush_ = monotonic_ns();
  thread_ = std::thread([this] { run(); });
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
    std::lock_guard io(io_mu_);
    drain(tails);
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
    auto p = st->stream->pending();
    // Payload first: an event chunk on disk should not refer to payload that is not.
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
    if (tails && p.current_events)
      drain_segment(*st, p.current_events, p.current_events->published());
  }
}

namespace {

// The bodies of the events from `from` to `to`, as one or two pieces. A chunk that starts
// inside a run of repeated failed polls (format 1.2) starts with the run's template instead of
// the first repeat head, so that every chunk decodes on its own; the template is earlier in
// the same segment (a run never crosses segments).
struct BodyParts {
  std::span<const std::byte> part[2];
  const std::span<const std::byte>* begin() const noexcept { return part; }
  const std::span<const std::byte>* end() const noexcept { return part + 2; }
};
BodyParts event_bodies(const Segment& s, const Mark& from, const Mark& to,
                       std::uint64_t first_flags) noexcept {
  const std::byte* body = s.body_data();
  if (to.times > from.times && RawTimes::repeat(first_flags))
    return {{{body + RawTimes::repeat_at(first_flags), RawTimes::repeat_len(first_flags)},
             {body + from.bytes + 2, to.bytes - from.bytes - 2}}};
  return {{{body + from.bytes, to.bytes - from.bytes}, {}}};
}

// Calls `each` with every record from `p` to `end` in turn (a RawTimes, or a LeanTimes from
// the lean poll path: the first word, the flags, says which), each copied out whole first.
// Returns the first record's flags.
template <class Each>
std::uint64_t for_each_record(const std::byte* p, const std::byte* end, Each each) {
  std::uint64_t first = 0;
  for (bool at_first = true; p < end; at_first = false) {
    std::uint64_t flags;
    std::memcpy(&flags, p, sizeof flags);
    if (at_first) first = flags;
    if (flags & RawTimes::kLean) {
      LeanTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      each(r);
    } else {
      RawTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      each(r);
    }
  }
  return first;
}

// The normal layout: each timing field in its own column (see event_format.hpp), encoded here
// from the raw times the application thread left.
void split_events(const Segment& s, const Mark& from, const Mark& to, TimeEncoder& enc,
                  std::array<std::vector<std::byte>, 3>& columns, std::vector<std::byte>& out) {
  const std::size_t need = (to.events - from.events) * kMaxVarintBytes;
  // Columns only grow: resize() zero-fills, and what it fills is written before it is read
  // (about 20 instructions an event when they were sized to each chunk).
  for (auto& c : columns)
    if (c.size() < need) c.resize(need);
  std::byte* cursor[3] = {columns[0].data(), columns[1].data(), columns[2].data()};
  const std::uint64_t first =
      for_each_record(s.times_data() + from.times, s.times_data() + to.times,
                      [&](const auto& r) { enc.encode(r, cursor); });
  std::span<const std::byte> used[3];
  for (unsigned i = 0; i < 3; ++i)
    used[i] = {columns[i].data(), static_cast<std::size_t>(cursor[i] - columns[i].data())};
  out.clear();
  ByteWriter w(out);
  w.put_u8(event_format::kSplitTimes);
  for (const auto& c : used) w.put_uvarint(c.size());
  for (const auto& c : used) w.put_bytes(c);
  for (const auto& part : event_bodies(s, from, to, first)) w.put_bytes(part);
}

// The interleaved layout a crash handler writes, which cannot allocate: the raw times are
// encoded over themselves (an event's three varints are shorter than either record, and each
// record is copied out before they are written). Returns the encoded length.
std::size_t interleave_in_place(Segment& s, const Mark& from, const Mark& to, TimeEncoder& enc,
                                std::uint64_t& first) noexcept {
  static_assert(3 * kMaxVarintBytes <= sizeof(LeanTimes) && sizeof(LeanTimes) <= sizeof(RawTimes));
  std::byte* base = s.times_data() + from.times;
  std::byte* out = base;
  first = for_each_record(base, s.times_data() + to.times, [&](const auto& r) {
    std::byte tmp[3][kMaxVarintBytes];
    std::byte* cursor[3] = {tmp[0], tmp[1], tmp[2]};
    enc.encode(r, cursor);
    for (unsigned i = 0; i < 3; ++i) {
      const auto len = static_cast<std::size_t>(cursor[i] - tmp[i]);
      std::memcpy(out, tmp[i], len);
      out += len;
    }
  });
  return static_cast<std::size_t>(out - base);
}

}  // namespace

void TraceWriter::drain_segment(StreamState& st, Segment* s, const Mark& upto) {
  Mark& done = s->flushed();
  if (upto.bytes <= done.bytes && upto.times <= done.times) return;
  std::span<const std::byte> raw(s->data() + done.bytes, upto.bytes - done.bytes);
  const std::uint64_t base = st.times.end_ns();
  if (s->kind() == StreamKind::events) {
    split_events(*s, done, upto, st.times, columns_, assembly_);
    raw = assembly_;
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
    for (Segment* s : p.sealed_payload) emergency_write(st, s);
    if (p.current_payload) emergency_write(st, p.current_payload);
    for (Segment* s : p.sealed_events) emergency_write(st, s);
    if (p.current_events) emergency_write(st, p.current_events);
  }
  io_mu_.unlock();
}

void TraceWriter::emergency_write(StreamState& st, Segment* s) noexcept {
  const Mark upto = s->published();
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
  std::byte prefix[1 + kMaxVarintBytes];
  std::span<const std::byte> parts[4];
  std::size_t nparts = 1;
  if (ev) {
    std::uint64_t first = 0;
    const std::size_t times = interleave_in_place(*s, done, upto, st.times, first);
    prefix[0] = std::byte{event_format::kInterleavedTimes};
    parts[0] = {prefix, 1 + encode_uvarint(times, prefix + 1)};
    parts[1] = {s->times_data() + done.times, times};
    const BodyParts bodies = event_bodies(*s, done, upto, first);
    parts[2] = bodies.part[0];
    parts[3] = bodies.part[1];
    nparts = 4;
  } else {
    parts[0] = {s->data() + done.bytes, upto.bytes - done.bytes};
  }
  const std::span<const std::span<const std::byte>> pieces(parts, nparts);
  std::byte header[kChunkHeaderSize];
  if (!write_raw_chunk_header(h, pieces, header)) return;
  const int fd = ev ? events_.fd() : payload_.fd();
  if (write_fully(fd, {header, kChunkHeaderSize}) == 0) {
    for (const auto& piece : pieces) write_fully(fd, piece);
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
