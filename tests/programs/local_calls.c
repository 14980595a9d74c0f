/* Calls whose results are local to the process, which a replay must compute on its own machine
 * rather than take from the trace: absolute addresses (MPI_Get_address, MPI_BOTTOM, MPI_Aint_add
 * and _diff, types built on them and their contents and extents, the MPI_Aint displacements
 * of MPI_Alltoallw_c and MPI_Neighbor_alltoallw at MPI_BOTTOM), predefined handles returned
 * (MPI_ERRORS_RETURN, MPI_MESSAGE_NO_PROC, MPI_GROUP_EMPTY), Fortran-kind types
 * (MPI_Type_create_f90_*), MPI_Pack_external,
 * MPI_Reduce_local (predefined and user operations), MPI_Alloc_mem and MPI_Buffer_detach.
 * Every line starts with "rN " (N the rank) and prints only what does not depend on where the
 * process's memory lies, so a replayed rank prints its recorded lines exactly. Run on 2 ranks. */
#include <complex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int user_calls = 0;

static void twice_plus(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  ++user_calls;
  const int* a = in;
  int* b = inout;
  for (int i = 0; i < *len; ++i) b[i] = 2 * a[i] + b[i];
}

/* A struct type over three separate arrays at their absolute addresses. */
static MPI_Datatype absolute_type(int* ia, double* da, char* ca, MPI_Aint ad[3]) {
  MPI_Get_address(ia, &ad[0]);
  MPI_Get_address(da, &ad[1]);
  MPI_Get_address(ca, &ad[2]);
  int lengths[3] = {4, 3, 5};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t;
  MPI_Type_create_struct(3, lengths, ad, types, &t);
  MPI_Type_commit(&t);
  return t;
}

