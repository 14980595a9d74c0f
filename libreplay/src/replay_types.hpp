// Datatypes as the replay needs them: sizes and extents for receive layouts, unpacking recorded
// bytes into the program's buffers, hashing sent data to check it. All of it is answered by
// libreplay's own datatype engine (src/datatypes/), which knows MPICH's layouts exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "datatypes/type_engine.hpp"
#include <mpi.h>

namespace encore::replay {

struct RecvBlock {
  void* base;
  MPI_Count count;
  MPI_Datatype type;
};
using RecvBlocks = std::vector<RecvBlock>;
// At most one block, which is what most collectives receive into: no vector to allocate on
// every call. Converts to RecvBlocks where a request keeps its layout.
struct OneBlock {
  RecvBlock block{nullptr, 0, MPI_DATATYPE_NULL};
  bool present = false;
  OneBlock() = default;
  OneBlock(void* base, MPI_Count count, MPI_Datatype type)
      : block{base, count, type}, present(true) {}
  operator RecvBlocks() const { return present ? RecvBlocks{block} : RecvBlocks{}; }
};

class Types {
 public:
  TypeEngine& engine() noexcept { return engine_; }
  std::int64_t size(MPI_Datatype t) const { return engine_.size(t); }
  MPI_Aint extent(MPI_Datatype t) const { return engine_.extent(t).extent; }
  // Copies packed bytes (the first ones of `count` elements of t: a message may be shorter than
  // the buffer posted) into buf.
  void unpack(std::span<const std::byte> packed, MPI_Count count, MPI_Datatype t, void* buf) const {
    const auto bytes = static_cast<MPI_Count>(packed.size());
    if (!engine_.unpack_one_block(packed.data(), bytes, count, t, buf))
      engine_.unpack_bytes(packed.data(), bytes, count, t, buf);
  }

 private:
  TypeEngine engine_;
};

}  // namespace encore::replay
