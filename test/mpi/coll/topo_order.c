/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Persistent collectives started in different orders on different
 * processes, which MPI-4.0 (section 6.13) allows: only their inits must be
 * made in the same order.  Each part checks every element it receives.
 *
 *  A. bcast, allreduce and allgather requests (small and multi-round
 *     sizes) started in a rank-dependent order, one MPI_Start each, then
 *     MPI_Waitall; and the same requests through MPI_Startall with the
 *     array permuted per process.
 *  B. A blocking collective on the same communicator while a persistent
 *     request is active on some processes and not yet started on others:
 *     even ranks start it before the blocking call, odd ranks after.
 *  C. Even ranks start a request then make a blocking allreduce; odd ranks
 *     start it and wait for it before that allreduce: the even ranks'
 *     request must progress from inside their blocking call.
 *  D. The same requests on a communicator whose info asserts
 *     mpi_assert_strict_persistent_collective_ordering (MPI-4.1), started in
 *     the same order everywhere.
 *  E. Many requests (16) active at once, started in reverse on odd ranks,
 *     made and freed several times (their resources come back).
 * Run with the built-in tuning and with topo_pipeline forced for
 * MPIR_CVAR_I{BCAST,ALLREDUCE,ALLGATHER}_INTRA_ALGORITHM; before each
 * persistent request kept its own engine state, A hung on 2 processes. */

#include "mpi.h"
#include "mpitest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON (-77)
#define NKINDS 3
#define MANY 16

static int errs = 0, rank, size, reps = 4;

typedef struct {
    int kind;                   /* 0 bcast, 1 allreduce, 2 allgather */
    int count;
    int root;
    int *sbuf, *rbuf;
    MPI_Request req;
} preq_t;

static int val(int s, int r, int i, int kind)
{
    return (s * 131 + r * 17 + i * 3 + kind * 7) % 100003;
}

static void p_init(preq_t * p, int kind, int count, int root, MPI_Comm comm)
{
    p->kind = kind;
    p->count = count;
    p->root = root;
    p->sbuf = malloc((size_t) count * sizeof(int));
    p->rbuf = malloc((size_t) count * (kind == 2 ? size : 1) * sizeof(int));
    if (kind == 0)
        MPI_Bcast_init(p->rbuf, count, MPI_INT, root, comm, MPI_INFO_NULL, &p->req);
    else if (kind == 1)
        MPI_Allreduce_init(p->sbuf, p->rbuf, count, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                           &p->req);
    else
        MPI_Allgather_init(p->sbuf, count, MPI_INT, p->rbuf, count, MPI_INT, comm,
                           MPI_INFO_NULL, &p->req);
}

static void p_fill(preq_t * p, int s)
{
    int n = p->count * (p->kind == 2 ? size : 1);

    for (int i = 0; i < n; i++)
        p->rbuf[i] = POISON;
    for (int i = 0; i < p->count; i++)
        p->sbuf[i] = val(s, rank, i, p->kind);
    if (p->kind == 0 && rank == p->root)
        memcpy(p->rbuf, p->sbuf, (size_t) p->count * sizeof(int));
}

static void p_check(const char *part, preq_t * p, int s)
{
    static const char *names[NKINDS] = { "bcast", "allreduce", "allgather" };

    for (int r = 0; r < (p->kind == 2 ? size : 1); r++)
        for (int i = 0; i < p->count; i++) {
            int want, got = p->rbuf[r * p->count + i];

            if (p->kind == 0)
                want = val(s, p->root, i, 0);
            else if (p->kind == 1) {
                want = 0;
                for (int q = 0; q < size; q++)
                    want += val(s, q, i, 1);
            } else
                want = val(s, r, i, 2);
            if (got != want) {
                if (errs++ < 10)
                    fprintf(stderr, "[%d] %s: %s count %d start %d: element %d of %d is %d, "
                            "expected %d\n", rank, part, names[p->kind], p->count, s, i, r,
                            got, want);
                return;
            }
        }
}

static void p_free(preq_t * p)
{
    MPI_Request_free(&p->req);
    free(p->sbuf);
    free(p->rbuf);
}

