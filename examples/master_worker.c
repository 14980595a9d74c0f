/* master_worker.c - Mandelbrot tiles handed out by a master rank.
 *
 * Exercises: wildcard receives (MPI_ANY_SOURCE + MPI_ANY_TAG, then
 * status.MPI_SOURCE / status.MPI_TAG), MPI_Iprobe polling, MPI_Probe +
 * MPI_Get_count to size a variable-length (run-length encoded) message,
 * zero-length stop messages, MPI_Wtime.  Tiles near the set cost far more
 * iterations than tiles outside it, so results reach the master in an order
 * that changes from run to run: a replay must reproduce the recorded order.
 *
 * Protocol: a worker sends READY {-1,0}; the master answers with WORK <tile>
 * or an empty STOP; a worker returns RESULT {tile, npixels} followed by RLE
 * (pairs value,run).  Tile assignment:
 *   static  (default): worker w gets tiles w-1, w-1+nworkers, ... on demand,
 *           so each worker's received data - hence every digest line - is
 *           identical from run to run;
 *   dynamic: the next tile goes to whichever worker asks first (real load
 *           balancing); worker digest lines then vary between runs (a replay
 *           still reproduces the recorded run's lines exactly).
 *
 * Digests: the master's `recv` digest is NOT taken in arrival order (which is
 * nondeterministic): it is the digest of the assembled image (int32 counts,
 * row-major) once every tile is in.  Workers hash what they received, in order.
 * The master also prints `arrival rank=0 recv=<hex>`, what it received in
 * arrival order (different from run to run, but what its recording holds).
 * compute = image checksum (master: pixels in the set and total iterations;
 * workers: the tile indices and RLE data they produced, in order).
 *
 * Usage: example_master_worker [size=128] [tile=16] [maxiter=256] [static|dynamic]
 *        (needs >= 2 ranks)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "digest.h"

enum { TAG_READY = 1, TAG_RESULT, TAG_RLE, TAG_WORK, TAG_STOP };

typedef struct {
    int size, tile, maxiter, ntx, ntiles;
} params;

/* Pixel rectangle of tile t. */
static void tile_rect(const params *p, int t, int *x0, int *y0, int *w, int *h)
{
    *x0 = (t % p->ntx) * p->tile;
    *y0 = (t / p->ntx) * p->tile;
    *w = p->size - *x0 < p->tile ? p->size - *x0 : p->tile;
    *h = p->size - *y0 < p->tile ? p->size - *y0 : p->tile;
}

/* Compute tile t and run-length encode it into rle; returns the number of ints. */
static int compute_tile(const params *p, int t, int *rle)
{
    int x0, y0, w, h, m = 0;
    tile_rect(p, t, &x0, &y0, &w, &h);
    for (int y = y0; y < y0 + h; ++y)
        for (int x = x0; x < x0 + w; ++x) {
            const double cr = -2.0 + 2.6 * (x + 0.5) / p->size;
            const double ci = -1.3 + 2.6 * (y + 0.5) / p->size;
            double zr = 0.0, zi = 0.0;
            int k = 0;
            while (k < p->maxiter && zr * zr + zi * zi <= 4.0) {
                const double tr = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = tr;
                ++k;
            }
            if (m > 0 && rle[m - 2] == k)
                ++rle[m - 1];
            else {
                rle[m++] = k;
                rle[m++] = 1;
            }
        }
    return m;
}

