/* MPI + OpenMP (MPI_THREAD_FUNNELED): OpenMP threads do the compute, only the main thread calls
 * MPI. Each step every rank relaxes its slice of a 1-D field with an OpenMP loop, exchanges the
 * slice edges with its neighbours (MPI_Sendrecv, MPI_PROC_NULL at the ends) and reduces the
 * field's norm (MPI_Allreduce). A replay runs the same OpenMP compute alone.
 * Usage: example_hybrid_omp [n=200000] [steps=20]. Prints the digest lines and the norm. */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "digest.h"

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = argc > 1 ? atoi(argv[1]) : 200000;
    const int steps = argc > 2 ? atoi(argv[2]) : 20;
    const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    /* u[0] and u[n+1] are the neighbours' edge values. */
    double *u = calloc((size_t)n + 2, sizeof *u);
    double *v = calloc((size_t)n + 2, sizeof *v);
    for (int i = 1; i <= n; ++i) u[i] = sin(0.001 * (double)(rank * n + i));

    uint64_t hrecv, hcomp;
    digest_init(&hrecv);
    digest_init(&hcomp);
    double norm = 0.0;
    for (int s = 0; s < steps; ++s) {
        MPI_Status st;
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 1, &u[n + 1], 1, MPI_DOUBLE, right, 1,
                     MPI_COMM_WORLD, &st);
        digest_update_recv(&hrecv, &u[n + 1], MPI_DOUBLE, &st);
        MPI_Sendrecv(&u[n], 1, MPI_DOUBLE, right, 2, &u[0], 1, MPI_DOUBLE, left, 2,
                     MPI_COMM_WORLD, &st);
        digest_update_recv(&hrecv, &u[0], MPI_DOUBLE, &st);
        double local = 0.0;
#pragma omp parallel for reduction(+ : local) schedule(static)
        for (int i = 1; i <= n; ++i) {
            v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
            local += v[i] * v[i];
        }
        double *t = u;
        u = v;
        v = t;
        MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        digest_update(&hrecv, &norm, sizeof norm);
    }
    /* OpenMP's reduction order depends on the thread count: the digest uses a fixed-order sum. */
    double check = 0.0;
    for (int i = 1; i <= n; ++i) check += u[i];
    digest_update(&hcomp, &check, sizeof check);
    if (rank == 0) printf("hybrid_omp: %d ranks, %d steps, n=%d, norm=%.6e\n", size, steps, n, norm);
    digest_report(MPI_COMM_WORLD, hrecv, hcomp);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
