// The replay's own MPI datatype engine. libreplay replaces MPICH, so every datatype the
// application builds lives here, keyed by the MPI_Datatype handle value the application
// holds. Predefined handles are MPICH's own constants (baked into the application from
// MPICH's mpi.h); derived types get 0x8c100000 + n, which no MPICH predefined handle uses and
// which is never reused. Queries answer exactly what MPICH 4.0.2 answers; pack and unpack
// produce MPI_Pack's bytes. Errors raise DatatypeError.
//
// Thread-compatible: one engine per replayed rank, used from one thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "datatype_error.hpp"
#include "type_node.hpp"
#include <mpi.h>

#include "encore/event_body.hpp"

namespace encore::replay {

class TypeEngine {
 public:
  static constexpr MPI_Datatype kFirstHandle = static_cast<MPI_Datatype>(0x8c100000);

  TypeEngine();

  // --- Constructors: MPI's C arguments; the result is a new, uncommitted handle.
  MPI_Datatype contiguous(int count, MPI_Datatype oldtype);
  MPI_Datatype vector(int count, int blocklength, int stride, MPI_Datatype oldtype);
  MPI_Datatype hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype);
  MPI_Datatype indexed(int count, const int* blocklengths, const int* displacements,
                       MPI_Datatype oldtype);
  MPI_Datatype hindexed(int count, const int* blocklengths, const MPI_Aint* displacements,
                        MPI_Datatype oldtype);
  MPI_Datatype indexed_block(int count, int blocklength, const int* displacements,
                             MPI_Datatype oldtype);
  MPI_Datatype hindexed_block(int count, int blocklength, const MPI_Aint* displacements,
                              MPI_Datatype oldtype);
  MPI_Datatype create_struct(int count, const int* blocklengths, const MPI_Aint* displacements,
                             const MPI_Datatype* types);
  MPI_Datatype subarray(int ndims, const int* sizes, const int* subsizes, const int* starts,
                        int order, MPI_Datatype oldtype);
  MPI_Datatype darray(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                      const int* dargs, const int* psizes, int order, MPI_Datatype oldtype);
  MPI_Datatype resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent);
  MPI_Datatype dup(MPI_Datatype oldtype);  // committed if oldtype is
  // The MPI-1 names removed in MPI-3: MPICH maps them onto the create_ versions (same
  // combiners MPI_COMBINER_HVECTOR / HINDEXED / STRUCT).
  MPI_Datatype hvector_mpi1(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype) {
    return hvector(count, blocklength, stride, oldtype);
  }
  MPI_Datatype hindexed_mpi1(int count, const int* blocklengths, const MPI_Aint* displacements,
                             MPI_Datatype oldtype) {
    return hindexed(count, blocklengths, displacements, oldtype);
  }
  MPI_Datatype struct_mpi1(int count, const int* blocklengths, const MPI_Aint* displacements,
                           const MPI_Datatype* types) {
    return create_struct(count, blocklengths, displacements, types);
  }

  void commit(MPI_Datatype type);  // a no-op for predefined types, as in MPICH
  // Releases the handle and sets it to MPI_DATATYPE_NULL; types built from it stay valid.
  void free(MPI_Datatype& type);

  bool is_valid(MPI_Datatype type) const noexcept { return table_.count(type) != 0; }
  bool is_committed(MPI_Datatype type) const;
  bool is_predefined(MPI_Datatype type) const;

  // --- Queries (MPI_Type_size, _get_extent, _get_true_extent, ...)
  struct Extent {
    MPI_Aint lb;
    MPI_Aint extent;
  };
  struct Envelope {
    int num_integers, num_addresses, num_datatypes, combiner;
  };
  MPI_Count size(MPI_Datatype type) const;
  Extent extent(MPI_Datatype type) const;
  Extent true_extent(MPI_Datatype type) const;
  Envelope envelope(MPI_Datatype type) const;
  // Like MPI_Type_get_contents: derived types among the returned ones gain a reference the
  // caller must free (a freed part comes back to life under its old handle). Predefined
  // types have no contents (DatatypeError, as MPICH's MPI_ERR_TYPE).
  Contents contents(MPI_Datatype type);
  // MPI_Get_elements / MPI_Get_count for a message of `bytes` bytes (MPI_UNDEFINED when not
  // a whole number).
  MPI_Count get_elements(MPI_Datatype type, MPI_Count bytes) const;
  MPI_Count get_count(MPI_Datatype type, MPI_Count bytes) const;
  // Element-size runs of one element (complex types as two halves, padding excluded).
  // Returns an empty vector when more than max_runs runs would be needed.
  std::vector<SignatureRun> signature(
      MPI_Datatype type, std::size_t max_runs = std::numeric_limits<std::size_t>::max()) const;
  // `count` elements are one block of count*size bytes starting at true_lb.
  bool is_contiguous(MPI_Datatype type, MPI_Count count = 1) const;
  // The node itself, for callers that look a type up once per call.
  const TypeNode& node(MPI_Datatype type) const {
    const CacheSlot& s = slot(type);  // inline when recently used: a checked send asks per call
    return *(s.entry && s.type == type ? s : lookup(type)).entry->node;
  }

  // --- Data movement, in type-signature order; return the bytes written or read.
  MPI_Count pack_size(MPI_Count count, MPI_Datatype type) const;
  MPI_Count pack(const void* inbuf, MPI_Count count, MPI_Datatype type, std::byte* out) const;
  MPI_Count unpack(const std::byte* in, MPI_Count count, MPI_Datatype type, void* outbuf) const;
  // A message shorter than posted: unpacks only its `bytes` bytes (at most count elements).
  MPI_Count unpack_bytes(const std::byte* in, MPI_Count bytes, MPI_Count count, MPI_Datatype type,
                         void* outbuf) const;
  // unpack_bytes() for the common case, inline: a committed type recently looked up whose
  // `count` elements are one block. False (nothing done) otherwise: call unpack_bytes().
  bool unpack_one_block(const std::byte* in, MPI_Count bytes, MPI_Count count, MPI_Datatype type,
                        void* outbuf) const {
    const CacheSlot& s = slot(type);
    if (!s.entry || s.type != type || !s.committed || count <= 0 || bytes <= 0 ||
        !s.one_block(count) || bytes > count * s.size)
      return false;
    copy_short(reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(outbuf) +
                                            static_cast<std::uintptr_t>(s.block_disp)),
               in, static_cast<std::size_t>(bytes));
    return true;
  }
  // XXH3-64 of the bytes pack() would write, without packing them all first: blocks are
  // gathered into a small buffer streamed into the hash (packed_hash.cpp). `bytes` gets the
  // packed size. The check of every replayed send with a derived type.
  std::uint64_t hash_packed(const void* inbuf, MPI_Count count, MPI_Datatype type,
                            MPI_Count& bytes) const;
  // The same hash of the packed bytes in the other byte order (each element reversed by the
  // type's signature, packed into `scratch` first): what a capture on a host of that order,
  // or one writing its payloads in it, hashed. False when the type's elements cannot be
  // converted (no signature, or sizes other than 1, 2, 4, 8, 16 bytes).
  bool hash_packed_swapped(const void* inbuf, MPI_Count count, MPI_Datatype type,
                           std::vector<std::byte>& scratch, std::uint64_t& hash,
                           MPI_Count& bytes) const;
  MPI_Count pack_external_size(MPI_Count count, MPI_Datatype type) const;
  MPI_Count pack_external(const void* inbuf, MPI_Count count, MPI_Datatype type,
                          std::byte* out) const;
  MPI_Count unpack_external(const std::byte* in, MPI_Count count, MPI_Datatype type,
                            void* outbuf) const;

 private:
  struct Entry {
    NodePtr node;
    int refs = 1;  // the application's handle plus references from get_contents
    bool predefined = false;
  };
  // Recently used handles: a receive or send looks its type up several times per call.
  // What the per-call paths need of the node is copied in, so that they read one line.
  struct CacheSlot {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    const Entry* entry = nullptr;  // table_ nodes do not move; forget() before erasing
    bool committed = false;
    bool single_block = false;  // TypeNode::single_block()
    bool contiguous = false;    // TypeNode::contiguous()
    MPI_Count size = 0;         // bounds.size
    MPI_Aint block_disp = 0;    // program[0].disp of a single block
    MPI_Aint true_lb = 0;
    // `count` elements are one block (TypeNode's test, as hash_packed and unpack ask it).
    bool one_block(MPI_Count count) const noexcept {
      return count == 1 ? single_block : contiguous;
    }
  };
  const CacheSlot& lookup(MPI_Datatype type) const;
  void forget(MPI_Datatype type) noexcept { slot(type) = CacheSlot{}; }
  CacheSlot& slot(MPI_Datatype type) const noexcept {
    const auto h = static_cast<std::uint32_t>(type);
    return cache_[(h ^ (h >> 8)) % cache_.size()];
  }
  const Entry& entry(MPI_Datatype type) const { return *lookup(type).entry; }
  const TypeNode& committed_node(MPI_Datatype type, const char* what) const;
  // hash_packed() for types that are not one recently used block.
  std::uint64_t hash_general(const void* inbuf, MPI_Count count, MPI_Datatype type,
                             MPI_Count& bytes) const;
  MPI_Datatype add(std::shared_ptr<TypeNode> node, Contents contents,
                   std::vector<NodePtr> children);
  MPI_Datatype add_simple(std::shared_ptr<TypeNode> node, int combiner, std::vector<int> ints,
                          std::vector<MPI_Aint> addrs, MPI_Datatype oldtype);
  MPI_Count copy_blocks(const TypeNode& n, std::byte* base, MPI_Count count, std::byte* packed,
                        MPI_Count bytes, bool to_packed) const;

  struct HashBuffer;  // packed_hash.cpp: the hash state and the gathering buffer
  struct HashBufferFree {
    void operator()(HashBuffer* b) const noexcept;
  };

  std::unordered_map<MPI_Datatype, Entry> table_;
  // Committed handles; kept after free so a part revived by contents() stays committed.
  std::unordered_set<MPI_Datatype> committed_;
  std::uint32_t next_ = 0;
  mutable std::array<CacheSlot, 8> cache_{};
  mutable std::unique_ptr<HashBuffer, HashBufferFree> hash_;  // made on the first derived send
};

}  // namespace encore::replay
