/* The floor of call tracing on this machine, for bench/capture.py to print beside the capture:
 * a preload whose MPI_Send, MPI_Recv and MPI_Iprobe do only what the issue counts as the least a
 * tracer can do per call (two TSC reads around the PMPI call, one 32-byte record appended to a
 * thread-local ring), and nothing else: no encoding, no writer thread, no file. The loops of
 * bench_capture_loops run under it show how much of the capture's cost is the timestamps
 * themselves (on the development VM: almost none, 1.03x and 1.07x) and how much the rest. */
#include <stdint.h>
#include <x86intrin.h>

#include <mpi.h>

struct floor_record {
  uint64_t what, t1, t2, rc;
};

enum { kRingRecords = 1 << 16 };
static __thread struct floor_record ring[kRingRecords];
static __thread unsigned next_record;

static inline void keep(uint64_t what, uint64_t t1, int rc) {
  const uint64_t t2 = __rdtsc();
  struct floor_record* r = &ring[next_record++ & (kRingRecords - 1)];
  r->what = what;
  r->t1 = t1;
  r->t2 = t2;
  r->rc = (uint64_t)rc;
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  const uint64_t t1 = __rdtsc();
  const int rc = PMPI_Send(buf, count, type, dest, tag, comm);
  keep(1, t1, rc);
  return rc;
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  const uint64_t t1 = __rdtsc();
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
  keep(2, t1, rc);
  return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const uint64_t t1 = __rdtsc();
  const int rc = PMPI_Iprobe(source, tag, comm, flag, status);
  keep(3 | (uint64_t)*flag << 8, t1, rc);
  return rc;
}
