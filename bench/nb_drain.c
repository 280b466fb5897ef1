/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* nb_drain: a blocking collective right after a nonblocking one on the same
 * communicator, for one MPI library (MPICH and Open MPI build the same
 * source).
 *
 *   mpiexec -n P nb_drain [-i ITERS] [-b BYTES]
 *
 * Each iteration starts an MPI_Iallreduce of BYTES (1024) as ints, makes a
 * 4 B MPI_Allreduce, then waits for the first; rank 0 prints the mean time
 * of an iteration in microseconds (results checked).  mpich-topo's blocking
 * call first finishes the nonblocking calls started before it on the
 * communicator (MPIR_Topo_nb_drain); with more processes than cores how
 * that loop waits decides the time.  Run it with
 * MPIR_CVAR_TOPO_EAGER_SETUP=1 so that the first MPI_Iallreduce already
 * runs in the engine. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, iters = 2000, bytes = 1024, errs = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-i"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-b"))
            bytes = atoi(argv[i + 1]);
    }
    int n = bytes / 4 > 0 ? bytes / 4 : 1, one = 1, all;
    int *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int));
    MPI_Request req;

    for (int i = 0; i < n; i++)
        a[i] = rank + i;
    for (int i = 0; i < 10; i++)
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        errs += all != size || b[n - 1] != size * (size - 1) / 2 + size * (n - 1);
    }
    t = (MPI_Wtime() - t) / iters * 1e6;
    if (errs)
        fprintf(stderr, "nb_drain: rank %d: %d wrong results\n", rank, errs);
    if (rank == 0)
        printf("nb_drain,%d,%d,%.2f\n", size, bytes, t);
    free(a);
    free(b);
    MPI_Finalize();
    return errs != 0;
}
