/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* allreduce and reduce (roots in turn) of 16 KiB with a commutative user
 * op (sum) and a non-commutative one (keep the left operand: the result
 * must be rank 0's data) */
#include <mpi.h>
#include <stdio.h>
#include "topo_finish.h"

#define N 4096
static void keep_left(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] = ((int *) in)[i];
}

static void sum(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] += ((int *) in)[i];
}

int main(int argc, char **argv)
{
    static int a[N], r[N];
    int rank, size, errs = 0;
    MPI_Op left, add;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_create(keep_left, 0, &left);
    MPI_Op_create(sum, 1, &add);
    /* an error is printed here, not by an abort whose output may be lost */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < N; i++)
            a[i] = (rank + 1) * 1000 + i + it;
        int rc = MPI_Allreduce(a, r, N, MPI_INT, add, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            printf("rank %d: MPI_Allreduce failed: %s\n", rank, msg);
            fflush(stdout);
            MPI_Finalize();
            return 3;
        }
        for (int i = 0; i < N; i++)
            errs += r[i] != 1000 * size * (size + 1) / 2 + size * (i + it);
        MPI_Allreduce(a, r, N, MPI_INT, left, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            errs += r[i] != 1000 + i + it;
        MPI_Reduce(a, r, N, MPI_INT, add, it % size, MPI_COMM_WORLD);
        for (int i = 0; rank == it % size && i < N; i++)
            errs += r[i] != 1000 * size * (size + 1) / 2 + size * (i + it);
        MPI_Reduce(a, r, N, MPI_INT, left, it % size, MPI_COMM_WORLD);
        for (int i = 0; rank == it % size && i < N; i++)
            errs += r[i] != 1000 + i + it;
    }
    MPI_Op_free(&left);
    MPI_Op_free(&add);
    return topo_finish(errs);
}