/* A: n requests, started in an order that depends on the rank */
static void part_a(MPI_Comm comm, const char *part, int count)
{
    preq_t p[NKINDS];
    MPI_Request reqs[NKINDS];
    int order[NKINDS];

    for (int k = 0; k < NKINDS; k++)
        p_init(&p[k], k, count, k % size, comm);
    for (int s = 0; s < reps; s++) {
        for (int k = 0; k < NKINDS; k++) {
            /* a rotation and, on odd ranks, a reversal */
            order[k] = (k + rank + s) % NKINDS;
            if (rank % 2)
                order[k] = NKINDS - 1 - order[k];
            p_fill(&p[k], s);
        }
        if (s % 2 == 0) {
            for (int k = 0; k < NKINDS; k++)
                MPI_Start(&p[order[k]].req);
        } else {
            for (int k = 0; k < NKINDS; k++)
                reqs[k] = p[order[k]].req;
            MPI_Startall(NKINDS, reqs);
        }
        for (int k = 0; k < NKINDS; k++)
            reqs[k] = p[order[k]].req;
        MPI_Waitall(NKINDS, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < NKINDS; k++)
            p_check(part, &p[k], s);
    }
    for (int k = 0; k < NKINDS; k++)
        p_free(&p[k]);
}

/* B and C: a blocking call on comm while a request is active on some
 * processes only */
static void part_bc(MPI_Comm comm, int count)
{
    for (int kind = 0; kind < NKINDS; kind++) {
        preq_t p;
        int in, out;

        p_init(&p, kind, count, size - 1, comm);
        for (int s = 0; s < reps; s++) {
            p_fill(&p, s);
            in = rank + s;
            /* B */
            if (rank % 2 == 0)
                MPI_Start(&p.req);
            MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, comm);
            if (out != size * (size - 1) / 2 + size * s && errs++ < 10)
                fprintf(stderr, "[%d] B: allreduce gave %d\n", rank, out);
            if (rank % 2)
                MPI_Start(&p.req);
            MPI_Wait(&p.req, MPI_STATUS_IGNORE);
            p_check("B", &p, s);
            /* C */
            p_fill(&p, s + 1);
            MPI_Start(&p.req);
            if (rank % 2)
                MPI_Wait(&p.req, MPI_STATUS_IGNORE);
            MPI_Bcast(&in, 1, MPI_INT, 0, comm);
            if (in != s && errs++ < 10)
                fprintf(stderr, "[%d] C: bcast gave %d\n", rank, in);
            if (rank % 2 == 0)
                MPI_Wait(&p.req, MPI_STATUS_IGNORE);
            p_check("C", &p, s + 1);
        }
        p_free(&p);
    }
}

/* E: many requests at once, made and freed several times */
static void part_e(MPI_Comm comm, int count)
{
    for (int round = 0; round < 3; round++) {
        preq_t p[MANY];
        MPI_Request reqs[MANY];

        for (int k = 0; k < MANY; k++)
            p_init(&p[k], k % NKINDS, count + k, k % size, comm);
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < MANY; k++) {
                int j = rank % 2 ? MANY - 1 - k : k;

                p_fill(&p[j], s);
                MPI_Start(&p[j].req);
                reqs[k] = p[j].req;
            }
            MPI_Waitall(MANY, reqs, MPI_STATUSES_IGNORE);
            for (int k = 0; k < MANY; k++)
                p_check("E", &p[k], s);
        }
        for (int k = 0; k < MANY; k++)
            p_free(&p[k]);
    }
}

int main(int argc, char **argv)
{
    static const int counts[] = { 1, 300, 50000 };
    MPI_Comm strict;
    MPI_Info info;

    MTest_Init(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "-reps=", 6) == 0)
            reps = atoi(argv[i] + 6);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int c = 0; c < 3; c++)
        part_a(MPI_COMM_WORLD, "A", counts[c]);
    for (int c = 0; c < 3; c++)
        part_bc(MPI_COMM_WORLD, counts[c]);

    /* D: the hint, then the requests in the same order everywhere */
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_strict_persistent_collective_ordering", "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &strict);
    MPI_Info_free(&info);
    for (int c = 0; c < 3; c++) {
        preq_t p[NKINDS];
        MPI_Request reqs[NKINDS];

        for (int k = 0; k < NKINDS; k++)
            p_init(&p[k], k, counts[c], 0, strict);
        for (int s = 0; s < reps; s++) {
            for (int k = 0; k < NKINDS; k++) {
                p_fill(&p[k], s);
                reqs[k] = p[k].req;
            }
            MPI_Startall(NKINDS, reqs);
            MPI_Waitall(NKINDS, reqs, MPI_STATUSES_IGNORE);
            for (int k = 0; k < NKINDS; k++)
                p_check("D", &p[k], s);
        }
        for (int k = 0; k < NKINDS; k++)
            p_free(&p[k]);
    }
    MPI_Comm_free(&strict);

    part_e(MPI_COMM_WORLD, 100);

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
