/* A preloadable probe that times a plain (unrecorded) MPI program's own span: from the return
 * of MPI_Init(_thread) to the call of MPI_Finalize, on CLOCK_MONOTONIC, which all ranks on one
 * machine share. It intercepts those three calls only (through PMPI), so the run is otherwise
 * untouched. This is the span `encore predict` reports as predicted_program_s, so the accuracy
 * benchmark compares like with like without adding a timer to every example.
 * Each rank writes "<init_return_ns> <finalize_call_ns>" to $ENCORE_SPAN_DIR/rank-<r>.txt.
 * Built with ENCORE_SLOW_PROBE (bench_slow_probe, slow_probe.c), these three calls also bound
 * the compute segments that the slower machine stretches. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static long long init_return_ns;

#ifdef ENCORE_SLOW_PROBE
void encore_slow_enter(void);
void encore_slow_leave(void);
#else
static void encore_slow_enter(void) {}
static void encore_slow_leave(void) {}
#endif

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int MPI_Init(int* argc, char*** argv) {
  encore_slow_enter();
  const int rc = PMPI_Init(argc, argv);
  encore_slow_leave();
  init_return_ns = now_ns();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  encore_slow_enter();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  encore_slow_leave();
  init_return_ns = now_ns();
  return rc;
}

int MPI_Finalize(void) {
  encore_slow_enter();  // the compute before MPI_Finalize is the program's too
  const long long finalize_ns = now_ns();
  const char* dir = getenv("ENCORE_SPAN_DIR");
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (dir != NULL) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.txt", dir, rank);
    FILE* f = fopen(path, "w");
    if (f != NULL) {
      fprintf(f, "%lld %lld\n", init_return_ns, finalize_ns);
      fclose(f);
    }
  }
  return PMPI_Finalize();
}
