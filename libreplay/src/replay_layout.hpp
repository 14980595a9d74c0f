// Where a collective's received data goes in the program's memory, computed from the call's
// arguments exactly as libdump computed it when recording (recv_layout.hpp there).
#pragma once

#include <mpi.h>

#include "replay_types.hpp"

namespace encore::replay {

class Step;

namespace rlayout {
RecvBlocks whole(Step& s, void* buf, MPI_Count count, MPI_Datatype type);
RecvBlocks exscan(Step& s, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);
RecvBlocks bcast(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
RecvBlocks at_root(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
RecvBlocks gather(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
template <class C, class D>
RecvBlocks gatherv(Step& s, void* buf, const C* counts, const D* displs, MPI_Datatype type, int root,
                   MPI_Comm comm);
template <class C>
RecvBlocks mine(Step& s, void* buf, const C* counts, MPI_Datatype type, MPI_Comm comm);
RecvBlocks blocks(Step& s, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                  bool neighbor);
template <class C, class D>
RecvBlocks blocks_v(Step& s, void* buf, const C* counts, const D* displs, MPI_Datatype type,
                    MPI_Comm comm, bool neighbor);
template <class C, class D>
RecvBlocks blocks_w(Step& s, void* buf, const C* counts, const D* byte_displs,
                    const MPI_Datatype* types, MPI_Comm comm, bool neighbor);
}  // namespace rlayout

}  // namespace encore::replay
