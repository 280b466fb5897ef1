/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* bcasts on the intracommunicator MPI_Intercomm_merge makes (MPICH marks it
 * "tainted": it gets no sequence number) and on a split of it */
#include <mpi.h>
#include <stdio.h>
#include "topo_finish.h"

static int check(MPI_Comm comm)
{
    int rank, errs = 0, v[4096];
    MPI_Comm_rank(comm, &rank);
    for (int it = 0; it < 10; it++) {
        for (int i = 0; i < 4096; i++)
            v[i] = rank == it % 2 ? i + it : -1;
        MPI_Bcast(v, 4096, MPI_INT, it % 2, comm);
        for (int i = 0; i < 4096; i++)
            errs += v[i] != i + it;
    }
    return errs;
}

int main(int argc, char **argv)
{
    int rank, errs;
    MPI_Comm half, inter, merged, split;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &inter);
    MPI_Intercomm_merge(inter, rank % 2, &merged);
    errs = check(merged);
    MPI_Comm_split(merged, 0, rank, &split);
    errs += check(split);
    MPI_Comm_free(&split);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    return topo_finish(errs);
}
