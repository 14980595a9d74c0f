/* Collectives on an intercommunicator between the even and the odd ranks, for the capture's
 * contribution hashes and the replay: test_intercomm FILL, on 2 or 3 ranks (3: groups of two
 * and one, so a group's size and the remote group's differ). Rank 0's group is the root side
 * of the rooted calls but MPI_Gather's, rank 0 its root. Every input is made from FILL
 * (received data goes elsewhere), so a replay given another FILL contributes other data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define N 4
#define T (2 * N) /* each group's reduce-scatter input: the two groups' must agree */

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILL\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 5, &inter);
  int local = 0, remote = 0;
  MPI_Comm_size(inter, &local);
  MPI_Comm_remote_size(inter, &remote);
  double a[T], b[T * 2], c[N];
  for (int i = 0; i < T; ++i) a[i] = atof(argv[1]) + 10 * rank + i;
  const int left = rank % 2 == 0;
  const int root = left ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  const MPI_Datatype d = MPI_DOUBLE;
  memcpy(c, a, sizeof c);
  MPI_Bcast(left ? a : c, N, d, root, inter);
  MPI_Reduce(a, b, N, d, MPI_SUM, root, inter);
  MPI_Allreduce(a, b, N, d, MPI_SUM, inter);
  MPI_Gather(a, N, d, b, N, d, left ? 0 : (rank == 1 ? MPI_ROOT : MPI_PROC_NULL), inter);
  MPI_Scatter(a, N, d, b, N, d, root, inter);
  MPI_Allgather(a, N, d, b, N, d, inter);
  MPI_Alltoall(a, N, d, b, N, d, inter);
  /* The send buffer holds the own group's T elements, its size times the receive count. */
  MPI_Reduce_scatter_block(a, b, T / local, d, MPI_SUM, inter);
  int counts[2] = {T / local, T / local};
  MPI_Reduce_scatter(a, b, counts, d, MPI_SUM, inter);
  MPI_Barrier(inter);
  printf("rank %d of %d+%d received %g %g\n", rank, local, remote, b[0], c[0]);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
