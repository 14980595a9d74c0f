/* MPI_THREAD_MULTIPLE: every rank runs `nthreads` threads that exchange messages with the same
 * thread of the neighbour rank at the same time (tag = thread index). The capture must keep
 * each thread's calls in its own stream and order. Prints `thread-messages rank=R n=N`. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static int rank, size, iters = 200;

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double out = rank * 100.0 + t, in = 0;
  for (int i = 0; i < iters; ++i) {
    MPI_Sendrecv(&out, 1, MPI_DOUBLE, right, t, &in, 1, MPI_DOUBLE, left, t, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    out = in + 1;
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "threads: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int nthreads = argc > 1 ? atoi(argv[1]) : 2;
  if (argc > 2) iters = atoi(argv[2]);
  pthread_t th[16];
  for (long t = 0; t < nthreads && t < 16; ++t) pthread_create(&th[t], NULL, worker, (void*)t);
  for (int t = 0; t < nthreads && t < 16; ++t) pthread_join(th[t], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("thread-messages rank=%d n=%d\n", rank, nthreads * iters);
  MPI_Finalize();
  return 0;
}
