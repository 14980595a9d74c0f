// What the generated per-function decoders (event_decode_gen.cpp, from libtime/gen/decode_gen.py)
// are made of. A body is walked with a bare pointer the compiler keeps in a register (a
// ByteReader's position in memory would be reloaded after every store into the Event); anything
// but the short fast paths goes to the ByteReader, so checks and messages are the generic
// decoder's, at the same offsets.
#pragma once

#include <cstddef>
#include <cstdint>

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

inline std::uint64_t byte_at(const std::byte* p) { return static_cast<std::uint8_t>(*p); }

// A uvarint the caller made room for (kMaxVarintBytes left at p): one and two bytes inline.
[[gnu::always_inline]] inline std::uint64_t uv(const std::byte*& p, const Body& b) {
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
  const Varint v = uvarint_slow(b, p);
  p = v.next;
  return v.value;
}

// A uvarint anywhere: checked against the end.
[[gnu::always_inline]] inline std::uint64_t uv_checked(const std::byte*& p, const Body& b) {
  if (b.end - p >= 2) return uv(p, b);
  const Varint v = uvarint_slow(b, p);
  p = v.next;
  return v.value;
}

inline void set_id(ArgValue& a, std::uint64_t v) {
  a.present = true;
  a.scalar = static_cast<std::int64_t>(v);
}
inline void set_value(ArgValue& a, std::uint64_t v) {
  a.present = true;
  a.scalar = zigzag_decode(v);
}
inline void set_nothing(ArgValue& a) {
  a.present = true;
  a.scalar = 0;
}
inline void set_absent(ArgValue& a) {
  a.present = false;
  a.scalar = 0;
}

// Event::stale: bit i for args[i] holding more than present and scalar, bit 63 for the extras.
inline constexpr unsigned kExtrasBit = 63;
inline constexpr std::uint64_t kExtrasStale = std::uint64_t{1} << kExtrasBit;
inline void mark_stale(Event& ev, std::uint16_t param) {
  if (param < kExtrasBit) ev.stale |= std::uint64_t{1} << param;
}

// Makes args[0, n) exist with nothing stale in them (present and scalar are left for the
// decoder to overwrite).
void reset_args(Event& ev, std::size_t n);
[[gnu::always_inline]] inline void prepare_args(Event& ev, std::size_t n) {
  const std::uint64_t mask = n >= kExtrasBit ? ~kExtrasStale : (std::uint64_t{1} << n) - 1;
  if (ev.args.size() < n || (ev.stale & mask) != 0 || n >= kExtrasBit) reset_args(ev, n);
}

// One argument of any coding through the checked generic reader, from p (its first byte).
const std::byte* read_checked(const Body& b, const std::byte* p, std::uint16_t param, Coding coding,
                              Event& ev);
// The codings the point-to-point calls use most, with unchecked fast paths when the body has
// room for the whole argument; else read_checked.
const std::byte* read_request(const Body& b, const std::byte* p, std::uint16_t param, Event& ev);
const std::byte* read_requests(const Body& b, const std::byte* p, std::uint16_t param, Event& ev);
const std::byte* read_status(const Body& b, const std::byte* p, std::uint16_t param, Event& ev);
const std::byte* read_statuses(const Body& b, const std::byte* p, std::uint16_t param, Event& ev);

// The generated switch: ev.function's arguments from p (just past the head and rc); `ok` is
// rc == MPI_SUCCESS (outputs are only there then). Returns where the body goes on, or nullptr
// when a run of ids and values lacks the room to be read unchecked (near the end of a chunk):
// the caller then decodes the whole event again with the checked generic path.
const std::byte* decode_args(const Body& b, const std::byte* p, bool ok, Event& ev);

}  // namespace encore::decode
