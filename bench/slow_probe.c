/* A preloadable "slower machine" for plain runs: every compute segment (from an MPI call's
 * return to the next MPI call) is stretched to ENCORE_SLOW_FACTOR times its length by spinning
 * before the call, while MPI's own work and waits run at full speed. This is the machine that a
 * replay under a CPU quota measures (the replay never waits: the trace answers it), which a
 * per-rank quota on the real run is not: MPICH busy-polls while it waits, so there the quota
 * is also spent on waiting and a message arriving during a throttled stretch waits for the
 * next period. Built with span_probe.c (bench_slow_probe), which also times the span.
 * Spinning, not sleeping: a slower CPU is busy while it computes, and a sleep's wake-up slack
 * (tens of microseconds) would dilate short segments by more than asked. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double extra = -1;                // factor - 1, read once
static __thread long long left_ns = -1;  // this thread's last return from MPI (-1: none yet)
static __thread int depth;               // MPI calls made from inside MPI calls are not compute

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((constructor)) static void read_factor(void) {
  const char* s = getenv("ENCORE_SLOW_FACTOR");
  char* end = NULL;
  const double f = s ? strtod(s, &end) : 0;
  if (!s || end == s || *end != '\0' || !(f >= 1 && f <= 1000)) {
    fprintf(stderr,
            "bench_slow_probe: ENCORE_SLOW_FACTOR must be a number in [1, 1000], got '%s'\n",
            s ? s : "(unset)");
    exit(2);
  }
  extra = f - 1;
}

void encore_slow_enter(void) {
  if (depth++ != 0 || left_ns < 0) return;
  const long long now = now_ns();
  const long long until = now + (long long)(extra * (double)(now - left_ns));
  while (now_ns() < until) {
  }
}

void encore_slow_leave(void) {
  if (--depth == 0) left_ns = now_ns();
}
