/* One rank polling for a message that never comes: MPI_Iprobe in a loop, with `work` turns of
 * a busy loop between polls (the program's own compute), timed by the program itself
 * (CLOCK_MONOTONIC) between two MPI_Barrier calls. Run plain and recorded (bench/poll_gaps.py):
 * the recorded trace's corrected span between the barriers, per poll, is what the capture
 * says the loop would take without it, to compare with the plain run's.
 *   mpiexec -n 1 bench_lone_polls POLLS WORK
 * prints: polls=<n> work=<w> ns_per_poll=<x> */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void poll_loop(int polls, int work) {
  volatile int sink = 0;
  int flag = 0;
  for (int i = 0; i < polls; ++i) {
    MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    for (int k = 0; k < work; ++k) sink += k;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int polls = argc > 1 ? atoi(argv[1]) : 200000;
  const int work = argc > 2 ? atoi(argv[2]) : 0;
  poll_loop(polls / 10, work); /* warm-up */
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_ns();
  poll_loop(polls, work);
  const double t1 = now_ns();
  MPI_Barrier(MPI_COMM_WORLD);
  printf("polls=%d work=%d ns_per_poll=%.2f\n", polls, work, (t1 - t0) / polls);
  MPI_Finalize();
  return 0;
}
