// Repeated failed polls (format 1.2): a run of identical MPI_Iprobe/MPI_Test... calls that
// found nothing is recorded as its first event and then, per poll, only its times and a
// 2-byte repeat head (event_format::kRepeatHead). RankEventReader hands every poll out as an
// event of its own: this class keeps the event a repeat copies (the thread's previous event in
// the chunk) and gives each repeat its own index and times.
#pragma once

#include <cstdint>

#include "encore/event.hpp"
#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore {

struct EventColumns;

class RepeatExpander {
 public:
  static bool at_repeat(const std::byte* p, const std::byte* end) noexcept {
    return end - p >= 2 && p[0] == std::byte{event_format::kRepeatHead0} &&
           p[1] == std::byte{event_format::kRepeatHead1};
  }
  static bool at_repeat(const ByteReader& body) noexcept {
    const auto rest = body.rest();
    return at_repeat(rest.data(), rest.data() + rest.size());
  }
  // A new chunk: a repeat needs a template decoded from this chunk.
  void reset() noexcept { have_template_ = false; }
  // If the next event in `in` is a repeat: reads it into `out` (the template with out.index,
  // out.thread kept and its own times after `prev_end_ns`) and returns true. Throws Error for
  // a repeat with nothing before it in the chunk.
  bool expand(EventColumns& in, std::uint64_t prev_end_ns, Event& out);
  // After `ev` was decoded (not expanded) and the next event repeats it: keeps it.
  void keep(const Event& ev) {
    template_ = ev;
    have_template_ = true;
  }

 private:
  Event template_;
  bool have_template_ = false;
};

}  // namespace encore
