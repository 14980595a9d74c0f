// MPI_Type_create_subarray and MPI_Type_create_darray, composed from the basic constructors
// exactly as MPICH composes them (type_create_subarray.c, type_create_darray.c), so bounds,
// padding and data order match. Arguments MPI rejects raise DatatypeError.
#pragma once

#include "type_builders.hpp"

namespace encore::replay {

NewNode build_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts,
                       int order, const TypeNode& old);

NewNode build_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                     const int* dargs, const int* psizes, int order, const TypeNode& old);

}  // namespace encore::replay
