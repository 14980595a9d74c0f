// Communicator attributes in the replay. Since format 1.1 the trace holds the value of a
// predefined key (MPI_TAG_UB, MPI_HOST, ...) as the recorded run saw it, from C and Fortran;
// older traces hold only whether a key had a value (`flag`), and predefined keys are answered
// with the values MPICH 4.0.2, whose ABI the replay implements, gives (measured under mpiexec).
// Values the program attached itself are kept here, as MPI keeps them.
#pragma once

#include <mpi.h>

namespace encore::replay {

class Step;

namespace rattr {
// How an attribute value is passed (MPICH's MPIR_Attr_type): C pointers, Fortran integers.
enum class Kind { pointer = 0, aint = 1, fint = 3 };

// After MPI_Comm_get_attr/MPI_Attr_get answered `flag` from the record: the value.
void get(Step& s, MPI_Comm comm, int keyval, void* value, int flag);
void set(MPI_Comm comm, int keyval, void* value);
void erase(MPI_Comm comm, int keyval);
// MPI_Add_error_class moves MPI_LASTUSEDCODE (MPICH: codes added to a class do not).
void error_class_added(int error_class);

// libmpichfort's MPII_Comm_get_attr. Traces since 1.1 recorded it as an MPI_Comm_get_attr
// event (libdump wraps the helper), which is replayed; in older ones there is no event, so the
// flag is answered here too (MPICH's under mpiexec for predefined keys). Returns the MPI error
// code and sets *flag.
int fortran_get(MPI_Comm comm, int keyval, void* value, int* flag, Kind kind);
void fortran_set(MPI_Comm comm, int keyval, void* value);
}  // namespace rattr

}  // namespace encore::replay
