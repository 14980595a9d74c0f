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
  std::size_t from = 0, run = 0;  // bodies[from, from + run) not yet in t.body
  for (const BodyTimes& e : events) {
    if (e.start_ns < t.end_ns || e.end_ns < e.start_ns)
      thread_state(thread, e.start_ns, e.end_ns);  // throws: times go backwards
    if (e.bytes > bodies.size() - from - run)
      throw Error(events_file_.path() + ": thread " + std::to_string(thread) + " event " +
                  std::to_string(t.events) + ": its body runs past the bytes given");
    put_times(t, e.start_ns, e.end_ns, e.overhead_ns);
    run += e.bytes;
    const std::size_t pending =
        t.gap.size() + t.duration.size() + t.overhead.size() + t.body.size() + run;
    if (t.events - t.chunk_first >= options_.chunk_events || pending >= options_.chunk_bytes) {
      t.body.put(bodies.subspan(from, run));
      from += run;
      run = 0;
      flush_payload(thread, t);
      flush_events(thread, t);
    }
  }
  if (from + run != bodies.size())
    throw Error(events_file_.path() + ": " + std::to_string(bodies.size() - from - run) +
                " body bytes given beyond the events' own");
  t.body.put(bodies.subspan(from, run));
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
