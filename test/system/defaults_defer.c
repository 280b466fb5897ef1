/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* When the engine is set up on a communicator (defaults.sh, with
 * MPIR_CVAR_TOPO_SETUP_CALLS=5 and MPIR_CVAR_TOPO_SETUP_BYTES=16K).
 * Each case has a size of its own, so that the trace's size ranges say
 * which algorithm each call got; every result is checked.
 *
 *   A  8 B     5 MPI_Allreduce on a fresh communicator: the first 4 run the
 *              stock algorithm ("deferred"), the 5th sets the engine up
 *   B  64 KiB  one MPI_Bcast on a fresh communicator: set up at once
 *   C  2 KiB   on a fresh communicator, 2 MPI_Allreduce, 2 MPI_Iallreduce
 *              (MPICH's: no engine yet, but counted), then an MPI_Allreduce
 *              (the 5th call: sets it up), then an MPI_Iallreduce at
 *              512 B that runs in the engine
 *   D  4 KiB   3 MPI_Allreduce on a fresh communicator: each counts as
 *              1 + 5 x 4K / 16K = 2 small calls, so the 3rd sets it up
 * (16 B: the sizes of the communicator bookkeeping, never checked) */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "topo_finish.h"

static int rank, size, errs;

static void allreduce(MPI_Comm comm, int n, int nonblocking)
{
    int *s = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int));
    MPI_Request req;

    for (int i = 0; i < n; i++)
        s[i] = rank * 3 + i;
    if (nonblocking) {
        MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, comm);
    }
    for (int i = 0; i < n; i++)
        if (r[i] != 3 * size * (size - 1) / 2 + size * i) {
            if (errs++ < 5)
                fprintf(stderr, "rank %d: allreduce of %d ints: [%d] = %d wrong\n", rank, n, i,
                        r[i]);
            break;
        }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Comm a, b, c, d;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    for (int i = 0; i < 5; i++)
        allreduce(a, 2, 0);

    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    {
        int n = 16384;
        int *buf = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++)
            buf[i] = rank == 0 ? i * 5 + 1 : -1;
        MPI_Bcast(buf, n, MPI_INT, 0, b);
        for (int i = 0; i < n; i++)
            if (buf[i] != i * 5 + 1) {
                if (errs++ < 5)
                    fprintf(stderr, "rank %d: bcast: [%d] = %d wrong\n", rank, i, buf[i]);
                break;
            }
        free(buf);
    }

    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    allreduce(c, 512, 0);
    allreduce(c, 512, 0);
    allreduce(c, 512, 1);
    allreduce(c, 512, 1);
    allreduce(c, 512, 0);
    allreduce(c, 128, 1);

    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    for (int i = 0; i < 3; i++)
        allreduce(d, 1024, 0);

    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    MPI_Comm_free(&c);
    MPI_Comm_free(&d);
    return topo_finish(errs);
}
