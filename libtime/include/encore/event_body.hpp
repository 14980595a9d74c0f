// Copying a recorded event body into a derived trace (a replay profile) without decoding and
// encoding its arguments again: head, rc and arguments are copied as they are, only the
// extras are rewritten. Much cheaper than encode_event_body() for the common case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "encore/event.hpp"
#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore {

// Appends to `out` the event `body` (one event's body bytes, as RankEventReader::last_body()
// gives them; `ev` is what they decode to) with its extras rewritten: send hashes and the
// call site are kept (and since 1.4 contribution hashes), payloads, datatype signatures,
// counters, stalls and first reads dropped, and
// `counters` (if not empty) added. Returns false, `out` unchanged, when the bytes are not laid
// out as `ev` says (e.g. a writer with non-minimal varints): then encode the event instead.
bool copy_body_new_extras(std::span<const std::byte> body, const Event& ev,
                          std::span<const std::uint64_t> counters, std::vector<std::byte>& out);

// The same into `out`, which has room for copy_body_bound() bytes: the bytes written, or 0
// when refused. For callers that keep one buffer from event to event.
std::size_t copy_body_new_extras(std::span<const std::byte> body, const Event& ev,
                                 std::span<const std::uint64_t> counters, std::byte* out);
// memcpy for the few dozen bytes of a body, inline: two overlapping fixed-size copies instead
// of a call into the C library (it runs once per replayed call).
[[gnu::always_inline]] inline void copy_short(std::byte* out, const std::byte* in, std::size_t n) {
  if (n > 32) {
    std::memcpy(out, in, n);
  } else if (n >= 16) {
    std::byte a[16], b[16];
    std::memcpy(a, in, 16);
    std::memcpy(b, in + n - 16, 16);
    std::memcpy(out, a, 16);
    std::memcpy(out + n - 16, b, 16);
  } else if (n >= 8) {
    std::uint64_t a, b;
    std::memcpy(&a, in, 8);
    std::memcpy(&b, in + n - 8, 8);
    std::memcpy(out, &a, 8);
    std::memcpy(out + n - 8, &b, 8);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
  }
}

// A body's head and arguments, the extras flag cleared: the body of an event whose only
// extras were payload references, which a trace without data drops. `extras_at` is where
// the extras start (RankEventReader::last_extras_at(), 0 < extras_at < body.size()); `out`
// has room for extras_at bytes.
[[gnu::always_inline]] inline std::size_t copy_body_drop_extras(std::span<const std::byte> body,
                                                                std::size_t extras_at,
                                                                std::byte* out) {
  copy_short(out, body.data(), extras_at);
  out[0] = static_cast<std::byte>(static_cast<std::uint8_t>(out[0]) & ~event_format::kHasExtras);
  return extras_at;
}

// copy_body_new_extras() for a body whose only extras are ev's payload references (a
// replayed receive without call site): its head and arguments with the extras flag cleared,
// into `out` (room for body.size() bytes). 0 when the body is not laid out so: then call
// copy_body_new_extras().
std::size_t copy_body_drop_payload_refs(std::span<const std::byte> body, const Event& ev,
                                        std::byte* out);

constexpr std::size_t copy_body_bound(std::size_t body_bytes, std::size_t counters) {
  return body_bytes + 2 + kMaxVarintBytes * (counters + 1);
}

}  // namespace encore
