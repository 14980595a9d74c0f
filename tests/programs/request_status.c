/* Received data a program reads before its request is waited for, or whose status it cannot
 * trust: MPI_Request_get_status polled until it says done (a receive then waited for, one then
 * freed, a persistent receive started twice, a nonblocking collective), and MPI_Isendrecv /
 * MPI_Isendrecv_replace, whose status MPICH 4.0 leaves as the memory held it (here zeros: a
 * capture that believed it recorded nothing). Every line starts with "rN " (N the rank) and
 * prints what the rank received, so a replayed rank prints its recorded lines exactly.
 * Run on 2 ranks. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

/* Polls until the request is done; the data is read right after, before any completion. */
static void until_done(MPI_Request q) {
  int done = 0;
  while (!done) MPI_Request_get_status(q, &done, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  const int peer = 1 - r;
  MPI_Request q;
  MPI_Status st;

  int send[4] = {10 * r + 1, 10 * r + 2, 10 * r + 3, 10 * r + 4}, got[4] = {0, 0, 0, 0};
  MPI_Isendrecv(send, 4, MPI_INT, peer, 7, got, 4, MPI_INT, peer, 7, MPI_COMM_WORLD, &q);
  memset(&st, 0, sizeof st);
  MPI_Wait(&q, &st);
  int same[3] = {7 * r, 8 * r, 9 * r};
  MPI_Isendrecv_replace(same, 3, MPI_INT, peer, 8, peer, 8, MPI_COMM_WORLD, &q);
  memset(&st, 0, sizeof st);
  MPI_Wait(&q, &st);
  printf("r%d isendrecv %d,%d,%d,%d replace %d,%d,%d\n", r, got[0], got[1], got[2], got[3], same[0],
         same[1], same[2]);

  int a = -1, b = -1;
  MPI_Irecv(&a, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &q);
  MPI_Send(&(int){100 + r}, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
  until_done(q);
  const int seen_a = a;
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Irecv(&b, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &q);
  MPI_Send(&(int){200 + r}, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
  until_done(q);
  MPI_Request_free(&q);
  printf("r%d get_status recv %d then waited, %d then freed\n", r, seen_a, b);

  int p = -1, seen[2];
  MPI_Recv_init(&p, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &q);
  for (int round = 0; round < 2; ++round) {
    MPI_Start(&q);
    MPI_Send(&(int){300 + 10 * round + r}, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
    until_done(q);
    seen[round] = p;
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&q);
  printf("r%d get_status persistent %d,%d\n", r, seen[0], seen[1]);

  int mine = 1000 + r, sum = 0;
  MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
  until_done(q);
  const int seen_sum = sum;
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  printf("r%d get_status iallreduce %d\n", r, seen_sum);

  MPI_Finalize();
  return 0;
}
