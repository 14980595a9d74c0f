// Where an operation's received data lands in the program's memory: a list of blocks, each
// `count` elements of `type` at `base`. Collectives build it from their arguments when they are
// called (nonblocking ones keep it until they complete); payload capture walks it.
#pragma once

#include <cstdint>
#include <vector>

#include <mpi.h>

namespace encore::dump {

struct RecvBlock {
  const void* base;
  MPI_Count count;
  MPI_Datatype type;
};
using RecvLayout = std::vector<RecvBlock>;

class Call;

// One function per shape of receive buffer; see mpi_overlay.py for which collective uses which.
namespace layout {
RecvLayout whole(Call& c, const void* buf, MPI_Count count, MPI_Datatype type);
// MPI_Exscan leaves rank 0's buffer undefined: nothing is received there.
RecvLayout exscan(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm);
RecvLayout bcast(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, int root,
                 MPI_Comm comm);
RecvLayout at_root(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, int root,
                   MPI_Comm comm);
RecvLayout gather(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, int root,
                  MPI_Comm comm);
template <class C, class D>
RecvLayout gatherv(Call& c, const void* buf, const C* counts, const D* displs, MPI_Datatype type,
                   int root, MPI_Comm comm);
template <class C>
RecvLayout mine(Call& c, const void* buf, const C* counts, MPI_Datatype type, MPI_Comm comm);
RecvLayout blocks(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                  bool neighbor);
template <class C, class D>
RecvLayout blocks_v(Call& c, const void* buf, const C* counts, const D* displs, MPI_Datatype type,
                    MPI_Comm comm, bool neighbor);
template <class C, class D>
RecvLayout blocks_w(Call& c, const void* buf, const C* counts, const D* byte_displs,
                    const MPI_Datatype* types, MPI_Comm comm, bool neighbor);
}  // namespace layout

}  // namespace encore::dump
