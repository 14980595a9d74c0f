/* Every kind of collective contribution, for the capture's contribution hashes and the
 * replay's check of them: test_contributions ROUNDS FILL, on exactly 2 ranks. Every input a rank
 * hands a collective (send buffers, and in-place receive buffers set just before the call) is
 * made from FILL, so a replay given another FILL contributes other data to each of them. The
 * order of the calls is what test_contributions.py expects. Two persistent sends started by one
 * MPI_Startall, and a light MPI_Send and MPI_Isend, end each round. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define N 8

static double fill_value;
static int rank;

static void set(double* v, int n) {
  for (int i = 0; i < n; ++i) v[i] = fill_value + 100.0 * rank + i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 3 || size != 2) {
    fprintf(stderr, "usage: %s ROUNDS FILL (on 2 ranks)\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = atoi(argv[1]);
  fill_value = atof(argv[2]);
  const MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Datatype d = MPI_DOUBLE;
  double a[4 * N], b[4 * N], digest = 0;
  int counts[2] = {N, N}, displs[2] = {0, N};
  int scatter_counts[2] = {N, N / 2};
  int a2a_send[2] = {N, 0}, a2a_recv[2] = {rank == 0 ? N : 0, rank == 0 ? N : 0};
  int w_counts[2] = {N, N}, w_displs[2] = {0, N * (int)sizeof(double)};
  MPI_Datatype w_types[2] = {MPI_DOUBLE, MPI_DOUBLE};
  MPI_Comm ring;
  const int periodic = 1;
  MPI_Cart_create(w, 1, &size, &periodic, 0, &ring);

  for (int r = 0; r < rounds; ++r) {
    set(a, 4 * N);
    MPI_Bcast(a, N, d, 0, w);
    set(a, 4 * N);
    MPI_Bcast(a, N, d, 1, w);
    set(a, 4 * N);
    MPI_Reduce(a, b, N, d, MPI_SUM, 0, w);
    set(b, N);
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : b, b, N, d, MPI_SUM, 0, w);
    MPI_Allreduce(a, b, N, d, MPI_SUM, w);
    set(b, N);
    MPI_Allreduce(MPI_IN_PLACE, b, N, d, MPI_SUM, w);
    MPI_Scan(a, b, N, d, MPI_SUM, w);
    MPI_Exscan(a, b, N, d, MPI_SUM, w);
    MPI_Reduce_scatter_block(a, b, N, d, MPI_SUM, w);
    set(b, 2 * N);
    MPI_Reduce_scatter(MPI_IN_PLACE, b, counts, d, MPI_SUM, w);
    set(b, 2 * N);
    MPI_Gather(rank == 0 ? MPI_IN_PLACE : a, N, d, b, N, d, 0, w);
    MPI_Gatherv(a, N, d, b, counts, displs, d, 1, w);
    MPI_Scatter(a, N, d, b, N, d, 0, w);
    MPI_Scatterv(a, scatter_counts, displs, d, b, scatter_counts[rank], d, 0, w);
    MPI_Allgather(a, N, d, b, N, d, w);
    set(b, 2 * N);
    MPI_Allgather(MPI_IN_PLACE, N, d, b, N, d, w);
    MPI_Allgatherv(a, N, d, b, counts, displs, d, w);
    MPI_Alltoall(a, N, d, b, N, d, w);
    set(b, 2 * N);
    MPI_Alltoall(MPI_IN_PLACE, N, d, b, N, d, w);
    MPI_Alltoallv(a, a2a_send, displs, d, b, a2a_recv, displs, d, w);
    MPI_Alltoallw(a, w_counts, w_displs, w_types, b, w_counts, w_displs, w_types, w);
    MPI_Neighbor_alltoall(a, N, d, b, N, d, ring);
    MPI_Neighbor_allgather(a, N, d, b, N, d, ring);
    MPI_Request q[2];
    set(b, N);
    MPI_Iallreduce(MPI_IN_PLACE, b, N, d, MPI_SUM, w, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Ibcast(a, N, d, 0, w, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Allreduce_init(MPI_IN_PLACE, b, N, d, MPI_SUM, w, MPI_INFO_NULL, &q[0]);
    MPI_Bcast_init(a, N, d, 0, w, MPI_INFO_NULL, &q[1]);
    set(b, N);
    MPI_Start(&q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    set(a, N);
    set(b, N);
    MPI_Startall(2, q);
    MPI_Status st[2];
    MPI_Waitall(2, q, st);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    /* Two persistent sends started together: the replay checks each against its own hash. */
    set(a, 2 * N);
    if (rank == 0) {
      MPI_Send_init(a, N, d, 1, 7, w, &q[0]);
      MPI_Send_init(a + N, N, d, 1, 8, w, &q[1]);
    } else {
      MPI_Recv_init(b, N, d, 0, 7, w, &q[0]);
      MPI_Recv_init(b + N, N, d, 0, 8, w, &q[1]);
    }
    MPI_Startall(2, q);
    MPI_Waitall(2, q, st);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    /* And the light sends: 8 bytes blocking, 32 nonblocking (their own capture paths). */
    if (rank == 0) {
      MPI_Send(a, 1, d, 1, 9, w);
      MPI_Isend(a + 1, 4, d, 1, 10, w, &q[0]);
      MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(b, 1, d, 0, 9, w, MPI_STATUS_IGNORE);
      MPI_Recv(b + 1, 4, d, 0, 10, w, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(w);
    for (int i = 0; i < N; ++i) digest += a[i] + b[i];
  }
  printf("rank %d digest %.17g\n", rank, digest);
  MPI_Comm_free(&ring);
  MPI_Finalize();
  return 0;
}
