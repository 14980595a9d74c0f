/* Neighbourhood collectives on Cartesian, graph and distributed-graph communicators, blocking,
 * nonblocking and persistent: every receive buffer (PROC_NULL slots included, which MPI leaves
 * untouched) goes into the digest, so a replay that misplaces a block changes it. */
#include <stdint.h>
#include <string.h>

#include "digest.h"
#include <mpi.h>

#define MAXN 8 /* in-neighbours at most (2-D cart: 4) */

static uint64_t recv_hash;

static void fill(int* p, int n, int seed) {
  for (int i = 0; i < n; ++i) p[i] = seed * 1000 + i;
}

static void take(const void* p, size_t bytes) { digest_update(&recv_hash, p, bytes); }

/* One round of every neighbourhood collective on comm, whose in/out-degree is deg. */
static void round_on(MPI_Comm comm, int deg, int seed) {
  int send[2 * MAXN], recv[2 * MAXN];
  int counts[MAXN], displs[MAXN];
  MPI_Aint bdispls[MAXN];
  MPI_Datatype types[MAXN];
  for (int i = 0; i < deg; ++i) {
    counts[i] = 2;
    displs[i] = 2 * (deg - 1 - i); /* reversed: the layout must follow the displacements */
    bdispls[i] = displs[i] * (MPI_Aint)sizeof(int);
    types[i] = MPI_INT;
  }
  fill(send, 2 * MAXN, seed);

  memset(recv, 0xee, sizeof recv);
  MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, comm);
  take(recv, sizeof recv);
  memset(recv, 0xee, sizeof recv);
  MPI_Neighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, comm);
  take(recv, sizeof recv);
  memset(recv, 0xee, sizeof recv);
  MPI_Neighbor_allgatherv(send, 2, MPI_INT, recv, counts, displs, MPI_INT, comm);
  take(recv, sizeof recv);
  memset(recv, 0xee, sizeof recv);
  MPI_Neighbor_alltoallv(send, counts, displs, MPI_INT, recv, counts, displs, MPI_INT, comm);
  take(recv, sizeof recv);
  memset(recv, 0xee, sizeof recv);
  MPI_Neighbor_alltoallw(send, counts, bdispls, types, recv, counts, bdispls, types, comm);
  take(recv, sizeof recv);

  MPI_Request req[2];
  int recv2[2 * MAXN];
  memset(recv, 0xee, sizeof recv);
  memset(recv2, 0xee, sizeof recv2);
  MPI_Ineighbor_alltoall(send, 2, MPI_INT, recv, 2, MPI_INT, comm, &req[0]);
  MPI_Ineighbor_allgatherv(send, 2, MPI_INT, recv2, counts, displs, MPI_INT, comm, &req[1]);
  MPI_Status st[2];
  MPI_Waitall(2, req, st);
  take(recv, sizeof recv);
  take(recv2, sizeof recv2);
  memset(recv, 0xee, sizeof recv);
  MPI_Ineighbor_alltoallw(send, counts, bdispls, types, recv, counts, bdispls, types, comm,
                          &req[0]);
  MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  take(recv, sizeof recv);

  /* Persistent: started twice, the buffer refilled between the rounds. */
  MPI_Neighbor_allgather_init(send, 2, MPI_INT, recv, 2, MPI_INT, comm, MPI_INFO_NULL, &req[0]);
  for (int k = 0; k < 2; ++k) {
    memset(recv, 0xee, sizeof recv);
    send[0] = seed + k;
    MPI_Start(&req[0]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    take(recv, sizeof recv);
  }
  MPI_Request_free(&req[0]);
}

/* Distributed graph, general form: rank 0 names every edge of a ring, so each rank has one
 * in-neighbour; `ask` says whether the program asks MPI for its degrees (then the edges have
 * weights). */
static void general_dist_graph(int rank, int size, int ask) {
  int n = rank == 0 ? size : 0, degrees[MAXN], targets[MAXN], nodes[MAXN], weights[MAXN];
  for (int r = 0; r < size && r < MAXN; ++r) {
    nodes[r] = r;
    degrees[r] = 1;
    targets[r] = (r + 1) % size;
    weights[r] = 10 + r;
  }
  MPI_Comm dist2;
  MPI_Dist_graph_create(MPI_COMM_WORLD, n, nodes, degrees, targets, ask ? weights : MPI_UNWEIGHTED,
                        MPI_INFO_NULL, 0, &dist2);
  int indeg = 1, outdeg, weighted;
  if (ask) MPI_Dist_graph_neighbors_count(dist2, &indeg, &outdeg, &weighted);
  round_on(dist2, indeg, rank + 6);
  MPI_Comm_free(&dist2);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  digest_init(&recv_hash);
  /* "unasked": only the general distributed graph, its in-degree never asked for, which a
   * replay cannot learn from this rank's trace. */
  if (argc > 1) {
    general_dist_graph(rank, size, 0);
    MPI_Finalize();
    return 0;
  }

  /* 2-D Cartesian, periodic in the first dimension only: the second has PROC_NULL neighbours. */
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart, cart_dup, row;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  round_on(cart, 4, rank + 1);
  MPI_Comm_dup(cart, &cart_dup); /* keeps the topology */
  round_on(cart_dup, 4, rank + 2);
  int remain[2] = {1, 0};
  MPI_Cart_sub(cart, remain, &row);
  round_on(row, 2, rank + 3);

  /* Graph: a ring (with 2 ranks, each has the other one twice). */
  int index[MAXN * 4], edges[MAXN * 8];
  for (int r = 0; r < size; ++r) {
    index[r] = 2 * (r + 1);
    edges[2 * r] = (r + size - 1) % size;
    edges[2 * r + 1] = (r + 1) % size;
  }
  MPI_Comm graph;
  MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
  round_on(graph, 2, rank + 4);

  /* Distributed graph, adjacent form: hear from the left, talk to the right, and back. */
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  int srcs[2] = {left, right}, dsts[2] = {right, left};
  MPI_Comm dist;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &dist);
  round_on(dist, 2, rank + 5);

  general_dist_graph(rank, size, 1);

  MPI_Comm_free(&dist);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart_dup);
  MPI_Comm_free(&cart);
  digest_report(MPI_COMM_WORLD, recv_hash, (uint64_t)size);
  MPI_Finalize();
  return 0;
}
