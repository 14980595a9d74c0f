/* test_early_exit [early]: with `early`, returns from main after MPI_Init and MPI_Comm_rank,
 * without MPI_Finalize; else a barrier and MPI_Finalize. Recorded without it and replayed with
 * it, the program stops short of its trace. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1) return 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
