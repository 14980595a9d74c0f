// The hash of a send's packed bytes without packing the whole message: capture hashed MPI_Pack's
// bytes with XXH3-64, and XXH3's streaming form gives the same value whatever the pieces, so the
// blocks are gathered into a buffer that stays in L1 and streamed into the hash when it fills.
#include <algorithm>
#include <cstring>
#include <string>

#include "type_engine.hpp"

#include "encore/byte_order.hpp"
// Inlined: the library call's dispatch costs as much as hashing a short block.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace encore::replay {

struct TypeEngine::HashBuffer {
  static constexpr std::size_t kBytes = 8192;
  XXH3_state_t state;
  alignas(64) std::byte bytes[kBytes];
};

namespace {

// XXH3-64 built here for plain x86-64 (SSE2). libxxhash's run-time dispatch (XXH3_64bits_dispatch)
// takes half the instructions on 4 KiB, but picks AVX-512 on this machine's Xeon: measured on
// halo2d's replay, the calls after it got slower (MPI_Irecv 270 -> 700 ns, MPI_Isend 1.5 -> 1.8
// us: the core's wide-vector frequency and state transitions), so it is not used.
std::uint64_t xxh3(const void* p, std::size_t n) { return XXH3_64bits(p, n); }

// Copies m blocks of `len` bytes, `stride` apart from `src`, back to back into out.
template <std::size_t Len>
std::size_t gather_fixed(std::byte* out, const std::byte* src, MPI_Aint m, MPI_Aint stride) {
  for (MPI_Aint j = 0; j < m; ++j, src += stride, out += Len) std::memcpy(out, src, Len);
  return static_cast<std::size_t>(m) * Len;
}

std::size_t gather_strided(std::byte* out, const std::byte* src, MPI_Aint len, MPI_Aint m,
                           MPI_Aint stride) {
  switch (len) {
    case 4:
      return gather_fixed<4>(out, src, m, stride);
    case 8:
      return gather_fixed<8>(out, src, m, stride);
    case 16:
      return gather_fixed<16>(out, src, m, stride);
    default:
      for (MPI_Aint j = 0; j < m; ++j)
        std::memcpy(out + j * len, src + j * stride, static_cast<std::size_t>(len));
      return static_cast<std::size_t>(m * len);
  }
}

}  // namespace

void TypeEngine::HashBufferFree::operator()(HashBuffer* b) const noexcept { delete b; }

bool TypeEngine::hash_packed_swapped(const void* inbuf, MPI_Count count, MPI_Datatype type,
                                     std::vector<std::byte>& scratch, std::uint64_t& hash,
                                     MPI_Count& bytes) const {
  const auto runs = signature(type, 4096);
  if (runs.empty()) return false;
  scratch.resize(static_cast<std::size_t>(pack_size(count, type)));
  bytes = pack(inbuf, count, type, scratch.data());
  scratch.resize(static_cast<std::size_t>(bytes));
  try {
    swap_elements(scratch, runs);
  } catch (const std::exception&) {
    return false;  // an element size with no defined conversion
  }
  hash = xxh3(scratch.data(), scratch.size());
  return true;
}

std::uint64_t TypeEngine::hash_packed(const void* inbuf, MPI_Count count, MPI_Datatype type,
                                      MPI_Count& bytes) const {
  // A recently used type whose elements are one block (every replayed send of a predefined
  // type): hashed where it lies, without the general path's set-up.
  const CacheSlot& s = slot(type);
  if (s.entry && s.type == type && count > 0 && s.size > 0 && s.one_block(count)) [[likely]] {
    bytes = count * s.size;
    return xxh3(reinterpret_cast<const std::byte*>(reinterpret_cast<std::uintptr_t>(inbuf) +
                                                   static_cast<std::uintptr_t>(s.true_lb)),
                static_cast<std::size_t>(bytes));
  }
  return hash_general(inbuf, count, type, bytes);
}

std::uint64_t TypeEngine::hash_general(const void* inbuf, MPI_Count count, MPI_Datatype type,
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
    return xxh3(addr(node_ref.bounds.true_lb), static_cast<std::size_t>(bytes));
  }
  const TypeNode& n = committed_node(type, "MPI_Pack");  // pack()'s check and message
  if (!hash_) hash_.reset(new HashBuffer);
  XXH3_state_t* state = &hash_->state;
  std::byte* const buf = hash_->bytes;
  const Piece& first = n.program.front();
  const bool column = count == 1 && n.program.size() == 1 && !first.body && first.len > 0 &&
                      static_cast<std::size_t>(first.len) <= HashBuffer::kBytes;
  if (column && first.count <= static_cast<MPI_Aint>(HashBuffer::kBytes) / first.len) {
    // A whole column fits the buffer (halo2d's): gathered, then hashed in one go.
    const std::size_t filled =
        gather_strided(buf, addr(first.disp), first.len, first.count, first.stride);
    bytes = count * size;
    return xxh3(buf, filled);
  }
  XXH3_64bits_reset(state);
  // A local fill count: kept in a register, where a member would be reloaded after every copy
  // (the copied bytes may alias it).
  std::size_t fill = 0;
  auto gather = [state, buf, &fill, &addr](MPI_Aint off, MPI_Aint len) {
    const auto k = static_cast<std::size_t>(len);
    if (fill + k > HashBuffer::kBytes) [[unlikely]] {
      XXH3_64bits_update(state, buf, fill);
      fill = 0;
      if (k > HashBuffer::kBytes) {  // a long block goes in as it lies
        XXH3_64bits_update(state, addr(off), k);
        return;
      }
    }
    std::memcpy(buf + fill, addr(off), k);
    fill += k;
  };
  const MPI_Aint extent = n.bounds.extent();
  if (column) {
    // A column: a buffer's worth of blocks at a time, in a loop of its own (one load and
    // store per block of the usual sizes).
    const MPI_Aint per = static_cast<MPI_Aint>(HashBuffer::kBytes) / first.len;
    for (MPI_Aint k = 0; k < first.count;) {
      const MPI_Aint m = std::min(per, first.count - k);
      const std::size_t filled =
          gather_strided(buf, addr(first.disp + k * first.stride), first.len, m, first.stride);
      XXH3_64bits_update(state, buf, filled);
      k += m;
    }
  } else {
    for (MPI_Count i = 0; i < count; ++i) for_each_block(n.program, i * extent, size, gather);
  }
  XXH3_64bits_update(state, buf, fill);
  bytes = count * size;
  return XXH3_64bits_digest(state);
}

}  // namespace encore::replay
