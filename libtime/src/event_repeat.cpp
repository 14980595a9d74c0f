#include "encore/event_repeat.hpp"

#include "encore/error.hpp"
#include "encore/event_reader.hpp"

namespace encore {

bool RepeatExpander::expand(EventColumns& in, std::uint64_t prev_end_ns, Event& out) {
  if (!at_repeat(in.body)) return false;
  if (!have_template_) throw Error("repeated poll with no event before it in the chunk");
  if (!template_.payloads.empty()) throw Error("repeat of an event with received data");
  const std::uint64_t gap = in.gap.read_uvarint();
  const std::uint64_t duration = in.duration_reader().read_uvarint();
  const std::uint64_t overhead = in.overhead_reader().read_uvarint();
  in.body.skip(2);
  const std::uint64_t index = out.index;
  const std::uint16_t thread = out.thread;
  out = template_;  // assignment: the vectors keep their storage
  out.index = index;
  out.thread = thread;
  out.start_ns = prev_end_ns + gap;
  out.end_ns = out.start_ns + duration;
  out.overhead_ns = overhead;
  return true;
}

}  // namespace encore
