#include "segment_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <vector>

namespace encore::dump {

namespace {

std::size_t page_bytes() noexcept {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

}  // namespace

std::byte* map_segment_memory(std::size_t bytes, bool populate) {
  const std::size_t size = round_up(bytes, page_bytes());
  const bool huge = size >= kHugePageBytes;
  // A huge page needs a 2 MiB-aligned range: map the slack as well and give its ends back.
  const std::size_t span = huge ? size + kHugePageBytes : size;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<std::byte*>(raw);
  std::byte* p = base;
  if (huge) {
    const auto addr = reinterpret_cast<std::uintptr_t>(base);
    p = base + (round_up(addr, kHugePageBytes) - addr);
    if (p > base) munmap(base, static_cast<std::size_t>(p - base));
    if (base + span > p + size)
      munmap(p + size, static_cast<std::size_t>(base + span - (p + size)));
    madvise(p, size, MADV_HUGEPAGE);  // a hint: without THP the pages stay small
  }
  // MADV_POPULATE_WRITE (Linux 5.14) faults the range in with one call; older kernels refuse
  // it, and a write to each page does the same.
  if (populate && madvise(p, size, MADV_POPULATE_WRITE) != 0) {
    for (std::size_t at = 0; at < size; at += page_bytes())
      static_cast<volatile std::byte*>(p)[at] = std::byte{0};
  }
  return p;
}

void unmap_segment_memory(std::byte* p, std::size_t bytes) noexcept {
  if (p) munmap(p, round_up(bytes, page_bytes()));
}

bool segment_memory_resident(const std::byte* p, std::size_t bytes) {
  const std::size_t pages = round_up(bytes, page_bytes()) / page_bytes();
  std::vector<unsigned char> vec(pages);
  if (mincore(const_cast<std::byte*>(p), pages * page_bytes(), vec.data()) != 0) return false;
  for (unsigned char v : vec)
    if ((v & 1) == 0) return false;
  return true;
}

}  // namespace encore::dump
