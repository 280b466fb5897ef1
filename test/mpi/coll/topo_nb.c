/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Nonblocking and persistent allgather, bcast and allreduce, many at once.
 *
 * On three communicators (a dup of MPI_COMM_WORLD, its reverse, and halves
 * of it), each round starts a dozen nonblocking calls of mixed kinds,
 * sizes and roots, with a blocking collective among them, then completes
 * them in an order that differs on every process (MPI_Waitany, MPI_Testany,
 * MPI_Test and MPI_Waitall).  Then one persistent allreduce is started
 * thousands of times with new data, alternating with a persistent bcast
 * and allgather.  Every received element is checked against what each
 * process sent.
 *
 * The persistent calls' inits come first, so that with the engine's
 * algorithms forced (MPIR_CVAR_I<COLL>_INTRA_ALGORITHM=topo_pipeline) the
 * engine is set up on every communicator before the nonblocking calls:
 * with MPIR_CVAR_COLLECTIVE_FALLBACK=error none may fall back.  -fresh
 * first runs a round on a communicator without it (they fall back);
 * -starts=N starts the persistent allreduce N times (2000). */

#include "mpi.h"
#include "mpitest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOMMS 3
#define PER_ROUND 12
#define POISON (-77)

static int errs = 0, wrank;

/* the value element i of process r sends for call c */
static int val(int c, int r, int i)
{
    return (c * 7919 + r * 131 + i * 7) % 1000003;
}

static void check(const char *what, int call, int i, int got, int want)
{
    if (got != want && errs++ < 10)
        fprintf(stderr, "[%d] %s (call %d): element %d is %d, expected %d\n", wrank, what, call,
                i, got, want);
}

/* one outstanding call and what it must produce */
typedef struct {
    int kind;                   /* 0 allreduce, 1 allreduce IN_PLACE, 2 bcast, 3 bcast of a
                                 * vector type, 4 allgather */
    int id, count, root;
    MPI_Comm comm;
    int *sbuf, *rbuf;
    MPI_Datatype type;
} call_t;

static const int counts[] = { 0, 1, 3, 17, 256, 1000, 4099, 70001 };

static void start(call_t * c, MPI_Request * req)
{
    int rank, size, n = c->count;

    MPI_Comm_rank(c->comm, &rank);
    MPI_Comm_size(c->comm, &size);
    c->type = MPI_DATATYPE_NULL;
    switch (c->kind) {
        case 0:
        case 1:
            c->sbuf = malloc((n + 1) * sizeof(int));
            c->rbuf = malloc((n + 1) * sizeof(int));
            for (int i = 0; i < n; i++) {
                c->sbuf[i] = val(c->id, rank, i);
                c->rbuf[i] = c->kind == 1 ? c->sbuf[i] : POISON;
            }
            MPI_Iallreduce(c->kind == 1 ? MPI_IN_PLACE : c->sbuf, c->rbuf, n, MPI_INT, MPI_SUM,
                           c->comm, req);
            break;
        case 2:
            c->rbuf = malloc((n + 1) * sizeof(int));
            for (int i = 0; i < n; i++)
                c->rbuf[i] = rank == c->root ? val(c->id, c->root, i) : POISON;
            MPI_Ibcast(c->rbuf, n, MPI_INT, c->root, c->comm, req);
            break;
        case 3:
            /* every other int: n elements in 2n ints */
            c->rbuf = malloc((2 * n + 1) * sizeof(int));
            for (int i = 0; i < 2 * n; i++)
                c->rbuf[i] = rank == c->root && i % 2 == 0 ? val(c->id, c->root, i / 2) : POISON;
            MPI_Type_vector(n > 0 ? n : 1, 1, 2, MPI_INT, &c->type);
            MPI_Type_commit(&c->type);
            MPI_Ibcast(c->rbuf, n > 0 ? 1 : 0, c->type, c->root, c->comm, req);
            MPI_Type_free(&c->type);    /* the call keeps its own reference */
            break;
        default:
            c->sbuf = malloc((n + 1) * sizeof(int));
            c->rbuf = malloc(((size_t) n * size + 1) * sizeof(int));
            for (int i = 0; i < n; i++)
                c->sbuf[i] = val(c->id, rank, i);
            for (int i = 0; i < n * size; i++)
                c->rbuf[i] = POISON;
            MPI_Iallgather(c->sbuf, n, MPI_INT, c->rbuf, n, MPI_INT, c->comm, req);
            break;
    }
}

