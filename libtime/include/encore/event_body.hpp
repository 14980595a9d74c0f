// Copying a recorded event body into a derived trace (a replay profile) without decoding and
// encoding its arguments again: head, rc and arguments are copied as they are, only the
// extras are rewritten. Much cheaper than encode_event_body() for the common case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "encore/event.hpp"
#include "encore/varint.hpp"

namespace encore {

// Appends to `out` the event `body` (one event's body bytes, as RankEventReader::last_body()
// gives them; `ev` is what they decode to) with its extras rewritten: send hashes and the
// call site are kept, payloads, datatype signatures, counters and stalls dropped, and
// `counters` (if not empty) added. Returns false, `out` unchanged, when the bytes are not laid
// out as `ev` says (e.g. a writer with non-minimal varints): then encode the event instead.
bool copy_body_new_extras(std::span<const std::byte> body, const Event& ev,
                          std::span<const std::uint64_t> counters, std::vector<std::byte>& out);

// The same into `out`, which has room for copy_body_bound() bytes: the bytes written, or 0
// when refused. For callers that keep one buffer from event to event.
std::size_t copy_body_new_extras(std::span<const std::byte> body, const Event& ev,
                                 std::span<const std::uint64_t> counters, std::byte* out);
constexpr std::size_t copy_body_bound(std::size_t body_bytes, std::size_t counters) {
  return body_bytes + 2 + kMaxVarintBytes * (counters + 1);
}

}  // namespace encore
