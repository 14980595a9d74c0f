// Datatypes as the replay needs them: sizes and extents for receive layouts, unpacking recorded
// bytes into the program's buffers, packing sent data to check its hash. Predefined types are
// known from MPICH's handle encoding; derived types come from libreplay's datatype engine.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace encore::replay {

struct RecvBlock {
  void* base;
  MPI_Count count;
  MPI_Datatype type;
};
using RecvBlocks = std::vector<RecvBlock>;

class Types {
 public:
  std::int64_t size(MPI_Datatype t) const;
  MPI_Aint extent(MPI_Datatype t) const;
  // Copies `bytes` packed bytes (the first elements of `count` of type t) into buf.
  void unpack(std::span<const std::byte> packed, MPI_Count count, MPI_Datatype t, void* buf) const;
  // The packed bytes of count elements (a view of buf when the type is contiguous).
  std::span<const std::byte> pack(const void* buf, MPI_Count count, MPI_Datatype t,
                                  std::vector<std::byte>& scratch) const;
  bool contiguous(MPI_Datatype t) const;
};

}  // namespace encore::replay
