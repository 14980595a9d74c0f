// Communicator attributes in the replay. Since format 1.1 the trace holds the value of a
// predefined key (MPI_TAG_UB, MPI_HOST, ...) as the recorded run saw it, from C and Fortran;
// older traces hold only whether a key had a value (`flag`), and predefined keys are answered
// with the values MPICH 4.0.2, whose ABI the replay implements, gives (measured under mpiexec).
// Values the program attached itself are kept here, as MPI keeps them, and the program's copy
// and delete callbacks run where MPICH runs them: a value replaced or deleted, MPI_Comm_dup and
// MPI_Type_dup (copy), MPI_Comm_free and MPI_Type_free, and MPI_Finalize on MPI_COMM_SELF then
// MPI_COMM_WORLD (delete). Order as MPICH's (measured): an object's newest key first, a
// replaced value keeps its place, a duplicate keeps its original's order.
#pragma once

#include <cstdint>

#include <mpi.h>

namespace encore::replay {

class Step;

namespace rattr {
// How an attribute value is passed (MPICH's MPIR_Attr_type): C pointers, Fortran integers.
enum class Kind { pointer = 0, aint = 1, fint = 3 };

// After MPI_Comm_get_attr/MPI_Attr_get answered `flag` from the record: the value.
void get(Step& s, MPI_Comm comm, int keyval, void* value, int flag);
// MPI_Type_get_attr: the value the program set on the type (or a copy callback made).
void get_type(Step& s, MPI_Datatype type, int keyval, void* value, int flag);
// Comm, type and window handles are all ints in MPICH: one store, by handle.
void set(std::int64_t object, int keyval, void* value);
void erase(std::int64_t object, int keyval);

// MPI_Comm_create_keyval, MPI_Keyval_create, MPI_Type_create_keyval: the program's callbacks
// (null for MPI_*_NULL_*_FN) and extra state.
void keyval_created(int keyval, void* copy_fn, void* delete_fn, void* extra_state);
// libmpichfort's MPII_Keyval_set_proxy: the key's callbacks are Fortran procedures.
void keyval_fortran(int keyval);
// A successful MPI_Comm_dup/MPI_Type_dup: copy callbacks from `from`'s attributes to `to`.
void copy(std::int64_t from, std::int64_t to);
// The object is freed: delete callbacks on each of its attributes.
void release(std::int64_t object);
// MPI_Finalize: MPI_COMM_SELF's attributes, then MPI_COMM_WORLD's.
void finalize();
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
