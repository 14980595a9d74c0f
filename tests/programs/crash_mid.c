/* Rank 1 dies of SIGSEGV after `n` exchanges (default 200): the capture's signal handler must
 * write every event committed before the crash. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 200;
  double value = rank;
  for (int i = 0; i < n; ++i)
    MPI_Sendrecv_replace(&value, 1, MPI_DOUBLE, rank ^ 1, 0, rank ^ 1, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
  if (rank == 1) raise(SIGSEGV);
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 waits here until the crash takes it down */
  sleep(30);
  MPI_Finalize();
  return 0;
}
