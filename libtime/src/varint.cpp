#include "encore/varint.hpp"

#include <string>

#include "encore/error.hpp"

namespace encore {

std::uint64_t ByteReader::read_uvarint_slow() {
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (;; ++i) {
    if (pos_ + i >= data_.size()) throw Error("truncated varint at offset " + std::to_string(pos_));
    const auto b = static_cast<std::uint8_t>(data_[pos_ + i]);
    if (i == kMaxVarintBytes - 1) {
      if (b >= 0x80) throw Error("varint longer than 10 bytes at offset " + std::to_string(pos_));
      // The tenth byte holds only bit 63; anything more cannot fit 64 bits.
      if (b > 1) throw Error("varint overflows 64 bits at offset " + std::to_string(pos_));
    }
    value |= static_cast<std::uint64_t>(b & 0x7fu) << (7 * i);
    if (b < 0x80) break;
  }
  pos_ += i + 1;
  return value;
}

void ByteReader::overrun(std::size_t wanted) const {
  throw Error("read of " + std::to_string(wanted) + " bytes at offset " + std::to_string(pos_) +
              " overruns the buffer (" + std::to_string(remaining()) + " bytes left)");
}

}  // namespace encore
