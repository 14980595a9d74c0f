/* matched_cancelled.c - receives the exporters must follow beyond Recv/Irecv (3 ranks).
 *
 * Rank 0 receives every message: the two tag-10 messages of ranks 1 and 2 with MPI_Mprobe
 * (MPI_ANY_SOURCE) and MPI_Mrecv, rank 1's tag 30 with MPI_Improbe and MPI_Imrecv completed
 * by MPI_Wait, rank 2's tag 40 with MPI_Improbe (MPI_ANY_SOURCE) and MPI_Imrecv completed by
 * MPI_Test. Then it posts two receives nobody sends to (MPI_ANY_SOURCE tag 99, rank 1 tag 98),
 * cancels them and completes them with MPI_Wait and MPI_Test: MPI sets only the cancelled bit
 * of the status, which still holds the last real message's source and tag (2 and 40). It
 * probes MPI_PROC_NULL (MPI_MESSAGE_NO_PROC, received with MPI_Mrecv: nothing), and after a
 * barrier receives rank 2's second tag-40 message with MPI_Recv: a cancelled receive taken
 * for a message would shift the count of that channel's messages.
 *
 * Prints "matched_cancelled: 5 messages, 2 cancelled" on rank 0; exits 1 if a message is
 * not what was sent or a cancel did not succeed.
 *
 * Usage: test_matched_cancelled            (3 ranks) */
#include <stdio.h>

#include <mpi.h>

enum { kMax = 16 };

static int check(const int* buf, int n, int from, int tag) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != from * 1000 + tag * 10 + i) return 1;
  return 0;
}

static void fill(int* buf, int n, int me, int tag) {
  for (int i = 0; i < n; ++i) buf[i] = me * 1000 + tag * 10 + i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    if (rank == 0) fprintf(stderr, "matched_cancelled: needs 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int buf[kMax], bad = 0, messages = 0, cancelled = 0, n = 0, flag = 0;
  MPI_Status st; /* one status for everything, as programs often do */
  MPI_Message msg;
  MPI_Request req;
  if (rank == 0) {
    for (int k = 0; k < 2; ++k) {
      MPI_Mprobe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &msg, &st);
      MPI_Get_count(&st, MPI_INT, &n);
      const int from = st.MPI_SOURCE;
      MPI_Mrecv(buf, n, MPI_INT, &msg, &st);
      bad |= n != 4 + from || check(buf, n, from, 10);
      ++messages;
    }
    do {
      MPI_Improbe(1, 30, MPI_COMM_WORLD, &flag, &msg, &st);
    } while (!flag);
    MPI_Get_count(&st, MPI_INT, &n);
    MPI_Imrecv(buf, n, MPI_INT, &msg, &req);
    MPI_Wait(&req, &st);
    bad |= n != 7 || check(buf, n, 1, 30);
    ++messages;
    do {
      MPI_Improbe(MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &flag, &msg, &st);
    } while (!flag);
    MPI_Get_count(&st, MPI_INT, &n);
    MPI_Imrecv(buf, n, MPI_INT, &msg, &req);
    do {
      MPI_Test(&req, &flag, &st);
    } while (!flag);
    bad |= n != 9 || st.MPI_SOURCE != 2 || check(buf, n, 2, 40);
    ++messages;

    MPI_Irecv(buf, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    cancelled += flag;
    MPI_Irecv(buf, 1, MPI_INT, 1, 98, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    do {
      MPI_Test(&req, &flag, &st);
    } while (!flag);
    MPI_Test_cancelled(&st, &flag);
    cancelled += flag;

    MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
    MPI_Mrecv(buf, 1, MPI_INT, &msg, &st);
    bad |= st.MPI_SOURCE != MPI_PROC_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(buf, kMax, MPI_INT, 2, 40, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    bad |= n != 3 || check(buf, n, 2, 40);
    ++messages;
  } else {
    fill(buf, 4 + rank, rank, 10);
    MPI_Send(buf, 4 + rank, MPI_INT, 0, 10, MPI_COMM_WORLD);
    if (rank == 1) {
      fill(buf, 7, rank, 30);
      MPI_Send(buf, 7, MPI_INT, 0, 30, MPI_COMM_WORLD);
    } else {
      fill(buf, 9, rank, 40);
      MPI_Isend(buf, 9, MPI_INT, 0, 40, MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2) {
      fill(buf, 3, rank, 40);
      MPI_Send(buf, 3, MPI_INT, 0, 40, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("matched_cancelled: %d messages, %d cancelled\n", messages, cancelled);
  MPI_Finalize();
  return bad || (rank == 0 && cancelled != 2);
}
