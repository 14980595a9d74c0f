/* Datatypes made by the MPI-4 large-count constructors (every MPI_Type_*_c of mpi.h), used by
 * large-count point-to-point calls (MPI_Send_c/MPI_Recv_c, nonblocking, MPI_Sendrecv_c) and
 * collectives. Each rank digests what it received packed in type-signature order (MPI_Pack_c),
 * which is how the capture stores received data, so `encore digest` must give the same value. */
#include <stdio.h>
#include <string.h>

#include "digest.h"
#include <mpi.h>

#define NTYPES 13
#define BUF 4096

static uint64_t recv_hash, compute_hash;

/* Digests `count` elements of `t` at buf, packed as MPI_Pack_c lays them out. */
static void take(const void* buf, MPI_Count count, MPI_Datatype t) {
  static char packed[BUF];
  MPI_Count pos = 0;
  MPI_Pack_c(buf, count, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  digest_update(&recv_hash, packed, (size_t)pos);
}

static void fill(unsigned char* p, int seed) {
  for (int i = 0; i < BUF; ++i) p[i] = (unsigned char)(seed * 31 + i * 7);
}

/* The types, all from _c constructors; one nests a struct, one a resized contiguous type. */
static void make_types(MPI_Datatype* t, int rank, int size) {
  MPI_Type_contiguous_c(5, MPI_INT, &t[0]);
  MPI_Type_vector_c(3, 2, 4, MPI_INT, &t[1]);
  MPI_Type_create_hvector_c(3, 1, 24, MPI_DOUBLE, &t[2]);
  const MPI_Count ibl[3] = {2, 1, 3}, idisp[3] = {0, 4, 7};
  MPI_Type_indexed_c(3, ibl, idisp, MPI_INT, &t[3]);
  const MPI_Count hbl[2] = {1, 2}, hdisp[2] = {0, 16};
  MPI_Type_create_hindexed_c(2, hbl, hdisp, MPI_DOUBLE, &t[4]);
  const MPI_Count bdisp[3] = {0, 3, 6};
  MPI_Type_create_indexed_block_c(3, 2, bdisp, MPI_SHORT, &t[5]);
  const MPI_Count hbdisp[2] = {0, 32};
  MPI_Type_create_hindexed_block_c(2, 3, hbdisp, MPI_INT, &t[6]);
  const MPI_Count sbl[3] = {1, 2, 1}, sdisp[3] = {0, 8, 24};
  const MPI_Datatype stypes[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct_c(3, sbl, sdisp, stypes, &t[7]);
  const MPI_Count sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
  MPI_Type_create_subarray_c(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t[8]);
  const MPI_Count gsizes[1] = {12};
  const int distribs[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG};
  const int psizes[1] = {size};
  MPI_Type_create_darray_c(size, rank, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT,
                           &t[9]);
  MPI_Type_create_resized_c(t[0], 0, 32, &t[10]);
  MPI_Type_contiguous_c(2, t[7], &t[11]);
  MPI_Type_dup(t[1], &t[12]);
  for (int k = 0; k < NTYPES; ++k) MPI_Type_commit(&t[k]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  digest_init(&recv_hash);
  digest_init(&compute_hash);
  const int peer = rank ^ 1;
  MPI_Datatype t[NTYPES];
  make_types(t, rank, size);
  static unsigned char send[BUF], recv[BUF], recv2[BUF];

  for (int k = 0; k < NTYPES; ++k) {
    MPI_Count tsize, lb, extent;
    MPI_Type_size_c(t[k], &tsize);
    MPI_Type_get_extent_c(t[k], &lb, &extent);
    if (rank == 0)
      printf("type %d: size %lld extent %lld\n", k, (long long)tsize, (long long)extent);
    digest_update(&compute_hash, &tsize, sizeof tsize);
    if (peer >= size) continue;
    /* Blocking, rank 0 to 1, then nonblocking both ways. */
    fill(send, rank * NTYPES + k);
    memset(recv, 0, sizeof recv);
    if (rank == 0) {
      MPI_Send_c(send, 2, t[k], peer, k, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Status st;
      MPI_Recv_c(recv, 2, t[k], peer, k, MPI_COMM_WORLD, &st);
      MPI_Count got;
      MPI_Get_count_c(&st, t[k], &got);
      printf("rank 1 type %d: received %lld\n", k, (long long)got);
      take(recv, got, t[k]);
    }
    MPI_Request req[2];
    memset(recv2, 0, sizeof recv2);
    MPI_Irecv_c(recv2, 3, t[k], peer, 100 + k, MPI_COMM_WORLD, &req[0]);
    MPI_Isend_c(send, 3, t[k], peer, 100 + k, MPI_COMM_WORLD, &req[1]);
    MPI_Status st[2];
    MPI_Waitall(2, req, st);
    take(recv2, 3, t[k]);
  }

  /* Sendrecv and collectives on the struct, vector and nested types. */
  fill(send, 100 + rank);
  memset(recv, 0, sizeof recv);
  MPI_Sendrecv_c(send, 4, t[7], peer % size, 7, recv, 4, t[7], peer % size, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  take(recv, 4, t[7]);
  memcpy(recv, send, sizeof recv);
  MPI_Bcast_c(recv, 3, t[11], 0, MPI_COMM_WORLD);
  if (rank != 0) take(recv, 3, t[11]);
  memset(recv, 0, sizeof recv);
  MPI_Allgather_c(send, 1, t[1], recv, 1, t[1], MPI_COMM_WORLD);
  take(recv, size, t[1]);
  MPI_Request req;
  memset(recv, 0, sizeof recv);
  MPI_Ialltoall_c(send, 1, t[3], recv, 1, t[3], MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  take(recv, size, t[3]);

  for (int k = 0; k < NTYPES; ++k) MPI_Type_free(&t[k]);
  digest_report(MPI_COMM_WORLD, recv_hash, compute_hash);
  MPI_Finalize();
  return 0;
}
