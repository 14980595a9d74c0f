/* Light sends and receives (the capture's lean path) mixed with calls that take the Call path
 * (a larger send, a derived type, nonblocking calls, an error), runs of failed polls, sends to
 * and receives from MPI_PROC_NULL, and pauses for the periodic flush to cut chunks between
 * them (each run's first poll, with or without a status, is recorded on the lean path too),
 * runs of failed polls ended by the poll that finds its message, and query calls
 * (MPI_Get_count, MPI_Get_elements, MPI_Type_size, light too, one of them failing). Deterministic:
 * the same events every run but for the length of those runs.
 *   capture_light_mix <iterations> [finalize|segv|kill]
 * segv: rank 1 dies of SIGSEGV after the loop (the crash handler writes what it recorded);
 * kill: rank 1 waits for the periodic flush, then sends itself SIGKILL. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  const char* end = argc > 2 ? argv[2] : "finalize";
  const int peer = 1 - rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype column;
  MPI_Type_vector(4, 1, 2, MPI_INT, &column);
  MPI_Type_commit(&column);
  double d = rank;
  int small[8] = {0};
  char big[2048];
  memset(big, rank + 1, sizeof big);
  MPI_Status st;
  for (int i = 0; i < n; ++i) {
    small[0] = i;
    d += 0.5;
    if (rank == 0) {
      MPI_Send(&d, 1, MPI_DOUBLE, peer, i % 7, MPI_COMM_WORLD);
      MPI_Recv(&d, 1, MPI_DOUBLE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Send(small, 1 + i % 3, MPI_INT, peer, 1, MPI_COMM_WORLD); /* 4, 8, 12 bytes */
      MPI_Recv(small, 8, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&d, 1, MPI_DOUBLE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      MPI_Send(&d, 1, MPI_DOUBLE, peer, st.MPI_TAG + 1, MPI_COMM_WORLD);
      MPI_Recv(small, 8, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(small, 5, MPI_INT, peer, 2, MPI_COMM_WORLD);
    }
    /* Queries (light too): of the status of the first receive, in elements of a basic and of
     * a derived type (8 bytes are 2 ints, not a whole column: MPI_UNDEFINED), a type's size. */
    int got = 0;
    MPI_Get_count(&st, MPI_DOUBLE, &got);
    MPI_Get_elements(&st, MPI_INT, &got);
    MPI_Get_count(&st, column, &got);
    MPI_Get_elements(&st, column, &got);
    MPI_Type_size(i % 2 ? column : MPI_SHORT, &got);
    /* Nothing to send or receive: no hash, no payload. */
    MPI_Send(&d, 1, MPI_DOUBLE, MPI_PROC_NULL, 3, MPI_COMM_WORLD);
    MPI_Recv(&d, 1, MPI_DOUBLE, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st);
    MPI_Send(NULL, 0, MPI_INT, peer, 4, MPI_COMM_WORLD);
    MPI_Recv(NULL, 0, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* A run of failed polls (a tag nobody sends), broken by the next light call; every other
     * iteration with a status, and then a poll of another tag, which opens a run of its own
     * right after the lean polls of the first. */
    int flag = 1;
    for (int k = 0; k < 1 + i % 6; ++k)
      MPI_Iprobe(peer, 99, MPI_COMM_WORLD, &flag, i % 2 ? &st : MPI_STATUS_IGNORE);
    if (i % 3 == 0) MPI_Iprobe(MPI_ANY_SOURCE, 98, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    if (i % 5 == 0) {
      /* The Call path: a send too large to be light, a derived type, nonblocking calls. */
      MPI_Request r[2];
      MPI_Status sts[2];
      MPI_Irecv(big + 1024, 1024, MPI_CHAR, peer, 5, MPI_COMM_WORLD, &r[0]);
      MPI_Isend(big, 1024, MPI_CHAR, peer, 5, MPI_COMM_WORLD, &r[1]);
      MPI_Waitall(2, r, sts);
      MPI_Get_count(&sts[0], MPI_CHAR, &got); /* a status Waitall filled */
      if (rank == 0) {
        MPI_Send(big, 512, MPI_CHAR, peer, 6, MPI_COMM_WORLD);
        MPI_Recv(small, 1, column, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(big, 512, MPI_CHAR, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(small, 1, column, peer, 7, MPI_COMM_WORLD);
      }
    }
    if (i % 17 == 0) { /* Errors: recorded with their codes through the Call path. */
      MPI_Send(&d, 1, MPI_DOUBLE, 5, 0, MPI_COMM_WORLD);
      MPI_Type_size(MPI_DATATYPE_NULL, &got);
    }
    /* A query right after a run of failed polls (it ends the run) */
    if (i % 3 == 1) {
      for (int k = 0; k < 3; ++k) MPI_Iprobe(peer, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      MPI_Type_size(MPI_DOUBLE, &got);
    }
    if (i % 400 == 399) usleep(30000); /* the periodic flush cuts here, mid-segment */
  }
  /* Runs of failed polls that end with the poll that finds the message, on each rank in turn
   * (with a status, then ignoring it): the other rank sends it 0.1 s after the barrier, the
   * poller polls three times at once, then again 0.2 s later until the message is there (a
   * poll or a few: the test takes a run of failed polls as one). */
  for (int poller = 0; poller < 2; ++poller) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == poller) {
      int flag = 0;
      MPI_Status* status = poller == 0 ? &st : MPI_STATUS_IGNORE;
      for (int k = 0; k < 3; ++k) MPI_Iprobe(peer, 8, MPI_COMM_WORLD, &flag, status);
      usleep(200000);
      while (!flag) MPI_Iprobe(peer, 8, MPI_COMM_WORLD, &flag, status);
      MPI_Recv(&d, 1, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      usleep(100000);
      MPI_Send(&d, 1, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD);
    }
  }
  MPI_Type_free(&column);
  if (rank == 1 && strcmp(end, "segv") == 0) raise(SIGSEGV);
  if (rank == 1 && strcmp(end, "kill") == 0) {
    usleep(300000); /* several flush intervals: everything recorded is on disk */
    raise(SIGKILL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (strcmp(end, "finalize") != 0) sleep(30); /* rank 0 waits until rank 1's end takes it down */
  MPI_Finalize();
  return 0;
}
