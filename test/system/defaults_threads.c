/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPI_THREAD_MULTIPLE: two threads per process, each with its own
 * communicator, bcast and allreduce at the same time; a process waiting in
 * one communicator must let its other thread progress the other one */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include "topo_finish.h"

static MPI_Comm comms[2];
static int errs[2];

static void *work(void *arg)
{
    int t = (int) (long) arg, rank, size, v[4096], s[4096];
    MPI_Comm c = comms[t];
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (int it = 0; it < 200; it++) {
        for (int i = 0; i < 4096; i++)
            v[i] = rank == it % size ? i + it + t : -1;
        MPI_Bcast(v, 4096, MPI_INT, it % size, c);
        MPI_Allreduce(v, s, 4096, MPI_INT, MPI_SUM, c);
        for (int i = 0; i < 4096; i++)
            errs[t] += v[i] != i + it + t || s[i] != size * (i + it + t);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, e;
    pthread_t th[2];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided != MPI_THREAD_MULTIPLE) {
        printf(" Found no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    /* the threads start in opposite orders on even and odd ranks */
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, work, (void *) (long) (rank % 2 ? 1 - i : i));
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    e = errs[0] + errs[1];
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    return topo_finish(e);
}
