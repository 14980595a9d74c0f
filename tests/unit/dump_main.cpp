// GoogleTest main for the libdump unit tests: they need MPI initialised (a singleton run of
// MPICH works without mpiexec) to build datatypes and communicators.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
