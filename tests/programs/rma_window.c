/* Creates an RMA window: recorded (as an opaque call) but not replayed yet, so a replay must stop
 * there with one clear line. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int data[4] = {0, 1, 2, 3};
  MPI_Win win;
  MPI_Win_create(data, sizeof data, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
