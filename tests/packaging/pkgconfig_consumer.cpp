// Built with `pkg-config --cflags --libs encore-time` only (no CMake).
#include <cstdio>

#include <encore/chunk_codec.hpp>
#include <encore/clock.hpp>

int main() {
  encore::ChunkCompressor compressor;
  std::printf("encore pkg-config consumer: ok (%llu)\n",
              static_cast<unsigned long long>(encore::monotonic_ns() > 0));
  return 0;
}
