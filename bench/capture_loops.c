/* Loops that stress capture, timed by the program itself (CLOCK_MONOTONIC, not MPI_Wtime, so
 * the timer adds no MPI calls): an 8-byte ping-pong, an MPI_Iprobe polling loop, and a 1 MiB
 * ping-pong whose received bytes capture must copy into the trace. Prints one line per loop:
 *   loop=<name> iters=<n> ns_per_iter=<x> bytes=<message size>
 * Run it under mpiexec -n 2, plain and under `encore record`, and compare (bench/capture.py).
 * Arguments: [small-message iterations] [1 MiB iterations] [all|pingpong8|iprobe|pingpong1M|polls]
 * [polls per iteration]. `polls` (not in `all`) is a ping-pong whose rank 0 first makes that many
 * failing MPI_Iprobe calls an iteration (default 8), a fixed number, unlike the polling loop's:
 * what bench/capture_instr.py --writer counts a recorded poll's cost with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void pingpong(int rank, int iters, int bytes, const char* name) {
  char* buf = malloc((size_t)bytes);
  memset(buf, rank, (size_t)bytes);
  const int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_ns();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  const double t1 = now_ns();
  if (rank == 0)
    printf("loop=%s iters=%d ns_per_iter=%.1f bytes=%d\n", name, iters, (t1 - t0) / iters, bytes);
  free(buf);
}

/* Rank 1 sends `iters` messages; rank 0 polls with MPI_Iprobe until each is there. */
static void iprobe_loop(int rank, int iters) {
  long polls = 0;
  int value = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_ns();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      int flag = 0;
      while (!flag) {
        MPI_Iprobe(1, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        ++polls;
      }
      MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Send(&i, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  const double t1 = now_ns();
  if (rank == 0)
    printf("loop=iprobe iters=%d ns_per_iter=%.1f bytes=4 polls_per_iter=%.1f\n", iters,
           (t1 - t0) / iters, (double)polls / iters);
}

/* Rank 0 makes `polls` MPI_Iprobe calls for a message that never comes, then an 8-byte
 * ping-pong with rank 1. */
static void fixed_polls(int rank, int iters, int polls) {
  char buf[8] = {0};
  const int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now_ns();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      for (int k = 0; k < polls; ++k) {
        int flag = 0;
        MPI_Iprobe(peer, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      }
      MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
  const double t1 = now_ns();
  if (rank == 0)
    printf("loop=polls iters=%d ns_per_iter=%.1f bytes=8 polls_per_iter=%d\n", iters,
           (t1 - t0) / iters, polls);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "capture_loops: run with exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int small = argc > 1 ? atoi(argv[1]) : 200000;
  const int large = argc > 2 ? atoi(argv[2]) : 400;
  const char* only = argc > 3 ? argv[3] : "all";
  const int polls = argc > 4 ? atoi(argv[4]) : 8;
  const int all = strcmp(only, "all") == 0;
  pingpong(rank, small / 10, 8, "warmup");
  if (all || strcmp(only, "pingpong8") == 0) pingpong(rank, small, 8, "pingpong8");
  if (all || strcmp(only, "iprobe") == 0) iprobe_loop(rank, small / 4);
  if (all || strcmp(only, "pingpong1M") == 0) pingpong(rank, large, 1 << 20, "pingpong1M");
  if (strcmp(only, "polls") == 0) fixed_polls(rank, small / 4, polls);
  MPI_Finalize();
  return 0;
}
