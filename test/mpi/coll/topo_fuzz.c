/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Random sequences of collectives on three communicators at once (world,
 * its ranks shuffled, reversed), the same sequence on every process (one
 * shared seed), with each process now and then sleeping or yielding on its
 * own (another seed per process), so that processes run ahead of each
 * other by different amounts every time.  Most calls are small (the cells
 * of small calls within a node, which fast processes reuse while slow ones
 * may still read them), some up to 16 KiB, a few up to 280 KiB.  Kinds:
 * allreduce (int sum, double max, in place, MINLOC on MPI_2INT), reduce
 * (any root, in place at the root), bcast (any root; odd ranks receive into
 * a strided vector whose holes must stay untouched), allgather (also in
 * place), barrier, an iallreduce and an iallgather in flight together, an
 * ibcast in flight across a blocking bcast on the next communicator, and a
 * persistent allreduce started with a blocking allreduce on the same
 * communicator before its wait.  Now and then (-churn=N: about one call in
 * N, 400 by default, 0 never) the shuffled or the reversed communicator
 * is freed, before or after its persistent request, and made again:
 * shuffled anew, reversed, or split in two by rank parity, so that engines
 * are set up and torn down while other processes may still be in their
 * last calls.  Every result is checked.  -iters=N (default 3000) and
 * -seed=S (default 1).  Run with any algorithm forced or none. */

#include "mpi.h"
#include "mpitest.h"
#include "topo_test_util.h"
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXN 70000      /* ints per process, at most */
#define PN 64           /* the persistent allreduce's count */
#define NCOMMS 3

static int errs = 0;
static unsigned long long shared_state, own_state;

static unsigned next(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned) (*s >> 33);
}

/* process r's element i in call it */
static int val(int r, int i, int it)
{
    return (r * 131 + i * 7 + it * 13) % 1000;
}

static void fail(int rank, const char *comm, int it, const char *what, int n, int root, int at,
                 long got, long want)
{
    if (errs < 10)
        fprintf(stderr, "[%d] %s call %d: %s n %d root %d: element %d is %ld, expected %ld\n",
                rank, comm, it, what, n, root, at, got, want);
    errs++;
}

/* communicator k (1 or 2) made anew, the gen-th time */
static MPI_Comm remake(int k, unsigned shape, int gen)
{
    int wrank, wsize;
    MPI_Comm comm;

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (shape == 0)
        return topo_test_shuffled(MPI_COMM_WORLD, 77 + 31 * gen + k);
    if (shape == 1)
        MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comm);
    else
        MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, (wrank * 7 + gen) % wsize, &comm);
    return comm;
}

/* sum over the communicator's ranks (in comm order) of val */
static long sum_of(MPI_Comm comm, int i, int it)
{
    int size;
    long w = 0;
    MPI_Comm_size(comm, &size);
    for (int r = 0; r < size; r++)
        w += val(r, i, it);
    return w;
}

/* out[0..n) against the sums of call it on comm */
static void check_sums(const int *out, int n, MPI_Comm comm, int wrank, const char *cname, int it,
                       const char *what)
{
    for (int i = 0; i < n; i++)
        if (out[i] != sum_of(comm, i, it)) {
            fail(wrank, cname, it, what, n, -1, i, out[i], sum_of(comm, i, it));
            return;
        }
}

