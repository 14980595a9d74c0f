/* A preloadable probe that times a plain (unrecorded) MPI program's own span: from the return
 * of MPI_Init(_thread) to the call of MPI_Finalize, on CLOCK_MONOTONIC, which all ranks on one
 * machine share. It intercepts those three calls only (through PMPI), so the run is otherwise
 * untouched. This is the span `encore predict` reports as predicted_program_s, so the accuracy
 * benchmark compares like with like without adding a timer to every example.
 * Each rank writes "<init_return_ns> <finalize_call_ns>" to $ENCORE_SPAN_DIR/rank-<r>.txt.
 * Built with ENCORE_SLOW_PROBE (bench_slow_probe, slow_probe.c), these three calls also bound
 * the compute segments that the slower machine stretches; with ENCORE_CALL_PROBE
 * (bench_call_probe, call_probe.c), they are timed as the other calls are, and MPI_Finalize
 * writes the rank's calls out before it finalizes. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

static long long init_return_ns;

#if defined(ENCORE_SLOW_PROBE)
void encore_slow_enter(void);
void encore_slow_leave(void);
#define PROBE_ENTER(name) encore_slow_enter()
#define PROBE_LEAVE() encore_slow_leave()
#define PROBE_WRITE(rank) ((void)0)
#elif defined(ENCORE_CALL_PROBE)
void encore_call_enter(const char* name);
void encore_call_leave(void);
void encore_call_write(int rank);
#define PROBE_ENTER(name) encore_call_enter(name)
#define PROBE_LEAVE() encore_call_leave()
#define PROBE_WRITE(rank) encore_call_write(rank)
#else
#define PROBE_ENTER(name) ((void)0)
#define PROBE_LEAVE() ((void)0)
#define PROBE_WRITE(rank) ((void)0)
#endif

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int MPI_Init(int* argc, char*** argv) {
  PROBE_ENTER("MPI_Init");
  const int rc = PMPI_Init(argc, argv);
  PROBE_LEAVE();
  init_return_ns = now_ns();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  PROBE_ENTER("MPI_Init_thread");
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  PROBE_LEAVE();
  init_return_ns = now_ns();
  return rc;
}

int MPI_Finalize(void) {
  PROBE_ENTER("MPI_Finalize");  // the compute before MPI_Finalize is the program's too
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
  PROBE_WRITE(rank);
  return PMPI_Finalize();
}
