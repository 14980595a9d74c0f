/* Messages a rank sends itself: on MPI_COMM_SELF (blocking Sendrecv) and to its own rank on
 * MPI_COMM_WORLD (Isend, Recv, Wait), `rounds` times each. Run on any number of ranks. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  const int rounds = argc > 1 ? atoi(argv[1]) : 2;
  double sum = 0;
  for (int i = 0; i < rounds; ++i) {
    double a = r + i, b = 0;
    MPI_Sendrecv(&a, 1, MPI_DOUBLE, 0, 5, &b, 1, MPI_DOUBLE, 0, 5, MPI_COMM_SELF,
                 MPI_STATUS_IGNORE);
    sum += b;
    MPI_Request q;
    MPI_Isend(&a, 1, MPI_DOUBLE, r, 6, MPI_COMM_WORLD, &q);
    MPI_Recv(&b, 1, MPI_DOUBLE, r, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    sum += b;
  }
  printf("r%d self sum %g\n", r, sum);
  MPI_Finalize();
  return 0;
}
