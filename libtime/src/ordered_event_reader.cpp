#include "encore/ordered_event_reader.hpp"

namespace encore {

OrderedEventReader::OrderedEventReader(const std::filesystem::path& events_file)
    : reader_(events_file) {
  StreamFileReader scan(events_file);
  ChunkHeader h;
  while (scan.skip(h) == ReadResult::chunk) {
    if (h.kind == ChunkKind::events) remaining_[h.thread] += h.count;
  }
  single_ = remaining_.size() <= 1;  // entries are never removed
}

bool OrderedEventReader::next_merged(Event& out) {
  for (;;) {
    // Read on until every thread with events still to come has one waiting: only then is the
    // earliest waiting event the earliest of all.
    bool need_more = false;
    for (const auto& [thread, left] : remaining_) {
      if (left > 0 && buffered_[thread].empty()) need_more = true;
    }
    if (need_more && !exhausted_) {
      Event ev;
      if (reader_.next(ev)) {
        auto& left = remaining_[ev.thread];
        if (left > 0) --left;
        buffered_[ev.thread].push_back(std::move(ev));
        continue;
      }
      exhausted_ = true;  // cut or damaged: deliver what was read, in order
    }
    std::deque<Event>* first = nullptr;
    for (auto& [thread, q] : buffered_) {
      if (!q.empty() && (!first || q.front().raw_start_ns < first->front().raw_start_ns))
        first = &q;
    }
    if (!first) return false;
    out = std::move(first->front());
    first->pop_front();
    return true;
  }
}

}  // namespace encore
