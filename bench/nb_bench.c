/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* nb_bench: nonblocking and persistent allgather, bcast and allreduce, OSU
 * style: latency, and how much of a compute phase hides the collective.
 *
 *   nb_bench [-c iallgather|ibcast|iallreduce] [-m MIN] [-M MAX] [-i ITERS]
 *            [-t TESTS] [-l LABEL] [-H]
 *
 * For each size (bytes per process; MIN to MAX, doubling), with I calls of
 * each kind (halved per doubling above 64 KiB, at least 10), the slowest
 * process' mean over calls of:
 *   nb_us          I<coll> then MPI_Wait
 *   persistent_us  MPI_Start then MPI_Wait on one <Coll>_init request
 *   blocking_us    the blocking call
 *   overlapped_us  I<coll>, then compute for nb_us (split in TESTS slices
 *                  with an MPI_Test after each; 0: no tests), then MPI_Wait
 * and overlap_pct = 100 * (1 - (overlapped_us - compute_us) / nb_us),
 * clamped to [0, 100]: the share of the collective hidden behind the
 * computation (OSU's definition).  The persistent request is created
 * first, so an implementation that sets itself up at init (mpich-topo's
 * engine) is set up for the nonblocking calls as well.  Algorithms are
 * chosen by the environment (the launcher's), named by -l.  Every call's
 * result is checked: errors counts wrong elements.
 *
 * CSV: label,collective,nprocs,bytes,iterations,nb_us,persistent_us,
 *      blocking_us,compute_us,overlapped_us,overlap_pct,errors */

#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { IAG, IBC, IAR };
static int coll = IAR, rank, size, tests = 10;
static long errors;
static int *sbuf, *rbuf;

static int value(int call, int r, int i)
{
    return call * 31 + r * 7 + i % 1000;
}

static void fill(int call, int n)
{
    for (int i = 0; i < n; i++)
        sbuf[i] = value(call, rank, i);
    if (coll == IBC)
        for (int i = 0; i < n; i++)
            rbuf[i] = rank == 0 ? value(call, 0, i) : -1;
}

static void verify(int call, int n)
{
    for (int i = 0; i < n; i++) {
        if (coll == IAR) {
            long want = 0;
            for (int r = 0; r < size; r++)
                want += value(call, r, i);
            errors += rbuf[i] != (int) want;
        } else if (coll == IBC) {
            errors += rbuf[i] != value(call, 0, i);
        } else {
            for (int r = 0; r < size; r++)
                errors += rbuf[r * n + i] != value(call, r, i);
        }
    }
}

static void start_nb(int n, MPI_Request * req)
{
    if (coll == IAR)
        MPI_Iallreduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req);
    else if (coll == IBC)
        MPI_Ibcast(rbuf, n, MPI_INT, 0, MPI_COMM_WORLD, req);
    else
        MPI_Iallgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, MPI_COMM_WORLD, req);
}

static void blocking(int n)
{
    if (coll == IAR)
        MPI_Allreduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (coll == IBC)
        MPI_Bcast(rbuf, n, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Allgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, MPI_COMM_WORLD);
}

/* MPI-4 (Open MPI 4.1 is MPI-3.1: no persistent collectives, NaN) */
#if MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#define MPI_Allreduce_init(...) ((void) 0)
#define MPI_Bcast_init(...) ((void) 0)
#define MPI_Allgather_init(...) ((void) 0)
#endif

static void init_persistent(int n, MPI_Request * req)
{
    *req = MPI_REQUEST_NULL;
    if (!HAVE_PERSISTENT)
        return;
    if (coll == IAR)
        MPI_Allreduce_init(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, req);
    else if (coll == IBC)
        MPI_Bcast_init(rbuf, n, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, req);
    else
        MPI_Allgather_init(sbuf, n, MPI_INT, rbuf, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                           req);
}

/* busy work for about us microseconds, with `tests` MPI_Test calls */
static void compute(double us, MPI_Request * req)
{
    int slices = tests > 0 ? tests : 1;
    for (int s = 0; s < slices; s++) {
        double end = MPI_Wtime() + us * 1e-6 / slices;
        while (MPI_Wtime() < end);
        if (tests > 0 && *req != MPI_REQUEST_NULL) {
            int flag;
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        }
    }
}

