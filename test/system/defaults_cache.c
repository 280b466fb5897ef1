/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */
/* Calls that the selection trees must tell apart, in turn on one
 * communicator, so that a decision remembered for one is never given to
 * the next (MPIR_CVAR_COLL_SELECTION_CACHE): allgather of 1 KiB and of
 * 64 KiB per process, allreduce of 16 ints with MPI_SUM, with a user's
 * sum on the same arguments, and in place.  Each result is checked; the
 * script counts which algorithm each call got. */
#include <mpi.h>
#include <stdlib.h>
#include "topo_finish.h"
#define ITERS 5
static void sum(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] += ((int *) in)[i];
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Op add;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_create(sum, 1, &add);
    char *s = malloc(65536), *r = malloc(65536 * (size_t) size);
    for (int it = 0; it < ITERS; it++) {
        for (int m = 1024; m <= 65536; m *= 64) {
            for (int i = 0; i < m; i++)
                s[i] = (char) (rank + i + it);
            MPI_Allgather(s, m, MPI_CHAR, r, m, MPI_CHAR, MPI_COMM_WORLD);
            for (int p = 0; p < size; p++)
                for (int i = 0; i < m; i++)
                    errs += r[(size_t) p * m + i] != (char) (p + i + it);
        }
        int a[16], b[16];
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < 16; i++)
                a[i] = b[i] = rank + i + it;
            if (k == 0)
                MPI_Allreduce(a, b, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            else if (k == 1)
                MPI_Allreduce(a, b, 16, MPI_INT, add, MPI_COMM_WORLD);
            else
                MPI_Allreduce(MPI_IN_PLACE, b, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < 16; i++)
                errs += b[i] != size * (size - 1) / 2 + size * (i + it);
        }
    }
    MPI_Op_free(&add);
    free(s);
    free(r);
    return topo_finish(errs);
}
