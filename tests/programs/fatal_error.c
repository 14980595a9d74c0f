/* test_fatal_error N: rank 1 sends to a rank that does not exist after N MPI_Allreduce calls,
 * under the default MPI_ERRORS_ARE_FATAL: MPI aborts the run there. The capture must still
 * write what rank 1 recorded before the failing call. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  int sum = 0;
  for (int i = 0; i < n; ++i) MPI_Allreduce(&i, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 1) MPI_Send(&sum, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
