// What the generated per-function decoders (event_decode_gen.cpp, from libtime/gen/decode_gen.py)
// are made of. A body is walked with a bare pointer the compiler keeps in a register (a
// ByteReader's position in memory would be reloaded after every store into the Event); anything
// but the short fast paths goes to the ByteReader, so checks and messages are the generic
// decoder's, at the same offsets.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "encore/event.hpp"
#include "encore/role_coding.hpp"
#include "encore/varint.hpp"

namespace encore::decode {

// The body column being decoded: `reader` spans it, `base` is its first byte, `end` one past
// its last.
struct Body {
  ByteReader& reader;
  const std::byte* base;
  const std::byte* end;
};

struct Varint {
  std::uint64_t value;
  const std::byte* next;
};

// Any varint through the ByteReader (throws its errors); the pointer goes by value so it never
// escapes to memory.
[[gnu::noinline]] Varint uvarint_slow(const Body& b, const std::byte* p);
// A varint of three bytes or more that has kMaxVarintBytes of room, unchecked; `next` is
// nullptr when it is malformed (longer than 10 bytes or wider than 64 bits).
[[gnu::noinline]] Varint uvarint_long(const std::byte* p) noexcept;

inline std::uint64_t byte_at(const std::byte* p) { return static_cast<std::uint8_t>(*p); }

// A uvarint the caller made room for (kMaxVarintBytes left at p): one and two bytes inline,
// longer ones out of line, and a malformed one through `slow` (a ByteReader, for its message).
// `slow` is only touched then, so what it needs is not even loaded on the fast path.
template <class Slow>
[[gnu::always_inline]] inline std::uint64_t uv_or(const std::byte*& p, Slow&& slow) {
  const std::uint64_t b0 = byte_at(p);
  if (b0 < 0x80) {
    p += 1;
    return b0;
  }
  const std::uint64_t b1 = byte_at(p + 1);
  if (b1 < 0x80) {
    p += 2;
    return (b0 & 0x7fu) | (b1 << 7);
  }
  Varint v = uvarint_long(p);
  if (v.next == nullptr) v = slow(p);  // throws
  p = v.next;
  return v.value;
}

[[gnu::always_inline]] inline std::uint64_t uv(const std::byte*& p, const Body& b) {
  return uv_or(p, [&b](const std::byte* q) { return uvarint_slow(b, q); });
}

// A uvarint anywhere: checked against the end.
[[gnu::always_inline]] inline std::uint64_t uv_checked(const std::byte*& p, const Body& b) {
  if (b.end - p >= static_cast<std::ptrdiff_t>(kMaxVarintBytes)) return uv(p, b);
  const Varint v = uvarint_slow(b, p);
  p = v.next;
  return v.value;
}

// Whether the next k (1 to 8) varints at p are one byte each, with one 8-byte load: the caller
// made room for k of kMaxVarintBytes. Most ids, counts, tags and peers are; the generated runs
// then take each from its byte instead of testing it.
[[gnu::always_inline]] inline bool one_byte_run(const std::byte* p, unsigned k) {
  if constexpr (std::endian::native != std::endian::little) {
    return false;
  } else {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return (w & (std::uint64_t{0x8080808080808080} >> (64 - 8 * k))) == 0;
  }
}

[[gnu::always_inline]] inline void set_id(ArgValue& a, std::uint64_t v) {
  a.present = true;
  a.scalar = static_cast<std::int64_t>(v);
}
[[gnu::always_inline]] inline void set_value(ArgValue& a, std::uint64_t v) {
  a.present = true;
  a.scalar = static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));  // zigzag, always inlined
}
[[gnu::always_inline]] inline void set_nothing(ArgValue& a) {
  a.present = true;
  a.scalar = 0;
}
[[gnu::always_inline]] inline void set_absent(ArgValue& a) {
  a.present = false;
  a.scalar = 0;
}

// Event::stale: bit i for args[i] holding more than present and scalar, bit 63 for the common
// extras, bit 62 for the others; Event::stale_requests and stale_statuses: bit i for args[i]
// holding requests or statuses and nothing else. Functions of more than kTrackedArgs
// parameters (none today) have all their arguments cleared.
inline constexpr unsigned kExtrasBit = 63;
inline constexpr std::uint64_t kExtrasStale = std::uint64_t{1} << kExtrasBit;
inline constexpr std::uint64_t kRareExtrasStale = std::uint64_t{1} << 62;
inline constexpr unsigned kTrackedArgs = 62;
inline void mark_stale(Event& ev, std::uint16_t param) {
  if (param < kTrackedArgs) ev.stale |= std::uint64_t{1} << param;
}

// Makes args[0, n) exist with nothing stale in them (present and scalar are left for the
// decoder to overwrite), for the generic path. The generated decoders call prepare_args, which
// leaves requests and statuses to clear_all_lists, called once before them: clearing every
// tracked list (those past n too) keeps the switch's cases free of it.
void reset_args(Event& ev, std::size_t n);
void clear_lists(Event& ev, std::uint64_t mask);
[[gnu::always_inline]] inline void prepare_args(Event& ev, std::size_t n) {
  const std::uint64_t mask = n >= kTrackedArgs ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  if (ev.args.size() < n || (ev.stale & mask) != 0 || n >= kTrackedArgs) reset_args(ev, n);
}
[[gnu::always_inline]] inline void clear_all_lists(Event& ev) {
  if ((ev.stale_requests | ev.stale_statuses) == 0) return;
  ArgValue* const args = ev.args.data();
  for (std::uint64_t bits = ev.stale_requests; bits != 0; bits &= bits - 1)
    args[std::countr_zero(bits)].requests.clear();
  for (std::uint64_t bits = ev.stale_statuses; bits != 0; bits &= bits - 1)
    args[std::countr_zero(bits)].statuses.clear();
  ev.stale_requests = ev.stale_statuses = 0;
}

// One argument of any coding through the checked generic reader, from p (its first byte).
const std::byte* read_checked(const Body& b, const std::byte* p, std::uint16_t param, Coding coding,
                              Event& ev);
// The codings the point-to-point calls use most, with unchecked fast paths when the body has
// room for the whole argument; else read_checked.
// (Defined in event_decoder.cpp, before the generated cases.)

// The generated switch (event_decode_cases.inc, included where it is used) is
//   const std::byte* decode_args(unsigned id, const Body& b, const std::byte* p, bool ok,
//                                Event& ev)
// function id's arguments from p (just past the head and rc); `ok` is rc == MPI_SUCCESS
// (outputs are only there then). It returns where the body goes on, or nullptr when a run of
// ids and values lacks the room to be read unchecked (near the end of a chunk): the caller then
// decodes the arguments again with the checked generic path.

}  // namespace encore::decode
