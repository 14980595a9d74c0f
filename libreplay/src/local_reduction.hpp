// MPI_Reduce_local in replay: a purely local computation, so it runs on this machine as the
// program asked (its time is the rank's compute), with no data from the trace. A user's
// operation is called as MPI would call it; the predefined operations are computed here on the
// predefined datatypes they are defined for (integers, floating point, complex, logical, byte,
// and the MINLOC/MAXLOC pair types; MPI 4.0 section 6.9.2).
#pragma once

#include <string>

#include <mpi.h>

namespace encore::replay {

// The function MPI_Op_create(_c) was given for a user's operation.
struct UserOp {
  void* fn = nullptr;
  bool large = false;  // MPI_User_function_c (MPI_Count *len) rather than MPI_User_function
};

// inoutbuf[i] = inbuf[i] op inoutbuf[i] for `count` elements of `type`. `user` is the user's
// operation when `op` is one (else null). Returns why it cannot be done here (empty: done).
std::string reduce_local(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype type,
                         MPI_Op op, const UserOp* user);

}  // namespace encore::replay
