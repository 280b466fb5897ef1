/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* small_calls: where the time of a small collective goes, seen from the
 * application, for one MPI library (MPICH and Open MPI build the same source).
 *
 *   mpiexec -n P small_calls [-b BYTES] [-i ITERS] [-l LABEL] [-c COLL] [-p] [-s]
 *
 * For barrier, bcast, allreduce, reduce and allgather (or COLL alone) of
 * BYTES (16) per process it prints one CSV line each (rank 0):
 *   label,collective,bytes,loop_us,after_barrier_us,barrier_skew_us
 * - loop_us: mean time per call of ITERS back-to-back calls (the cost of the
 *   call itself, its latency hidden by the next call);
 * - after_barrier_us: bench/coll_bench.c's measure, the median over calls of
 *   the slowest process's time for one call right after MPI_Barrier;
 * - barrier_skew_us: the median over barriers of the time between the first
 *   and the last process leaving MPI_Barrier (CLOCK_MONOTONIC, which the
 *   processes of one machine share: run on one machine).
 * -p: the back-to-back loop only (for a profiler: bench/small-profile.sh).
 * -s: the calls on MPI_COMM_SELF instead (run with one process, or read
 *   loop_us per process): the MPI layers alone, entry, argument checks,
 *   both selections and the algorithm's entry, with no other process to
 *   wait for, so that a change of a few nanoseconds there shows.
 * A slowest-process time after a barrier includes whatever head start the
 * barrier gave the others: a barrier that releases its root one cache-line
 * transfer early adds that to every call timed after it. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { BARRIER, BCAST, ALLREDUCE, REDUCE, ALLGATHER, NCOLL };
static const char *names[NCOLL] = { "barrier", "bcast", "allreduce", "reduce", "allgather" };

static MPI_Comm coll_comm;      /* the calls' communicator (-s) */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(double), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void call(int c, char *s, char *r, int n, int root)
{
    switch (c) {
        case BARRIER:
            MPI_Barrier(coll_comm);
            break;
        case BCAST:
            MPI_Bcast(s, n, MPI_BYTE, root, coll_comm);
            break;
        case ALLREDUCE:
            MPI_Allreduce(s, r, n / 4, MPI_INT, MPI_SUM, coll_comm);
            break;
        case REDUCE:
            MPI_Reduce(s, r, n / 4, MPI_INT, MPI_SUM, root, coll_comm);
            break;
        default:
            MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, coll_comm);
    }
}

int main(int argc, char **argv)
{
    int rank, size, csize, bytes = 16, iters = 20000, opt, loop_only = 0;
    const char *label = "run", *only = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    coll_comm = MPI_COMM_WORLD;
    while ((opt = getopt(argc, argv, "b:i:l:c:ps")) != -1) {
        if (opt == 'b')
            bytes = atoi(optarg) < 4 ? 4 : atoi(optarg) & ~3;
        else if (opt == 'i')
            iters = atoi(optarg) < 10 ? 10 : atoi(optarg);
        else if (opt == 'l')
            label = optarg;
        else if (opt == 'c')
            only = optarg;
        else if (opt == 'p')
            loop_only = 1;
        else if (opt == 's')
            coll_comm = MPI_COMM_SELF;
    }
    MPI_Comm_size(coll_comm, &csize);
    char *s = calloc(bytes, 1), *r = calloc((size_t) bytes * size, 1);
    double *t = malloc(iters * sizeof(double)), *tmax = malloc(iters * sizeof(double));
    double *skew = malloc(iters * sizeof(double));

    if (rank == 0)
        printf("label,collective,bytes,loop_us,after_barrier_us,barrier_skew_us\n");
    for (int c = 0; c < NCOLL; c++) {
        double loop, after, sk, t0;
        if (only && strcmp(only, names[c]))
            continue;
        for (int i = 0; i < iters / 10; i++)    /* warm-up */
            call(c, s, r, bytes, i % csize);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = now();
        for (int i = 0; i < iters; i++)
            call(c, s, r, bytes, i % csize);
        loop = (now() - t0) / iters * 1e6;
        MPI_Allreduce(MPI_IN_PLACE, &loop, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (loop_only) {
            if (rank == 0)
                printf("%s,%s,%d,%.3f,,\n", label, names[c], c == BARRIER ? 0 : bytes, loop);
            continue;
        }
        for (int i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now();
            skew[i] = t0;
            call(c, s, r, bytes, i % csize);
            t[i] = now() - t0;
        }
        MPI_Reduce(t, tmax, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        /* skew: last exit minus first exit of each barrier */
        MPI_Reduce(skew, t, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(rank == 0 ? MPI_IN_PLACE : skew, skew, iters, MPI_DOUBLE, MPI_MIN, 0,
                   MPI_COMM_WORLD);
        if (rank == 0) {
            after = median(tmax, iters) * 1e6;
            for (int i = 0; i < iters; i++)
                t[i] -= skew[i];
            sk = median(t, iters) * 1e6;
            printf("%s,%s,%d,%.3f,%.3f,%.3f\n", label, names[c], c == BARRIER ? 0 : bytes, loop,
                   after, sk);
        }
    }
    free(s);
    free(r);
    free(t);
    free(tmax);
    free(skew);
    MPI_Finalize();
    return 0;
}
