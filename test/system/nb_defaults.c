/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Nonblocking and persistent calls with the built-in tuning (defaults.sh):
 * each case has a size of its own, so that the trace's size ranges say
 * which algorithm each case got.  Every result is checked.
 *
 *   64 B     MPI_I<coll> on a fresh communicator (no engine set up yet)
 *   1 KiB    MPI_<Coll>_init on another fresh one (the init sets it up)
 *   4 KiB    MPI_I<coll> on MPI_COMM_WORLD after a blocking allreduce
 *            (which set the engine up); the iallreduce also with a user op
 *            at 8 KiB
 *   128 KiB  MPI_Iallgather there: above the built-in threshold
 *
 * "mixed" (argv[1]): the process Hydra starts first asks for
 * MPI_THREAD_MULTIPLE, the others for MPI_THREAD_SINGLE, as MPI lets each
 * process do; the engine's nonblocking calls, which one of them cannot
 * run, must then be refused on all alike. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topo_finish.h"

static int rank, size, errs;

static int val(int r, int i, int it)
{
    return r * 1000 + i % 997 + it * 7;
}

static void sum_op(void *in, void *inout, int *len, MPI_Datatype * dt)
{
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] += ((int *) in)[i];
}

/* one nonblocking or persistent (req != NULL) allreduce, bcast and
 * allgather of n ints on comm, started `starts` times with new data */
static void three(MPI_Comm comm, int n, int persistent, int starts)
{
    int *s = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int));
    int *b = malloc(n * sizeof(int)), *g = malloc((size_t) n * size * sizeof(int));
    MPI_Request req[3];

    if (persistent) {
        MPI_Allreduce_init(s, r, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req[0]);
        MPI_Bcast_init(b, n, MPI_INT, size - 1, comm, MPI_INFO_NULL, &req[1]);
        MPI_Allgather_init(s, n, MPI_INT, g, n, MPI_INT, comm, MPI_INFO_NULL, &req[2]);
    }
    for (int it = 0; it < starts; it++) {
        for (int i = 0; i < n; i++) {
            s[i] = val(rank, i, it);
            b[i] = rank == size - 1 ? val(size, i, it) : -1;
        }
        if (persistent) {
            MPI_Startall(3, req);
        } else {
            MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, comm, &req[0]);
            MPI_Ibcast(b, n, MPI_INT, size - 1, comm, &req[1]);
            MPI_Iallgather(s, n, MPI_INT, g, n, MPI_INT, comm, &req[2]);
        }
        MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++) {
            long want = 0;
            for (int p = 0; p < size; p++)
                want += val(p, i, it);
            errs += r[i] != want;
            errs += b[i] != val(size, i, it);
            for (int p = 0; p < size; p++)
                errs += g[(size_t) p * n + i] != val(p, i, it);
        }
    }
    if (persistent)
        for (int k = 0; k < 3; k++)
            MPI_Request_free(&req[k]);
    free(s);
    free(r);
    free(b);
    free(g);
}

int main(int argc, char **argv)
{
    MPI_Comm fresh, init;
    MPI_Op user_sum;
    MPI_Request req;
    int one = 1, total, n;
    int *s, *r;

    if (argc > 1 && !strcmp(argv[1], "mixed")) {
        const char *pmi_rank = getenv("PMI_RANK");
        int provided;
        MPI_Init_thread(&argc, &argv, pmi_rank && !strcmp(pmi_rank, "0") ?
                        MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    three(fresh, 16, 0, 3);
    MPI_Comm_dup(MPI_COMM_WORLD, &init);
    three(init, 256, 1, 3);

    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    errs += total != size;
    three(MPI_COMM_WORLD, 1024, 0, 3);

    n = 2048;
    s = malloc(n * sizeof(int));
    r = malloc(n * sizeof(int));
    MPI_Op_create(sum_op, 1, &user_sum);
    for (int i = 0; i < n; i++)
        s[i] = val(rank, i, 0);
    MPI_Iallreduce(s, r, n, MPI_INT, user_sum, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) {
        long want = 0;
        for (int p = 0; p < size; p++)
            want += val(p, i, 0);
        errs += r[i] != want;
    }
    MPI_Op_free(&user_sum);
    free(s);
    free(r);

    n = 32768;
    s = malloc(n * sizeof(int));
    r = malloc((size_t) n * size * sizeof(int));
    for (int i = 0; i < n; i++)
        s[i] = val(rank, i, 1);
    MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < n; i++)
            errs += r[(size_t) p * n + i] != val(p, i, 1);
    free(s);
    free(r);

    MPI_Comm_free(&fresh);
    MPI_Comm_free(&init);
    return topo_finish(errs);
}
