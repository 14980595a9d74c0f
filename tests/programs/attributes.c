/* Predefined communicator attributes and one attribute of the program's own: the values are
 * printed, so a replay must answer them as the recorded run did. With the argument "values"
 * the program stops after printing the predefined ones. */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

static int rank;

static void show(MPI_Comm comm, int key, const char* name) {
  int* value = NULL;
  int flag = 0;
  MPI_Comm_get_attr(comm, key, &value, &flag);
  if (flag)
    printf("rank %d %s=%d\n", rank, name, *value);
  else
    printf("rank %d %s unset\n", rank, name);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  show(MPI_COMM_WORLD, MPI_TAG_UB, "tag_ub");
  show(MPI_COMM_WORLD, MPI_HOST, "host");
  show(MPI_COMM_WORLD, MPI_IO, "io");
  show(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, "wtime_is_global");
  show(MPI_COMM_WORLD, MPI_APPNUM, "appnum");
  show(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, "universe_size");
  show(MPI_COMM_SELF, MPI_TAG_UB, "self_tag_ub");
  int cls;
  MPI_Add_error_class(&cls);
  show(MPI_COMM_WORLD, MPI_LASTUSEDCODE, "lastusedcode");
  if (argc > 1 && strcmp(argv[1], "values") == 0) {
    MPI_Finalize();
    return 0;
  }

  /* The largest tag the attribute allows is a valid tag. */
  int* ub;
  int flag;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  int token = rank, got = -1;
  MPI_Sendrecv(&token, 1, MPI_INT, rank, *ub, &got, 1, MPI_INT, rank, *ub, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  printf("rank %d self message with tag %d: %d\n", rank, *ub, got);

  static int mine = 42;
  int key;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
  show(MPI_COMM_WORLD, key, "own");
  MPI_Comm_set_attr(MPI_COMM_WORLD, key, &mine);
  show(MPI_COMM_WORLD, key, "own");
  MPI_Comm_delete_attr(MPI_COMM_WORLD, key);
  show(MPI_COMM_WORLD, key, "own");
  MPI_Comm_free_keyval(&key);
  MPI_Finalize();
  return 0;
}
