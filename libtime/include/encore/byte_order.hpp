// Byte order of hosts and payloads, little-endian field access, and in-place
// conversion of received buffers described by an MPI type signature.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

namespace encore {

// Values are part of the file format (stream header byte 13, manifest).
enum class ByteOrder : std::uint8_t { little = 1, big = 2 };

constexpr ByteOrder host_byte_order() noexcept {
  static_assert(
      std::endian::native == std::endian::little || std::endian::native == std::endian::big,
      "mixed-endian hosts are not supported");
  return std::endian::native == std::endian::little ? ByteOrder::little : ByteOrder::big;
}

// "little" / "big", the spelling used in manifest.json.
std::string_view to_string(ByteOrder order) noexcept;
std::optional<ByteOrder> parse_byte_order(std::string_view text) noexcept;

constexpr std::uint16_t byteswap(std::uint16_t v) noexcept { return __builtin_bswap16(v); }
constexpr std::uint32_t byteswap(std::uint32_t v) noexcept { return __builtin_bswap32(v); }
constexpr std::uint64_t byteswap(std::uint64_t v) noexcept { return __builtin_bswap64(v); }

// Unaligned little-endian loads/stores; memcpy compiles to a single move.
template <class T>
inline T load_le(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) v = byteswap(v);
  return v;
}

template <class T>
inline void store_le(std::byte* p, T v) noexcept {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) v = byteswap(v);
  std::memcpy(p, &v, sizeof v);
}

// One run of a datatype's flattened signature: `repeat` consecutive elements
// of `elem_size` bytes. MPI_DOUBLE x 3 is {8,3}; struct {int; double} is
// {4,1},{8,1} (padding is not part of a signature: payloads are packed).
struct SignatureRun {
  std::uint32_t elem_size;
  std::uint64_t repeat;
};

// Reverses the byte order of every element of `data`, in place. The signature
// repeats cyclically; the buffer may end after any whole element (a partial
// receive), but not inside one. Element sizes 1, 2, 4, 8 and 16 are allowed;
// 16 is reversed as a whole, which is right for 128-bit integers and IEEE
// binary128 but does NOT make x87 long double portable (see trace-format.md).
// Throws Error for another size, an empty signature with non-empty data, or a
// trailing partial element.
void swap_elements(std::span<std::byte> data, std::span<const SignatureRun> sig);

}  // namespace encore
