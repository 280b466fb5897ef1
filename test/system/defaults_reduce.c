/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPI_Reduce with a commutative user-defined op above 2 KiB, from every
 * root, in place and not, on the whole world and on a communicator whose
 * rank order is the world's reversed (so that rank 0 sits elsewhere than
 * at the start of a node): the calls MPICH 4.0.2's CH4 tuning sends to its
 * reduce composition alpha, which gave wrong sums without an error across
 * emulated nodes (defaults.sh; the hunk from the old 0039 in
 * maint/patches/0010-tuning-select-ch4-json.patch). */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "topo_finish.h"

#define N 2341                  /* doubles: 18 KiB */

static void user_sum(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    for (int i = 0; i < *len; i++)
        ((double *) inout)[i] += ((double *) in)[i];
}

static int check_comm(MPI_Comm comm, MPI_Op op)
{
    int rank, size, errs = 0;
    double *buf = malloc(N * sizeof(double)), *res = malloc(N * sizeof(double));

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int inplace = 0; inplace < 2; inplace++)
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < N; i++) {
                buf[i] = rank + 1 + i;
                res[i] = -1;
            }
            if (rank == root)
                MPI_Reduce(inplace ? MPI_IN_PLACE : buf, inplace ? buf : res, N, MPI_DOUBLE, op,
                           root, comm);
            else
                MPI_Reduce(buf, NULL, N, MPI_DOUBLE, op, root, comm);
            if (rank != root)
                continue;
            for (int i = 0; i < N; i++)
                if ((inplace ? buf : res)[i] != size * (size + 1) / 2.0 + (double) size * i) {
                    if (errs++ < 3)
                        fprintf(stderr, "root %d of %d%s: [%d] = %g, expected %g\n", root, size,
                                inplace ? " (in place)" : "", i, (inplace ? buf : res)[i],
                                size * (size + 1) / 2.0 + (double) size * i);
                    break;
                }
        }
    free(buf);
    free(res);
    return errs;
}

int main(int argc, char **argv)
{
    int wrank, wsize, errs;
    MPI_Comm rev;
    MPI_Op op;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Op_create(user_sum, 1, &op);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev);
    errs = check_comm(MPI_COMM_WORLD, op) + check_comm(rev, op);
    MPI_Comm_free(&rev);
    MPI_Op_free(&op);
    return topo_finish(errs);
}
