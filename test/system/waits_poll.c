/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* How the engine's waits on a node-local communicator poll the netmod.
 *
 * 1. Short waits: rank 1 spins 3 us (argv[1]) before each of 2000 64 B
 *    allgathers, so rank 0 waits about that long for it every call.  Rank
 *    0 prints how many epoll_wait calls (libfabric tcp's netmod poll) it
 *    made and in how many of the calls ("polls N in M of 2000 calls"): a
 *    poll in such short waits is a system call per call, which on a
 *    virtual machine made both processes late and kept them 8x slower.
 * 2. Long waits still progress other operations: rank 0 posts a receive
 *    of 8 MiB from rank 1, then enters an allreduce; rank 1 sends the
 *    8 MiB with MPI_Send, which cannot complete before rank 0's progress
 *    engine copies it, and only then enters the allreduce.  Rank 0 must
 *    poll while it waits, or both wait forever ("progress ok").
 * Needs 2 processes on one node; waits.sh forces topo_pipeline. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void spin_us(double us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1e6 + (t.tv_nsec - t0.tv_nsec) * 1e-3 < us);
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0, in[16], out[32];
    unsigned long (*count) (void);
    const int calls = 2000;
    double delay = argc > 1 ? atof(argv[1]) : 3;
    const size_t big = 8 << 20;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "waits_poll: run on 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    count = (unsigned long (*)(void)) dlsym(RTLD_DEFAULT, "epoll_count");

    /* 1 */
    MPI_Allgather(in, 16, MPI_INT, out, 16, MPI_INT, MPI_COMM_WORLD);  /* engine set up */
    unsigned long before = count ? count() : 0, last = before;
    int polled = 0;
    for (int c = 0; c < calls; c++) {
        for (int i = 0; i < 16; i++)
            in[i] = rank * 100000 + c * 16 + i;
        if (rank == 1)
            spin_us(delay);
        MPI_Allgather(in, 16, MPI_INT, out, 16, MPI_INT, MPI_COMM_WORLD);
        if (count) {
            unsigned long now = count();
            polled += now != last;
            last = now;
        }
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < 16; i++)
                errs += out[r * 16 + i] != r * 100000 + c * 16 + i;
    }
    if (rank == 0)
        printf("polls %ld in %d of %d calls\n", count ? (long) (count() - before) : -1L,
               count ? polled : -1, calls);

    /* 2 */
    char *buf = malloc(big);
    int one = 1, sum = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 0) {
        MPI_Irecv(buf, (int) big, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &req);
        before = count ? count() : 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        /* the counter sees the polls of a long wait: part 1's count means something */
        printf("long wait polls %ld\n", count ? (long) (count() - before) : -1L);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < big; i += 4096)
            errs += buf[i] != (char) (i / 4096);
    } else {
        for (size_t i = 0; i < big; i++)
            buf[i] = (char) (i / 4096);
        MPI_Send(buf, (int) big, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    errs += sum != 2;
    free(buf);
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? "wrong %d\n" : "progress ok\n", errs);
    MPI_Finalize();
    return 0;
}
