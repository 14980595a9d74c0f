/* collectives.c - one call of each common collective, blocking and nonblocking.
 *
 * Exercises: Bcast, Reduce, Allreduce, Gather, Scatter, Allgatherv, Alltoall,
 * Alltoallv (uneven counts), Scan, Exscan, Reduce_scatter_block, Comm_split
 * into the row and column communicators of a 2-D layout (an Allreduce in each
 * row, an Allgather in each column), Iallreduce + Wait, Ibcast + Test loop.
 * Why: each collective has its own notion of which buffer a rank receives
 * into; this program pins the digest rule down for all of them.
 * All values are integers (doubles hold exact integers), so results do not
 * depend on the reduction order.
 *
 * Usage: example_collectives [n=8]   (any #ranks; n = length of the Bcast/Allreduce arrays)
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "digest.h"

static uint64_t hrecv, hcomp;
static uint64_t checksum; /* running combination of everything received (wraps) */

/* Add a receive buffer of n int64 / doubles / ints to both the recv digest and the checksum. */
static void got_i64(const int64_t *v, int n)
{
    digest_update(&hrecv, v, (size_t)n * sizeof *v);
    for (int i = 0; i < n; ++i)
        checksum = checksum * 7 + (uint64_t)v[i];
}
static void got_int(const int *v, int n)
{
    digest_update(&hrecv, v, (size_t)n * sizeof *v);
    for (int i = 0; i < n; ++i)
        checksum = checksum * 7 + (uint64_t)v[i];
}
static void got_dbl(const double *v, int n)
{
    digest_update(&hrecv, v, (size_t)n * sizeof *v);
    for (int i = 0; i < n; ++i)
        checksum = checksum * 7 + (uint64_t)(int64_t)v[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int n = argc > 1 ? atoi(argv[1]) : 8;
    if (n < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: example_collectives [n>=1]\n");
        MPI_Finalize();
        return 1;
    }
    const MPI_Comm w = MPI_COMM_WORLD;
    const int last = p - 1;
    digest_init(&hrecv);
    digest_init(&hcomp);
    int64_t *v = malloc((size_t)n * sizeof *v), *r = malloc((size_t)n * sizeof *r);
    double *d = malloc((size_t)n * sizeof *d), *dr = malloc((size_t)n * sizeof *dr);
    int *ia = malloc(4 * (size_t)p * sizeof *ia), *ib = malloc(4 * (size_t)p * sizeof *ib);
    int *cnt = malloc(4 * (size_t)p * sizeof *cnt);
    int *scnt = cnt, *sdsp = cnt + p, *rcnt = cnt + 2 * p, *rdsp = cnt + 3 * p;

    /* Bcast from rank 0: only non-root ranks receive. */
    for (int i = 0; i < n; ++i)
        v[i] = rank == 0 ? 1000 + i : 0;
    MPI_Bcast(v, n, MPI_INT64_T, 0, w);
    if (rank != 0)
        got_i64(v, n);

    /* Reduce to the last rank: only the root's recvbuf is filled. */
    for (int i = 0; i < n; ++i)
        v[i] = (rank + 1) * (i + 1);
    MPI_Reduce(v, r, n, MPI_INT64_T, MPI_SUM, last, w);
    if (rank == last)
        got_i64(r, n);

    /* Allreduce (MAX) of doubles. */
    for (int i = 0; i < n; ++i)
        d[i] = (double)((rank * 5 + i * 3) % 11);
    MPI_Allreduce(d, dr, n, MPI_DOUBLE, MPI_MAX, w);
    got_dbl(dr, n);

    /* Gather two ints per rank to rank 0: root hashes its whole recvbuf, own block included. */
    int two[2] = {rank, rank * rank};
    MPI_Gather(two, 2, MPI_INT, ia, 2, MPI_INT, 0, w);
    if (rank == 0)
        got_int(ia, 2 * p);

    /* Scatter three ints per rank from the last rank: every rank (root too) receives. */
    for (int i = 0; i < 3 * p; ++i)
        ia[i] = 10 * i + 1;
    int three[3];
    MPI_Scatter(ia, 3, MPI_INT, three, 3, MPI_INT, last, w);
    got_int(three, 3);

    /* Allgatherv: rank i contributes i+1 doubles (contiguous displacements). */
    double *gv = malloc((size_t)p * (size_t)(p + 1) / 2 * sizeof *gv);
    for (int i = 0; i < p; ++i) {
        rcnt[i] = i + 1;
        rdsp[i] = i * (i + 1) / 2;
    }
    double *mine = malloc((size_t)(rank + 1) * sizeof *mine);
    for (int i = 0; i <= rank; ++i)
        mine[i] = rank * 100.0 + i;
    MPI_Allgatherv(mine, rank + 1, MPI_DOUBLE, gv, rcnt, rdsp, MPI_DOUBLE, w);
    got_dbl(gv, p * (p + 1) / 2);
    free(mine);
    free(gv);

    /* Alltoall: one int64 per pair. */
    int64_t *a2a = malloc(2 * (size_t)p * sizeof *a2a);
    for (int j = 0; j < p; ++j)
        a2a[j] = rank * 100 + j;
    MPI_Alltoall(a2a, 1, MPI_INT64_T, a2a + p, 1, MPI_INT64_T, w);
    got_i64(a2a + p, p);
    free(a2a);

    /* Alltoallv with uneven counts: rank i sends (i+j)%3+1 ints to rank j. */
    int stot = 0, rtot = 0;
    for (int j = 0; j < p; ++j) {
        scnt[j] = (rank + j) % 3 + 1;
        rcnt[j] = (j + rank) % 3 + 1;
        sdsp[j] = stot;
        rdsp[j] = rtot;
        stot += scnt[j];
        rtot += rcnt[j];
    }
    for (int i = 0; i < stot; ++i)
        ia[i] = rank * 1000 + i;
    MPI_Alltoallv(ia, scnt, sdsp, MPI_INT, ib, rcnt, rdsp, MPI_INT, w);
    got_int(ib, rtot);

    /* Scan and Exscan (Exscan's result on rank 0 is undefined: not hashed). */
    int64_t one = rank + 1, pre = 0;
    MPI_Scan(&one, &pre, 1, MPI_INT64_T, MPI_SUM, w);
    got_i64(&pre, 1);
    pre = 0;
    MPI_Exscan(&one, &pre, 1, MPI_INT64_T, MPI_SUM, w);
    if (rank != 0)
        got_i64(&pre, 1);

    /* Reduce_scatter_block: everyone reduces 2*p ints, each keeps a block of 2. */
    for (int i = 0; i < 2 * p; ++i)
        ia[i] = rank + i;
    MPI_Reduce_scatter_block(ia, two, 2, MPI_INT, MPI_SUM, w);
    got_int(two, 2);

    /* Row and column communicators of a dims[0] x dims[1] layout. */
    int dims[2] = {0, 0};
    MPI_Dims_create(p, 2, dims);
    const int row = rank / dims[1], col = rank % dims[1];
    MPI_Comm rowc, colc;
    MPI_Comm_split(w, row, col, &rowc);
    MPI_Comm_split(w, col, row, &colc);
    int64_t rsum = 0;
    MPI_Allreduce(&one, &rsum, 1, MPI_INT64_T, MPI_SUM, rowc);
    got_i64(&rsum, 1);
    MPI_Allgather(&rank, 1, MPI_INT, ib, 1, MPI_INT, colc);
    got_int(ib, dims[0]);
    MPI_Comm_free(&rowc);
    MPI_Comm_free(&colc);

    /* Nonblocking: Iallreduce completed by Wait ... */
    MPI_Request req;
    for (int i = 0; i < n; ++i)
        v[i] = (rank * 7 + i) % 5;
    MPI_Iallreduce(v, r, n, MPI_INT64_T, MPI_MIN, w, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    got_i64(r, n);
    /* ... and Ibcast from the last rank completed by a Test loop. */
    for (int i = 0; i < n; ++i)
        v[i] = rank == last ? (int64_t)(checksum % 1000) + i : -1;
    MPI_Ibcast(v, n, MPI_INT64_T, last, w, &req);
    int done = 0;
    while (!done)
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (rank != last)
        got_i64(v, n);

    digest_update(&hcomp, &checksum, sizeof checksum);
    if (rank == 0)
        printf("collectives: %d ranks, grid %dx%d, n=%d, rank 0 checksum=%llu\n", p,
               dims[0], dims[1], n, (unsigned long long)checksum);
    digest_report(w, hrecv, hcomp);
    free(v);
    free(r);
    free(d);
    free(dr);
    free(ia);
    free(ib);
    free(cnt);
    MPI_Finalize();
    return 0;
}
