/* Sends to MPI_PROC_NULL by every send-like call, and one real send per round, for the replay's
 * send checks: test_send_checks ROUNDS NULL_FILL REAL_FILL. The fills are the values sent
 * (to MPI_PROC_NULL, to rank 1), so a replay can send other data than the recorded run did. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 4) {
    fprintf(stderr, "usage: %s ROUNDS NULL_FILL REAL_FILL\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = atoi(argv[1]);
  double none[32], real[32], back[32];
  for (int i = 0; i < 32; ++i) {
    none[i] = atof(argv[2]) + i;
    real[i] = atof(argv[3]) + i;
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int r = 0; r < rounds; ++r) {
    if (rank == 0) {
      MPI_Request q;
      MPI_Send(none, 32, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
      MPI_Ssend(none, 32, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
      MPI_Rsend(none, 32, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
      MPI_Isend(none, 32, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      MPI_Issend(none, 16, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      MPI_Sendrecv(none, 32, MPI_DOUBLE, MPI_PROC_NULL, 1, back, 32, MPI_DOUBLE, MPI_PROC_NULL, 1,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send_init(none, 8, MPI_DOUBLE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &q);
      MPI_Start(&q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      MPI_Request_free(&q);
      MPI_Send(real, 32, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(back, 32, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (rank == 1) printf("received %g\n", back[0]);
  MPI_Finalize();
  return 0;
}
