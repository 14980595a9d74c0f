// MPICH 4.0.2's predefined datatypes as the replay needs them: size and extent, the alignment
// MPICH pads structs with, how they split into basic elements and how each element is written
// in external32. Values were measured against the real library (tests/replay_datatypes).
#pragma once

#include <cstdint>

#include <mpi.h>

namespace encore::replay {

// How one basic element is converted to external32 (big-endian, fixed sizes).
enum class Ext32 : std::uint8_t {
  copy,            // bytes as they are (char, byte, bool)
  swap,            // reverse the bytes of the element
  swap_halves,     // complex: reverse each half
  signed_int,      // two's complement integer whose external size differs from native
  unsigned_int,    // unsigned integer whose external size differs from native
  long_double,     // x87 80-bit extended <-> IEEE binary128
  long_double_cx,  // complex of x87 long doubles
  unsupported,     // no external32 form (MPIX_C_FLOAT16, MPI_LB/UB)
};

struct Predefined {
  MPI_Datatype handle;
  const char* name;
  std::int32_t size;     // bytes of data
  std::int32_t extent;   // == size except for the padded pair types
  std::int32_t true_ub;  // end of the data (SHORT_INT: 8, not 6)
  std::int32_t align;    // MPICH's alignsize, used to pad structs
  // Basic elements in signature order: one for ordinary types, two for MPI_2INT and the
  // value/index pair types. A complex is ONE basic element (MPI_Get_elements counts it once).
  MPI_Datatype parts[2];
  std::int32_t part_offset[2];  // where each part lives inside one element
  std::int32_t ext32_size;      // external32 bytes of one basic element (parts only)
  Ext32 ext32;
};

// Null when `handle` is not a predefined MPICH datatype (MPI_DATATYPE_NULL is not one).
const Predefined* find_predefined(MPI_Datatype handle) noexcept;

// A representative of the yaksa type object MPICH uses for `handle` (MPI_INT, MPI_UNSIGNED,
// MPI_INTEGER -> MPI_INT32_T; MPI_2REAL -> MPI_C_FLOAT_COMPLEX; ...): a struct whose entries
// all share one object is built as an unpadded hindexed.
MPI_Datatype yaksa_representative(MPI_Datatype handle) noexcept;

// Every predefined type, for tests and for filling the engine's table.
const Predefined* predefined_begin() noexcept;
const Predefined* predefined_end() noexcept;

}  // namespace encore::replay
