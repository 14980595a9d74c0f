// The "external32" representation of MPI_Pack_external: big-endian, fixed sizes per basic
// type (MPI standard, "External Data Representation"). Converts a native packed stream (what
// pack() writes) element by element, following the type signature.
//
// Not supported (DatatypeError): MPIX_C_FLOAT16 (external32 has no such type). Integers whose
// external32 size is smaller than native (MPI_LONG, MPI_UNSIGNED_LONG: 4; MPI_WCHAR: 2) are
// narrowed and raise DatatypeError when the value does not fit (MPI_ERR_CONVERSION).
// MPI_LONG_DOUBLE is converted between x87 80-bit and IEEE binary128; unpacking truncates the
// 49 low fraction bits x87 cannot hold.
#pragma once

#include <cstddef>

#include "signature.hpp"
#include <mpi.h>

namespace encore::replay {

// external32 bytes of one element with signature `s`.
MPI_Count external32_size(const Signature& s);

void native_to_external32(const Signature& s, MPI_Count count, const std::byte* native,
                          std::byte* external);
void external32_to_native(const Signature& s, MPI_Count count, const std::byte* external,
                          std::byte* native);

}  // namespace encore::replay
