/* The MPI-4 large-count (_c) datatype constructors, each used to receive a message exchanged
 * with the other rank and to pack locally: a replay must build the same layouts. */
#include <stdint.h>
#include <string.h>

#include "digest.h"
#include <mpi.h>

#define N 64

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = (rank + 1) % size, from = (rank + size - 1) % size;
  uint64_t recv_hash, compute;
  digest_init(&recv_hash);
  digest_init(&compute);

  MPI_Datatype t[8];
  MPI_Count bl[3] = {2, 1, 3}, disp[3] = {0, 5, 9};
  MPI_Count bdisp[3] = {0, 5 * sizeof(double), 9 * sizeof(double)};
  MPI_Type_contiguous_c(5, MPI_DOUBLE, &t[0]);
  MPI_Type_vector_c(3, 2, 4, MPI_DOUBLE, &t[1]);
  MPI_Type_create_hvector_c(3, 1, 3 * sizeof(double), MPI_DOUBLE, &t[2]);
  MPI_Type_indexed_c(3, bl, disp, MPI_DOUBLE, &t[3]);
  MPI_Type_create_hindexed_c(3, bl, bdisp, MPI_DOUBLE, &t[4]);
  MPI_Type_create_indexed_block_c(3, 2, disp, MPI_DOUBLE, &t[5]);
  MPI_Count sizes[2] = {6, 8}, sub[2] = {3, 4}, starts[2] = {1, 2};
  MPI_Type_create_subarray_c(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t[6]);
  MPI_Count sbl[2] = {1, 2}, sdisp[2] = {0, 2 * sizeof(double)};
  MPI_Datatype st[2] = {MPI_INT, MPI_DOUBLE}, s;
  MPI_Type_create_struct_c(2, sbl, sdisp, st, &s);
  MPI_Type_create_resized_c(s, 0, 5 * sizeof(double), &t[7]);
  MPI_Type_free(&s);

  double out[N], in[N];
  for (int k = 0; k < 8; ++k) {
    MPI_Type_commit(&t[k]);
    for (int i = 0; i < N; ++i) out[i] = rank * 100 + k * 10 + i * 0.5;
    memset(in, 0, sizeof in);
    MPI_Sendrecv(out, 1, t[k], peer, k, in, 1, t[k], from, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    digest_update(&recv_hash, in, sizeof in);

    /* Pack_c/Unpack_c on this machine's memory. */
    char packed[N * sizeof(double)];
    MPI_Count pos = 0, upos = 0;
    MPI_Pack_c(in, 1, t[k], packed, sizeof packed, &pos, MPI_COMM_WORLD);
    double back[N];
    memset(back, 0, sizeof back);
    MPI_Unpack_c(packed, pos, &upos, back, 1, t[k], MPI_COMM_WORLD);
    digest_update(&compute, packed, (size_t)pos);
    digest_update(&compute, back, sizeof back);
    MPI_Type_free(&t[k]);
  }
  digest_report(MPI_COMM_WORLD, recv_hash, compute);
  MPI_Finalize();
  return 0;
}
