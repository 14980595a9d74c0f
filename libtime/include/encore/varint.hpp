// LEB128 varints, zigzag, and bounds-checked little-endian readers/writers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "encore/byte_order.hpp"

namespace encore {

// A 64-bit value needs at most ceil(64/7) = 10 bytes.
inline constexpr std::size_t kMaxVarintBytes = 10;

// Writes `v` as unsigned LEB128 into `out`, which must have room for
// kMaxVarintBytes. Returns the number of bytes written. Inline: the capture
// hot path encodes several of these per MPI call.
inline std::size_t encode_uvarint(std::uint64_t v, std::byte* out) noexcept {
  // Most fields (ids, counts, tags, times in ns) take one or two bytes: no loop for those.
  if (v < 0x80) {
    out[0] = static_cast<std::byte>(v);
    return 1;
  }
  if (v < 0x4000) {
    out[0] = static_cast<std::byte>(static_cast<std::uint8_t>(v) | 0x80u);
    out[1] = static_cast<std::byte>(v >> 7);
    return 2;
  }
  std::size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<std::byte>(static_cast<std::uint8_t>(v) | 0x80u);
    v >>= 7;
  }
  out[n++] = static_cast<std::byte>(v);
  return n;
}

// Writes `v`, which must be under 2^14, as encode_uvarint does (one or two bytes) without a
// branch on its length, for values that straddle 128 unpredictably (times of some hundred
// ns). It stores two bytes either way: `out` must have room for two. Returns the length.
inline std::size_t encode_uvarint14(std::uint64_t v, std::byte* out) noexcept {
  // v + high moves bits 7..13 up by one, into the second byte; the first byte's top bit says
  // there is one.
  const std::uint64_t high = v & ~std::uint64_t{0x7f};
  const std::uint64_t two = high != 0;
  store_le(out, static_cast<std::uint16_t>(v + high + (two << 7)));
  return 1 + two;
}

// Zigzag maps small magnitudes of either sign to small unsigned values.
constexpr std::uint64_t zigzag_encode(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
constexpr std::int64_t zigzag_decode(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

inline std::size_t encode_svarint(std::int64_t v, std::byte* out) noexcept {
  return encode_uvarint(zigzag_encode(v), out);
}

constexpr std::size_t uvarint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Reads from a borrowed span, never past its end. Every failure (overrun,
// varint longer than 10 bytes or wider than 64 bits) throws Error whose
// message names the offset relative to the start of the span; on failure
// the position is left unchanged.
class ByteReader {
 public:
  ByteReader() noexcept = default;
  explicit ByteReader(std::span<const std::byte> data) noexcept : data_(data) {}

  std::uint64_t read_uvarint() {
    // Fast paths: one and two bytes are the majority of fields (ids, counts, gaps under 16 us).
    const std::size_t n = data_.size();
    if (pos_ < n) {
      const auto b0 = static_cast<std::uint8_t>(data_[pos_]);
      if (b0 < 0x80) {
        ++pos_;
        return b0;
      }
      if (pos_ + 1 < n) {
        const auto b1 = static_cast<std::uint8_t>(data_[pos_ + 1]);
        if (b1 < 0x80) {
          pos_ += 2;
          return (b0 & 0x7fu) | (std::uint64_t{b1} << 7);
        }
      }
    }
    const Slow r = read_uvarint_slow(data_, pos_);
    pos_ = r.pos;
    return r.value;
  }
  std::int64_t read_svarint() { return zigzag_decode(read_uvarint()); }

  std::uint8_t read_u8() { return static_cast<std::uint8_t>(*take(1)); }
  std::uint16_t read_u16() { return load_le<std::uint16_t>(take(2)); }
  std::uint32_t read_u32() { return load_le<std::uint32_t>(take(4)); }
  std::uint64_t read_u64() { return load_le<std::uint64_t>(take(8)); }
  double read_f64() { return std::bit_cast<double>(read_u64()); }

  // A view of the next n bytes (no copy); valid as long as the source is.
  std::span<const std::byte> read_bytes(std::size_t n) { return {take(n), n}; }
  void skip(std::size_t n) { take(n); }

  std::size_t position() const noexcept { return pos_; }
  // For decoders that walk the bytes with the position in a register (see event_decoder.cpp)
  // and hand back to this reader for anything but the short fast paths.
  std::span<const std::byte> bytes() const noexcept { return data_; }
  void seek(std::size_t pos) noexcept { pos_ = pos <= data_.size() ? pos : data_.size(); }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == data_.size(); }
  std::span<const std::byte> rest() const noexcept { return data_.subspan(pos_); }

 private:
  const std::byte* take(std::size_t n) {
    if (n > data_.size() - pos_) overrun(n, pos_, data_.size() - pos_);
    const std::byte* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  // Static, the reader passed by value: a ByteReader on the stack never has its address
  // taken, so the compiler keeps its position in a register.
  struct Slow {
    std::uint64_t value;
    std::size_t pos;
  };
  static Slow read_uvarint_slow(std::span<const std::byte> data, std::size_t pos);
  [[noreturn]] static void overrun(std::size_t wanted, std::size_t pos, std::size_t left);

  std::span<const std::byte> data_;
  std::size_t pos_ = 0;
};

// Appends little-endian fields and varints to a caller-owned vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::byte>& out) noexcept : out_(&out) {}

  void put_uvarint(std::uint64_t v) {
    std::byte tmp[kMaxVarintBytes];
    out_->insert(out_->end(), tmp, tmp + encode_uvarint(v, tmp));
  }
  void put_svarint(std::int64_t v) { put_uvarint(zigzag_encode(v)); }
  void put_u8(std::uint8_t v) { out_->push_back(static_cast<std::byte>(v)); }
  void put_u16(std::uint16_t v) { put_le(v); }
  void put_u32(std::uint32_t v) { put_le(v); }
  void put_u64(std::uint64_t v) { put_le(v); }
  void put_f64(double v) { put_le(std::bit_cast<std::uint64_t>(v)); }
  void put_bytes(std::span<const std::byte> bytes) {
    out_->insert(out_->end(), bytes.begin(), bytes.end());
  }

  std::size_t size() const noexcept { return out_->size(); }
  std::vector<std::byte>& buffer() noexcept { return *out_; }

 private:
  template <class T>
  void put_le(T v) {
    std::byte tmp[sizeof(T)];
    store_le(tmp, v);
    out_->insert(out_->end(), tmp, tmp + sizeof(T));
  }

  std::vector<std::byte>* out_;
};

}  // namespace encore
