/* argv[1] iterations of a short sleep (argv[2] ms, default 5) then an MPI_Allreduce: a replay of
 * it lasts as long as the capture, so a test can kill the replay mid-run and read its profile
 * up to the cut. */
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = argc > 1 ? atol(argv[1]) : 400;
  const long ms = argc > 2 ? atol(argv[2]) : 5;
  int sum = 0;
  for (long i = 0; i < n; ++i) {
    const struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    int one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return sum > 0 ? 0 : 1;
}
