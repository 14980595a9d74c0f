#include "light_record.hpp"

#include <algorithm>
#include <cstring>

#include "encore/byte_order.hpp"
#include "encore/event_format.hpp"
#include "encore/varint.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace encore::dump {

std::size_t encode_light_body(const LightTimes& r, std::byte* out) noexcept {
  namespace ef = event_format;
  const bool extra = (r.flags & LightTimes::kExtra) != 0;
  // The head: always two bytes, as Call writes it.
  const std::uint32_t head =
      std::uint32_t{r.fn} << ef::kHeadFlagBits | (extra ? ef::kHasExtras : 0);
  out[0] = static_cast<std::byte>((head & 0x7f) | 0x80);
  out[1] = static_cast<std::byte>(head >> 7);
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
    std::uint64_t hash = r.word;
    if (r.flags & LightTimes::kUnhashed) {
      // The bytes sent, rebuilt from their first and last 4 (which overlap below 8 bytes).
      std::byte data[8];
      const std::size_t n = std::clamp<std::size_t>(r.bytes, 4, 8);  // it is, by construction
      const auto lo = static_cast<std::uint32_t>(r.word);
      const auto hi = static_cast<std::uint32_t>(r.word >> 32);
      std::memcpy(data, &lo, 4);
      std::memcpy(data + n - 4, &hi, 4);
      hash = XXH3_64bits(data, n);
    }
    store_le(p, hash);
    p += 8;
    p += encode_uvarint(r.bytes, p);
  }
  if (extra) *p++ = std::byte{0};  // the extras' end
  return static_cast<std::size_t>(p - out);
}

}  // namespace encore::dump
