/* digest.h - FNV-1a 64-bit digests shared by the Encore example programs.
 *
 * Every example prints, per rank, one line
 *     digest rank=<r> recv=<16 hex> compute=<16 hex>
 * so that a real run, a recorded run and a replay can be compared byte for
 * byte.  `recv` hashes the bytes MPI filled into receive buffers (see
 * README.md for the exact rule), `compute` hashes the program's final result.
 *
 * digest_init/digest_update/digest_hex are plain C ABI (no MPI types) so the
 * Fortran example can call them through bind(C) interfaces.
 */
#ifndef ENCORE_EXAMPLES_DIGEST_H
#define ENCORE_EXAMPLES_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#define DIGEST_OFFSET_BASIS UINT64_C(0xcbf29ce484222325)
#define DIGEST_PRIME UINT64_C(0x100000001b3)

/* *h = FNV-1a offset basis. */
void digest_init(uint64_t *h);

/* FNV-1a over n bytes at p, continuing from *h. */
void digest_update(uint64_t *h, const void *p, size_t n);

/* Hash `count` elements of `elem` bytes whose starts are `stride` bytes
 * apart: the packed (MPI_Pack) order of an MPI_Type_vector with blocklength 1. */
void digest_update_strided(uint64_t *h, const void *p, size_t count,
                           size_t elem, size_t stride);

/* Hash a receive into a contiguous buffer of basic type `type`: only the
 * count MPI_Get_count reports for `st` (0 for MPI_PROC_NULL), not the posted count. */
void digest_update_recv(uint64_t *h, const void *buf, MPI_Datatype type,
                        const MPI_Status *st);

/* Write h as 16 lowercase hex digits into out[0..15] (no NUL terminator). */
void digest_hex(uint64_t h, char *out);

/* Gather (recv, compute) of every rank of comm to rank 0 with one MPI_Gather
 * (2 x MPI_UINT64_T per rank) and let rank 0 print one digest line per rank,
 * in rank order.  This gather is the reporting step, not part of any digest. */
void digest_report(MPI_Comm comm, uint64_t recv, uint64_t compute);

#endif
