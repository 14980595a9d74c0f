// A byte vector whose resize() leaves the bytes it adds uninitialised: chunk bodies are read or
// decompressed over at once, so std::vector<std::byte>'s zero fill of every growth was wasted
// work on the read path (a reused buffer grows each time a chunk is larger than the one before).
// Memory is that of a std::vector: its capacity, the largest size asked for so far.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace encore {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  // resize() constructs new elements with no arguments: default-, not value-initialised.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using ByteBuffer = std::vector<std::byte, DefaultInitAllocator<std::byte>>;

}  // namespace encore
