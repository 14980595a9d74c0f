/* Every send-like call once to MPI_PROC_NULL and once to the other rank (2 ranks): the capture
 * hashes only the sends that leave the rank. Each message is 8 doubles tagged with the call's
 * number, so a test can tell the calls apart in `encore show`. */
#include <stdio.h>

#include <mpi.h>

enum { N = 8 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "proc_null_sends: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int other = 1 - rank;
  double out[N], in[N], buf[N];
  for (int i = 0; i < N; ++i) out[i] = rank * 100.0 + i;
  static char bsend_space[4 * (N * sizeof(double) + MPI_BSEND_OVERHEAD)];
  MPI_Buffer_attach(bsend_space, sizeof bsend_space);
  const int peers[2] = {MPI_PROC_NULL, other};
  for (int k = 0; k < 2; ++k) {
    const int to = peers[k];
    const int from = peers[k];
    MPI_Request r[2];
    MPI_Status st[2];
    /* Blocking modes (the Ssend/Rsend receive is posted first: an Rsend needs it). */
    MPI_Irecv(in, N, MPI_DOUBLE, from, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(out, N, MPI_DOUBLE, to, 1, MPI_COMM_WORLD);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Irecv(in, N, MPI_DOUBLE, from, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Ssend(out, N, MPI_DOUBLE, to, 2, MPI_COMM_WORLD);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Irecv(in, N, MPI_DOUBLE, from, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(out, N, MPI_DOUBLE, to, 3, MPI_COMM_WORLD);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Irecv(in, N, MPI_DOUBLE, from, 4, MPI_COMM_WORLD, &r[0]);
    MPI_Bsend(out, N, MPI_DOUBLE, to, 4, MPI_COMM_WORLD);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    /* Nonblocking modes. */
    MPI_Irecv(in, N, MPI_DOUBLE, from, 5, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(out, N, MPI_DOUBLE, to, 5, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, st);
    MPI_Irecv(in, N, MPI_DOUBLE, from, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Issend(out, N, MPI_DOUBLE, to, 6, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, st);
    /* Persistent send, started twice. */
    MPI_Request ps;
    MPI_Send_init(out, N, MPI_DOUBLE, to, 7, MPI_COMM_WORLD, &ps);
    for (int s = 0; s < 2; ++s) {
      MPI_Irecv(in, N, MPI_DOUBLE, from, 7, MPI_COMM_WORLD, &r[0]);
      MPI_Start(&ps);
      r[1] = ps;
      MPI_Waitall(2, r, st);
    }
    MPI_Request_free(&ps);
    /* Sendrecv and its replace form. (MPICH 4.0.2's MPI_Isendrecv crashes in UCX when the
     * destination is MPI_PROC_NULL: left out; the capture treats it like MPI_Sendrecv.) */
    MPI_Sendrecv(out, N, MPI_DOUBLE, to, 8, in, N, MPI_DOUBLE, from, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < N; ++i) buf[i] = out[i];
    MPI_Sendrecv_replace(buf, N, MPI_DOUBLE, to, 9, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  void* detached = NULL;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Finalize();
  return 0;
}
