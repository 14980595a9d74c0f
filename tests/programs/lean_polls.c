/* Runs of failed polls from two threads at once (MPI_THREAD_MULTIPLE), broken by other calls:
 * capture continues such runs on its lean path, and every poll must still be an event of its
 * thread, in order. Each thread of rank 0 polls with MPI_Iprobe (its tag changes every 37
 * polls), then with MPI_Test on a receive nobody matches, calls MPI_Comm_rank every 101 steps,
 * and every 97 steps sends itself a message that a probe then finds (the poll that ends a run
 * is recorded in full). Each thread logs its calls; rank 0 prints them, one line per thread:
 *   thread T: R Q I<tag><flag> T<flag> S<tag> V<tag> ... C W
 * (Comm_rank, Irecv, Iprobe, Test, Send, Recv, Cancel, Wait: every MPI call of the thread).
 * Arguments: [steps per thread, default 3000]. Rank 1 only takes part in the barriers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

enum { kThreads = 2 };
static int steps = 3000;
static char* logs[kThreads];
static size_t used[kThreads];

static void note(int t, const char* fmt, int a, int b) {
  used[t] += (size_t)snprintf(logs[t] + used[t], 32, fmt, a, b);
}

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  int self = 0, flag = 0, value = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &self);
  note(t, " R", 0, 0);
  MPI_Request never;
  MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 9000 + t, MPI_COMM_WORLD, &never);
  note(t, " Q", 0, 0);
  for (int i = 0; i < steps; ++i) {
    const int tag = 100 * (t + 1) + (i / 37) % 3;
    if (i % 101 == 0) {
      MPI_Comm_rank(MPI_COMM_WORLD, &self);
      note(t, " R", 0, 0);
    }
    if ((i / 500) % 2 == 1) {
      MPI_Test(&never, &flag, MPI_STATUS_IGNORE);
      note(t, " T%d", flag, 0);
      continue;
    }
    if (i % 97 == 50) {
      MPI_Send(&i, 1, MPI_INT, self, tag, MPI_COMM_WORLD);
      note(t, " S%d", tag, 0);
      do { /* the message is there at once, or after a few more failed polls */
        MPI_Iprobe(self, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        note(t, " I%d%d", tag, flag);
      } while (!flag);
      MPI_Recv(&value, 1, MPI_INT, self, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      note(t, " V%d", tag, 0);
      continue;
    }
    MPI_Iprobe(self, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    note(t, " I%d%d", tag, flag);
  }
  MPI_Cancel(&never);
  MPI_Wait(&never, MPI_STATUS_IGNORE);
  note(t, " C W", 0, 0);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "lean_polls: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1) steps = atoi(argv[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    pthread_t th[kThreads];
    for (long t = 0; t < kThreads; ++t) {
      logs[t] = malloc((size_t)steps * 64 + 64);
      pthread_create(&th[t], NULL, worker, (void*)t);
    }
    for (int t = 0; t < kThreads; ++t) pthread_join(th[t], NULL);
    for (int t = 0; t < kThreads; ++t) {
      printf("thread %d:%s\n", t, logs[t]);
      free(logs[t]);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
