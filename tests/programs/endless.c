/* Exchanges messages until killed, or for argv[1] seconds: a test kills one rank with SIGKILL
 * mid-run and checks that the trace stays readable up to the last flushed chunk. Rank 0 decides
 * when time is up and tells its partner in the exchange itself, so both stop at the same
 * iteration (a rank deciding alone would leave the other waiting forever). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static double elapsed(const struct timespec* start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + 1e-9 * (double)(now.tv_nsec - start->tv_nsec);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double seconds = argc > 1 ? atof(argv[1]) : 60.0;
  const int peer = rank ^ 1;
  double msg[2] = {rank, 0}; /* value, stop flag */
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0;; ++i) {
    const int stop_here = rank == 0 && i % 1000 == 0 && elapsed(&start) > seconds;
    msg[1] = stop_here;
    if (peer < size) {
      MPI_Sendrecv_replace(msg, 2, MPI_DOUBLE, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (i % 1000 == 0) {
      printf("alive rank=%d i=%ld\n", rank, i);
      fflush(stdout);
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
    if (stop_here || msg[1] != 0 || (peer >= size && elapsed(&start) > seconds)) break;
  }
  MPI_Finalize();
  return 0;
}
