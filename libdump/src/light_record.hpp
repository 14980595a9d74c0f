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

// The most bytes encode_light_body writes.
constexpr std::size_t kLightBodyMax = 128;

// Writes the event's body as the Call path encodes it (head, arguments, status, extras);
// returns its length.
std::size_t encode_light_body(const LightTimes& r, std::byte* out) noexcept;

}  // namespace encore::dump
