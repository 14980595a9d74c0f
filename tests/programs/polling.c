/* Runs of failed polls (format 1.2 records each run as one event and repeat heads): rank 0
 * polls with MPI_Iprobe, MPI_Improbe, MPI_Test, MPI_Testany, MPI_Testall and MPI_Testsome
 * until rank 1, which sleeps first, sends; every phase alternates two argument sets now and
 * then, so runs end on a different call too. Rank 1 starts its sleep only once rank 0 has
 * polled kGo times in the phase (rank 0 tells it with a message), so every phase has at least
 * that many failed polls however loaded the machine is (a rank 0 kept off its core for the
 * whole sleep made a handful). Rank 0 prints how many calls each phase made: a
 * replay must print the same. Arguments: [sleep ms per phase, default 5] [crash|kill]: with
 * "crash", rank 0 polls a message that never comes for that long, prints its count to stderr
 * and dies of SIGSEGV; with "kill", it then sleeps that long again (making no MPI call, so the
 * run of polls is still open), prints its count and dies of SIGKILL. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

enum { kGo = 200 }; /* failed polls a phase at least */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int ms = argc > 1 ? atoi(argv[1]) : 5;
  const int sigkill = argc > 2 && strcmp(argv[2], "kill") == 0;
  const int crash = sigkill || (argc > 2 && strcmp(argv[2], "crash") == 0);
  if (crash) {
    if (rank == 0) {
      long polls = 0;
      int flag = 0;
      const double until = now_ms() + ms;
      while (now_ms() < until) {
        MPI_Iprobe(1, 42, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        ++polls;
      }
      if (sigkill) usleep((useconds_t)ms * 1000);
      fprintf(stderr, "polls=%ld\n", polls);
      raise(sigkill ? SIGKILL : SIGSEGV);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 waits here until the crash takes it down */
    MPI_Finalize();
    return 0;
  }
  const int peer = 1 - rank;
  int value = 0, values[2];
  long calls[6] = {0};
  for (int phase = 0; phase < 6; ++phase) {
    const int tag = 10 * phase;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      int go = 0;
      MPI_Recv(&go, 1, MPI_INT, peer, 1000 + phase, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      usleep((useconds_t)ms * 1000);
      for (int k = 0; k < 2; ++k) MPI_Send(&phase, 1, MPI_INT, peer, tag + k, MPI_COMM_WORLD);
      continue;
    }
    int flag = 0, index = 0, outcount = 0, indices[2];
    MPI_Request req[2];
    MPI_Status st;
    MPI_Message msg;
    if (phase >= 2) {
      MPI_Irecv(&values[0], 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &req[0]);
      MPI_Irecv(&values[1], 1, MPI_INT, peer, tag + 1, MPI_COMM_WORLD, &req[1]);
    }
    for (;;) {
      /* Every 64th poll asks for something else (a tag never sent): a different run. */
      const int other = (++calls[phase] & 63) == 0;
      switch (phase) {
        case 0:
          MPI_Iprobe(peer, other ? 99 : tag, MPI_COMM_WORLD, &flag,
                     other ? MPI_STATUS_IGNORE : &st);
          break;
        case 1:
          MPI_Improbe(peer, other ? 99 : tag, MPI_COMM_WORLD, &flag, &msg, &st);
          break;
        case 2:
          MPI_Test(&req[other ? 1 : 0], &flag, &st);
          if (other) flag = 0; /* only the first request counts here */
          break;
        case 3:
          MPI_Testany(other ? 1 : 2, req, &index, &flag, &st);
          if (other) flag = 0;
          break;
        case 4:
          MPI_Testall(other ? 1 : 2, req, &flag, MPI_STATUSES_IGNORE);
          if (other) flag = 0;
          break;
        default:
          MPI_Testsome(other ? 1 : 2, req, &outcount, indices, MPI_STATUSES_IGNORE);
          flag = outcount > 0 && !other;
          break;
      }
      if (flag) break;
      if (calls[phase] == kGo) MPI_Send(&phase, 1, MPI_INT, peer, 1000 + phase, MPI_COMM_WORLD);
    }
    if (phase == 0) MPI_Recv(&value, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (phase == 1) MPI_Mrecv(&value, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
    if (phase <= 1) MPI_Recv(&value, 1, MPI_INT, peer, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (phase >= 2) MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  }
  if (rank == 0)
    printf(
        "polls: MPI_Iprobe=%ld MPI_Improbe=%ld MPI_Test=%ld MPI_Testany=%ld MPI_Testall=%ld "
        "MPI_Testsome=%ld\n",
        calls[0], calls[1], calls[2], calls[3], calls[4], calls[5]);
  MPI_Finalize();
  return 0;
}
