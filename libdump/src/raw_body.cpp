#include "raw_body.hpp"

#include "encore/byte_order.hpp"
#include "encore/varint.hpp"

namespace encore::dump::raw_body {

std::size_t encode_raw_body(const std::byte* raw, std::byte* out) noexcept {
  const auto n = std::to_integer<std::size_t>(raw[kCountAt]);
  if (n > kSlots) return 0;
  std::memcpy(out, raw, kHeadBytes);
  std::byte* p = out + kHeadBytes;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v;
    std::memcpy(&v, raw + kSlotsAt + 8 * i, 8);
    switch (std::to_integer<std::uint8_t>(raw[kKindsAt + i])) {
      case kUvarint:
        p += encode_uvarint(v, p);
        break;
      case kSvarint:
        p += encode_svarint(static_cast<std::int64_t>(v), p);
        break;
      case kFixed64:
        store_le(p, v);
        p += 8;
        break;
      default:
        return 0;
    }
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace encore::dump::raw_body
