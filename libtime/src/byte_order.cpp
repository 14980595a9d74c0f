#include "encore/byte_order.hpp"

#include <algorithm>
#include <string>

#include "encore/error.hpp"

namespace encore {

std::string_view to_string(ByteOrder order) noexcept {
  switch (order) {
    case ByteOrder::little:
      return "little";
    case ByteOrder::big:
      return "big";
  }
  return "unknown";
}

std::optional<ByteOrder> parse_byte_order(std::string_view text) noexcept {
  if (text == "little") return ByteOrder::little;
  if (text == "big") return ByteOrder::big;
  return std::nullopt;
}

namespace {

// Plain loops over memcpy'd words: GCC vectorises these into pshufb/vpshufb.
template <class U>
void swap_words(std::byte* p, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i, p += sizeof(U)) {
    U v;
    std::memcpy(&v, p, sizeof v);
    v = byteswap(v);
    std::memcpy(p, &v, sizeof v);
  }
}

void swap_16(std::byte* p, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i, p += 16) {
    std::uint64_t lo, hi;
    std::memcpy(&lo, p, 8);
    std::memcpy(&hi, p + 8, 8);
    lo = byteswap(lo);
    hi = byteswap(hi);
    std::memcpy(p, &hi, 8);
    std::memcpy(p + 8, &lo, 8);
  }
}

// Swaps n consecutive elements of one size (already validated).
void swap_run(std::byte* p, std::size_t n, std::uint32_t size) noexcept {
  switch (size) {
    case 2:
      swap_words<std::uint16_t>(p, n);
      break;
    case 4:
      swap_words<std::uint32_t>(p, n);
      break;
    case 8:
      swap_words<std::uint64_t>(p, n);
      break;
    case 16:
      swap_16(p, n);
      break;
    default:
      break;  // size 1: nothing to do
  }
}

bool supported_size(std::uint32_t s) noexcept {
  return s == 1 || s == 2 || s == 4 || s == 8 || s == 16;
}

[[noreturn]] void partial_element(std::size_t offset, std::size_t left, std::uint32_t size) {
  throw Error("byte swap: buffer ends " + std::to_string(left) + " bytes into a " +
              std::to_string(size) + "-byte element at offset " + std::to_string(offset));
}

}  // namespace

void swap_elements(std::span<std::byte> data, std::span<const SignatureRun> sig) {
  // Validate the whole signature first so bad input fails the same way for
  // every buffer length; also find out whether a single size covers it all.
  std::uint32_t uniform = 0;
  bool is_uniform = true;
  bool has_elements = false;
  for (const SignatureRun& run : sig) {
    if (!supported_size(run.elem_size))
      throw Error("byte swap: unsupported element size " + std::to_string(run.elem_size));
    if (run.repeat == 0) continue;
    if (has_elements && run.elem_size != uniform) is_uniform = false;
    uniform = run.elem_size;
    has_elements = true;
  }
  if (data.empty()) return;
  if (!has_elements) throw Error("byte swap: empty type signature for a non-empty buffer");

  // Common case (MPI_DOUBLE x n, contiguous ints): one pass over the buffer.
  if (is_uniform) {
    const std::size_t whole = data.size() / uniform;
    if (whole * uniform != data.size())
      partial_element(whole * uniform, data.size() - whole * uniform, uniform);
    swap_run(data.data(), whole, uniform);
    return;
  }

  std::byte* p = data.data();
  std::size_t left = data.size();
  for (;;) {
    for (const SignatureRun& run : sig) {
      if (run.repeat == 0) continue;
      const std::size_t fit = left / run.elem_size;
      const std::size_t n = run.repeat < fit ? static_cast<std::size_t>(run.repeat) : fit;
      swap_run(p, n, run.elem_size);
      p += n * run.elem_size;
      left -= n * run.elem_size;
      if (n < run.repeat) {
        if (left != 0) partial_element(data.size() - left, left, run.elem_size);
        return;
      }
      if (left == 0) return;
    }
  }
}

}  // namespace encore