static void addresses(int r) {
  const int peer = 1 - r;
  int ia[4], ib[4];
  double da[3], db[3];
  char ca[6] = "", cb[6] = "";
  MPI_Aint aa[3], ab[3];
  MPI_Datatype ta = absolute_type(ia, da, ca, aa), tb = absolute_type(ib, db, cb, ab);
  for (int i = 0; i < 4; ++i) ia[i] = 10 * r + i;
  for (int i = 0; i < 3; ++i) da[i] = r + 0.25 * i;
  for (int i = 0; i < 5; ++i) ca[i] = (char)('A' + r + i);
  MPI_Sendrecv(MPI_BOTTOM, 1, ta, peer, 1, MPI_BOTTOM, 1, tb, peer, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  printf("r%d bottom sendrecv %d,%d %g,%g %s\n", r, ib[0], ib[3], db[0], db[2], cb);
  memset(ib, 0, sizeof ib);
  MPI_Request q;
  if (r == 0) {
    MPI_Send(MPI_BOTTOM, 1, ta, 1, 2, MPI_COMM_WORLD);
  } else {
    MPI_Irecv(MPI_BOTTOM, 1, tb, 0, 2, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  MPI_Bcast(MPI_BOTTOM, 1, r == 0 ? ta : tb, 0, MPI_COMM_WORLD);
  printf("r%d bottom bcast %d,%d %g %s\n", r, ib[0], ib[3], db[1], cb);
  /* Address arithmetic, and a type's contents and bounds, relative to the addresses taken. */
  const MPI_Aint d = MPI_Aint_diff(aa[1], aa[0]);
  printf("r%d aint add=%d\n", r, MPI_Aint_add(aa[0], d) == aa[1]);
  int ints[4];
  MPI_Aint addrs[3];
  MPI_Datatype types[3];
  MPI_Type_get_contents(ta, 4, 3, 3, ints, addrs, types);
  MPI_Aint lb, extent, low = aa[0] < aa[1] ? aa[0] : aa[1];
  low = aa[2] < low ? aa[2] : low;
  MPI_Type_get_extent(ta, &lb, &extent);
  printf("r%d contents %d %d,%d,%d same addresses %d same types %d lb %d\n", r, ints[0], ints[1],
         ints[2], ints[3], memcmp(addrs, aa, sizeof aa) == 0,
         types[0] == MPI_INT && types[1] == MPI_DOUBLE && types[2] == MPI_CHAR, lb == low);
  MPI_Type_free(&ta);
  MPI_Type_free(&tb);
}

/* The w-collectives' MPI_Aint displacements at MPI_BOTTOM: absolute addresses. MPICH refuses
 * MPI_BOTTOM on both sides (aliased buffers), so one side each. */
static void bottom_alltoallw(int r) {
  int send[2] = {100 * r + 1, 100 * r + 2}, recv[2] = {0, 0}, nrecv[2] = {0, 0};
  MPI_Aint absolute[2], relative[2];
  for (int i = 0; i < 2; ++i) relative[i] = (MPI_Aint)(i * sizeof(int));
  for (int i = 0; i < 2; ++i) MPI_Get_address(&recv[i], &absolute[i]);
  const MPI_Count counts[2] = {1, 1};
  const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Alltoallw_c(send, counts, relative, types, MPI_BOTTOM, counts, absolute, types,
                  MPI_COMM_WORLD);
  /* A periodic ring of two: each rank's left and right neighbour is the other one. */
  MPI_Comm ring;
  const int dims[1] = {2}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  const int ncounts[2] = {1, 1};
  for (int i = 0; i < 2; ++i) MPI_Get_address(&send[i], &absolute[i]);
  MPI_Neighbor_alltoallw(MPI_BOTTOM, ncounts, absolute, types, nrecv, ncounts, relative, types,
                         ring);
  MPI_Comm_free(&ring);
  printf("r%d bottom alltoallw %d,%d neighbor %d,%d\n", r, recv[0], recv[1], nrecv[0], nrecv[1]);
}

/* Handles MPI hands back as predefined objects, which a program may compare with. */
static void predefined_handles(int r) {
  MPI_Errhandler h;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
  const int errors_return = h == MPI_ERRORS_RETURN;
  MPI_Errhandler_free(&h);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Message m;
  MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
  const int no_proc = m == MPI_MESSAGE_NO_PROC;
  MPI_Group world, none;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 0, NULL, &none);
  const int empty = none == MPI_GROUP_EMPTY;
  if (!empty) MPI_Group_free(&none);
  MPI_Group_free(&world);
  printf("r%d predefined errors_return %d no_proc %d group_empty %d\n", r, errors_return, no_proc,
         empty);
}

/* Fortran-kind types (MPI_Type_create_f90_*): predefined-like, used without a commit. */
static void f90_types(int r) {
  MPI_Datatype real, integer, cplx;
  MPI_Type_create_f90_real(15, 300, &real);
  MPI_Type_create_f90_integer(9, &integer);
  MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &cplx);
  int rs, is, cs;
  MPI_Type_size(real, &rs);
  MPI_Type_size(integer, &is);
  MPI_Type_size(cplx, &cs);
  double d[2] = {r + 0.5, r + 1.5}, got[2] = {0, 0};
  int n = 0;
  MPI_Status st;
  MPI_Sendrecv(d, 2, real, 1 - r, 4, got, 2, real, 1 - r, 4, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, real, &n);
  printf("r%d f90 sizes %d %d %d sendrecv %g,%g count %d\n", r, rs, is, cs, got[0], got[1], n);
}

static void external(int r) {
  const int in[3] = {r + 1, -2, 0x01020304};
  unsigned char packed[12];
  MPI_Aint at = 0;
  MPI_Pack_external("external32", in, 3, MPI_INT, packed, sizeof packed, &at);
  int out[3] = {0, 0, 0};
  MPI_Aint from = 0;
  MPI_Unpack_external("external32", packed, sizeof packed, &from, out, 3, MPI_INT);
  printf("r%d external %ld bytes %02x%02x%02x%02x %02x%02x%02x%02x back %d,%d,%d\n", r, (long)at,
         packed[0], packed[1], packed[2], packed[3], packed[8], packed[9], packed[10], packed[11],
         out[0], out[1], out[2]);
}

static void reductions(int r) {
  int a[2] = {r + 1, 5}, b[2] = {3, 4};
  MPI_Reduce_local(a, b, 2, MPI_INT, MPI_SUM);
  double x[2] = {1.5, -2.0}, y[2] = {0.5, 7.0};
  MPI_Reduce_local(x, y, 2, MPI_DOUBLE, MPI_MAX);
  struct {
    double v;
    int i;
  } p[2] = {{2.0, 1}, {3.0, 4}}, q[2] = {{2.0, 0}, {1.0, 2}};
  MPI_Reduce_local(p, q, 2, MPI_DOUBLE_INT, MPI_MINLOC);
  bool s[2] = {true, false}, t[2] = {true, true};
  MPI_Reduce_local(s, t, 2, MPI_C_BOOL, MPI_LXOR);
  unsigned char m = 0x0f, n = 0x3c;
  MPI_Reduce_local(&m, &n, 1, MPI_BYTE, MPI_BXOR);
  double complex z = 1.0 + 2.0 * I, w = 3.0 - 1.0 * I;
  MPI_Reduce_local(&z, &w, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD);
  long long l = -7, k = 3;
  MPI_Reduce_local(&l, &k, 1, MPI_LONG_LONG, MPI_MIN);
  MPI_Op op;
  MPI_Op_create(twice_plus, 1, &op);
  int u[2] = {1, 2}, v[2] = {10, 20};
  MPI_Reduce_local(u, v, 2, MPI_INT, op);
  MPI_Op_free(&op);
  printf("r%d reduce_local %d,%d %g,%g %g:%d,%g:%d %d,%d %02x %g%+gi %lld user %d,%d calls %d\n", r,
         b[0], b[1], y[0], y[1], q[0].v, q[0].i, q[1].v, q[1].i, t[0], t[1], n, creal(w), cimag(w),
         k, v[0], v[1], user_calls);
}

static void memory(int r) {
  int* m = NULL;
  MPI_Alloc_mem(64 * sizeof *m, MPI_INFO_NULL, &m);
  int sum = 0;
  if (m) {
    for (int i = 0; i < 64; ++i) m[i] = i + r;
    for (int i = 0; i < 64; ++i) sum += m[i];
    MPI_Free_mem(m);
  }
  printf("r%d alloc_mem %d sum %d\n", r, m != NULL, sum);
  const int size = MPI_BSEND_OVERHEAD + 64;
  char* attached = malloc(size);
  MPI_Buffer_attach(attached, size);
  int value = 40 + r, got = 0;
  MPI_Bsend(&value, 1, MPI_INT, 1 - r, 3, MPI_COMM_WORLD);
  MPI_Recv(&got, 1, MPI_INT, 1 - r, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  void* detached = NULL;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  printf("r%d bsend got %d detached the same %d size %d\n", r, got, detached == attached,
         detached_size == size);
  free(attached);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  addresses(r);
  bottom_alltoallw(r);
  predefined_handles(r);
  f90_types(r);
  external(r);
  reductions(r);
  memory(r);
  MPI_Finalize();
  return 0;
}
