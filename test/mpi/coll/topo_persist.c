/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Persistent collectives started many times with new data each time.
 * MPI_*_init is called once; before every MPI_Start each process writes
 * data that depends on the start's number into its send buffer and poisons
 * its receive buffer; after MPI_Wait every received element is checked.  A
 * schedule that kept state from one run to the next, or read the buffers
 * when it was built, fails from the second start on.
 *
 * Covered: allgather (predefined type, a derived receive type freed right
 * after MPI_Allgather_init, IN_PLACE), bcast, reduce, gather and scatter at
 * every root, allreduce (and IN_PLACE), at several counts; two persistent
 * requests started alternately with a blocking collective between them;
 * inactive persistent requests (before their first start and after each
 * completion) in MPI_Wait, MPI_Test, MPI_Waitany, MPI_Testall and the like.
 * Run it with each algorithm forced (MPIR_CVAR_I<COLL>_INTRA_ALGORITHM) and
 * with the built-in tuning. */

#include "mpi.h"
#include "mpitest.h"
#include <stdio.h>
#include <stdlib.h>

#define POISON (-77)

static int errs = 0, rank, size, reps = 12;

/* the value element i of process r sends at start s */
static int val(int s, int r, int i)
{
    return (s * 131 + r * 17 + i * 3) % 100003;
}

static void check(const char *what, int count, int s, int i, int got, int want)
{
    if (got != want && errs++ < 10)
        fprintf(stderr, "[%d] %s count %d start %d: element %d is %d, expected %d\n",
                rank, what, count, s, i, got, want);
}

static void run_allgather(int count, int inplace, int derived)
{
    int *sbuf = malloc(count * sizeof(int)), *rbuf = malloc((size_t) size * count * sizeof(int));
    MPI_Datatype rtype = MPI_INT;
    int rcount = count;
    MPI_Request req;
    const char *what = derived ? "allgather (derived recvtype)" :
        inplace ? "allgather (IN_PLACE)" : "allgather";

    if (derived) {
        /* count ints as one element; count is even here */
        MPI_Type_contiguous(count / 2, MPI_INT, &rtype);
        MPI_Type_commit(&rtype);
        rcount = 2;
    }
    MPI_Allgather_init(inplace ? MPI_IN_PLACE : sbuf, count, MPI_INT, rbuf, rcount, rtype,
                       MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    if (derived)
        MPI_Type_free(&rtype);  /* the request keeps the type alive */
    for (int s = 0; s < reps; s++) {
        for (int i = 0; i < size * count; i++)
            rbuf[i] = POISON;
        for (int i = 0; i < count; i++)
            (inplace ? rbuf + rank * count : sbuf)[i] = val(s, rank, i);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                check(what, count, s, r * count + i, rbuf[r * count + i], val(s, r, i));
    }
    MPI_Request_free(&req);
    free(sbuf);
    free(rbuf);
}

static void run_bcast(int count, int root)
{
    int *buf = malloc(count * sizeof(int));
    MPI_Request req;

    MPI_Bcast_init(buf, count, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int s = 0; s < reps; s++) {
        for (int i = 0; i < count; i++)
            buf[i] = rank == root ? val(s, root, i) : POISON;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < count; i++)
            check("bcast", count, s, i, buf[i], val(s, root, i));
    }
    MPI_Request_free(&req);
    free(buf);
}

/* allreduce (root < 0) or reduce to root */
static void run_reduce(int count, int root, int inplace)
{
    int *sbuf = malloc(count * sizeof(int)), *rbuf = malloc(count * sizeof(int));
    int mine = root < 0 || rank == root;
    const void *send = inplace && mine ? MPI_IN_PLACE : sbuf;
    const char *what = root < 0 ? (inplace ? "allreduce (IN_PLACE)" : "allreduce") :
        (inplace ? "reduce (IN_PLACE at root)" : "reduce");
    MPI_Request req;

    if (root < 0)
        MPI_Allreduce_init(send, rbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &req);
    else
        MPI_Reduce_init(send, rbuf, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &req);
    for (int s = 0; s < reps; s++) {
        for (int i = 0; i < count; i++) {
            sbuf[i] = val(s, rank, i);
            rbuf[i] = inplace && mine ? sbuf[i] : POISON;
        }
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (!mine)
            continue;
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += val(s, r, i);
            check(what, count, s, i, rbuf[i], want);
        }
    }
    MPI_Request_free(&req);
    free(sbuf);
    free(rbuf);
}

