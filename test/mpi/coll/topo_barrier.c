/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPI_Barrier must not let any process leave before the last one has
 * entered.  Each process counts, in memory that all processes of this
 * machine map (POSIX shared memory, whatever nodes MPI sees: emulated nodes
 * included), the barriers it has entered on each communicator; right after
 * a barrier every member's count must have reached its own.  Each checked
 * iteration one process (rotating) enters late, after a sleep.  Barriers
 * alternate with small bcasts and allreduces on the same communicators
 * (they share the engine's rounds), on the world, a shuffled copy of it and
 * an uneven split; then runs of back-to-back barriers, each checked.  Run
 * on one machine.  Meant to be run with topo_flags forced; any barrier must
 * pass it. */

#include "mpi.h"
#include "mpitest.h"
#include "topo_test_util.h"
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define ITERS 60
#define BURST 2000
#define NCOMMS 3
#define PAD 8   /* longs per counter: one cache line each */

static int errs = 0, wsize;
static long *counts;            /* [NCOMMS][world size * PAD], shared */
static long entered[NCOMMS];
static int *members[NCOMMS];    /* world rank of each member */

static long *counter(int c, int wrank)
{
    return &counts[((size_t) c * wsize + wrank) * PAD];
}

/* (bcast and allreduce order these steps: the barrier is what is tested) */
static void map_counters(void)
{
    char name[64];
    int wrank, pid = getpid(), fd, mapped = 1, all;
    size_t bytes = (size_t) NCOMMS * wsize * PAD * sizeof(long);

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (wrank == 0) {
        snprintf(name, sizeof name, "/topo_barrier.%d", pid);
        fd = shm_open(name, O_CREAT | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, bytes) != 0) {
            perror("shm_open");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
    }
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof name, "/topo_barrier.%d", pid);
    fd = shm_open(name, O_RDWR, 0600);
    counts = fd < 0 ? MAP_FAILED : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    close(fd);
    MPI_Allreduce(&mapped, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        shm_unlink(name);
}

static void barrier(int c, MPI_Comm comm, const char *name, int it)
{
    int size, wrank;

    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    entered[c]++;
    __atomic_store_n(counter(c, wrank), entered[c], __ATOMIC_RELEASE);
    MPI_Barrier(comm);
    for (int j = 0; j < size; j++) {
        long got = __atomic_load_n(counter(c, members[c][j]), __ATOMIC_ACQUIRE);
        if (got < entered[c]) {
            if (errs < 10)
                fprintf(stderr, "[%d] %s, iteration %d: left barrier %ld before member %d "
                        "entered it (it had entered %ld)\n", wrank, name, it, entered[c], j, got);
            errs++;
        }
    }
}

static void check_barrier(int c, MPI_Comm comm, const char *name, int it)
{
    int rank, size;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* late by 0.2 to 2 ms: the others must wait for it */
    if (rank == it % size)
        usleep(200 + 300 * (it % 7));
    barrier(c, comm, name, it);
}

static void check_data(MPI_Comm comm, const char *name, int it)
{
    int rank, size, v[3], sum;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < 3; i++)
        v[i] = rank == it % size ? it * 3 + i : -1;
    MPI_Bcast(v, 3, MPI_INT, it % size, comm);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < 3; i++)
        if (v[i] != it * 3 + i) {
            if (errs < 10)
                fprintf(stderr, "%s, iteration %d: bcast element %d is %d\n", name, it, i, v[i]);
            errs++;
        }
    if (sum != size * (size - 1) / 2) {
        if (errs < 10)
            fprintf(stderr, "%s, iteration %d: allreduce gave %d\n", name, it, sum);
        errs++;
    }
}

int main(int argc, char **argv)
{
    int wrank;
    MPI_Comm comms[NCOMMS];
    MPI_Group wgroup, group;
    const char *names[NCOMMS] = { "world", "shuffled", "uneven split" };

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    map_counters();
    comms[0] = MPI_COMM_WORLD;
    comms[1] = topo_test_shuffled(MPI_COMM_WORLD, 7);
    /* one part of every third rank, one of the rest */
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 3 == 0, wrank, &comms[2]);
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    for (int c = 0; c < NCOMMS; c++) {
        int size, *ranks;
        MPI_Comm_size(comms[c], &size);
        ranks = malloc(size * sizeof(int));
        members[c] = malloc(size * sizeof(int));
        for (int j = 0; j < size; j++)
            ranks[j] = j;
        MPI_Comm_group(comms[c], &group);
        MPI_Group_translate_ranks(group, size, ranks, wgroup, members[c]);
        MPI_Group_free(&group);
        free(ranks);
    }
    MPI_Group_free(&wgroup);

    for (int it = 0; it < ITERS; it++)
        for (int c = 0; c < NCOMMS; c++) {
            check_barrier(c, comms[c], names[c], it);
            if (it % 2)
                check_data(comms[c], names[c], it);
        }
    for (int c = 0; c < NCOMMS; c++) {
        for (int i = 0; i < BURST; i++)
            barrier(c, comms[c], names[c], ITERS + i);
        check_data(comms[c], names[c], ITERS);
    }

    for (int c = 0; c < NCOMMS; c++)
        free(members[c]);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
