/* digest.c - FNV-1a 64-bit digest helpers for the Encore examples (see digest.h). */
#include "digest.h"

#include <stdio.h>
#include <stdlib.h>

void digest_init(uint64_t *h) { *h = DIGEST_OFFSET_BASIS; }

void digest_update(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t x = *h;
    for (size_t i = 0; i < n; ++i) {
        x ^= b[i];
        x *= DIGEST_PRIME;
    }
    *h = x;
}

void digest_update_strided(uint64_t *h, const void *p, size_t count,
                           size_t elem, size_t stride)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < count; ++i)
        digest_update(h, b + i * stride, elem);
}

void digest_update_recv(uint64_t *h, const void *buf, MPI_Datatype type,
                        const MPI_Status *st)
{
    int count = 0, size = 0;
    MPI_Get_count(st, type, &count);
    MPI_Type_size(type, &size);
    if (count > 0)
        digest_update(h, buf, (size_t)count * (size_t)size);
}

void digest_hex(uint64_t h, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; --i) {
        out[i] = hex[h & 0xf];
        h >>= 4;
    }
}

void digest_report(MPI_Comm comm, uint64_t recv, uint64_t compute)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t mine[2] = {recv, compute};
    uint64_t *all = NULL;
    if (rank == 0)
        all = malloc(2 * (size_t)size * sizeof *all);
    MPI_Gather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, 0, comm);
    if (rank == 0) {
        for (int r = 0; r < size; ++r) {
            char hr[17] = {0}, hc[17] = {0};
            digest_hex(all[2 * r], hr);
            digest_hex(all[2 * r + 1], hc);
            printf("digest rank=%d recv=%s compute=%s\n", r, hr, hc);
        }
        fflush(stdout);
        free(all);
    }
}
