// An MPI program linked against the recorder (encore::dump / encore::dump_static, or
// `pkg-config --libs encore-dump`): link-time PMPI interposition must resolve. Built only.
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return rank < 0 ? 1 : 0;
}
