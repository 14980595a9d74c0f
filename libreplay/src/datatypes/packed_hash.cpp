// The hash of a send's packed bytes without packing the whole message: capture hashed MPI_Pack's
// bytes with XXH3-64, and XXH3's streaming form gives the same value whatever the pieces, so the
// blocks are gathered into a buffer that stays in L1 and streamed into the hash when it fills.
#include <cstring>
#include <string>

#include "type_engine.hpp"
// Inlined: the library call's dispatch costs as much as hashing a short block.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace encore::replay {

struct TypeEngine::HashBuffer {
  static constexpr std::size_t kBytes = 8192;
  XXH3_state_t state;
  std::size_t fill = 0;
  alignas(64) std::byte bytes[kBytes];
};

void TypeEngine::HashBufferFree::operator()(HashBuffer* b) const noexcept { delete b; }

std::uint64_t TypeEngine::hash_packed(const void* inbuf, MPI_Count count, MPI_Datatype type,
                                      MPI_Count& bytes) const {
  const TypeNode& node_ref = node(type);
  const MPI_Aint size = node_ref.bounds.size;
  const auto* base = static_cast<const std::byte*>(inbuf);
  const auto addr = [base](MPI_Aint off) {  // MPI_BOTTOM and negative displacements allowed
    return reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(base) +
                                              static_cast<std::uintptr_t>(off));
  };
  if (count <= 0 || size == 0) {
    bytes = 0;
    return XXH3_64bits(nullptr, 0);
  }
  if (count == 1 ? node_ref.single_block() : node_ref.contiguous()) {  // the bytes as they lie
    bytes = count * size;
    return XXH3_64bits(addr(node_ref.bounds.true_lb), static_cast<std::size_t>(bytes));
  }
  const TypeNode& n = committed_node(type, "MPI_Pack");  // pack()'s check and message
  if (!hash_) hash_.reset(new HashBuffer);
  HashBuffer& h = *hash_;
  XXH3_64bits_reset(&h.state);
  h.fill = 0;
  auto gather = [&h, &addr](MPI_Aint off, MPI_Aint len) {
    const auto k = static_cast<std::size_t>(len);
    if (h.fill + k > HashBuffer::kBytes) [[unlikely]] {
      XXH3_64bits_update(&h.state, h.bytes, h.fill);
      h.fill = 0;
      if (k > HashBuffer::kBytes) {  // a long block goes in as it lies
        XXH3_64bits_update(&h.state, addr(off), k);
        return;
      }
    }
    std::memcpy(h.bytes + h.fill, addr(off), k);
    h.fill += k;
  };
  const MPI_Aint extent = n.bounds.extent();
  for (MPI_Count i = 0; i < count; ++i) for_each_block(n.program, i * extent, size, gather);
  XXH3_64bits_update(&h.state, h.bytes, h.fill);
  bytes = count * size;
  return XXH3_64bits_digest(&h.state);
}

}  // namespace encore::replay
