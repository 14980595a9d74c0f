#include "light_record.hpp"

#include <algorithm>
#include <cstring>

#include "light_body.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace encore::dump {

[[gnu::noinline]] std::size_t encode_light_body_general(const LightTimes& r,
                                                        std::byte* out) noexcept {
  return encode_light_body_inline(r, out);
}

std::size_t encode_light_body(const LightTimes& r, std::byte* out) noexcept {
  return encode_light_body_fast(r, out);
}

std::uint64_t light_send_hash(std::uint64_t word, std::uint32_t bytes) noexcept {
  // The bytes sent, rebuilt from their first and last 4 (which overlap below 8 bytes).
  std::byte data[8];
  const auto lo = static_cast<std::uint32_t>(word);
  const auto hi = static_cast<std::uint32_t>(word >> 32);
  std::memcpy(data, &lo, 4);
  if (bytes == 8) [[likely]] {  // a double, an int64: the hash of a constant length, inlined
    std::memcpy(data + 4, &hi, 4);
    return XXH3_64bits(data, 8);
  }
  const std::size_t n = std::clamp<std::size_t>(bytes, 4, 8);  // it is, by construction
  std::memcpy(data + n - 4, &hi, 4);
  return XXH3_64bits(data, n);
}

}  // namespace encore::dump
