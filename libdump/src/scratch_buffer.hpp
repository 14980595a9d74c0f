// A byte buffer the writer thread rewrites from the start for every chunk: growing it neither
// zero-fills nor copies the old bytes (what std::vector::resize does, about 60 instructions an
// event counted by callgrind while the writer's chunks still grew).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>

namespace encore::dump {

class ScratchBuffer {
 public:
  // Room for at least n bytes from data(); what was there before is gone if it grows.
  std::byte* reserve(std::size_t n) {
    if (n > size_) {
      size_ = std::max(n, 2 * size_);
      bytes_ = std::make_unique_for_overwrite<std::byte[]>(size_);
    }
    return bytes_.get();
  }
  std::byte* data() noexcept { return bytes_.get(); }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  std::size_t size_ = 0;
};

}  // namespace encore::dump
