// One rank's stream files from decoded Events, chunked per thread as libdump writes them.
#include "encore/rank_trace_writer.hpp"

#include <string>

#include "encore/error.hpp"
#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore {

RankTraceWriter::RankTraceWriter(const std::filesystem::path& events_file,
                                 const std::filesystem::path& payload_file, std::uint32_t rank,
                                 RankWriterOptions options)
    : events_file_(
          events_file,
          FileHeader{.kind = StreamKind::events, .byte_order = host_byte_order(), .rank = rank}),
      payload_file_(payload_file, FileHeader{.kind = StreamKind::payload,
                                             .byte_order = options.payload_order,
                                             .rank = rank}),
      options_(options) {}

RankTraceWriter::~RankTraceWriter() = default;

RankTraceWriter::ThreadState& RankTraceWriter::thread_state(std::uint16_t thread,
                                                            std::uint64_t start_ns,
                                                            std::uint64_t end_ns) {
  if (closed_) throw Error(events_file_.path() + ": write after close");
  if (!last_ || last_thread_ != thread) {
    last_ = &threads_[thread];
    last_thread_ = thread;
  }
  ThreadState& t = *last_;
  if (start_ns < t.end_ns || end_ns < start_ns)
    throw Error(events_file_.path() + ": thread " + std::to_string(thread) + " event " +
                std::to_string(t.events) + ": times go backwards");
  return t;
}

void RankTraceWriter::put_times(ThreadState& t, std::uint64_t start_ns, std::uint64_t end_ns,
                                std::uint64_t overhead_ns) {
  t.gap.put_uvarint(start_ns - t.end_ns);
  t.duration.put_uvarint(end_ns - start_ns);
  t.overhead.put_uvarint(overhead_ns);
  t.end_ns = end_ns;
  t.overhead_ns += overhead_ns;
  ++t.events;
  ++events_;
}

void RankTraceWriter::end_event(std::uint16_t thread, ThreadState& t) {
  const std::size_t pending = t.gap.size() + t.duration.size() + t.overhead.size() + t.body.size();
  if (t.events - t.chunk_first >= options_.chunk_events || pending >= options_.chunk_bytes) {
    // Payload before events: an events chunk on disk never refers to payload that is not.
    flush_payload(thread, t);
    flush_events(thread, t);
  }
}

void RankTraceWriter::write(const Event& e, std::span<const std::byte> payload) {
  if (payload.size() != e.payload_bytes())
    throw Error(events_file_.path() + ": event " + std::to_string(events_) + " refers to " +
                std::to_string(e.payload_bytes()) + " payload bytes but " +
                std::to_string(payload.size()) + " were given");
  ThreadState& t = thread_state(e.thread, e.start_ns, e.end_ns);
  encoded_.clear();
  encode_event_body(e, encoded_);
  t.body.put(encoded_);
  put_times(t, e.start_ns, e.end_ns, e.overhead_ns);
  if (!payload.empty()) {
    t.payload_buf.insert(t.payload_buf.end(), payload.begin(), payload.end());
    t.payload += payload.size();
    payload_bytes_ += payload.size();
    if (t.payload_buf.size() >= options_.chunk_bytes) flush_payload(e.thread, t);
  }
  end_event(e.thread, t);
}

void RankTraceWriter::write_body(std::uint16_t thread, std::uint64_t start_ns, std::uint64_t end_ns,
                                 std::uint64_t overhead_ns, std::span<const std::byte> body) {
  ThreadState& t = thread_state(thread, start_ns, end_ns);
  t.body.put(body);
  put_times(t, start_ns, end_ns, overhead_ns);
  end_event(thread, t);
}