static void finish(call_t * c)
{
    int size, n = c->count;

    MPI_Comm_size(c->comm, &size);
    switch (c->kind) {
        case 0:
        case 1:
            for (int i = 0; i < n; i++) {
                long long sum = 0;
                for (int r = 0; r < size; r++)
                    sum += val(c->id, r, i);
                check(c->kind ? "iallreduce IN_PLACE" : "iallreduce", c->id, i, c->rbuf[i],
                      (int) sum);
            }
            break;
        case 2:
            for (int i = 0; i < n; i++)
                check("ibcast", c->id, i, c->rbuf[i], val(c->id, c->root, i));
            break;
        case 3:
            for (int i = 0; i < 2 * n; i++)
                check("ibcast (vector)", c->id, i, c->rbuf[i],
                      i % 2 ? POISON : val(c->id, c->root, i / 2));
            break;
        default:
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    check("iallgather", c->id, r * n + i, c->rbuf[r * n + i], val(c->id, r, i));
            break;
    }
    free(c->sbuf);
    free(c->rbuf);
    c->sbuf = c->rbuf = NULL;
}

/* A round: PER_ROUND calls on each communicator, started in the same order
 * everywhere (MPI requires it), with a blocking allreduce in the middle,
 * completed in an order of this process' own. */
static void round_of_calls(MPI_Comm * comms, int ncomms, int round)
{
    int n = ncomms * PER_ROUND, left = n, order = rand() % 4;
    call_t *calls = calloc(n, sizeof(call_t));
    MPI_Request *reqs = malloc(n * sizeof(MPI_Request));

    for (int j = 0; j < n; j++) {
        call_t *c = &calls[j];
        int size, id = round * 1000 + j;

        c->comm = comms[j % ncomms];
        MPI_Comm_size(c->comm, &size);
        c->id = id;
        c->kind = (id * 7 + round) % 5;
        c->count = counts[(id * 3 + round) % (sizeof(counts) / sizeof(counts[0]))];
        if (c->kind == 4 && c->count > 5000)
            c->count /= size;
        c->root = (id / 5) % size;
        start(c, &reqs[j]);
        if (j == n / 2) {
            /* a blocking collective among outstanding ones, same comm */
            int one = 1, all = 0;
            MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, c->comm);
            if (all != size && errs++ < 10)
                fprintf(stderr, "[%d] blocking allreduce among nonblocking ones: %d, not %d\n",
                        wrank, all, size);
        }
    }
    /* complete in an order of this process' own */
    while (left > 0) {
        int idx = MPI_UNDEFINED, flag = 0;
        switch (order) {
            case 0:
                MPI_Waitany(n, reqs, &idx, MPI_STATUS_IGNORE);
                break;
            case 1:
                MPI_Testany(n, reqs, &idx, &flag, MPI_STATUS_IGNORE);
                if (!flag)
                    idx = MPI_UNDEFINED;
                break;
            case 2:{
                    int j = rand() % n;
                    if (reqs[j] != MPI_REQUEST_NULL) {
                        MPI_Test(&reqs[j], &flag, MPI_STATUS_IGNORE);
                        if (flag)
                            idx = j;
                    }
                    break;
                }
            default:
                MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
                for (int j = 0; j < n; j++)
                    if (calls[j].rbuf) {
                        finish(&calls[j]);
                        left--;
                    }
                continue;
        }
        if (idx != MPI_UNDEFINED && calls[idx].rbuf) {
            finish(&calls[idx]);
            left--;
        }
    }
    free(calls);
    free(reqs);
}

/* One persistent allreduce started `starts` times, a persistent bcast and
 * allgather started between, new data each time. */
