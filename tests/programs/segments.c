/* Events that fill capture segments every way: many tiny ones (MPI_Comm_rank: the times region
 * fills before the body region), small messages (the body region fills first), and derived
 * datatypes whose constructor arrays make events larger than the room left in a segment, and
 * than a whole segment. The data received through them ends in a digest line.
 * Arguments: [tiny calls] [messages] [blocks of the largest datatype] */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int tiny = argc > 1 ? atoi(argv[1]) : 150000;
  const int messages = argc > 2 ? atoi(argv[2]) : 40000;
  const int blocks = argc > 3 ? atoi(argv[3]) : 300000;
  for (int i = 0; i < tiny; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = 1 - rank;
  unsigned long digest = 0;
  for (int i = 0; i < messages; ++i) {
    int v = rank == 0 ? i : 0;
    if (rank == 0)
      MPI_Send(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    digest = digest * 31 + (unsigned long)v;
  }
  /* Indexed types of growing size: 1 element per block, every other int. */
  for (int n = blocks / 8; n <= blocks; n *= 2) {
    int* lens = malloc(sizeof(int) * (size_t)n);
    int* displs = malloc(sizeof(int) * (size_t)n);
    int* data = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < n; ++i) {
      lens[i] = 1;
      displs[i] = 2 * i;
      data[2 * i] = rank == 0 ? i * 7 + n : 0;
    }
    MPI_Datatype t;
    MPI_Type_indexed(n, lens, displs, MPI_INT, &t);
    MPI_Type_commit(&t);
    if (rank == 0)
      MPI_Send(data, 1, t, peer, 1, MPI_COMM_WORLD);
    else
      MPI_Recv(data, 1, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i += 997) digest = digest * 31 + (unsigned long)data[2 * i];
    MPI_Type_free(&t);
    free(lens);
    free(displs);
    free(data);
  }
  if (rank == 1) printf("digest rank=1 %016lx\n", digest);
  MPI_Finalize();
  return size == 2 ? 0 : 1;
}
