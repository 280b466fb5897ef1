/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Rank 1 waits in a blocking MPI_Recv while rank 0 sleeps 300 ms before
 * sending; rank 1 prints how many times it called sched_yield meanwhile
 * ("yields N", with yield_count.c preloaded; -1 without), so yield.sh can
 * tell whether CH4's blocking waits give the processor away. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, v = 0;
    unsigned long (*count) (void);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    count = (unsigned long (*)(void)) dlsym(RTLD_DEFAULT, "yield_count");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        usleep(300000);
        v = 42;
        MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
        unsigned long before = count ? count() : 0;
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("yields %ld value %d\n", count ? (long) (count() - before) : -1L, v);
    }
    MPI_Finalize();
    return 0;
}
