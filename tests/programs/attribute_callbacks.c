/* Attribute copy and delete callbacks: every call prints what it saw (key, value, extra
 * state), so a replay must run them where MPI did and in MPI's order: on a value replaced by
 * MPI_Comm_set_attr, on MPI_Comm_delete_attr, MPI_Comm_dup and MPI_Comm_free, on datatypes
 * (MPI_Type_dup, MPI_Type_free), and at MPI_Finalize on MPI_COMM_SELF and MPI_COMM_WORLD.
 * The attributes are set in an order that differs from the keys' creation order. With the
 * argument "nested" the copy callback calls MPI itself (which the replay cannot answer); with
 * "swap" the first MPI_Comm_free frees the other communicator (a divergence in a replay, which
 * must be reported before any delete callback runs). */
#include <stdio.h>
#include <string.h>

#include <mpi.h>

static int rank;
static int keys[5];  /* the keyvals, named k0..k4 in the output */
static int pool[64]; /* values the copy callbacks make */
static int used;
static int nested;

static int key_name(int keyval) {
  for (int i = 0; i < 5; ++i)
    if (keys[i] == keyval) return i;
  return -1;
}

static int copy_plus(MPI_Comm old, int keyval, void* extra, void* in, void* out, int* flag) {
  if (nested) {
    int size = 0;
    MPI_Comm_size(old, &size);
    printf("rank %d copy sees size %d\n", rank, size);
  }
  pool[used] = *(int*)in + 100;
  printf("rank %d copy k%d extra=%s in=%d out=%d\n", rank, key_name(keyval), (const char*)extra,
         *(int*)in, pool[used]);
  *(int**)out = &pool[used++];
  *flag = 1;
  return MPI_SUCCESS;
}

static int copy_refuse(MPI_Comm old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old;
  (void)out;
  printf("rank %d copy k%d extra=%s in=%d refused\n", rank, key_name(keyval), (const char*)extra,
         *(int*)in);
  *flag = 0;
  return MPI_SUCCESS;
}

static int del(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm;
  printf("rank %d delete k%d value=%d extra=%s\n", rank, key_name(keyval), *(int*)value,
         (const char*)extra);
  return MPI_SUCCESS;
}

static int type_copy(MPI_Datatype old, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)old;
  pool[used] = *(int*)in + 1000;
  printf("rank %d type copy k%d extra=%s in=%d out=%d\n", rank, key_name(keyval),
         (const char*)extra, *(int*)in, pool[used]);
  *(int**)out = &pool[used++];
  *flag = 1;
  return MPI_SUCCESS;
}

static int type_del(MPI_Datatype type, int keyval, void* value, void* extra) {
  (void)type;
  printf("rank %d type delete k%d value=%d extra=%s\n", rank, key_name(keyval), *(int*)value,
         (const char*)extra);
  return MPI_SUCCESS;
}

static void show(MPI_Comm comm, const char* name, int k) {
  int* value = NULL;
  int flag = 0;
  MPI_Comm_get_attr(comm, keys[k], &value, &flag);
  if (flag)
    printf("rank %d %s k%d=%d\n", rank, name, k, *value);
  else
    printf("rank %d %s k%d unset\n", rank, name, k);
}

int main(int argc, char** argv) {
  static int v[8] = {10, 11, 12, 13, 14, 15, 16, 17};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  nested = argc > 1 && strcmp(argv[1], "nested") == 0;
  const int swap = argc > 1 && strcmp(argv[1], "swap") == 0;
  MPI_Comm_create_keyval(copy_plus, del, &keys[0], "plus");
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del, &keys[1], "dup");
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del, &keys[2], "none");
  MPI_Keyval_create(copy_refuse, del, &keys[3], "refuse");
  MPI_Type_create_keyval(type_copy, type_del, &keys[4], "type");

  MPI_Comm_set_attr(MPI_COMM_WORLD, keys[3], &v[3]);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keys[1], &v[1]);
  MPI_Attr_put(MPI_COMM_WORLD, keys[2], &v[2]);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keys[0], &v[0]);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keys[1], &v[5]); /* replaces: deletes the old value */

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  for (int k = 0; k < 4; ++k) show(dup, "dup", k);
  MPI_Comm_delete_attr(dup, keys[0]);
  MPI_Comm again;
  MPI_Comm_dup(dup, &again);
  printf("rank %d freeing %s\n", rank, swap ? "again" : "dup");
  fflush(stdout);
  MPI_Comm_free(swap ? &again : &dup);
  for (int k = 0; k < 4; ++k) show(again, "again", k);
  MPI_Comm_free(&again);

  MPI_Datatype pair, copy;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_set_attr(pair, keys[4], &v[4]);
  MPI_Type_dup(pair, &copy);
  int* tv = NULL;
  int flag = 0;
  MPI_Type_get_attr(copy, keys[4], &tv, &flag);
  printf("rank %d type dup k4 flag=%d value=%d\n", rank, flag, flag ? *tv : -1);
  MPI_Type_delete_attr(pair, keys[4]);
  MPI_Type_free(&pair);
  MPI_Type_free(&copy);

  MPI_Comm_set_attr(MPI_COMM_SELF, keys[2], &v[6]);
  MPI_Comm_set_attr(MPI_COMM_SELF, keys[0], &v[7]);
  int k3 = keys[3];
  MPI_Comm_free_keyval(&k3); /* still in use on MPI_COMM_WORLD: its callbacks stay */
  printf("rank %d finalizing\n", rank);
  fflush(stdout);
  MPI_Finalize();
  printf("rank %d done\n", rank);
  return 0;
}
