// The first read of a received message's bytes, as the run would have paid it (Call's
// end_after_first_read): after a rendezvous transfer the bytes' cache lines can be in the
// sender's cache, and the first reader on this core brings them over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "encore/clock.hpp"

namespace encore::dump {

// One load per cache line (and the last byte): a read of every line of `data`, nothing kept.
inline std::uint64_t read_lines(std::span<const std::byte> data) noexcept {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < data.size(); i += 64) sum += static_cast<std::uint64_t>(data[i]);
  if (!data.empty()) sum += static_cast<std::uint64_t>(data.back());
  return sum;
}

// Ticks of `clock` that a first read of every line of `data` took beyond a second read right
// after it (the lines then here): what the first reader paid to bring them over.
inline std::uint64_t first_read_excess(std::span<const std::byte> data,
                                       const Clock& clock) noexcept {
  const std::uint64_t a = clock.ticks();
  std::uint64_t sum = read_lines(data);
  asm volatile("" : "+r"(sum));
  const std::uint64_t b = clock.ticks();
  sum += read_lines(data);
  asm volatile("" : "+r"(sum));
  const std::uint64_t c = clock.ticks();
  return b - a > c - b ? (b - a) - (c - b) : 0;
}

}  // namespace encore::dump
