/* late_receives.c - which sizes MPI_Send sends eagerly, seen from inside the program.
 *
 * For each size from 256 B to 1 MiB (doubling), rank 1 posts its receive 2 ms after a
 * barrier, kRounds times; rank 0 times its MPI_Send. A send back in under 1 ms went eagerly;
 * one that lasted the 2 ms waited for its receive (rendezvous). Rank 0 prints one line per
 * size, "size N eager" or "size N waited" (the last round's, the first ones warming the
 * connection up), which the test compares with the S that `encore predict` fits from a
 * recording of the same run. Eight rounds, not three: on a loaded machine a round whose
 * sender was descheduled after its receive was posted does not look as if it waited, and the
 * fit takes a size class as waiting only where at least three quarters of its late receives
 * were waited for (three of three was too few to spare one).
 *
 * Usage: test_late_receives            (2 ranks) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static void sleep_us(long us) {
  const struct timespec t = {0, us * 1000};
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "test_late_receives: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  enum { kRounds = 8 };
  const int max = 1 << 20;
  char* buf = calloc(max, 1);
  for (int n = 256; n <= max; n *= 2) {
    for (int round = 0; round < kRounds; ++round) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        const double t0 = MPI_Wtime();
        MPI_Send(buf, n, MPI_BYTE, 1, round, MPI_COMM_WORLD);
        const double took = MPI_Wtime() - t0;
        if (round == kRounds - 1) printf("size %d %s\n", n, took < 1e-3 ? "eager" : "waited");
      } else {
        sleep_us(2000);
        MPI_Recv(buf, n, MPI_BYTE, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
