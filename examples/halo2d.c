/* halo2d.c - 2-D Jacobi iteration with halo exchange on a Cartesian grid.
 *
 * Exercises: MPI_Dims_create + MPI_Cart_create/Cart_coords/Cart_shift (edges
 * get MPI_PROC_NULL neighbours), a committed derived datatype (MPI_Type_vector
 * for the strided column halos; rows are contiguous), MPI_Irecv/MPI_Isend
 * completed by one MPI_Waitall, MPI_Allreduce of the residual, MPI_Wtime.
 * Why: the canonical stencil pattern; the column halos check that recorders
 * store derived-type receives in packed (type-signature) order.
 *
 * Laplace on an NxN grid; the residual is reduced every `residual_every`
 * iterations and after the last one.
 * Usage: example_halo2d [N=128] [iters=50] [residual_every=10]   (any #ranks)
 * With HALO2D_LOOP_FAULTS set, rank 0 also prints "loop_faults <n>" on stderr: the minor page
 * faults its thread took in the timed loop (bench/capture.py compares recorded and plain runs).
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <mpi.h>

#include "digest.h"

/* Tags name the direction a message travels. */
enum { TAG_TO_SOUTH = 1, TAG_TO_NORTH, TAG_TO_EAST, TAG_TO_WEST };

/* Size and offset of block `c` when n points are split over p blocks. */
static int block_len(int n, int p, int c) { return n / p + (c < n % p); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int N = argc > 1 ? atoi(argv[1]) : 128;
    const int iters = argc > 2 ? atoi(argv[2]) : 50;
    const int every = argc > 3 ? atoi(argv[3]) : 10;
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    if (N < dims[0] || N < dims[1] || iters < 1 || every < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: example_halo2d [N] [iters>=1] [residual_every>=1]\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart); /* no reorder: cart rank == world rank */
    MPI_Cart_coords(cart, rank, 2, coords);
    int north, south, west, east;
    MPI_Cart_shift(cart, 0, 1, &north, &south);
    MPI_Cart_shift(cart, 1, 1, &west, &east);

    /* Local block of ny x nx interior points plus a one-point halo all around. */
    const int ny = block_len(N, dims[0], coords[0]), nx = block_len(N, dims[1], coords[1]);
    const int ld = nx + 2;
    const size_t npts = (size_t)(ny + 2) * (size_t)ld;
    double *u = calloc(npts, sizeof *u), *unew = calloc(npts, sizeof *unew);
#define U(i, j) u[(size_t)(i) * (size_t)ld + (size_t)(j)]
#define UNEW(i, j) unew[(size_t)(i) * (size_t)ld + (size_t)(j)]
    /* Boundary (ghost cells on the global edge, never overwritten): top 1, left
     * 0.5, others 0.  Interior start: an asymmetric pattern, so that every halo
     * carries distinct nonzero data from the first iteration on. */
    int gi0 = 0, gj0 = 0; /* global index of the first interior point */
    for (int c = 0; c < coords[0]; ++c)
        gi0 += block_len(N, dims[0], c);
    for (int c = 0; c < coords[1]; ++c)
        gj0 += block_len(N, dims[1], c);
    for (int i = 1; i <= ny; ++i)
        for (int j = 1; j <= nx; ++j)
            U(i, j) = ((gi0 + i) * 31 % 23 + (gj0 + j) * 17 % 19) / 42.0;
    if (north == MPI_PROC_NULL)
        for (int j = 0; j < ld; ++j)
            U(0, j) = UNEW(0, j) = 1.0;
    if (west == MPI_PROC_NULL)
        for (int i = 1; i <= ny; ++i)
            U(i, 0) = UNEW(i, 0) = 0.5;

    MPI_Datatype column;
    MPI_Type_vector(ny, 1, ld, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);

    uint64_t hrecv, hcomp;
    digest_init(&hrecv);
    digest_init(&hcomp);
    double residual = 0.0;
    const int report_faults = getenv("HALO2D_LOOP_FAULTS") != NULL;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_THREAD, &ru0);
    const double t0 = MPI_Wtime();
    for (int it = 0; it < iters; ++it) {
        MPI_Request req[8];
        MPI_Status st[8];
        MPI_Irecv(&U(0, 1), nx, MPI_DOUBLE, north, TAG_TO_SOUTH, cart, &req[0]);
        MPI_Irecv(&U(ny + 1, 1), nx, MPI_DOUBLE, south, TAG_TO_NORTH, cart, &req[1]);
        MPI_Irecv(&U(1, 0), 1, column, west, TAG_TO_EAST, cart, &req[2]);
        MPI_Irecv(&U(1, nx + 1), 1, column, east, TAG_TO_WEST, cart, &req[3]);
        MPI_Isend(&U(1, 1), nx, MPI_DOUBLE, north, TAG_TO_NORTH, cart, &req[4]);
        MPI_Isend(&U(ny, 1), nx, MPI_DOUBLE, south, TAG_TO_SOUTH, cart, &req[5]);
        MPI_Isend(&U(1, 1), 1, column, west, TAG_TO_WEST, cart, &req[6]);
        MPI_Isend(&U(1, nx), 1, column, east, TAG_TO_EAST, cart, &req[7]);
        MPI_Waitall(8, req, st);
        /* recv digest in request-array order; columns in packed order. */
        digest_update_recv(&hrecv, &U(0, 1), MPI_DOUBLE, &st[0]);
        digest_update_recv(&hrecv, &U(ny + 1, 1), MPI_DOUBLE, &st[1]);
        for (int k = 2; k < 4; ++k) {
            int nelem = 0;
            MPI_Get_elements(&st[k], column, &nelem);
            digest_update_strided(&hrecv, k == 2 ? &U(1, 0) : &U(1, nx + 1),
                                  (size_t)nelem, sizeof(double), (size_t)ld * sizeof(double));
        }

        double local = 0.0;
        for (int i = 1; i <= ny; ++i)
            for (int j = 1; j <= nx; ++j) {
                UNEW(i, j) = 0.25 * (U(i - 1, j) + U(i + 1, j) + U(i, j - 1) + U(i, j + 1));
                const double d = UNEW(i, j) - U(i, j);
                local += d * d;
            }
        double *tmp = u;
        u = unew;
        unew = tmp;
        if ((it + 1) % every == 0 || it == iters - 1) {
            double global = 0.0;
            MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, cart);
            digest_update(&hrecv, &global, sizeof global);
            residual = sqrt(global);
        }
    }
    const double t1 = MPI_Wtime();
    getrusage(RUSAGE_THREAD, &ru1);
    if (rank == 0 && report_faults)
        fprintf(stderr, "loop_faults %ld\n", ru1.ru_minflt - ru0.ru_minflt);

    /* compute digest: the final interior, row by row, then the residual. */
    for (int i = 1; i <= ny; ++i)
        digest_update(&hcomp, &U(i, 1), (size_t)nx * sizeof(double));
    digest_update(&hcomp, &residual, sizeof residual);

    if (rank == 0) {
        printf("halo2d: N=%d iters=%d grid=%dx%d residual=%.12e\n", N, iters, dims[0],
               dims[1], residual);
        printf("time %.6f\n", t1 - t0);
    }
    digest_report(MPI_COMM_WORLD, hrecv, hcomp);
    MPI_Type_free(&column);
    MPI_Comm_free(&cart);
    free(u);
    free(unew);
    MPI_Finalize();
    return 0;
}