static void run_gather(int count, int root, int inplace)
{
    int *sbuf = malloc(count * sizeof(int)), *rbuf = malloc((size_t) size * count * sizeof(int));
    int use_inplace = inplace && rank == root;
    MPI_Request req;

    MPI_Gather_init(use_inplace ? MPI_IN_PLACE : sbuf, count, MPI_INT, rbuf, count, MPI_INT,
                    root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int s = 0; s < reps; s++) {
        for (int i = 0; i < size * count; i++)
            rbuf[i] = POISON;
        for (int i = 0; i < count; i++)
            (use_inplace ? rbuf + rank * count : sbuf)[i] = val(s, rank, i);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank != root)
            continue;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                check(inplace ? "gather (IN_PLACE)" : "gather", count, s, r * count + i,
                      rbuf[r * count + i], val(s, r, i));
    }
    MPI_Request_free(&req);
    free(sbuf);
    free(rbuf);
}

static void run_scatter(int count, int root)
{
    int *sbuf = malloc((size_t) size * count * sizeof(int)), *rbuf = malloc(count * sizeof(int));
    MPI_Request req;

    MPI_Scatter_init(sbuf, count, MPI_INT, rbuf, count, MPI_INT, root, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &req);
    for (int s = 0; s < reps; s++) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                sbuf[r * count + i] = rank == root ? val(s, r, i) : POISON;
        for (int i = 0; i < count; i++)
            rbuf[i] = POISON;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < count; i++)
            check("scatter", count, s, i, rbuf[i], val(s, rank, i));
    }
    MPI_Request_free(&req);
    free(sbuf);
    free(rbuf);
}

/* an allgather and an allreduce request started alternately, a blocking
 * bcast between them: each run must see its own start's data */
