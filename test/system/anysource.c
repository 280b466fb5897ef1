/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Receives from MPI_ANY_SOURCE, each process in turn the receiver, from
 * senders on its node and on others: blocking and nonblocking, posted
 * before and after the messages arrive, small and large (rendezvous),
 * through probe, mprobe, a persistent request and a cancel, and with
 * -truncate a message longer than the receive.  CH4 posts such a receive both in shared memory and in the
 * netmod; with ch4:ucx one that a message of another node matched never
 * completed (maint/patches/0046).  Prints " No Errors" when every message
 * came from the sender, with the length and bytes it sent. */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs, rank, size;

#define CHECK(cond, ...) do {                                   \
        if (!(cond)) {                                          \
            if (++errs < 10) {                                  \
                fprintf(stderr, "rank %d: ", rank);             \
                fprintf(stderr, __VA_ARGS__);                   \
                fputc('\n', stderr);                            \
            }                                                   \
        }                                                       \
    } while (0)

/* what sender s sends to receiver r: n ints, value s * 1000003 + r + i */
static void fill(int *buf, int n, int s, int r)
{
    for (int i = 0; i < n; i++)
        buf[i] = s * 1000003 + r + i;
}

/* a message received: from a sender not seen yet (seen[]), as it sent it */
static void check_msg(const MPI_Status * st, const int *buf, int n, int r, char *seen,
                      const char *what)
{
    int s = st->MPI_SOURCE, got;
    MPI_Get_count(st, MPI_INT, &got);
    CHECK(s >= 0 && s < size && s != r, "%s: source %d", what, s);
    if (s < 0 || s >= size || s == r)
        return;
    CHECK(!seen[s], "%s: a second message from %d", what, s);
    seen[s] = 1;
    CHECK(got == n, "%s: %d ints from %d, not %d", what, got, s, n);
    for (int i = 0; i < n && i < got; i++)
        if (buf[i] != s * 1000003 + r + i) {
            CHECK(0, "%s: int %d from %d is %d", what, i, s, buf[i]);
            break;
        }
}

static void round_robin(int n, int mode, const char *what)
{
    int *sbuf = malloc(n * sizeof(int)), *rbuf = malloc((size_t) size * n * sizeof(int));
    char *seen = malloc(size);
    MPI_Request *reqs = malloc(size * sizeof(MPI_Request));
    MPI_Status st;

    for (int r = 0; r < size; r++) {
        int tag = 100 + mode;
        memset(seen, 0, size);
        if (rank != r) {
            MPI_Request sreq;
            fill(sbuf, n, rank, r);
            if (mode == 1)      /* the receiver posts first */
                MPI_Barrier(MPI_COMM_WORLD);
            /* (nonblocking: a large message waits for the receive, which
             * in modes 2-4 comes after the barrier) */
            MPI_Isend(sbuf, n, MPI_INT, r, tag, MPI_COMM_WORLD, &sreq);
            if (mode != 1)
                MPI_Barrier(MPI_COMM_WORLD);
            MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        } else if (mode == 0 || mode == 2) {
            /* 0: blocking, as they come; 2: once all were sent (unexpected) */
            if (mode == 2)
                MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < size - 1; k++) {
                MPI_Recv(rbuf, n, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
                check_msg(&st, rbuf, n, r, seen, what);
            }
            if (mode == 0)
                MPI_Barrier(MPI_COMM_WORLD);
        } else if (mode == 1) {
            /* nonblocking, posted before any message is sent */
            for (int k = 0; k < size - 1; k++)
                MPI_Irecv(rbuf + (size_t) k * n, n, MPI_INT, MPI_ANY_SOURCE, tag,
                          MPI_COMM_WORLD, &reqs[k]);
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < size - 1; k++) {
                int idx;
                MPI_Waitany(size - 1, reqs, &idx, &st);
                check_msg(&st, rbuf + (size_t) idx * n, n, r, seen, what);
            }
        } else if (mode == 3) {
            /* probe, then receive from whom the probe found */
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < size - 1; k++) {
                MPI_Status pst;
                MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &pst);
                MPI_Recv(rbuf, n, MPI_INT, pst.MPI_SOURCE, tag, MPI_COMM_WORLD, &st);
                check_msg(&st, rbuf, n, r, seen, what);
            }
        } else if (mode == 4) {
            /* matched probe */
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < size - 1; k++) {
                MPI_Message msg;
                MPI_Mprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &msg, &st);
                MPI_Mrecv(rbuf, n, MPI_INT, &msg, &st);
                check_msg(&st, rbuf, n, r, seen, what);
            }
        } else if (mode == 5) {
            /* one persistent request, started for each message */
            MPI_Request preq;
            MPI_Recv_init(rbuf, n, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &preq);
            for (int k = 0; k < size - 1; k++) {
                MPI_Start(&preq);
                MPI_Wait(&preq, &st);
                check_msg(&st, rbuf, n, r, seen, what);
            }
            MPI_Request_free(&preq);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(sbuf);
    free(rbuf);
    free(seen);
    free(reqs);
}

int main(int argc, char **argv)
{
    static const char *modes[] = { "blocking", "posted first", "unexpected", "probe", "mprobe",
        "persistent"
    };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int rep = 0; rep < 20; rep++)
        for (int mode = 0; mode < 6; mode++) {
            char what[64];
            snprintf(what, sizeof(what), "%s, 3 ints", modes[mode]);
            round_robin(3, mode, what);
        }
    for (int mode = 0; mode < 6; mode++) {
        char what[64];
        snprintf(what, sizeof(what), "%s, 256 Ki ints", modes[mode]);
        round_robin(256 * 1024, mode, what);
    }

    /* a cancelled receive from any source completes, cancelled */
    {
        int x;
        MPI_Request req;
        MPI_Status st;
        int cancelled = 0;
        MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "a cancelled MPI_ANY_SOURCE receive was not cancelled");
    }

    /* (-truncate) a message longer than the receive: MPI_ERR_TRUNCATE,
     * not a hang */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size > 1 && argc > 1 && strcmp(argv[1], "-truncate") == 0) {
        int r = size - 1, two[2] = { 1, 2 }, one = 0;
        if (rank == 0)
            MPI_Send(two, 2, MPI_INT, r, 7, MPI_COMM_WORLD);
        else if (rank == r) {
            MPI_Status st;
            int rc = MPI_Recv(&one, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st), cls;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "a truncated receive returned class %d", cls);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int all;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf(" Found %d errors\n", all);
        else
            printf(" No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
