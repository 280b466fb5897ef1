/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Bcast from every root on communicators whose rank order does not follow
 * the placement, with odd counts, counts large enough to be pipelined in
 * many chunks, and derived datatypes. Meant to be run with
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree (and cliques, small chunk sizes);
 * any algorithm must pass it. */

#include "mpi.h"
#include "mpitest.h"
#include "topo_test_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errs = 0;

static unsigned char byte_at(int root, MPI_Aint i, int salt)
{
    return (unsigned char) ((root * 131 + i * 31 + salt * 7 + (i >> 8)) & 0xff);
}

static void check_bytes(MPI_Comm comm, MPI_Aint count, int root, int salt)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    unsigned char *buf = malloc(count + 1);
    for (MPI_Aint i = 0; i < count; i++)
        buf[i] = rank == root ? byte_at(root, i, salt) : 0xee;
    buf[count] = 0x5a;
    MPI_Bcast(buf, (int) count, MPI_BYTE, root, comm);
    for (MPI_Aint i = 0; i < count; i++)
        if (buf[i] != byte_at(root, i, salt)) {
            if (errs < 10)
                fprintf(stderr, "[%d] bytes count %ld root %d: byte %ld is %d, expected %d\n",
                        rank, (long) count, root, (long) i, buf[i], byte_at(root, i, salt));
            errs++;
            break;
        }
    if (buf[count] != 0x5a) {
        fprintf(stderr, "[%d] bytes count %ld root %d: wrote past the end\n", rank,
                (long) count, root);
        errs++;
    }
    free(buf);
}

/* a strided datatype (3 doubles out of every 5) with a non-zero lower bound */
static void check_derived(MPI_Comm comm, int count, int root, int salt)
{
    int rank;
    MPI_Datatype vec, shifted;
    MPI_Comm_rank(comm, &rank);
    MPI_Type_vector(count, 3, 5, MPI_DOUBLE, &vec);
    MPI_Aint lb = 2 * sizeof(double), extent;
    MPI_Type_get_extent(vec, &lb, &extent);
    MPI_Type_create_resized(vec, 0, extent, &shifted);
    MPI_Type_commit(&shifted);
    int n = 5 * count;
    double *buf = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        int in_type = (i % 5) < 3;
        buf[i] = (rank == root || !in_type) ? (double) (i * 3 + root + salt) : -1.0;
    }
    MPI_Bcast(buf, 1, shifted, root, comm);
    for (int i = 0; i < n; i++)
        if (buf[i] != (double) (i * 3 + root + salt)) {
            if (errs < 10)
                fprintf(stderr, "[%d] derived count %d root %d: element %d is %g\n", rank,
                        count, root, i, buf[i]);
            errs++;
            break;
        }
    free(buf);
    MPI_Type_free(&vec);
    MPI_Type_free(&shifted);
}

/* Many small bcasts back to back, the root changing every few calls and
 * the sizes every call, while one process now and then falls behind (a
 * sleep): within a node they go through a ring of cells that a root may
 * rewrite only once every reader is done with it, and a root that runs
 * ahead must wait there rather than overwrite data not yet read. */
static void check_small_ring(MPI_Comm comm, int salt)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    unsigned char buf[2048];
    for (int call = 0; call < 400; call++) {
        int root = (call / 20) % size;  /* runs longer than the ring */
        MPI_Aint count = 1 + (call * 37) % 1024 + (call % 50 == 7 ? 1000 : 0);
        if (rank == size - 1 && call % 97 == 5)
            usleep(2000);
        for (MPI_Aint i = 0; i < count; i++)
            buf[i] = rank == root ? byte_at(root, i, salt + call) : 0xee;
        buf[count] = 0x5a;
        MPI_Bcast(buf, (int) count, MPI_BYTE, root, comm);
        for (MPI_Aint i = 0; i < count; i++)
            if (buf[i] != byte_at(root, i, salt + call)) {
                if (errs < 10)
                    fprintf(stderr, "[%d] small ring call %d count %ld root %d: byte %ld is %d, "
                            "expected %d\n", rank, call, (long) count, root, (long) i, buf[i],
                            byte_at(root, i, salt + call));
                errs++;
                break;
            }
        if (buf[count] != 0x5a) {
            fprintf(stderr, "[%d] small ring call %d: wrote past the end\n", rank, call);
            errs++;
        }
    }
}

static void run_all(MPI_Comm comm, int salt)
{
    int size;
    MPI_Comm_size(comm, &size);
    const MPI_Aint counts[] = { 0, 1, 7, 1000, 65536, 65537, 300001 };
    for (int root = 0; root < size; root++) {
        for (int c = 0; c < (int) (sizeof(counts) / sizeof(counts[0])); c++)
            check_bytes(comm, counts[c], root, salt + c);
        check_derived(comm, 3, root, salt);
        check_derived(comm, 20000, root, salt + 1);
    }
    check_small_ring(comm, salt);
    /* one big message: many chunks down every path of the tree */
    check_bytes(comm, (4 << 20) + 3, size - 1, salt);
}

static void run_on(MPI_Comm comm, const char *name, int k)
{
    run_all(comm, k + 1);
}

/* -learn: many calls of a few size classes on the same communicators, so
 * that the built-in tuning's bcasts within one node from 64 KiB run each
 * way's warm-up and trials and then keep one (MPIR_CVAR_TOPO_BCAST_TRIALS),
 * with the root moving, a derived type (240-247 KiB: the 128-256 KiB
 * class) and sizes that vary within each class;
 * -learn=N: N calls a size */
static void learn(int calls)
{
    MPI_Comm comms[2];
    int size;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    comms[1] = topo_test_shuffled(MPI_COMM_WORLD, 777);
    for (int it = 0; it < calls; it++)
        for (int c = 0; c < 2; c++) {
            check_bytes(comms[c], 65536 + 13 * it, it % size, 100 + it);
            check_derived(comms[c], 10000 + it, (it + 1) % size, 200 + it);
            check_bytes(comms[c], (1 << 20) + 7 * it, (it + 2) % size, 300 + it);
        }
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm comm;

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "-learn", 6)) {
            /* 24: past every way's untimed warm-up and its trials */
            learn(argv[i][6] == '=' ? atoi(argv[i] + 7) : 24);
            MTest_Finalize(errs);
            return MTestReturnValue(errs);
        }
    topo_test_each_comm(run_on, 4242);

    /* every third rank against the rest, reversed: members spread over
     * the nodes */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3 == 0, size - rank, &comm);
    run_all(comm, 6);
    MPI_Comm_free(&comm);

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
