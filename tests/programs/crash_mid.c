/* Rank 1 dies of SIGSEGV after `n` exchanges (default 200): the capture's signal handler must
 * write every event committed before the crash. Arguments: [n] [light]: with "light" the
 * exchanges are MPI_Send and MPI_Recv (light calls, whose raw bodies the handler encodes)
 * instead of MPI_Sendrecv_replace. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 200;
  const int light = argc > 2 && strcmp(argv[2], "light") == 0;
  double value = rank;
  for (int i = 0; i < n; ++i) {
    if (!light) {
      MPI_Sendrecv_replace(&value, 1, MPI_DOUBLE, rank ^ 1, 0, rank ^ 1, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
    } else if (rank == 0) {
      MPI_Send(&value, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
      MPI_Recv(&value, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Status status;
      MPI_Recv(&value, 1, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      value += 1;
      MPI_Send(&value, 1, MPI_DOUBLE, 0, status.MPI_TAG, MPI_COMM_WORLD);
    }
  }
  if (rank == 1) raise(SIGSEGV);
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 waits here until the crash takes it down */
  sleep(30);
  MPI_Finalize();
  return 0;
}
