// A light call recorded without a Call (LightCall): an MPI_Send or MPI_Recv of a few bytes of
// a contiguous type, or an MPI_Iprobe of a lean run that found its message. The application thread
// writes its times and arguments into one fixed record in the times region and nothing in the body
// region; the writer thread encodes the body exactly as the Call path would have
// (encode_light_body) and splices it into the chunk's bodies at the body offset the record stands
// at (segment_records.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "raw_times.hpp"

#include "encore/byte_order.hpp"
#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore::dump {

struct LightTimes {
  // The record is a LightTimes (flags & RawTimes::kLight) with kPrev* as in RawTimes, and
  // kExtra when the event has its extra (a send's hash, a receive's payload).
  static constexpr std::uint64_t kExtra = 64;
  // A send of 4 to 8 bytes: `word` holds its first and last 4 bytes, not yet their hash.
  static constexpr std::uint64_t kUnhashed = 128;
  enum Kind : std::uint8_t { send = 0, recv = 1, probe = 2 };  // probe: an MPI_Iprobe that found

  std::uint64_t flags;
  std::uint64_t prev_t3;  // as RawTimes
  std::uint64_t t1;
  std::uint64_t t2;
  std::uint64_t body_at;  // the body region's offset where this event's body belongs
  // send: the hash of the bytes sent (or, with kUnhashed, their first 4 bytes in the low half
  // and their last 4 in the high half); recv: the status' source (low half) and tag (high)
  std::uint64_t word;
  std::int32_t count;  // probe: the flag
  std::int32_t peer;   // dest or source
  std::int32_t tag;
  std::uint32_t type_id;
  std::uint32_t comm_id;
  std::uint32_t bytes;  // send: bytes hashed; recv: the status' byte count
  std::uint32_t elems;  // recv: the payload's element count
  std::uint16_t fn;     // the function id (the event's head)
  std::uint8_t kind;    // Kind
  std::uint8_t bits;    // send: the buffer flag; recv: the buffer flag | status bits << 4
};
static_assert(sizeof(LightTimes) == kLightTimesBytes);

// A light call is timed as the Call path times it, with no pre-work.
__attribute__((always_inline)) inline void TimeEncoder::encode(const LightTimes& r,
                                                               std::byte* out[3]) noexcept {
  encode_light(r.flags, r.prev_t3, r.t1, r.t2, out);
}

// The most bytes encode_light_body writes.
constexpr std::size_t kLightBodyMax = 128;

// Writes the event's body as the Call path encodes it (head, arguments, status, extras);
// returns its length. Out of line (the crash handler's; the chunk builder inlines it,
// encode_light_body_fast in light_body.hpp).
std::size_t encode_light_body(const LightTimes& r, std::byte* out) noexcept;

// The XXH3 hash of a send of 4 to 8 bytes kept in `word` (LightTimes::kUnhashed).
std::uint64_t light_send_hash(std::uint64_t word, std::uint32_t bytes) noexcept;

// encode_light_body, inlined: a caller whose record's kind and flags are constants (the
// first failed MPI_Iprobe of a run, LightCall::opens_run) gets only the code they need.
__attribute__((always_inline)) inline std::size_t encode_light_body_inline(
    const LightTimes& r, std::byte* out) noexcept {
  namespace ef = event_format;
  const bool extra = (r.flags & LightTimes::kExtra) != 0;
  // The head: always two bytes, as Call writes it.
  const std::uint32_t head =
      std::uint32_t{r.fn} << ef::kHeadFlagBits | (extra ? ef::kHasExtras : 0);
  ef::write_head(head, out);
  std::byte* p = out + 2;
  if (r.kind == LightTimes::probe) {
    p += encode_svarint(r.peer, p);
    p += encode_svarint(r.tag, p);
    p += encode_uvarint(r.comm_id, p);
    p += encode_svarint(r.count, p);  // the flag
  } else {
    p += encode_uvarint(r.bits & 0xf, p);  // the buffer flag
    p += encode_svarint(r.count, p);
    p += encode_uvarint(r.type_id, p);
    p += encode_svarint(r.peer, p);
    p += encode_svarint(r.tag, p);
    p += encode_uvarint(r.comm_id, p);
  }
  if (r.kind != LightTimes::send) {  // the status
    p += encode_uvarint(r.bits >> 4, p);
    p += encode_svarint(static_cast<std::int32_t>(r.word & 0xffffffff), p);
    p += encode_svarint(static_cast<std::int32_t>(r.word >> 32), p);
    p += encode_uvarint(r.bytes, p);
    *p++ = std::byte{0};  // error: svarint 0
    if (extra) {
      *p++ = static_cast<std::byte>(ef::Extra::payload);
      *p++ = std::byte{0};  // slot
      p += encode_uvarint(r.type_id, p);
      p += encode_uvarint(r.elems, p);
      p += encode_uvarint(r.bytes, p);
    }
  } else if (extra) {
    *p++ = static_cast<std::byte>(ef::Extra::send_hash);
    store_le(p, (r.flags & LightTimes::kUnhashed) ? light_send_hash(r.word, r.bytes) : r.word);
    p += 8;
    p += encode_uvarint(r.bytes, p);
  }
  if (extra) *p++ = std::byte{0};  // the extras' end
  return static_cast<std::size_t>(p - out);
}

}  // namespace encore::dump
