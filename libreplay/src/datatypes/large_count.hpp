// The MPI-4 large-count (`_c`) datatype constructors, built by the same engine as the int ones:
// their MPI_Count arguments are narrowed to the engine's int counts, and a value that does not
// fit is a DatatypeError naming it (the engine's block programs count in int).
#pragma once

#include "type_engine.hpp"
#include <mpi.h>

namespace encore::replay::large {

MPI_Datatype contiguous(TypeEngine& e, MPI_Count count, MPI_Datatype oldtype);
MPI_Datatype vector(TypeEngine& e, MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                    MPI_Datatype oldtype);
MPI_Datatype hvector(TypeEngine& e, MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                     MPI_Datatype oldtype);
MPI_Datatype indexed(TypeEngine& e, MPI_Count count, const MPI_Count* blocklengths,
                     const MPI_Count* displacements, MPI_Datatype oldtype);
MPI_Datatype hindexed(TypeEngine& e, MPI_Count count, const MPI_Count* blocklengths,
                      const MPI_Count* displacements, MPI_Datatype oldtype);
MPI_Datatype indexed_block(TypeEngine& e, MPI_Count count, MPI_Count blocklength,
                           const MPI_Count* displacements, MPI_Datatype oldtype);
MPI_Datatype hindexed_block(TypeEngine& e, MPI_Count count, MPI_Count blocklength,
                            const MPI_Count* displacements, MPI_Datatype oldtype);
MPI_Datatype create_struct(TypeEngine& e, MPI_Count count, const MPI_Count* blocklengths,
                           const MPI_Count* displacements, const MPI_Datatype* types);
MPI_Datatype subarray(TypeEngine& e, int ndims, const MPI_Count* sizes, const MPI_Count* subsizes,
                      const MPI_Count* starts, int order, MPI_Datatype oldtype);
MPI_Datatype darray(TypeEngine& e, int size, int rank, int ndims, const MPI_Count* gsizes,
                    const int* distribs, const int* dargs, const int* psizes, int order,
                    MPI_Datatype oldtype);
MPI_Datatype resized(TypeEngine& e, MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent);

}  // namespace encore::replay::large