void RankTraceWriter::write_bodies(std::uint16_t thread, std::span<const BodyTimes> events,
                                   std::span<const std::byte> bodies) {
  if (events.empty()) return;
  ThreadState& t = thread_state(thread, events.front().start_ns, events.front().end_ns);
  // Checked first, so that the loop below only encodes.
  std::uint64_t end = t.end_ns;
  std::size_t total = 0;
  for (const BodyTimes& e : events) {
    if (e.start_ns < end || e.end_ns < e.start_ns)
      throw Error(events_file_.path() + ": thread " + std::to_string(thread) +
                  ": times go backwards in a batch of events");
    end = e.end_ns;
    total += e.bytes;
  }
  if (total != bodies.size())
    throw Error(events_file_.path() + ": thread " + std::to_string(thread) + ": a batch of " +
                std::to_string(events.size()) + " events holds " + std::to_string(total) +
                " body bytes, " + std::to_string(bodies.size()) + " given");
  std::size_t i = 0, from = 0;
  while (i < events.size()) {
    // The events up to the next chunk cut: room for all of their times at once.
    const std::size_t left = options_.chunk_events - (t.events - t.chunk_first);
    const std::size_t k = std::min(events.size() - i, std::max<std::size_t>(left, 1));
    std::byte* g = t.gap.tail(k * kMaxVarintBytes);
    std::byte* d = t.duration.tail(k * kMaxVarintBytes);
    std::byte* o = t.overhead.tail(k * kMaxVarintBytes);
    const std::byte *g0 = g, *d0 = d, *o0 = o;
    const std::size_t base = t.gap.size() + t.duration.size() + t.overhead.size() + t.body.size();
    std::uint64_t last = t.end_ns, overhead = 0;
    std::size_t run = 0, j = i;
    bool full = false;
    while (j < i + k && !full) {
      const BodyTimes& e = events[j++];
      g += encode_uvarint(e.start_ns - last, g);
      d += encode_uvarint(e.end_ns - e.start_ns, d);
      o += encode_uvarint(e.overhead_ns, o);
      last = e.end_ns;
      overhead += e.overhead_ns;
      run += e.bytes;
      full = base + static_cast<std::size_t>((g - g0) + (d - d0) + (o - o0)) + run >=
             options_.chunk_bytes;
    }
    t.gap.used(g);
    t.duration.used(d);
    t.overhead.used(o);
    t.body.put(bodies.subspan(from, run));
    from += run;
    t.end_ns = last;
    t.overhead_ns += overhead;
    t.events += j - i;
    events_ += j - i;
    i = j;
    if (full || t.events - t.chunk_first >= options_.chunk_events) {
      flush_payload(thread, t);
      flush_events(thread, t);
    }
  }
}

void RankTraceWriter::flush_events(std::uint16_t thread, ThreadState& t) {
  if (t.events == t.chunk_first) return;
  assembly_.clear();
  ByteWriter w(assembly_);
  w.put_u8(event_format::kSplitTimes);
  w.put_uvarint(t.gap.size());
  w.put_uvarint(t.duration.size());
  w.put_uvarint(t.overhead.size());
  w.put_bytes(t.gap.view());
  w.put_bytes(t.duration.view());
  w.put_bytes(t.overhead.view());
  w.put_bytes(t.body.view());
  ChunkHeader h;
  h.kind = ChunkKind::events;
  h.thread = thread;
  h.seq = t.event_seq++;
  h.first = t.chunk_first;
  h.base = t.chunk_base;
  h.count = static_cast<std::uint32_t>(t.events - t.chunk_first);
  h.aux = t.chunk_payload;
  compressor_.make_chunk(h, assembly_, options_.level, chunk_buf_);
  events_file_.append(chunk_buf_);
  ++event_chunks_;
  t.chunk_first = t.events;
  t.chunk_base = t.end_ns;
  t.chunk_payload = t.payload;
  t.gap.clear();
  t.duration.clear();
  t.overhead.clear();
  t.body.clear();
}

void RankTraceWriter::flush_payload(std::uint16_t thread, ThreadState& t) {
  if (t.payload_buf.empty()) return;
  ChunkHeader h;
  h.kind = ChunkKind::payload;
  h.thread = thread;
  h.seq = t.payload_seq++;
  h.first = t.payload_first;
  compressor_.make_chunk(h, t.payload_buf, options_.level, chunk_buf_);
  payload_file_.append(chunk_buf_);
  ++payload_chunks_;
  t.payload_first = t.payload;
  t.payload_buf.clear();
}

void RankTraceWriter::flush() {
  if (closed_) throw Error(events_file_.path() + ": flush after close");
  for (auto& [thread, t] : threads_) {
    flush_payload(thread, t);  // payload first, as in end_event()
    flush_events(thread, t);
  }
}

void RankTraceWriter::close(std::uint8_t end_status) {
  if (closed_) return;
  closed_ = true;
  for (auto& [thread, t] : threads_) {
    flush_payload(thread, t);
    flush_events(thread, t);
  }
  // Trailer body as libdump writes it: status, then per thread index 0..n-1 the totals.
  std::vector<std::byte> body;
  ByteWriter w(body);
  w.put_uvarint(end_status);
  const std::size_t n = threads_.empty() ? 0 : std::size_t{threads_.rbegin()->first} + 1;
  w.put_uvarint(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto it = threads_.find(static_cast<std::uint16_t>(i));
    const ThreadState empty;
    const ThreadState& t = it == threads_.end() ? empty : it->second;
    w.put_uvarint(t.events);
    w.put_uvarint(t.payload);
    w.put_uvarint(t.overhead_ns);
    w.put_uvarint(0);  // stall
  }
  events_file_.append(make_trailer(event_chunks_, body));
  payload_file_.append(make_trailer(payload_chunks_, body));
  events_file_.close();
  payload_file_.close();
}

}  // namespace encore