static void worker(const params *p, uint64_t *hrecv, uint64_t *hcomp)
{
    int *rle = malloc(2 * (size_t)p->tile * (size_t)p->tile * sizeof *rle);
    int hdr[2] = {-1, 0};
    MPI_Send(hdr, 2, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD);
    for (;;) {
        int t = -1;
        MPI_Status st;
        MPI_Recv(&t, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        digest_update_recv(hrecv, &t, MPI_INT, &st); /* STOP is empty: hashes nothing */
        if (st.MPI_TAG == TAG_STOP)
            break;
        const int m = compute_tile(p, t, rle);
        int x0, y0, w, h;
        tile_rect(p, t, &x0, &y0, &w, &h);
        hdr[0] = t;
        hdr[1] = w * h;
        MPI_Send(hdr, 2, MPI_INT, 0, TAG_RESULT, MPI_COMM_WORLD);
        MPI_Send(rle, m, MPI_INT, 0, TAG_RLE, MPI_COMM_WORLD);
        digest_update(hcomp, &t, sizeof t);
        digest_update(hcomp, rle, (size_t)m * sizeof *rle);
    }
    free(rle);
}

static void master(const params *p, int nworkers, int dynamic, uint64_t *hrecv,
                   uint64_t *hcomp)
{
    int32_t *image = calloc((size_t)p->size * (size_t)p->size, sizeof *image);
    int *next = malloc(((size_t)nworkers + 1) * sizeof *next); /* static: per-worker next tile */
    for (int w = 1; w <= nworkers; ++w)
        next[w] = w - 1;
    int next_dynamic = 0, active = nworkers;
    uint64_t harrival; /* what arrived, in arrival order */
    digest_init(&harrival);
    const double t0 = MPI_Wtime();
    while (active > 0) {
        int flag = 0, hdr[2];
        MPI_Status st;
        while (!flag) /* poll; a real master would do useful work between polls */
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Recv(hdr, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        digest_update_recv(&harrival, hdr, MPI_INT, &st);
        const int src = st.MPI_SOURCE;
        if (st.MPI_TAG == TAG_RESULT) {
            int m = 0, x0, y0, w, h;
            MPI_Status pst;
            MPI_Probe(src, TAG_RLE, MPI_COMM_WORLD, &pst);
            MPI_Get_count(&pst, MPI_INT, &m);
            int *rle = malloc((size_t)m * sizeof *rle);
            MPI_Recv(rle, m, MPI_INT, src, TAG_RLE, MPI_COMM_WORLD, &pst);
            digest_update_recv(&harrival, rle, MPI_INT, &pst);
            tile_rect(p, hdr[0], &x0, &y0, &w, &h);
            for (int i = 0, px = 0; i < m; i += 2)
                for (int r = 0; r < rle[i + 1]; ++r, ++px)
                    image[(size_t)(y0 + px / w) * (size_t)p->size + (size_t)(x0 + px % w)] = rle[i];
            free(rle);
        }
        int t;
        if (dynamic)
            t = next_dynamic < p->ntiles ? next_dynamic++ : -1;
        else if (next[src] < p->ntiles) {
            t = next[src];
            next[src] += nworkers;
        } else
            t = -1;
        if (t >= 0)
            MPI_Send(&t, 1, MPI_INT, src, TAG_WORK, MPI_COMM_WORLD);
        else {
            MPI_Send(NULL, 0, MPI_INT, src, TAG_STOP, MPI_COMM_WORLD);
            --active;
        }
    }
    const double t1 = MPI_Wtime();

    uint64_t stats[2] = {0, 0}; /* pixels in the set, total iterations */
    const size_t npix = (size_t)p->size * (size_t)p->size;
    for (size_t i = 0; i < npix; ++i) {
        stats[0] += image[i] == p->maxiter;
        stats[1] += (uint64_t)image[i];
    }
    digest_update(hrecv, image, npix * sizeof *image); /* assembled image, see header */
    digest_update(hcomp, stats, sizeof stats);
    printf("master_worker: %dx%d, %d tiles, %d workers (%s), in_set=%llu total_iter=%llu\n",
           p->size, p->size, p->ntiles, nworkers, dynamic ? "dynamic" : "static",
           (unsigned long long)stats[0], (unsigned long long)stats[1]);
    printf("time %.6f\n", t1 - t0);
    char hex[17] = {0};
    digest_hex(harrival, hex);
    printf("arrival rank=0 recv=%s\n", hex);
    free(next);
    free(image);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    params p;
    p.size = argc > 1 ? atoi(argv[1]) : 128;
    p.tile = argc > 2 ? atoi(argv[2]) : 16;
    p.maxiter = argc > 3 ? atoi(argv[3]) : 256;
    const int dynamic = argc > 4 && strcmp(argv[4], "dynamic") == 0;
    if (size < 2 || p.size < 1 || p.tile < 1 || p.maxiter < 1 ||
        (argc > 4 && !dynamic && strcmp(argv[4], "static") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: example_master_worker [size] [tile] [maxiter] "
                            "[static|dynamic], needs >= 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    p.ntx = (p.size + p.tile - 1) / p.tile;
    p.ntiles = p.ntx * p.ntx;

    uint64_t hrecv, hcomp;
    digest_init(&hrecv);
    digest_init(&hcomp);
    if (rank == 0)
        master(&p, size - 1, dynamic, &hrecv, &hcomp);
    else
        worker(&p, &hrecv, &hcomp);
    digest_report(MPI_COMM_WORLD, hrecv, hcomp);
    MPI_Finalize();
    return 0;
}