static void run_alternating(int count)
{
    int *ag_s = malloc(count * sizeof(int)), *ag_r = malloc((size_t) size * count * sizeof(int));
    int *ar_s = malloc(count * sizeof(int)), *ar_r = malloc(count * sizeof(int));
    MPI_Request req[2];

    MPI_Allgather_init(ag_s, count, MPI_INT, ag_r, count, MPI_INT, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &req[0]);
    MPI_Allreduce_init(ar_s, ar_r, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL,
                       &req[1]);
    for (int s = 0; s < reps; s++) {
        int token = rank == 0 ? s : -1;
        for (int i = 0; i < count; i++) {
            ag_s[i] = val(s, rank, i);
            ar_s[i] = val(s + 1, rank, i);
        }
        for (int i = 0; i < size * count; i++)
            ag_r[i] = POISON;
        MPI_Start(&req[s % 2]);
        MPI_Wait(&req[s % 2], MPI_STATUS_IGNORE);
        MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
        check("bcast between persistent starts", 1, s, 0, token, s);
        if (s % 2 == 0) {
            for (int r = 0; r < size; r++)
                for (int i = 0; i < count; i++)
                    check("alternating allgather", count, s, r * count + i,
                          ag_r[r * count + i], val(s, r, i));
        } else {
            for (int i = 0; i < count; i++) {
                int want = val(s + 1, 0, i);
                for (int r = 1; r < size; r++)
                    want = want > val(s + 1, r, i) ? want : val(s + 1, r, i);
                check("alternating allreduce", count, s, i, ar_r[i], want);
            }
        }
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    free(ag_s);
    free(ag_r);
    free(ar_s);
    free(ar_r);
}

/* The other persistent collectives (MPICH's schedules only), started
 * reps times with new data: allgatherv and gatherv/scatterv with counts
 * that differ per process, alltoall (and IN_PLACE), alltoallv,
 * reduce_scatter_block, reduce_scatter with uneven counts, scan, exscan,
 * barrier.  MPICH's own p_* tests start them with the same data each
 * time, which a schedule that read the buffers at init passes. */
static void run_others(int count)
{
    int n = (count + 2) * size + size * (size + 1) / 2;        /* room for any layout */
    int *sb = malloc(n * sizeof(int)), *rb = malloc(n * sizeof(int));
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    int root = size - 1;
    MPI_Request req[10];
    const char *names[10] = { "allgatherv", "gatherv", "scatterv", "alltoall",
        "alltoall (IN_PLACE)", "alltoallv", "reduce_scatter_block", "reduce_scatter",
        "scan", "exscan"
    };
    int nreq = 10;

    /* process r contributes count + r elements (allgatherv, gatherv,
     * scatterv, reduce_scatter's block of r) */
    for (int r = 0, d = 0; r < size; d += count + r, r++) {
        rc[r] = count + r;
        rd[r] = d;
    }
    for (int k = 0; k < nreq; k++)
        req[k] = MPI_REQUEST_NULL;
    for (int k = 0; k < nreq; k++) {
        for (int s = 0; s < reps; s++) {
            int *a = sb, *b = rb;
            for (int i = 0; i < n; i++) {
                a[i] = val(s, rank, i);
                b[i] = POISON;
            }
            if (s == 0) {
                switch (k) {
                    case 0:
                        MPI_Allgatherv_init(a, count + rank, MPI_INT, b, rc, rd, MPI_INT,
                                            MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
                        break;
                    case 1:
                        MPI_Gatherv_init(a, count + rank, MPI_INT, b, rc, rd, MPI_INT, root,
                                         MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
                        break;
                    case 2:
                        MPI_Scatterv_init(a, rc, rd, MPI_INT, b, count + rank, MPI_INT, root,
                                          MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
                        break;
                    case 3:
                        MPI_Alltoall_init(a, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &req[k]);
                        break;
                    case 4:
                        MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, count, MPI_INT,
                                          MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
                        break;
                    case 5:
                        /* I send count + (rank + r) % 3 to r, at r * (count + 2),
                         * and receive as many from r there: the same arrays */
                        for (int r = 0; r < size; r++) {
                            sc[r] = count + (rank + r) % 3;
                            sd[r] = r * (count + 2);
                        }
                        MPI_Alltoallv_init(a, sc, sd, MPI_INT, b, sc, sd, MPI_INT,
                                           MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
                        break;
                    case 6:
                        MPI_Reduce_scatter_block_init(a, b, count, MPI_INT, MPI_SUM,
                                                      MPI_COMM_WORLD, MPI_INFO_NULL, &req[k]);
                        break;
                    case 7:
                        MPI_Reduce_scatter_init(a, b, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                                MPI_INFO_NULL, &req[k]);
                        break;
                    case 8:
                        MPI_Scan_init(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                      MPI_INFO_NULL, &req[k]);
                        break;
                    case 9:
                        MPI_Exscan_init(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                        MPI_INFO_NULL, &req[k]);
                        break;
                }
            }
            if (k == 4)
                for (int i = 0; i < size * count; i++)
                    b[i] = val(s, rank, i);
            MPI_Start(&req[k]);
            MPI_Wait(&req[k], MPI_STATUS_IGNORE);
            /* expected: element i of what process r sent me is val(s, r, at),
             * at its offset in r's send buffer */
            switch (k) {
                case 0:
                    for (int r = 0; r < size; r++)
                        for (int i = 0; i < rc[r]; i++)
                            check(names[k], count, s, rd[r] + i, b[rd[r] + i], val(s, r, i));
                    break;
                case 1:
                    if (rank == root)
                        for (int r = 0; r < size; r++)
                            for (int i = 0; i < rc[r]; i++)
                                check(names[k], count, s, rd[r] + i, b[rd[r] + i],
                                      val(s, r, i));
                    break;
                case 2:
                    for (int i = 0; i < count + rank; i++)
                        check(names[k], count, s, i, b[i], val(s, root, rd[rank] + i));
                    break;
                case 3:
                case 4:
                    for (int r = 0; r < size; r++)
                        for (int i = 0; i < count; i++)
                            check(names[k], count, s, r * count + i, b[r * count + i],
                                  val(s, r, rank * count + i));
                    break;
                case 5:
                    for (int r = 0; r < size; r++)
                        for (int i = 0; i < count + (r + rank) % 3; i++)
                            check(names[k], count, s, r * (count + 2) + i,
                                  b[r * (count + 2) + i], val(s, r, rank * (count + 2) + i));
                    break;
                case 6:
                case 7:
                    for (int i = 0; i < (k == 6 ? count : rc[rank]); i++) {
                        int at = (k == 6 ? rank * count : rd[rank]) + i, want = 0;
                        for (int r = 0; r < size; r++)
                            want += val(s, r, at);
                        check(names[k], count, s, i, b[i], want);
                    }
                    break;
                case 8:
                case 9:
                    for (int i = 0; i < count && (k == 8 || rank > 0); i++) {
                        int want = 0;
                        for (int r = 0; r < (k == 8 ? rank + 1 : rank); r++)
                            want += val(s, r, i);
                        check(names[k], count, s, i, b[i], want);
                    }
                    break;
            }
        }
    }
    for (int k = 0; k < nreq; k++)
        MPI_Request_free(&req[k]);
    {
        MPI_Request bar;
        MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar);
        for (int s = 0; s < reps; s++) {
            MPI_Start(&bar);
            MPI_Wait(&bar, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&bar);
    }
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* An inactive persistent collective request in the completion calls that
 * take arrays: MPI treats it as MPI_REQUEST_NULL there (MPI 4.0, 3.7.3).
 * Each round starts the persistent allgather and an MPI_Iallreduce, and
 * completes both by one of MPI_Waitany, MPI_Testany, MPI_Waitsome,
 * MPI_Testsome or MPI_Testall, which must report each once and the
 * finished persistent request never again: MPICH 4.0.2 counted it as
 * active, so MPI_Waitany returned it twice and the reduction's result was
 * read before it was done, and MPI_Testall failed with an internal error. */
static void run_completion(int count)
{
    int *ag_s = malloc(count * sizeof(int)), *ag_r = malloc((size_t) size * count * sizeof(int));
    int *ar_s = malloc(count * sizeof(int)), *ar_r = malloc(count * sizeof(int));
    int idx[2], rc;
    MPI_Request req[2];
    MPI_Status st[2];
    static const char *names[] = { "MPI_Waitany", "MPI_Testany", "MPI_Waitsome",
        "MPI_Testsome", "MPI_Testall"
    };

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Allgather_init(ag_s, count, MPI_INT, ag_r, count, MPI_INT, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &req[0]);
    /* not started yet: inactive, so every completion call returns at once
     * (MPICH 4.0.2 created it incomplete, and MPI_Wait never returned) */
    {
        int flag = 0, rflag = 0;
        MPI_Request_get_status(req[0], &flag, &st[0]);
        MPI_Test(&req[0], &rflag, &st[0]);
        if ((!flag || !rflag) && errs++ < 10)
            fprintf(stderr, "[%d] a persistent request not yet started: "
                    "MPI_Request_get_status flag %d, MPI_Test flag %d (want 1, 1)\n",
                    rank, flag, rflag);
        if (flag && rflag) {
            MPI_Wait(&req[0], &st[0]);
            MPI_Waitall(1, req, st);
        }
    }
    for (int s = 0; s < 2 * 5; s++) {
        const char *how = names[s % 5];
        int done[2] = { 0, 0 }, n = 0, flag = 0;

        for (int i = 0; i < count; i++) {
            ag_s[i] = val(s, rank, i);
            ar_s[i] = val(s + 1, rank, i);
            ar_r[i] = POISON;
        }
        for (int i = 0; i < size * count; i++)
            ag_r[i] = POISON;
        /* odd rounds first complete the persistent request alone, so that
         * the array holds it inactive while the reduction runs */
        MPI_Start(&req[0]);
        if (s % 2) {
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            done[0] = 1;
        }
        MPI_Iallreduce(ar_s, ar_r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
        for (int tries = 0; !(done[0] && done[1]); tries++) {
            rc = MPI_SUCCESS;
            n = 0;
            switch (s % 5) {
                case 0:
                    rc = MPI_Waitany(2, req, &idx[0], &st[0]);
                    n = idx[0] == MPI_UNDEFINED ? -1 : 1;
                    break;
                case 1:
                    rc = MPI_Testany(2, req, &idx[0], &flag, &st[0]);
                    n = !flag ? 0 : idx[0] == MPI_UNDEFINED ? -1 : 1;
                    break;
                case 2:
                    rc = MPI_Waitsome(2, req, &n, idx, st);
                    n = n == MPI_UNDEFINED ? -1 : n;
                    break;
                case 3:
                    rc = MPI_Testsome(2, req, &n, idx, st);
                    n = n == MPI_UNDEFINED ? -1 : n;
                    break;
                case 4:
                    rc = MPI_Testall(2, req, &flag, st);
                    n = 0;
                    if (flag && rc == MPI_SUCCESS)
                        for (int i = 0; i < 2; i++)
                            if (!done[i])
                                idx[n++] = i;
                    break;
            }
            if (rc != MPI_SUCCESS || n < 0 || tries > 100000000) {
                char msg[MPI_MAX_ERROR_STRING] = "";
                int len;
                if (rc != MPI_SUCCESS)
                    MPI_Error_string(rc, msg, &len);
                if (errs++ < 10)
                    fprintf(stderr, "[%d] %s round %d: %s with %s still active\n", rank, how,
                            s, rc != MPI_SUCCESS ? msg : n < 0 ? "nothing active" :
                            "no completion", !done[1] ? "the iallreduce" : "the allgather");
                break;
            }
            for (int k = 0; k < n; k++) {
                if (done[idx[k]]) {
                    if (errs++ < 10)
                        fprintf(stderr, "[%d] %s round %d: request %d reported complete again\n",
                                rank, how, s, idx[k]);
                    n = -1;
                }
                done[idx[k]] = 1;
            }
            if (n < 0)
                break;
        }
        if (!(done[0] && done[1])) {
            /* finish so that the next round and the other processes go on */
            MPI_Waitall(2, req, st);
            continue;
        }
        /* everything is inactive or null now */
        rc = MPI_Waitany(2, req, &idx[0], MPI_STATUS_IGNORE);
        if ((rc != MPI_SUCCESS || idx[0] != MPI_UNDEFINED) && errs++ < 10)
            fprintf(stderr, "[%d] %s round %d: MPI_Waitany on nothing active gave index %d\n",
                    rank, how, s, idx[0]);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                check(how, count, s, r * count + i, ag_r[r * count + i], val(s, r, i));
        for (int i = 0; i < count; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += val(s + 1, r, i);
            check(how, count, s, i, ar_r[i], want);
        }
    }
    MPI_Request_free(&req[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(ag_s);
    free(ag_r);
    free(ar_s);
    free(ar_r);
}

int main(int argc, char **argv)
{
    /* 1-8 ints are where MPICH picks its short-message schedules; 300 ints
     * (1200 B) is above MPIR_CVAR_GATHER_VSMALL_MSG_SIZE */
    const int counts[] = { 1, 2, 8, 300, 4096 };

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++)
        if (sscanf(argv[a], "-reps=%d", &reps) == 1 && reps < 2)
            reps = 2;

    for (int c = 0; c < (int) (sizeof(counts) / sizeof(counts[0])); c++) {
        int count = counts[c];
        run_allgather(count, 0, 0);
        run_allgather(count, 1, 0);
        if (count % 2 == 0)
            run_allgather(count, 0, 1);
        run_reduce(count, -1, 0);
        run_reduce(count, -1, 1);
        for (int root = 0; root < size; root++) {
            run_bcast(count, root);
            run_reduce(count, root, root % 2);
            run_gather(count, root, root % 2);
            run_scatter(count, root);
        }
        run_alternating(count);
        run_completion(count);
        run_others(count);
    }

    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