enum { NB, PERSISTENT, BLOCKING, OVERLAPPED };

/* the slowest process' mean time per call of one kind, microseconds (the
 * data change at every call and every result is checked) */
static double timed(int kind, int n, int iters, int *call, MPI_Request * preq, double compute_us)
{
    double t = 0, us, max;
    MPI_Request req;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters; i++) {
        fill(++*call, n);
        double t0 = MPI_Wtime();
        if (kind == BLOCKING) {
            blocking(n);
        } else if (kind == PERSISTENT) {
            MPI_Start(preq);
            MPI_Wait(preq, MPI_STATUS_IGNORE);
        } else {
            start_nb(n, &req);
            if (kind == OVERLAPPED)
                compute(compute_us, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t += MPI_Wtime() - t0;
        verify(*call, n);
    }
    us = t * 1e6 / iters;
    MPI_Allreduce(&us, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

int main(int argc, char **argv)
{
    const char *label = "default", *names[] = { "iallgather", "ibcast", "iallreduce" };
    size_t min = 4, max = 1 << 20;
    int base_iters = 200, header = 0, opt;
    int call = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "c:m:M:i:t:l:H")) != -1) {
        switch (opt) {
            case 'c':
                coll = !strcmp(optarg, "iallgather") ? IAG : !strcmp(optarg, "ibcast") ? IBC : IAR;
                break;
            case 'm': min = strtoull(optarg, NULL, 0); break;
            case 'M': max = strtoull(optarg, NULL, 0); break;
            case 'i': base_iters = atoi(optarg); break;
            case 't': tests = atoi(optarg); break;
            case 'l': label = optarg; break;
            case 'H': header = 1; break;
            default:
                if (rank == 0)
                    fprintf(stderr, "usage: nb_bench [-c COLL] [-m MIN] [-M MAX] [-i ITERS] "
                            "[-t TESTS] [-l LABEL] [-H]\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (min < sizeof(int))
        min = sizeof(int);
    sbuf = malloc(max);
    rbuf = malloc(max * (coll == IAG ? size : 1));
    if (header && rank == 0)
        printf("label,collective,nprocs,bytes,iterations,nb_us,persistent_us,blocking_us,"
               "compute_us,overlapped_us,overlap_pct,errors\n");

    for (size_t bytes = min; bytes <= max; bytes *= 2) {
        int n = (int) (bytes / sizeof(int)), iters = base_iters;
        double nb, pers, blk, ovl, pct;
        MPI_Request req, preq;

        for (size_t b = 64 << 10; b < bytes && iters > 10; b *= 2)
            iters /= 2;
        errors = 0;
        init_persistent(n, &preq);
        for (int w = 0; w < 3; w++) {   /* warm-up: every path once */
            if (HAVE_PERSISTENT) {
                fill(++call, n);
                MPI_Start(&preq);
                MPI_Wait(&preq, MPI_STATUS_IGNORE);
                verify(call, n);
            }
            fill(++call, n);
            start_nb(n, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            verify(call, n);
        }

        nb = timed(NB, n, iters, &call, &preq, 0);
        pers = HAVE_PERSISTENT ? timed(PERSISTENT, n, iters, &call, &preq, 0) : 0.0 / 0.0;
        if (HAVE_PERSISTENT)
            MPI_Request_free(&preq);
        blk = timed(BLOCKING, n, iters, &call, &preq, 0);
        ovl = timed(OVERLAPPED, n, iters, &call, &preq, nb);
        pct = 100.0 * (1.0 - (ovl - nb) / nb);
        pct = pct < 0 ? 0 : pct > 100 ? 100 : pct;

        long all_errors;
        MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%s,%s,%d,%zu,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.1f,%ld\n", label, names[coll],
                   size, bytes, iters, nb, pers, blk, nb, ovl, pct, all_errors);
        fflush(stdout);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
