#include "encore/event_reader.hpp"

#include <string>

#include "encore/error.hpp"

namespace encore {

RankEventReader::RankEventReader(const std::filesystem::path& events_file) : reader_(events_file) {
  if (reader_.header().kind != StreamKind::events)
    throw Error(events_file.string() + ": not an events stream");
}

bool RankEventReader::load_chunk() {
  for (;;) {
    switch (reader_.next(chunk_)) {
      case ReadResult::end:
        ended_clean_ = reader_.saw_trailer();
        if (!ended_clean_) {
          problem_ = reader_.path() + ": stream ends after chunk " +
                     std::to_string(reader_.stats().chunks) +
                     " without its trailer (capture did not finish)";
        }
        return false;
      case ReadResult::damage:
        problem_ = reader_.damage().message;
        return false;
      case ReadResult::chunk:
        break;
    }
    const ChunkHeader& h = chunk_.header;
    if (h.kind == ChunkKind::trailer) {
      trailer_ = chunk_.data;
      continue;
    }
    if (h.kind != ChunkKind::events) continue;
    if (h.thread >= threads_.size()) threads_.resize(std::size_t{h.thread} + 1);
    ThreadPos& pos = threads_[h.thread];
    pos_ = &pos;
    pos.index = h.first;
    pos.end_ns = h.base;
    pos.payload = h.aux;
    thread_ = h.thread;
    left_in_chunk_ = h.count;
    repeats_.reset();
    try {
      columns_ = EventColumns::of(chunk_.data);
    } catch (const Error& e) {
      problem_ = reader_.path() + ": chunk " + std::to_string(chunk_.index) +
                 ": bad column header: " + e.what();
      return false;
    }
    if (left_in_chunk_ > 0) return true;
  }
}

bool RankEventReader::next(Event& out) {
  if (done_) return false;
  while (left_in_chunk_ == 0) {
    if (!load_chunk()) {
      done_ = true;
      return false;
    }
  }
  ThreadPos& pos = *pos_;
  out.thread = thread_;
  out.index = pos.index;
  const std::span<const std::byte> body = columns_.body.rest();
  try {
    if (!repeats_.expand(columns_, pos.end_ns, out))
      decode_event(columns_, pos.end_ns, pos.payload, out);
    if (left_in_chunk_ > 1) repeats_.keep_if_repeated(columns_, out);
  } catch (const Error& e) {
    problem_ = reader_.path() + ": chunk " + std::to_string(chunk_.index) + ", event " +
               std::to_string(pos.index) + ": " + e.what();
    done_ = true;
    return false;
  }
  last_body_ = repeats_.expanded() ? std::span<const std::byte>{}
                                   : body.first(body.size() - columns_.body.remaining());
  pos.overhead += out.overhead_ns;
  out.raw_start_ns = out.start_ns + pos.overhead;
  pos.end_ns = out.end_ns;
  ++pos.index;
  if (--left_in_chunk_ == 0 && !columns_.at_end()) {
    problem_ = reader_.path() + ": chunk " + std::to_string(chunk_.index) +
               " has bytes after its last event";
    done_ = true;
  }
  return true;
}

}  // namespace encore
