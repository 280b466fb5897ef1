/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Allgather on communicators whose rank order does not follow the placement
 * (split with shuffled keys, reversed, uneven halves), with odd and large
 * counts, MPI_IN_PLACE and a derived datatype. Meant to be run with
 * MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring (and cliques), where the ring
 * order differs from rank order; any algorithm must pass it.  With -learn,
 * repeated large calls instead (see learn()). */

#include "mpi.h"
#include "mpitest.h"
#include "topo_test_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs = 0;

static int value(int rank, MPI_Aint i, int salt)
{
    return (int) ((rank * 1000003L + i * 7919L + salt) & 0x7fffffff);
}

static void report(MPI_Comm comm, const char *what, MPI_Aint count, MPI_Aint at, int got, int exp)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (errs < 10)
        fprintf(stderr, "[%d] %s count %ld: element %ld is %d, expected %d\n", rank, what,
                (long) count, (long) at, got, exp);
    errs++;
}

static void check_contig(MPI_Comm comm, MPI_Aint count, int inplace, int salt)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *rbuf = malloc((size * count + 1) * sizeof(int));
    int *sbuf = malloc((count + 1) * sizeof(int));
    for (MPI_Aint i = 0; i < size * count; i++)
        rbuf[i] = -1;
    for (MPI_Aint i = 0; i < count; i++)
        sbuf[i] = value(rank, i, salt);
    if (inplace) {
        memcpy(rbuf + rank * count, sbuf, count * sizeof(int));
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, count, MPI_INT, comm);
    } else {
        MPI_Allgather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, comm);
    }
    for (int r = 0; r < size; r++)
        for (MPI_Aint i = 0; i < count; i++)
            if (rbuf[r * count + i] != value(r, i, salt)) {
                report(comm, inplace ? "in-place" : "contig", count, r * count + i,
                       rbuf[r * count + i], value(r, i, salt));
                r = size;
                break;
            }
    free(rbuf);
    free(sbuf);
}

/* receive type: every other int (vector), so blocks interleave with holes */
static void check_vector(MPI_Comm comm, int count, int salt)
{
    int rank, size;
    MPI_Datatype vec;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(vec, &lb, &extent);
    MPI_Datatype rvec;
    MPI_Type_create_resized(vec, 0, 2 * count * sizeof(int), &rvec);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&rvec);
    int *rbuf = malloc(2 * count * size * sizeof(int));
    int *sbuf = malloc(count * sizeof(int));
    for (int i = 0; i < 2 * count * size; i++)
        rbuf[i] = -7;
    for (int i = 0; i < count; i++)
        sbuf[i] = value(rank, i, salt);
    MPI_Allgather(sbuf, count, MPI_INT, rbuf, 1, rvec, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < count; i++) {
            int got = rbuf[r * 2 * count + 2 * i], hole = rbuf[r * 2 * count + 2 * i + 1];
            if (got != value(r, i, salt) || hole != -7) {
                report(comm, "vector", count, r * 2 * count + 2 * i, got, value(r, i, salt));
                r = size;
                break;
            }
        }
    /* and the other way round: one strided vector sent, plain ints
     * received (only the send side is packed) */
    {
        int *strided = malloc(2 * count * sizeof(int));
        int *contig = malloc(count * size * sizeof(int));
        for (int i = 0; i < 2 * count; i++)
            strided[i] = i % 2 ? -7 : value(rank, i / 2, salt + 5);
        for (int i = 0; i < count * size; i++)
            contig[i] = -9;
        MPI_Allgather(strided, 1, vec, contig, count, MPI_INT, comm);
        for (int i = 0; i < count * size; i++)
            if (contig[i] != value(i / count, i % count, salt + 5)) {
                report(comm, "strided send", count, i, contig[i],
                       value(i / count, i % count, salt + 5));
                break;
            }
        free(strided);
        free(contig);
    }
    free(rbuf);
    free(sbuf);
    MPI_Type_free(&vec);
    MPI_Type_free(&rvec);
}

static void run_all(MPI_Comm comm, int salt)
{
    const MPI_Aint counts[] = { 0, 1, 3, 17, 1000, 10000, 65537 };
    for (int c = 0; c < (int) (sizeof(counts) / sizeof(counts[0])); c++) {
        check_contig(comm, counts[c], 0, salt + c);
        check_contig(comm, counts[c], 1, salt + 2 * c);
    }
    check_vector(comm, 5, salt);
    check_vector(comm, 4099, salt + 1);
}

static void run_on(MPI_Comm comm, const char *name, int k)
{
    run_all(comm, k + 1);
}

/* -learn: many calls of a few sizes on the same communicators, so that
 * the built-in tuning's large one-node allgathers try each way and then
 * keep one (MPIR_CVAR_TOPO_ALLGATHER_TRIALS), with MPI_IN_PLACE and
 * derived types mixed into every size class; -learn=N: N calls a size */
static void learn(int calls)
{
    MPI_Comm comms[2];

    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    comms[1] = topo_test_shuffled(MPI_COMM_WORLD, 4242);
    for (int it = 0; it < calls; it++)
        for (int c = 0; c < 2; c++) {
            /* 256 KiB class (512 KiB in all from 2 processes) and 1 MiB */
            check_contig(comms[c], 65536 + 997 * (it % 3), it & 1, 300 + it);
            check_vector(comms[c], 70001, 400 + it);
            check_contig(comms[c], 262144 + 31 * it, !(it & 1), 500 + it);
        }
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
}

int main(int argc, char **argv)
{
    MPI_Comm comm;

    MTest_Init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "-learn", 6)) {
            /* 24: past every way's untimed warm-up and its trials, so
             * that the later calls run the way kept */
            learn(argv[i][6] == '=' ? atoi(argv[i] + 7) : 24);
            MTest_Finalize(errs);
            return MTestReturnValue(errs);
        }
    topo_test_each_comm(run_on, 12345);

    /* several calls on a dup, to reuse the cached topology */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    for (int it = 0; it < 5; it++)
        check_contig(comm, 257 + it, it & 1, 100 + it);
    MPI_Comm_free(&comm);

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
