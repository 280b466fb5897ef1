/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Holds as many communicators as MPICH has context ids for, then bcasts
 * and allreduces on the last one: the engine needs no context id of its
 * own there (defaults.sh checks that it ran). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXC 4096
int main(int argc, char **argv)
{
    static MPI_Comm c[MAXC];
    int rank, n = 0, errs = 0, v[1024], s[1024];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    while (n < MAXC && MPI_Comm_dup(MPI_COMM_WORLD, &c[n]) == MPI_SUCCESS)
        n++;
    if (n == 0 || n == MAXC) {
        printf(" Found %d communicators: cannot exhaust the context ids\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 1024; i++)
        v[i] = rank == 0 ? i : -1;
    MPI_Bcast(v, 1024, MPI_INT, 0, c[n - 1]);
    MPI_Allreduce(v, s, 1024, MPI_INT, MPI_SUM, c[n - 1]);
    for (int i = 0; i < 1024; i++) {
        int p;
        MPI_Comm_size(c[n - 1], &p);
        errs += v[i] != i || s[i] != p * i;
    }
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&c[i]);
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? " Found %d wrong\n" : " No Errors (%d communicators)\n", errs ? errs : n);
    MPI_Finalize();
    return 0;
}
