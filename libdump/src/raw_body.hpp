// A raw event body: what a light call (MPI_Send, MPI_Recv, ...) leaves in its segment instead
// of the encoded body, so its thread stores each field as a plain 8-byte word and no varint
// work is on the call's path. The writer thread encodes it (encode_raw_body) into exactly the
// bytes the call would have written (doc/trace-format.md §4), so the trace does not change.
//
//   [2-byte head, as encoded] [u8 n] [kSlots kind bytes] [n 8-byte slots, host order]
//
// Slot i is encoded by kind[i]: uvarint, svarint (zigzag) or 8 bytes as they are (a send
// hash). The kind bytes are zeroed (uvarint) when the raw body is started, so a uvarint slot
// costs one store. The event's RawTimes carries kRawBody and the body's offset in the segment
// (the writer cannot find an event's body otherwise: encoded bodies have no length).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace encore::dump::raw_body {

enum Kind : std::uint8_t { kUvarint = 0, kSvarint = 1, kFixed64 = 2 };

// The slots the longest light call needs: an MPI_Recv's 6 arguments, 5 status fields, a
// payload extra (tag and 4 fields) and the extras' terminator; a send's hash takes 3.
inline constexpr std::size_t kSlots = 24;
inline constexpr std::size_t kHeadBytes = 2;
inline constexpr std::size_t kCountAt = kHeadBytes;
inline constexpr std::size_t kKindsAt = kCountAt + 1;
inline constexpr std::size_t kSlotsAt = kKindsAt + kSlots;
inline constexpr std::size_t kMaxBytes = kSlotsAt + 8 * kSlots;
// The most an encoded raw body can take: the head and ten bytes a slot.
inline constexpr std::size_t kMaxEncoded = kHeadBytes + 10 * kSlots;

// The length of the raw body at `raw` (its count byte must be there).
inline std::size_t raw_size(const std::byte* raw) noexcept {
  return kSlotsAt + 8 * std::to_integer<std::size_t>(raw[kCountAt]);
}

// Encodes the raw body at `raw` (raw_size(raw) bytes) into `out`, which has room for
// kMaxEncoded bytes. Returns the bytes written, or 0 if the body is malformed (a count over
// kSlots or an unknown kind).
std::size_t encode_raw_body(const std::byte* raw, std::byte* out) noexcept;

}  // namespace encore::dump::raw_body
