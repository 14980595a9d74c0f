/* A preloadable probe that times every MPI call of a plain (unrecorded) run: entry and exit on
 * CLOCK_MONOTONIC, into an array allocated once at load, so that the gaps between calls are the
 * plain run's own compute segments, to hold against a capture's and a replay's segment for
 * segment (bench/predict_segments.py). Per call it costs two clock reads and three stores.
 * Built with span_probe.c (MPI_Init, MPI_Finalize and the span) and the generated wrappers
 * (slow_probe_gen.py --calls: every other MPI_X, MPI_Wtime included).
 * Only the outermost call is timed (MPI calls made from inside MPI are its own work), and only
 * on the thread that called MPI_Init: the examples measured are single-threaded.
 * ENCORE_CALLS_DIR: where MPI_Finalize writes rank-<r>.calls ("<function> <enter_ns> <leave_ns>
 * <enter_cpu_ns> <leave_cpu_ns>" per line; MPI_Finalize's own line has leaves 0). The CPU times
 * are the thread's CPU clock, read only with ENCORE_CALLS_CPU=1 (a system call each, some
 * 0.3 us: a preempted segment's CPU time is its compute without the preemption), else 0.
 * ENCORE_CALLS_MAX: the array's length (default 4 M calls); a run with more says so on stderr
 * and its file says "truncated". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

struct call {
  const char* name;
  long long enter_ns, leave_ns, enter_cpu_ns, leave_cpu_ns;
};

static struct call* calls;
static size_t ncalls, max_calls;
static int truncated;
static int depth;
static pthread_t owner;
static int owned;
static int with_cpu;

static long long clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
static long long cpu_ns(void) { return with_cpu ? clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0; }

__attribute__((constructor)) static void allocate(void) {
  const char* s = getenv("ENCORE_CALLS_MAX");
  char* end = NULL;
  const long long n = s ? strtoll(s, &end, 10) : 4LL << 20;
  if (s && (end == s || *end != '\0' || n < 16 || n > (1LL << 28))) {
    fprintf(stderr, "bench_call_probe: ENCORE_CALLS_MAX must be a number in [16, 2^28], got '%s'\n",
            s);
    exit(2);
  }
  max_calls = (size_t)n;
  const char* cpu = getenv("ENCORE_CALLS_CPU");
  with_cpu = cpu != NULL && cpu[0] == '1';
  // Touched as it fills: untouched pages cost nothing, and a page fault every 170 calls is
  // the same in every run.
  calls = mmap(NULL, max_calls * sizeof *calls, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (calls == MAP_FAILED) {
    fprintf(stderr, "bench_call_probe: cannot map room for %zu calls\n", max_calls);
    exit(2);
  }
}

static int mine(void) {
  if (!owned) {
    owner = pthread_self();
    owned = 1;
  }
  return pthread_equal(owner, pthread_self());
}

void encore_call_enter(const char* name) {
  const long long c = cpu_ns(), t = now_ns();
  if (!mine() || depth++ != 0) return;
  if (ncalls == max_calls) {
    truncated = 1;
    return;
  }
  calls[ncalls] = (struct call){name, t, 0, c, 0};
}

void encore_call_leave(void) {
  if (!mine() || --depth != 0 || ncalls >= max_calls) return;
  calls[ncalls].leave_ns = now_ns();
  calls[ncalls++].leave_cpu_ns = cpu_ns();
}

void encore_call_write(int rank) {
  if (ncalls < max_calls) ++ncalls;  // MPI_Finalize, entered but not left
  const char* dir = getenv("ENCORE_CALLS_DIR");
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/rank-%d.calls", dir, rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "bench_call_probe: cannot write %s\n", path);
    return;
  }
  for (size_t i = 0; i < ncalls; ++i)
    fprintf(f, "%s %lld %lld %lld %lld\n", calls[i].name, calls[i].enter_ns, calls[i].leave_ns,
            calls[i].enter_cpu_ns, calls[i].leave_cpu_ns);
  if (truncated) {
    fprintf(f, "truncated\n");
    fprintf(stderr, "bench_call_probe: rank %d made more than %zu calls; ENCORE_CALLS_MAX\n", rank,
            max_calls);
  }
  fclose(f);
}
