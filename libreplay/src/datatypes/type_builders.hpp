// The type constructors without handles: each builds a node with the bounds MPICH 4.0.2
// computes (MPICH's zero-length shortcuts, then yaksa's formulas: yaksa is the typerep of
// Debian's libmpich, see src/frontend/types/yaksa_*.c), the data program and the signature.
// Contents are the engine's business. Counts and blocklengths are already validated (non-negative)
// by the caller.
#pragma once

#include <memory>

#include "type_node.hpp"
#include <mpi.h>

namespace encore::replay {

using NewNode = std::shared_ptr<TypeNode>;

NewNode build_predefined(const Predefined& p);
// What MPICH returns for a constructor with nothing in it (count 0, all blocks empty).
NewNode build_zerolen();
NewNode build_contiguous(MPI_Aint count, const TypeNode& old);
// stride is in bytes when `stride_in_bytes`, else in extents of `old`.
NewNode build_vector(MPI_Aint count, MPI_Aint blocklength, MPI_Aint stride, bool stride_in_bytes,
                     const TypeNode& old);
NewNode build_blockindexed(MPI_Aint count, MPI_Aint blocklength, const MPI_Aint* disps,
                           bool disps_in_bytes, const TypeNode& old);
NewNode build_indexed(MPI_Aint count, const MPI_Aint* blocklengths, const MPI_Aint* disps,
                      bool disps_in_bytes, const TypeNode& old);
// MPI_LB / MPI_UB entries set the bounds as in MPICH: struct of the rest, then resized.
NewNode build_struct(MPI_Aint count, const MPI_Aint* blocklengths, const MPI_Aint* disps,
                     const TypeNode* const* types);
NewNode build_resized(const TypeNode& old, MPI_Aint lb, MPI_Aint extent);
NewNode build_dup(const TypeNode& old);

}  // namespace encore::replay
