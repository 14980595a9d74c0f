/* ring.c - blocking point-to-point on a ring of ranks.
 *
 * Exercises: MPI_Send/MPI_Recv with explicit sources (a token travels the
 * ring `laps` times), MPI_Sendrecv (shift of a double array), MPI_Ssend,
 * MPI_Bsend with MPI_Buffer_attach/detach, MPI_Rsend (posted only after a
 * barrier guarantees the matching receive exists) and a non-periodic shift
 * whose edges talk to MPI_PROC_NULL.
 * Why: the simplest fully deterministic traffic, covering every blocking send
 * mode, so a recording can be checked message by message.
 *
 * Usage: example_ring [laps=3] [n=1000]        (needs >= 2 ranks)
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "digest.h"

enum { TAG_TOKEN = 1, TAG_SHIFT, TAG_SSEND, TAG_BSEND, TAG_RSEND, TAG_EDGE };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int laps = argc > 1 ? atoi(argv[1]) : 3;
    const int n = argc > 2 ? atoi(argv[2]) : 1000;
    if (size < 2 || laps < 1 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: example_ring [laps>=1] [n>=1], needs >= 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    uint64_t hrecv, hcomp;
    digest_init(&hrecv);
    digest_init(&hcomp);
    MPI_Status st;

    /* 1. Token ring: rank 0 injects, everyone mixes in its rank and passes on. */
    uint64_t token = 0;
    for (int lap = 0; lap < laps; ++lap) {
        if (rank == 0) {
            token = token * 31 + (uint64_t)lap + 1;
            MPI_Send(&token, 1, MPI_UINT64_T, right, TAG_TOKEN, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_UINT64_T, left, TAG_TOKEN, MPI_COMM_WORLD, &st);
            digest_update_recv(&hrecv, &token, MPI_UINT64_T, &st);
        } else {
            MPI_Recv(&token, 1, MPI_UINT64_T, left, TAG_TOKEN, MPI_COMM_WORLD, &st);
            digest_update_recv(&hrecv, &token, MPI_UINT64_T, &st);
            token = token * 31 + (uint64_t)rank;
            MPI_Send(&token, 1, MPI_UINT64_T, right, TAG_TOKEN, MPI_COMM_WORLD);
        }
    }

    /* 2. Sendrecv shift of a double array, `laps` times, transforming it each time. */
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    for (int i = 0; i < n; ++i)
        a[i] = rank + (double)i / n;
    for (int lap = 0; lap < laps; ++lap) {
        MPI_Sendrecv(a, n, MPI_DOUBLE, right, TAG_SHIFT, b, n, MPI_DOUBLE, left,
                     TAG_SHIFT, MPI_COMM_WORLD, &st);
        digest_update_recv(&hrecv, b, MPI_DOUBLE, &st);
        for (int i = 0; i < n; ++i)
            a[i] = 0.5 * b[i] + rank;
    }

    /* 3. Synchronous send: even ranks send first, odd ranks receive first. */
    int sval[4] = {rank, rank * rank, laps, n}, rval[4] = {0, 0, 0, 0};
    if (rank % 2 == 0) {
        MPI_Ssend(sval, 4, MPI_INT, right, TAG_SSEND, MPI_COMM_WORLD);
        MPI_Recv(rval, 4, MPI_INT, left, TAG_SSEND, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(rval, 4, MPI_INT, left, TAG_SSEND, MPI_COMM_WORLD, &st);
        MPI_Ssend(sval, 4, MPI_INT, right, TAG_SSEND, MPI_COMM_WORLD);
    }
    digest_update_recv(&hrecv, rval, MPI_INT, &st);

    /* 4. Buffered send of the array: returns at once, so everyone sends first. */
    int bufsize = MPI_BSEND_OVERHEAD + n * (int)sizeof(double);
    void *bsendbuf = malloc((size_t)bufsize);
    MPI_Buffer_attach(bsendbuf, bufsize);
    MPI_Bsend(a, n, MPI_DOUBLE, right, TAG_BSEND, MPI_COMM_WORLD);
    MPI_Recv(b, n, MPI_DOUBLE, left, TAG_BSEND, MPI_COMM_WORLD, &st);
    digest_update_recv(&hrecv, b, MPI_DOUBLE, &st);
    MPI_Buffer_detach(&bsendbuf, &bufsize);
    free(bsendbuf);

    /* 5. Ready send: the barrier guarantees every Irecv is posted before any Rsend. */
    uint64_t ready_in = 0, ready_out = token ^ (uint64_t)rank;
    MPI_Request req;
    MPI_Irecv(&ready_in, 1, MPI_UINT64_T, left, TAG_RSEND, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(&ready_out, 1, MPI_UINT64_T, right, TAG_RSEND, MPI_COMM_WORLD);
    MPI_Wait(&req, &st);
    digest_update_recv(&hrecv, &ready_in, MPI_UINT64_T, &st);

    /* 6. Non-periodic shift up: rank size-1 sends to MPI_PROC_NULL and rank 0
     *    receives from it (count 0, buffer left untouched at -1). */
    const int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    const int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    double edge_out = a[n - 1], edge_in = -1.0;
    MPI_Send(&edge_out, 1, MPI_DOUBLE, up, TAG_EDGE, MPI_COMM_WORLD);
    MPI_Recv(&edge_in, 1, MPI_DOUBLE, down, TAG_EDGE, MPI_COMM_WORLD, &st);
    digest_update_recv(&hrecv, &edge_in, MPI_DOUBLE, &st);

    /* compute digest: everything this rank ends up holding. */
    digest_update(&hcomp, &token, sizeof token);
    digest_update(&hcomp, a, (size_t)n * sizeof *a);
    digest_update(&hcomp, b, (size_t)n * sizeof *b);
    digest_update(&hcomp, rval, sizeof rval);
    digest_update(&hcomp, &ready_in, sizeof ready_in);
    digest_update(&hcomp, &edge_in, sizeof edge_in);

    if (rank == 0)
        printf("ring: %d ranks, %d laps, n=%d, token=%llu\n", size, laps, n,
               (unsigned long long)token);
    digest_report(MPI_COMM_WORLD, hrecv, hcomp);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
