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
      trailer_.assign(chunk_.data.begin(), chunk_.data.end());
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

bool RankEventReader::next_chunk() {
  if (done_) return false;
  extras_p_ = nullptr;  // the chunk's buffer may be reused at the same address
  while (left_in_chunk_ == 0) {
    if (!load_chunk()) {
      done_ = true;
      return false;
    }
  }
  set_cursors();
  return true;
}

void RankEventReader::set_cursors() {
  const auto at = [](const ByteReader& r) {
    const std::byte* const base = r.bytes().data();
    return Cursor{base + r.position(), base + r.bytes().size()};
  };
  split_ = !columns_.interleaved;
  times_budget_ = 0;  // refilled by next() from the new positions
  gap_ = at(columns_.gap);
  duration_ = at(columns_.duration);
  overhead_ = at(columns_.overhead);
  body_ = at(columns_.body);
}

void RankEventReader::sync_columns() {
  const auto seek = [](ByteReader& r, const Cursor& c) {
    r.seek(static_cast<std::size_t>(c.p - r.bytes().data()));
  };
  seek(columns_.gap, gap_);
  seek(columns_.duration, duration_);
  seek(columns_.overhead, overhead_);
  seek(columns_.body, body_);
}

void RankEventReader::decode_checked(Event& out) {
  sync_columns();
  decode_event(columns_, pos_->end_ns, pos_->payload, out);
  set_cursors();
}

void RankEventReader::expand_repeat(Event& out) {
  sync_columns();
  repeats_.expand(columns_, pos_->end_ns, out);
  set_cursors();
}

bool RankEventReader::fail(const std::exception& e) {
  problem_ = reader_.path() + ": chunk " + std::to_string(chunk_.index) + ", event " +
             std::to_string(pos_->index) + ": " + e.what();
  done_ = true;
  left_in_chunk_ = 0;
  return false;
}

void RankEventReader::check_chunk_end() {
  if (gap_.p == gap_.end && duration_.p == duration_.end && overhead_.p == overhead_.end &&
      body_.p == body_.end)
    return;
  problem_ = reader_.path() + ": chunk " + std::to_string(chunk_.index) +
             " has bytes after its last event";
  done_ = true;
}

}  // namespace encore
