#include "encore/varint.hpp"

#include <string>

#include "encore/error.hpp"

namespace encore {

ByteReader::Slow ByteReader::read_uvarint_slow(std::span<const std::byte> data, std::size_t pos) {
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (;; ++i) {
    if (pos + i >= data.size()) throw Error("truncated varint at offset " + std::to_string(pos));
    const auto b = static_cast<std::uint8_t>(data[pos + i]);
    if (i == kMaxVarintBytes - 1) {
      if (b >= 0x80) throw Error("varint longer than 10 bytes at offset " + std::to_string(pos));
      // The tenth byte holds only bit 63; anything more cannot fit 64 bits.
      if (b > 1) throw Error("varint overflows 64 bits at offset " + std::to_string(pos));
    }
    value |= static_cast<std::uint64_t>(b & 0x7fu) << (7 * i);
    if (b < 0x80) break;
  }
  return {value, pos + i + 1};
}

void ByteReader::overrun(std::size_t wanted, std::size_t pos, std::size_t left) {
  throw Error("read of " + std::to_string(wanted) + " bytes at offset " + std::to_string(pos) +
              " overruns the buffer (" + std::to_string(left) + " bytes left)");
}

}  // namespace encore
