// GoogleTest main for the replay datatype engine: MPI is initialised (a singleton MPICH run
// needs no mpiexec) so every answer of the engine can be compared with the real library.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
