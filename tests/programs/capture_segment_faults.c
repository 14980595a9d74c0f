/* capture_segment_faults.c - counts the page faults its own thread takes while it receives.
 *
 * Why: the capture copies every received byte into its payload segment on the receiving
 * thread; a segment page touched there for the first time is a page fault in the program's
 * loop (halo2d took one an iteration). The capture faults its segments in beforehand, the
 * first ones when the rank starts recording and later ones, prepared by the writer thread,
 * before the thread needs them. So a recorded run's loops should fault no more than a plain
 * run's.
 *
 * Rank 1 receives 4 KiB messages from rank 0 (each answered with an empty message): 640 of
 * them (2.5 MiB, more than half a 4 MiB payload segment), then both ranks sleep 1.2 s (the
 * writer's periodic pass sees the half-full segment), then 768 more, which fill the first
 * segment and go on into the next. Rank 1 prints the minor faults of its own thread in each
 * phase: "faults phase1=N phase2=M".
 *
 * Usage: test_capture_segment_faults      (2 ranks)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mpi.h>

enum { kBytes = 4096, kPhase1 = 640, kPhase2 = 768 };

static long thread_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_minflt;
}

static void exchange(int rank, char* buf, int n) {
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      buf[0] = (char)i;
      MPI_Send(buf, kBytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(NULL, 0, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buf, kBytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(NULL, 0, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  static char buf[kBytes];
  memset(buf, 1, sizeof buf);
  exchange(rank, buf, 8); /* MPICH's own first-time work, outside the counts */
  const long f0 = thread_faults();
  exchange(rank, buf, kPhase1);
  const long f1 = thread_faults();
  MPI_Barrier(MPI_COMM_WORLD);
  const struct timespec pause = {1, 200000000};
  nanosleep(&pause, NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  const long f2 = thread_faults();
  exchange(rank, buf, kPhase2);
  const long f3 = thread_faults();
  if (rank == 1) printf("faults phase1=%ld phase2=%ld\n", f1 - f0, f3 - f2);
  MPI_Finalize();
  return 0;
}
