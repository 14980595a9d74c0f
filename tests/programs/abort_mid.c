/* Rank 1 calls MPI_Abort after `n` exchanges (default 50): the capture must flush everything up
 * to the abort and say how the rank ended. */
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 50;
  double value = rank;
  for (int i = 0; i < n; ++i)
    MPI_Sendrecv_replace(&value, 1, MPI_DOUBLE, rank ^ 1, 0, rank ^ 1, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
  if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 waits here until the abort takes it down */
  sleep(30);
  MPI_Finalize();
  return 0;
}
