#include "encore/payload_hash.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>
#if defined(__x86_64__) || defined(__i386__)
// libxxhash's (xxh_x86dispatch.h), declared here: that header declares it `static inline`
// under XXH_INLINE_ALL.
extern "C" XXH64_hash_t XXH3_64bits_dispatch(const void* input, size_t len);
#define ENCORE_XXH3_LONG XXH3_64bits_dispatch
#else
#define ENCORE_XXH3_LONG XXH3_64bits
#endif

namespace encore {

std::uint64_t payload_hash(const void* data, std::size_t size) noexcept {
  // Up to 240 bytes XXH3 has no vector loop: the inlined code is as fast and needs no call.
  if (size <= 240) return XXH3_64bits(data, size);
  return ENCORE_XXH3_LONG(data, size);
}

}  // namespace encore
