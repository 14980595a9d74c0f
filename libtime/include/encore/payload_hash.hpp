// The hash of a sent payload: XXH3-64 of its bytes in type-signature order. Capture stores it
// for every send and replay compares it with what the replayed program sends.
#pragma once

#include <cstddef>
#include <cstdint>

namespace encore {

// Long inputs go to libxxhash's runtime-dispatched code, which uses AVX2 or AVX-512 where the
// CPU has them (about 24 GB/s here against SSE2's 8 for 1-64 KiB); every path gives the same
// value, so traces and replays on different CPUs agree.
std::uint64_t payload_hash(const void* data, std::size_t size) noexcept;

}  // namespace encore
