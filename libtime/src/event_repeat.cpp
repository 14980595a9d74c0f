#include "encore/event_repeat.hpp"

#include <bit>

#include "decode_fast.hpp"

#include "encore/error.hpp"
#include "encore/event_reader.hpp"

namespace encore {

namespace {

// Each set bit of `bits`, lowest first.
template <class F>
void for_bits(std::uint64_t bits, F&& f) {
  for (; bits != 0; bits &= bits - 1) f(static_cast<std::size_t>(std::countr_zero(bits)));
}

// `out` becomes `t` but for index and thread, through the decoder's bookkeeping (Event::stale)
// rather than a copy of the whole Event: arguments that hold only present and scalar (most of
// a poll's) are two stores, lists are copied or cleared only where either side may hold some,
// and the extras likewise.
void copy_template(const Event& t, Event& out) {
  const std::size_t n = t.info().params.size();
  if (n >= decode::kTrackedArgs) {  // no such function today: a plain copy
    const std::uint64_t index = out.index;
    const std::uint16_t thread = out.thread;
    out = t;
    out.index = index;
    out.thread = thread;
    return;
  }
  if (out.args.size() < n) out.args.resize(n);
  const std::uint64_t mask = (std::uint64_t{1} << n) - 1;
  const std::uint64_t full = t.stale & mask;  // may hold anything: copied whole
  const std::uint64_t dirty = (out.stale | out.stale_requests | out.stale_statuses) & mask & ~full;
  for_bits(full, [&](std::size_t i) { out.args[i] = t.args[i]; });
  for_bits(dirty, [&](std::size_t i) { out.args[i].clear_values(); });
  for_bits(mask & ~full, [&](std::size_t i) {
    out.args[i].present = t.args[i].present;
    out.args[i].scalar = t.args[i].scalar;
  });
  // Requests or statuses and nothing else (a poll's request and status): those alone.
  for_bits(t.stale_requests & mask & ~full,
           [&](std::size_t i) { out.args[i].requests = t.args[i].requests; });
  for_bits(t.stale_statuses & mask & ~full,
           [&](std::size_t i) { out.args[i].statuses = t.args[i].statuses; });
  const std::uint64_t extras = decode::kExtrasStale | decode::kRareExtrasStale;
  const std::uint64_t either = t.stale | out.stale;
  if (either & decode::kExtrasStale) {
    out.payloads = t.payloads;
    out.send_hashes = t.send_hashes;
    out.callsite = t.callsite;
    out.stall_ns = t.stall_ns;
  }
  if (either & decode::kRareExtrasStale) {
    out.signatures = t.signatures;
    out.counters = t.counters;
    out.attribute = t.attribute;
    out.neighbours = t.neighbours;
    out.first_read_ns = t.first_read_ns;
    out.contribution_hashes = t.contribution_hashes;
  }
  out.stale = (out.stale & ~(mask | extras)) | (t.stale & (mask | extras));
  out.stale_requests = (out.stale_requests & ~mask) | (t.stale_requests & mask);
  out.stale_statuses = (out.stale_statuses & ~mask) | (t.stale_statuses & mask);
  out.function = t.function;
  out.rc = t.rc;
}

}  // namespace

bool RepeatExpander::expand(EventColumns& in, std::uint64_t prev_end_ns, Event& out) {
  if (!at_repeat(in.body)) return false;
  if (!have_template_) throw Error("repeated poll with no event before it in the chunk");
  if (!template_.payloads.empty()) throw Error("repeat of an event with received data");
  const std::uint64_t gap = in.gap.read_uvarint();
  const std::uint64_t duration = in.duration_reader().read_uvarint();
  const std::uint64_t overhead = in.overhead_reader().read_uvarint();
  in.body.skip(2);
  copy_template(template_, out);
  out.start_ns = prev_end_ns + gap;
  out.end_ns = out.start_ns + duration;
  out.overhead_ns = overhead;
  return true;
}

}  // namespace encore
