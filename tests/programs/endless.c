/* Exchanges messages until killed (or for argv[1] seconds): a test kills one rank with SIGKILL
 * mid-run and checks that the trace stays readable up to the last flushed chunk. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = argc > 1 ? atof(argv[1]) : 60.0;
  const int peer = rank ^ 1;
  double value = rank;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0;; ++i) {
    if (peer < size) {
      MPI_Sendrecv_replace(&value, 1, MPI_DOUBLE, peer, 0, peer, 0, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
    }
    if (i % 1000 == 0) {
      printf("alive rank=%d i=%ld\n", rank, i);
      fflush(stdout);
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - start.tv_sec) + 1e-9 * (now.tv_nsec - start.tv_nsec) > seconds) break;
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
  }
  MPI_Finalize();
  return 0;
}
