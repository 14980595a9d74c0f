// Where a collective's received data goes in the program's memory, computed from the call's
// arguments exactly as libdump computed it when recording (recv_layout.hpp there).
#pragma once

#include "replay_types.hpp"
#include <mpi.h>

namespace encore::replay {

class Step;

namespace rlayout {
OneBlock whole(Step& s, void* buf, MPI_Count count, MPI_Datatype type);
OneBlock exscan(Step& s, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);
OneBlock bcast(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
OneBlock at_root(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
OneBlock gather(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
template <class C, class D>
RecvBlocks gatherv(Step& s, void* buf, const C* counts, const D* displs, MPI_Datatype type,
                   int root, MPI_Comm comm);
template <class C>
OneBlock mine(Step& s, void* buf, const C* counts, MPI_Datatype type, MPI_Comm comm);
OneBlock blocks(Step& s, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                bool neighbor);
template <class C, class D>
RecvBlocks blocks_v(Step& s, void* buf, const C* counts, const D* displs, MPI_Datatype type,
                    MPI_Comm comm, bool neighbor);
template <class C, class D>
RecvBlocks blocks_w(Step& s, void* buf, const C* counts, const D* byte_displs,
                    const MPI_Datatype* types, MPI_Comm comm, bool neighbor);
}  // namespace rlayout

}  // namespace encore::replay
