/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* tuning.sh's probe: 3 allgathers and 30 bcasts on MPI_COMM_WORLD and,
 * with an argument, on the halves of a split (even and odd ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "topo_finish.h"

static int exercise(MPI_Comm comm)
{
    int rank, size, errs = 0, b[16];
    int *v;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    v = malloc(size * 4 * sizeof(int));
    for (int it = 0; it < 3; it++) {
        int mine[4] = { rank, rank + 1, rank + 2, it };
        MPI_Allgather(mine, 4, MPI_INT, v, 4, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            errs += v[4 * r] != r || v[4 * r + 1] != r + 1 || v[4 * r + 3] != it;
    }
    for (int it = 0; it < 30; it++) {
        for (int i = 0; i < 16; i++)
            b[i] = rank == 0 ? i * it : -1;
        MPI_Bcast(b, 16, MPI_INT, 0, comm);
        for (int i = 0; i < 16; i++)
            errs += b[i] != i * it;
    }
    free(v);
    return errs;
}

int main(int argc, char **argv)
{
    int rank, errs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    errs = exercise(MPI_COMM_WORLD);
    if (argc > 1) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        errs += exercise(half);
        MPI_Comm_free(&half);
    }
    return topo_finish(errs);
}