int main(int argc, char **argv)
{
    char names[NCOMMS][40] = { "world", "shuffled", "reversed" };
    MPI_Comm comms[NCOMMS];
    MPI_Request preq[NCOMMS];
    int wrank, wsize, iters, seed, churn, gen = 0;

    MTest_Init(&argc, &argv);
    MTestArgList *head = MTestArgListCreate(argc, argv);
    iters = MTestArgListGetInt_with_default(head, "iters", 3000);
    seed = MTestArgListGetInt_with_default(head, "seed", 1);
    churn = MTestArgListGetInt_with_default(head, "churn", 400);
    MTestArgListDestroy(head);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    comms[0] = MPI_COMM_WORLD;
    comms[1] = topo_test_shuffled(MPI_COMM_WORLD, 77 + seed);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[2]);

    int *in = malloc(MAXN * sizeof(int)), *in2 = malloc(MAXN * sizeof(int));
    int *out = malloc((size_t) MAXN * 2 * wsize * sizeof(int));
    int *out2 = malloc((size_t) MAXN * wsize * sizeof(int));
    double *din = malloc(MAXN * sizeof(double)), *dout = malloc(MAXN * sizeof(double));
    int pin[NCOMMS][PN], pout[NCOMMS][PN];
    for (int c = 0; c < NCOMMS; c++)
        MPI_Allreduce_init(pin[c], pout[c], PN, MPI_INT, MPI_SUM, comms[c], MPI_INFO_NULL,
                           &preq[c]);

    shared_state = 1000003ULL * seed;
    own_state = 7919ULL * seed + 104729ULL * wrank;
    for (int it = 0; it < iters; it++) {
        if (churn > 0 && next(&shared_state) % churn == 0) {
            int k = 1 + next(&shared_state) % 2;
            unsigned shape = next(&shared_state) % 3;
            /* an inactive persistent request keeps its communicator: either
             * order is allowed */
            if (next(&shared_state) % 2) {
                MPI_Comm_free(&comms[k]);
                MPI_Request_free(&preq[k]);
            } else {
                MPI_Request_free(&preq[k]);
                MPI_Comm_free(&comms[k]);
            }
            comms[k] = remake(k, shape, ++gen);
            snprintf(names[k], sizeof(names[k]), "%s (made at call %d)",
                     shape == 0 ? "shuffled" : shape == 1 ? "reversed" : "parity half", it);
            MPI_Allreduce_init(pin[k], pout[k], PN, MPI_INT, MPI_SUM, comms[k], MPI_INFO_NULL,
                               &preq[k]);
        }
        int c = next(&shared_state) % NCOMMS, kind = next(&shared_state) % 14;
        unsigned sz = next(&shared_state) % 100;
        int n = sz < 85 ? 1 + next(&shared_state) % 256 :
            sz < 98 ? 1 + next(&shared_state) % 4096 : 1 + next(&shared_state) % MAXN;
        MPI_Comm comm = comms[c];
        unsigned raw_root = next(&shared_state);
        int rank, size, root;
        unsigned skew = next(&own_state) % 1000;

        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        root = raw_root % size;
        /* allgather: size x n ints, up to 40000 bytes a process (on 2-3
         * processes one round, copied out as it is copied in) */
        if (kind >= 7 && kind <= 9)
            n = n > 10000 ? 10000 : n;
        if (skew < 3)
            usleep(300);
        else if (skew < 40)
            sched_yield();
        for (int i = 0; i < n; i++)
            in[i] = val(rank, i, it);
        for (size_t i = 0; i < (size_t) n * 2 * size; i++)
            out[i] = -1;

        switch (kind) {
            case 0:
                MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
                check_sums(out, n, comm, wrank, names[c], it, "allreduce");
                break;
            case 1:
                memcpy(out, in, n * sizeof(int));
                MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm);
                check_sums(out, n, comm, wrank, names[c], it, "allreduce in place");
                break;
            case 2:{
                    for (int i = 0; i < n; i++)
                        din[i] = val(rank, i, it) + 0.5;
                    MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_MAX, comm);
                    for (int i = 0; i < n; i++) {
                        double w = 0;
                        for (int r = 0; r < size; r++)
                            w = val(r, i, it) + 0.5 > w ? val(r, i, it) + 0.5 : w;
                        if (dout[i] != w) {
                            fail(wrank, names[c], it, "allreduce double max", n, -1, i,
                                 (long) dout[i], (long) w);
                            break;
                        }
                    }
                    break;
                }
            case 3:
            case 4:
                if (kind == 4 && rank == root) {
                    memcpy(out, in, n * sizeof(int));
                    MPI_Reduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, root, comm);
                } else
                    MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, comm);
                for (int i = 0; i < n; i++) {
                    long w = rank == root ? sum_of(comm, i, it) : -1;
                    if (out[i] != w) {
                        fail(wrank, names[c], it, "reduce", n, root, i, out[i], w);
                        break;
                    }
                }
                break;
            case 5:
            case 6:
                if (rank == root)
                    MPI_Bcast(in, n, MPI_INT, root, comm);
                else if (kind == 5 || rank % 2 == 0)
                    MPI_Bcast(out, n, MPI_INT, root, comm);
                else {
                    /* the same signature in every other int */
                    MPI_Datatype vec;
                    MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
                    MPI_Type_commit(&vec);
                    MPI_Bcast(out, 1, vec, root, comm);
                    MPI_Type_free(&vec);
                }
                if (rank == root)
                    break;
                for (int i = 0; i < n; i++) {
                    int strided = kind == 6 && rank % 2;
                    int got = out[strided ? 2 * i : i];
                    if (got != val(root, i, it) || (strided && out[2 * i + 1] != -1)) {
                        fail(wrank, names[c], it, strided ? "bcast into a vector" : "bcast", n,
                             root, i, strided && got == val(root, i, it) ? out[2 * i + 1] : got,
                             strided && got == val(root, i, it) ? -1 : val(root, i, it));
                        break;
                    }
                }
                break;
            case 7:
            case 8:
                if (kind == 8) {
                    memcpy(out + (size_t) rank * n, in, n * sizeof(int));
                    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, n, MPI_INT, comm);
                } else
                    MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++)
                        if (out[(size_t) r * n + i] != val(r, i, it)) {
                            fail(wrank, names[c], it, "allgather", n, r, i,
                                 out[(size_t) r * n + i], val(r, i, it));
                            r = size;
                            break;
                        }
                break;
            case 9:{
                    /* two nonblocking calls in flight together */
                    MPI_Request rq[2];
                    for (int i = 0; i < n; i++)
                        in2[i] = val(rank, i, it + 1);
                    MPI_Iallreduce(in, out, n, MPI_INT, MPI_SUM, comm, &rq[0]);
                    MPI_Iallgather(in2, n, MPI_INT, out2, n, MPI_INT, comm, &rq[1]);
                    if (skew % 2)
                        usleep(20);
                    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
                    check_sums(out, n, comm, wrank, names[c], it, "iallreduce");
                    for (int r = 0; r < size; r++)
                        for (int i = 0; i < n; i++)
                            if (out2[(size_t) r * n + i] != val(r, i, it + 1)) {
                                fail(wrank, names[c], it, "iallgather", n, r, i,
                                     out2[(size_t) r * n + i], val(r, i, it + 1));
                                r = size;
                                break;
                            }
                    break;
                }
            case 10:
                /* started, then a blocking call on the same communicator,
                 * then completed */
                for (int i = 0; i < PN; i++)
                    pin[c][i] = val(rank, i, it);
                MPI_Start(&preq[c]);
                MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
                MPI_Wait(&preq[c], MPI_STATUS_IGNORE);
                check_sums(pout[c], PN, comm, wrank, names[c], it, "persistent allreduce");
                check_sums(out, n, comm, wrank, names[c], it,
                           "allreduce beside a persistent one");
                break;
            case 11:{
                    /* a pair type: the lowest value and the lowest rank holding it */
                    int (*pin2)[2] = (int (*)[2]) in2, (*pout2)[2] = (int (*)[2]) out2;
                    n = n > MAXN / 2 ? MAXN / 2 : n;
                    for (int i = 0; i < n; i++) {
                        pin2[i][0] = val(rank, i, it) % 7;
                        pin2[i][1] = rank;
                    }
                    MPI_Allreduce(pin2, pout2, n, MPI_2INT, MPI_MINLOC, comm);
                    for (int i = 0; i < n; i++) {
                        int lo = 7, at = -1;
                        for (int r = 0; r < size; r++)
                            if (val(r, i, it) % 7 < lo) {
                                lo = val(r, i, it) % 7;
                                at = r;
                            }
                        if (pout2[i][0] != lo || pout2[i][1] != at) {
                            fail(wrank, names[c], it, "allreduce MINLOC (value, rank)", n, -1, i,
                                 pout2[i][0] * 1000L + pout2[i][1], lo * 1000L + at);
                            break;
                        }
                    }
                    break;
                }
            case 12:{
                    /* in flight across a blocking bcast on another communicator */
                    MPI_Comm other = comms[(c + 1) % NCOMMS];
                    int orank, osize, oroot;
                    MPI_Request rq;
                    MPI_Comm_rank(other, &orank);
                    MPI_Comm_size(other, &osize);
                    oroot = raw_root % osize;
                    if (rank == root)
                        memcpy(out, in, n * sizeof(int));
                    MPI_Ibcast(out, n, MPI_INT, root, comm, &rq);
                    for (int i = 0; i < n; i++)
                        in2[i] = orank == oroot ? val(oroot, i, it + 7) : -1;
                    MPI_Bcast(in2, n, MPI_INT, oroot, other);
                    MPI_Wait(&rq, MPI_STATUS_IGNORE);
                    for (int i = 0; i < n; i++)
                        if (out[i] != val(root, i, it) || in2[i] != val(oroot, i, it + 7)) {
                            fail(wrank, names[c], it, "ibcast across a bcast elsewhere", n, root,
                                 i, out[i] != val(root, i, it) ? out[i] : in2[i],
                                 out[i] != val(root, i, it) ? val(root, i, it) :
                                 val(oroot, i, it + 7));
                            break;
                        }
                    break;
                }
            default:
                MPI_Barrier(comm);
                break;
        }
    }

    for (int c = 0; c < NCOMMS; c++)
        MPI_Request_free(&preq[c]);
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    free(in);
    free(in2);
    free(out);
    free(out2);
    free(din);
    free(dout);
    MTest_Finalize(errs);
    return MTestReturnValue(errs);
}
