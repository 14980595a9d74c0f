/* Blocking receives that wait while their thread has events the writer has not encoded (the
 * light MPI_Recv then probes for its message and, not finding it, helps its writer before it
 * blocks: LightCall::recv_call): rank 1 sends a few light messages, then receives one that rank 0
 * sends only after a pause. Each round covers a named source and tag, MPI_ANY_SOURCE and
 * MPI_ANY_TAG, MPI_STATUS_IGNORE, MPI_PROC_NULL, a derived datatype, a truncated message and an
 * invalid source, tag and (where MPI_TAG_UB leaves room) tag above MPI_TAG_UB under an error
 * handler that returns (which must run once for each);
 * rank 1 checks what each returns and fails (exit 1)
 * on any difference from what MPI_Recv must give.
 * Arguments: [rounds] [pause in microseconds]. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

static int failures = 0;
static int raised = 0;       /* calls of errcomm's error handler */
static int tag_ub = INT_MAX; /* MPI_TAG_UB */

static void count_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  (void)code;
  ++raised;
}

static void expect(int ok, int round, const char* what) {
  if (!ok) {
    fprintf(stderr, "capture_recv_wait: round %d: %s\n", round, what);
    ++failures;
  }
}

/* Rank 1: a few light sends (published events for the writer), then the receive waits. */
static void publish(int n) {
  for (int i = 0; i < n; ++i) MPI_Send(&i, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
}

/* Rank 0: takes rank 1's light sends, pauses, then sends `count` of `type` (unless `comm` is
 * MPI_COMM_NULL). */
static void answer(int n, int pause_us, const void* buf, int count, MPI_Datatype type, int tag,
                   MPI_Comm comm) {
  for (int i = 0; i < n; ++i) {
    int v;
    MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (comm == MPI_COMM_NULL) return; /* no message: rank 1's receive fails */
  usleep((useconds_t)pause_us);
  MPI_Send(buf, count, type, 1, tag, comm);
}

static void round_of(int rank, int round, int pause_us, MPI_Datatype vec, MPI_Comm errcomm) {
  int data[8] = {round,     round + 1, round + 2, round + 3,
                 round + 4, round + 5, round + 6, round + 7};
  int got[8] = {0};
  MPI_Status st;
  int count = -1;
  if (rank == 0) {
    answer(3, pause_us, data, 2, MPI_INT, 5, MPI_COMM_WORLD);
    answer(3, pause_us, data, 1, MPI_INT, 6, MPI_COMM_WORLD);
    answer(3, pause_us, data, 2, MPI_INT, 7, MPI_COMM_WORLD);
    answer(3, pause_us, data, 1, vec, 8, MPI_COMM_WORLD);
    answer(3, pause_us, data, 4, MPI_INT, 9, errcomm);                 /* truncated at rank 1 */
    answer(3, pause_us, NULL, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_NULL); /* the invalid tag's */
    answer(3, pause_us, data, 1, MPI_INT, 10, errcomm); /* received after the errors */
    return;
  }
  publish(3);
  MPI_Recv(got, 2, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  expect(
      st.MPI_SOURCE == 0 && st.MPI_TAG == 5 && count == 2 && got[0] == round && got[1] == round + 1,
      round, "named source and tag");

  publish(3);
  MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  expect(st.MPI_SOURCE == 0 && st.MPI_TAG == 6 && count == 1 && got[0] == round, round,
         "MPI_ANY_SOURCE and MPI_ANY_TAG");

  publish(3);
  got[1] = -1;
  MPI_Recv(got, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  expect(got[0] == round && got[1] == round + 1, round, "MPI_STATUS_IGNORE");

  publish(3);
  MPI_Recv(got, 2, MPI_INT, MPI_PROC_NULL, 7, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  expect(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0, round,
         "MPI_PROC_NULL");

  /* Rank 0 took the sends before the MPI_PROC_NULL receive for this message. */
  int spread[8] = {0};
  MPI_Recv(spread, 1, vec, 0, 8, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, vec, &count);
  expect(st.MPI_TAG == 8 && count == 1 && spread[0] == round && spread[2] == round + 2 &&
             spread[4] == round + 4 && spread[1] == 0,
         round, "derived datatype");

  publish(3);
  int rc = MPI_Recv(got, 2, MPI_INT, 0, 9, errcomm, &st);
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  expect(cls == MPI_ERR_TRUNCATE, round, "truncated receive returns MPI_ERR_TRUNCATE");
  rc = MPI_Recv(got, 2, MPI_INT, 99, 9, errcomm, &st);
  MPI_Error_class(rc, &cls);
  expect(cls == MPI_ERR_RANK, round, "invalid source returns MPI_ERR_RANK");
  publish(3);
  rc = MPI_Recv(got, 2, MPI_INT, 0, -5, errcomm, &st);
  MPI_Error_class(rc, &cls);
  expect(cls == MPI_ERR_TAG, round, "invalid tag returns MPI_ERR_TAG");
  int errors = 3;
  if (tag_ub < INT_MAX) { /* a tag above MPI_TAG_UB: invalid too */
    publish(3);
    rc = MPI_Recv(got, 2, MPI_INT, 0, tag_ub + 1, errcomm, &st);
    MPI_Error_class(rc, &cls);
    expect(cls == MPI_ERR_TAG, round, "a tag above MPI_TAG_UB returns MPI_ERR_TAG");
    errors = 4;
  }
  expect(raised == errors * (round + 1), round, "the error handler runs once an error");
  got[0] = -1;
  publish(3);
  rc = MPI_Recv(got, 2, MPI_INT, 0, 10, errcomm, &st);
  expect(rc == MPI_SUCCESS && got[0] == round && st.MPI_TAG == 10, round,
         "a receive after the errors");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  const int pause_us = argc > 2 ? atoi(argv[2]) : 1000;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int* ub = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  if (flag) tag_ub = *ub;
  MPI_Datatype vec;
  MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Comm errcomm;
  MPI_Comm_dup(MPI_COMM_WORLD, &errcomm);
  MPI_Errhandler counting;
  MPI_Comm_create_errhandler(count_error, &counting);
  MPI_Comm_set_errhandler(errcomm, counting);
  for (int r = 0; r < rounds; ++r) round_of(rank, r, pause_us, vec, errcomm);
  MPI_Type_free(&vec);
  MPI_Comm_free(&errcomm);
  MPI_Errhandler_free(&counting);
  if (rank == 1)
    printf("capture_recv_wait: %d rounds, %d failures, %d receives a round\n", rounds, failures,
           tag_ub < INT_MAX ? 10 : 9);
  MPI_Finalize();
  return failures ? 1 : 0;
}
