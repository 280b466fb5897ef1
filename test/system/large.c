/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Calls of more than 2 GiB per process (issue 12, limits): bcast, allgather
 * and allreduce whose byte counts, and for allreduce element counts, pass
 * INT_MAX: bcast and allgather through a contiguous type of 1 MiB blocks
 * (the count itself fits in an int, as in most applications that move
 * this much), allreduce with an MPI-4 large count of MPI_INT8_T.  Every
 * byte is checked.  Needs about 4.2 GiB per process.
 *
 *   large [MIB]   MIB: MiB per process for bcast and allreduce (default
 *                 2100, over 2 GiB); allgather sends MIB/size each
 * Prints "large: COLL ok" or "large: COLL wrong at BYTE" per collective on
 * rank 0 (after an allreduce of the verdicts). */

#include "mpi.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t) 1 << 20)

static int8_t pattern(size_t i, int seed)
{
    return (int8_t) ((i * 7 + (size_t) seed * 13) % 61);
}

/* first wrong byte + 1 across all processes, 0 if none */
static long long verdict(long long bad_here)
{
    long long bad = 0;
    MPI_Allreduce(&bad_here, &bad, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return bad;
}

static void report(int rank, const char *coll, long long bad)
{
    if (rank != 0)
        return;
    if (bad)
        printf("large: %s wrong at byte %lld\n", coll, bad - 1);
    else
        printf("large: %s ok\n", coll);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rank, size, mib = argc > 1 ? atoi(argv[1]) : 2100;
    MPI_Datatype blk;
    int8_t *a, *b;
    long long bad;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_contiguous((int) MIB, MPI_INT8_T, &blk);
    MPI_Type_commit(&blk);
    size_t n = (size_t) mib * MIB;
    a = malloc(n);
    b = malloc(n);
    if (a == NULL || b == NULL) {
        fprintf(stderr, "large: cannot allocate 2 x %d MiB\n", mib);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* bcast from the last rank */
    for (size_t i = 0; i < n; i++)
        a[i] = rank == size - 1 ? pattern(i, 1) : -1;
    MPI_Bcast(a, mib, blk, size - 1, MPI_COMM_WORLD);
    bad = 0;
    for (size_t i = 0; i < n && !bad; i++)
        if (a[i] != pattern(i, 1))
            bad = (long long) i + 1;
    report(rank, "bcast", verdict(bad));

    /* allreduce: sum of (pattern + rank) over the ranks, in int8 range */
    for (size_t i = 0; i < n; i++)
        a[i] = (int8_t) (pattern(i, 2) + rank);
    memset(b, 0, n);
    /* (MPI_SUM is defined on predefined types only: a large count) */
    MPI_Allreduce_c(a, b, (MPI_Count) n, MPI_INT8_T, MPI_SUM, MPI_COMM_WORLD);
    bad = 0;
    for (size_t i = 0; i < n && !bad; i++)
        if (b[i] != (int8_t) (size * pattern(i, 2) + size * (size - 1) / 2))
            bad = (long long) i + 1;
    report(rank, "allreduce", verdict(bad));

    /* allgather: mib / size blocks each, into b */
    {
        int per = mib / size;
        size_t m = (size_t) per * MIB;
        for (size_t i = 0; i < m; i++)
            a[i] = pattern(i, 3 + rank);
        memset(b, 0, n);
        MPI_Allgather(a, per, blk, b, per, blk, MPI_COMM_WORLD);
        bad = 0;
        for (int q = 0; q < size && !bad; q++)
            for (size_t i = 0; i < m && !bad; i++)
                if (b[(size_t) q * m + i] != pattern(i, 3 + q))
                    bad = (long long) ((size_t) q * m + i) + 1;
        report(rank, "allgather", verdict(bad));
    }

    free(a);
    free(b);
    MPI_Type_free(&blk);
    MPI_Finalize();
    return 0;
}
