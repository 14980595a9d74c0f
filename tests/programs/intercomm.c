/* Collectives on an intercommunicator between the even and the odd ranks, for the capture's
 * contribution hashes and the replay: test_intercomm FILL, on 2 ranks. Rank 0's group is the
 * root side of the rooted calls but MPI_Gather's. Every input is made from FILL (received data
 * goes elsewhere), so a replay given another FILL contributes other data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define N 4

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
  double a[N], b[N], c[N];
  for (int i = 0; i < N; ++i) a[i] = atof(argv[1]) + 10 * rank + i;
  const int left = rank % 2 == 0;
  const MPI_Datatype d = MPI_DOUBLE;
  memcpy(c, a, sizeof c);
  MPI_Bcast(left ? a : c, N, d, left ? MPI_ROOT : 0, inter);
  MPI_Reduce(a, b, N, d, MPI_SUM, left ? MPI_ROOT : 0, inter);
  MPI_Allreduce(a, b, N, d, MPI_SUM, inter);
  MPI_Gather(a, N, d, b, N, d, left ? 0 : MPI_ROOT, inter);
  MPI_Scatter(a, N, d, b, N, d, left ? MPI_ROOT : 0, inter);
  MPI_Allgather(a, N, d, b, N, d, inter);
  MPI_Alltoall(a, N, d, b, N, d, inter);
  MPI_Barrier(inter);
  printf("rank %d received %g %g\n", rank, b[0], c[0]);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
