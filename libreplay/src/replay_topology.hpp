// Process topologies of the replayed communicators, rebuilt from the recorded constructor calls
// (MPI has no call that would tell the replay otherwise). Neighbourhood collectives receive one
// block per in-neighbour: 2*ndims for a Cartesian communicator (-1 then +1 per dimension), the
// rank's neighbours in index/edges for a graph, the in-degree for a distributed graph.
#pragma once

#include <mpi.h>

namespace encore::replay {

class Step;

namespace rtopo {
void cart(Step& s, MPI_Comm made, int ndims);
void cart_sub(Step& s, MPI_Comm parent, const int* remain_dims, MPI_Comm made);
void graph(Step& s, MPI_Comm made, int nnodes, const int* index);
// MPI_Dist_graph_create: each rank names edges of other ranks, so the in-degree is not in this
// rank's arguments. Since format 1.1 the event holds the rank's neighbour lists; in older
// traces only a later MPI_Dist_graph_neighbors_count tells it (`degrees`).
void dist_graph(Step& s, MPI_Comm made);
void degrees(Step& s, MPI_Comm comm, int indegree, int outdegree);
void inherit(Step& s, MPI_Comm parent, MPI_Comm made);  // MPI_Comm_dup keeps the topology
// The number of blocks a neighbourhood collective on comm receives; fails if it is not known.
int in_degree(Step& s, MPI_Comm comm);
// The number of blocks it sends: the out-degree.
int out_degree(Step& s, MPI_Comm comm);
}  // namespace rtopo

}  // namespace encore::replay
