// The predefined type MPI_Type_create_f90_real/_complex/_integer stand for, as MPICH chooses
// it (Fortran's selected_*_kind): the replay builds their types as duplicates of it. MPICH
// here has 4- and 8-byte reals and 1- to 8-byte integers; MPI_UNDEFINED leaves a bound free.
// MPI_DATATYPE_NULL where MPICH has none (the recorded call failed, and is not built).
#pragma once

#include <mpi.h>

namespace encore::replay::f90 {

inline int bound(int v) { return v == MPI_UNDEFINED ? 0 : v; }

inline MPI_Datatype real(int p, int r) {
  if (bound(p) <= 6 && bound(r) <= 37) return MPI_REAL4;
  if (bound(p) <= 15 && bound(r) <= 307) return MPI_REAL8;
  return MPI_DATATYPE_NULL;
}

inline MPI_Datatype complex(int p, int r) {
  const MPI_Datatype part = real(p, r);
  return part == MPI_REAL4 ? MPI_COMPLEX8 : part == MPI_REAL8 ? MPI_COMPLEX16 : MPI_DATATYPE_NULL;
}

inline MPI_Datatype integer(int r) {
  if (bound(r) <= 2) return MPI_INTEGER1;
  if (bound(r) <= 4) return MPI_INTEGER2;
  if (bound(r) <= 9) return MPI_INTEGER4;
  if (bound(r) <= 18) return MPI_INTEGER8;
  return MPI_DATATYPE_NULL;
}

}  // namespace encore::replay::f90
