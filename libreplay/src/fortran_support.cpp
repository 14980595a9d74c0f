// What MPICH's Fortran library (libmpichfort, used by `mpif.h` and `use mpi` programs) needs from
// libmpich besides the MPI_/PMPI_ functions: a few data objects and internal attribute helpers.
// With them, a Fortran program replays under libreplay wherever libmpichfort is installed.
// mpi.h declares these objects; they must be visible outside the library like MPICH's.
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

#include "replay_attributes.hpp"

#define ENCORE_EXPORT __attribute__((visibility("default")))

namespace {
int unweighted_marker = 0;
int weights_empty_marker = 0;
MPI_Fint status_ignore_marker[sizeof(MPI_Status) / sizeof(int)] = {};
MPI_Fint statuses_ignore_marker[sizeof(MPI_Status) / sizeof(int)] = {};
MPI_F08_status f08_status_ignore_marker{};
MPI_F08_status f08_statuses_ignore_marker{};
}  // namespace

extern "C" {
// Visible outside the library through mpi.h's declarations (see the pragma above).
int* const MPI_UNWEIGHTED = &unweighted_marker;
int* const MPI_WEIGHTS_EMPTY = &weights_empty_marker;
MPI_Fint* MPI_F_STATUS_IGNORE = status_ignore_marker;
MPI_Fint* MPI_F_STATUSES_IGNORE = statuses_ignore_marker;
MPI_F08_status* MPI_F08_STATUS_IGNORE = &f08_status_ignore_marker;
MPI_F08_status* MPI_F08_STATUSES_IGNORE = &f08_statuses_ignore_marker;

// libmpichfort's attribute calls go to these internal helpers, not to MPI_Comm_get_attr. The
// capture wraps MPII_Comm_get_attr (traces since 1.1), which is replayed from its event; the
// others are answered locally, other objects as for a key with no value set.
ENCORE_EXPORT int MPII_Comm_get_attr(MPI_Comm comm, int keyval, void* value, int* flag, int kind) {
  return encore::replay::rattr::fortran_get(comm, keyval, value, flag,
                                            static_cast<encore::replay::rattr::Kind>(kind));
}
ENCORE_EXPORT int MPII_Type_get_attr(MPI_Datatype, int, void*, int* flag, int) {
  if (flag) *flag = 0;
  return MPI_SUCCESS;
}
ENCORE_EXPORT int MPII_Win_get_attr(MPI_Win, int, void*, int* flag, int) {
  if (flag) *flag = 0;
  return MPI_SUCCESS;
}
ENCORE_EXPORT int MPII_Comm_set_attr(MPI_Comm comm, int keyval, void* value, int) {
  encore::replay::rattr::fortran_set(comm, keyval, value);
  return MPI_SUCCESS;
}
ENCORE_EXPORT int MPII_Type_set_attr(MPI_Datatype, int, void*, int) { return MPI_SUCCESS; }
ENCORE_EXPORT int MPII_Win_set_attr(MPI_Win, int, void*, int) { return MPI_SUCCESS; }
ENCORE_EXPORT void MPII_Keyval_set_proxy(int keyval, void*, void*) {
  encore::replay::rattr::keyval_fortran(keyval);
}
// MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN and MPI_DUP_FN name this function of libmpich.
ENCORE_EXPORT int MPIR_Dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
ENCORE_EXPORT void MPII_Grequest_set_lang_f77(MPI_Request) {}
}
