// Consumer of the installed encore::time: the public headers must be self-contained, and the
// static archive's link dependencies (zstd, xxhash, fmt...) must be resolved by the package.
#include <cstdio>

#include <encore/chunk_codec.hpp>
#include <encore/clock.hpp>

int main() {
  const auto t0 = encore::monotonic_ns();  // libencore-time.a itself
  encore::ChunkCompressor compressor;      // pulls in libzstd
  const auto t1 = encore::monotonic_ns();
  std::printf("encore packaging consumer: ok (%s)\n", t1 >= t0 ? "clock ok" : "clock skew");
  return t1 >= t0 ? 0 : 1;
}