static void persistent(MPI_Comm comm, MPI_Request * preq, int *abuf, int *ares, int *bbuf,
                       int *gs, int *gr, int starts)
{
    int rank, size, an = 33, bn = 1500, gn = 5;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int s = 0; s < starts; s++) {
        for (int i = 0; i < an; i++) {
            abuf[i] = val(s, rank, i);
            ares[i] = POISON;
        }
        MPI_Start(&preq[0]);
        MPI_Wait(&preq[0], MPI_STATUS_IGNORE);
        for (int i = 0; i < an; i++) {
            long long sum = 0;
            for (int r = 0; r < size; r++)
                sum += val(s, r, i);
            check("persistent allreduce", s, i, ares[i], (int) sum);
        }
        if (s % 10 == 0) {
            /* bcast from the fixed root (rank 0) and allgather, overlapped */
            for (int i = 0; i < bn; i++)
                bbuf[i] = rank == 0 ? val(s, 0, i) : POISON;
            for (int i = 0; i < gn; i++)
                gs[i] = val(s, rank, i);
            for (int i = 0; i < gn * size; i++)
                gr[i] = POISON;
            MPI_Startall(2, &preq[1]);
            MPI_Waitall(2, &preq[1], MPI_STATUSES_IGNORE);
            for (int i = 0; i < bn; i++)
                check("persistent bcast", s, i, bbuf[i], val(s, 0, i));
            for (int r = 0; r < size; r++)
                for (int i = 0; i < gn; i++)
                    check("persistent allgather", s, r * gn + i, gr[r * gn + i], val(s, r, i));
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Comm comms[NCOMMS];
    MPI_Request preq[NCOMMS][3];
    int *pbuf[NCOMMS][5], size, starts = 2000, rounds = 4;

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    srand(12345 + wrank * 7);

    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "-starts=", 8))
            starts = atoi(argv[i] + 8);
    if (argc > 1 && !strcmp(argv[1], "-fresh")) {
        /* the engine is not set up on this one: the calls fall back */
        MPI_Comm fresh;
        MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
        round_of_calls(&fresh, 1, 99);
        MPI_Comm_free(&fresh);
    }

    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank < (size + 1) / 2, wrank, &comms[2]);

    for (int k = 0; k < NCOMMS; k++) {
        int csize;
        MPI_Comm_size(comms[k], &csize);
        pbuf[k][0] = malloc(33 * sizeof(int));
        pbuf[k][1] = malloc(33 * sizeof(int));
        pbuf[k][2] = malloc(1500 * sizeof(int));
        pbuf[k][3] = malloc(5 * sizeof(int));
        pbuf[k][4] = malloc(5 * csize * sizeof(int));
        MPI_Allreduce_init(pbuf[k][0], pbuf[k][1], 33, MPI_INT, MPI_SUM, comms[k], MPI_INFO_NULL,
                           &preq[k][0]);
        MPI_Bcast_init(pbuf[k][2], 1500, MPI_INT, 0, comms[k], MPI_INFO_NULL, &preq[k][1]);
        MPI_Allgather_init(pbuf[k][3], 5, MPI_INT, pbuf[k][4], 5, MPI_INT, comms[k],
                           MPI_INFO_NULL, &preq[k][2]);
    }

    for (int r = 0; r < rounds; r++)
        round_of_calls(comms, NCOMMS, r);
    for (int k = 0; k < NCOMMS; k++)
        persistent(comms[k], preq[k], pbuf[k][0], pbuf[k][1], pbuf[k][2], pbuf[k][3],
                   pbuf[k][4], k == 0 ? starts : starts / 10);
    /* nonblocking calls again after the persistent ones, then free them */
    round_of_calls(comms, NCOMMS, rounds);

    for (int k = 0; k < NCOMMS; k++) {
        for (int j = 0; j < 3; j++)
            MPI_Request_free(&preq[k][j]);
        for (int j = 0; j < 5; j++)
            free(pbuf[k][j]);
        MPI_Comm_free(&comms[k]);
    }
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
