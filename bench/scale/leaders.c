/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* One node leader per simulated process (SimGrid SMPI): the network step
 * of the engine's collectives among the leaders of N nodes, sent with
 * point-to-point calls as src/mpid/ch4/shm/topo/ sends them, with the
 * node's shared-memory phases as delays.
 *
 *   smpirun ... leaders ALGO BYTES PPN COPY_GBS [RED_GBS [CHUNK [K]]]
 *     ALGO      pingpong  one way between the first and the last node (the
 *                         platform's latency and bandwidth as the model
 *                         sees them)
 *               allgather topo_pipeline:
 *               ring      portion s arrives at step s and is copied out by
 *                         the node's processes while step s+1 runs
 *               logstep   Bruck, or recursive doubling on a power of two:
 *                         ceil(log2 N) steps, the copy-out after the last
 *               bcast topo_pipeline from the first node (BYTES in all):
 *               chain     the nodes in a line, CHUNK bytes at a time; each
 *                         leader forwards a chunk as it arrives
 *               binomial  a binomial tree of nodes, in messages of at most
 *                         CHUNK (the slot), each forwarded as it arrives,
 *                         as the engine does: to one child after the other
 *                         where a leader has at most as many chunks as the
 *                         tree has levels, else to all children at once
 *               binomial_all  always to all children at once (the engine
 *                         before it sent one child after the other)
 *               binomial_seq  always to one child after the other (MPICH's
 *                         binomial tree sends so)
 *               the leaders' step of allreduce (BYTES in all), without the
 *               node's phases (report.py adds them):
 *               doubling  recursive doubling: log2 N exchanges of BYTES,
 *                         each followed by a reduction of BYTES
 *               split     reduce-scatter by recursive halving, then
 *                         allgather by recursive doubling
 *     BYTES     per process (allgather; a node portion is PPN x BYTES) or
 *               in all (bcast, allreduce)
 *     COPY_GBS  one process's memory copy rate, GB/s: copies within a node
 *               are delays of bytes / rate
 *     RED_GBS   one process's reduction rate, GB/s (default COPY_GBS / 2)
 *     CHUNK     bcast's chunk or slot, bytes (default 131072)
 *     K         leaders per node (default 1), for the allreduce steps: K
 *               processes per host (the platform's hosts have K cores,
 *               the host file names each node K times), leader g of each
 *               node steps among the nodes' leaders g, all K at once
 *               through the node's one link
 *
 * Prints, on every process, "ALGO,N,PPN,BYTES,seconds": the time from the
 * start to its node's last copy-out; the slowest is the largest (read by
 * run.sh and colls.py: with the copy callback below, an MPI_Reduce of the
 * times would carry no data).
 * SMPI moves no data (a copy callback that does nothing, one small buffer
 * for every message): only the simulated times count, and a simulation of
 * 4,096 nodes fits in memory.  Node counts are powers of two. */

#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void no_copy(smx_activity_t comm, void *buf, size_t size)
{
    (void) comm, (void) buf, (void) size;
}

/* the leaders that step together: every process, or with K leaders per
 * node those of one group */
static MPI_Comm lcomm;

/* bytes to "to" and from "from", in messages of at most 1 GiB (the
 * counts are ints; one latency more per GiB is lost in such a message) */
static void exchange(char *buf, long long bytes, int to, int from)
{
    do {
        int c = bytes > (1LL << 30) ? 1 << 30 : (int) bytes;
        MPI_Sendrecv(buf, c, MPI_BYTE, to, 0, buf, c, MPI_BYTE, from, 0, lcomm,
                     MPI_STATUS_IGNORE);
        bytes -= c;
    } while (bytes > 0);
}

/* one message of bytes to (send) or from (!send) peer */
static void exchange_one(char *buf, long long bytes, int peer, int send)
{
    int c = bytes > (1LL << 30) ? 1 << 30 : (int) bytes;
    if (send)
        MPI_Send(buf, c, MPI_BYTE, peer, 2, lcomm);
    else
        MPI_Recv(buf, c, MPI_BYTE, peer, 2, lcomm, MPI_STATUS_IGNORE);
}

/* the node's processes copy c bytes out once they have arrived (at now)
 * and the previous copy-out is done: returns when this one is */
static double copy_out(double free_at, double now, double c, double rate)
{
    return (free_at > now ? free_at : now) + c / rate;
}

/* bcast among the leaders, the first node's the root: returns when this
 * node's processes have copied the last chunk out */
static double bcast(char *buf, const char *algo, long long m, long long chunk, double rate,
                    int rank, int n)
{
    long long nchunks = (m + chunk - 1) / chunk;
    int parent = -1, children[64], nchildren = 0;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t) (nchunks * 64 + 1));
    int nreqs = 0, seq = strcmp(algo, "binomial_seq") == 0;
    int engine = strcmp(algo, "binomial") == 0;
    double free_at = 0;

    if (strcmp(algo, "chain") == 0) {
        if (rank > 0)
            parent = rank - 1;
        if (rank < n - 1)
            children[nchildren++] = rank + 1;
    } else {
        int mask = 1;
        while (mask < n) {
            if (rank & mask) {
                parent = rank - mask;
                break;
            }
            mask <<= 1;
        }
        for (mask >>= 1; mask > 0; mask >>= 1)
            if (rank + mask < n)
                children[nchildren++] = rank + mask;
        if (engine) {   /* the tree's depth: the root's children */
            int depth = 0;
            while ((1 << depth) < n)
                depth++;
            seq = nchunks <= depth;
        }
    }
    MPI_Request rreq = MPI_REQUEST_NULL;

    /* a chunk's receive is posted while the one before it is forwarded,
     * as the engine posts it ahead with one leader per node */
    if (parent >= 0)
        MPI_Irecv(buf, (int) (chunk < m ? chunk : m), MPI_BYTE, parent, 3, lcomm, &rreq);
    for (long long i = 0; i < nchunks; i++) {
        long long c = i + 1 < nchunks ? chunk : m - i * chunk;
        if (parent < 0) {
            smpi_execute((double) c / rate);    /* the root copies it into the slot */
        } else {
            long long next = i + 2 < nchunks ? chunk : m - (i + 1) * chunk;
            MPI_Wait(&rreq, MPI_STATUS_IGNORE);
            if (i + 1 < nchunks)
                MPI_Irecv(buf, (int) next, MPI_BYTE, parent, 3, lcomm, &rreq);
        }
        for (int k = 0; k < nchildren; k++) {
            MPI_Isend(buf, (int) c, MPI_BYTE, children[k], 3, lcomm, &reqs[nreqs++]);
            if (seq)    /* one child after the other, the largest subtree first */
                MPI_Wait(&reqs[nreqs - 1], MPI_STATUS_IGNORE);
        }
        free_at = copy_out(free_at, MPI_Wtime(), (double) c, rate);
    }
    MPI_Waitall(nreqs, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    return free_at;
}

/* the leaders' step of an allreduce of c bytes: returns when it is done */
static double allreduce_step(char *buf, const char *algo, long long c, double red, int rank,
                             int n)
{
    if (strcmp(algo, "doubling") == 0) {
        for (int mask = 1; mask < n; mask <<= 1) {
            exchange(buf, c, rank ^ mask, rank ^ mask);
            smpi_execute((double) c / red);
        }
    } else {
        /* recursive halving: the half kept is reduced; then doubling */
        long long part = c;
        for (int mask = n / 2; mask >= 1; mask /= 2) {
            part = (part + 1) / 2;
            exchange(buf, part, rank ^ mask, rank ^ mask);
            smpi_execute((double) part / red);
        }
        for (int mask = 1; mask < n; mask <<= 1) {
            exchange(buf, part, rank ^ mask, rank ^ mask);
            part *= 2;
        }
    }
    return MPI_Wtime();
}

int main(int argc, char **argv)
{
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: leaders pingpong|ring|logstep|chain|binomial|binomial_all|binomial_seq|doubling|split "
                    "BYTES PPN COPY_GBS [RED_GBS [CHUNK [K]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int k = argc > 7 ? atoi(argv[7]) : 1;
    MPI_Comm_split(MPI_COMM_WORLD, k > 1 ? rank % k : 0, rank, &lcomm);
    /* (after the split, which needs its data moved) */
    smpi_comm_set_copy_data_callback(&no_copy);
    MPI_Comm_rank(lcomm, &rank);
    MPI_Comm_size(lcomm, &n);
    const char *algo = argv[1];
    long long m = atoll(argv[2]);
    int ppn = atoi(argv[3]);
    double rate = atof(argv[4]) * 1e9;
    double red = argc > 5 ? atof(argv[5]) * 1e9 : rate / 2;
    long long chunk = argc > 6 ? atoll(argv[6]) : 131072;
    long long g = m * ppn;      /* a node portion */
    /* (eager messages are read from it: room for SMPI's eager limit) */
    char *buf = calloc(1, 1 << 20);
    double copy_portion = (double) g / rate;    /* every process copies each portion */
    double t0, done;

    if (strcmp(algo, "pingpong") == 0) {
        /* the platform's own constants: one way between the first and the
         * last node (the farthest in the fat tree), BYTES per message */
        int peer = n - 1, reps = 10;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = 0; i < reps && n > 1; i++) {
            if (rank == 0) {
                exchange_one(buf, m, peer, 1);
                exchange_one(buf, m, peer, 0);
            } else if (rank == peer) {
                exchange_one(buf, m, 0, 0);
                exchange_one(buf, m, 0, 1);
            }
        }
        if (rank == 0)
            printf("pingpong,%d,%d,%lld,%.9f\n", n, ppn, m, (MPI_Wtime() - t0) / (2 * reps));
        free(buf);
        MPI_Finalize();
        return 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (strcmp(algo, "chain") == 0 || strcmp(algo, "binomial") == 0 ||
        strcmp(algo, "binomial_all") == 0 || strcmp(algo, "binomial_seq") == 0) {
        done = bcast(buf, algo, m, chunk, rate, rank, n);
    } else if (strcmp(algo, "doubling") == 0 || strcmp(algo, "split") == 0) {
        done = allreduce_step(buf, algo, m, red, rank, n);
    } else if (strcmp(algo, "ring") == 0) {
        int left = (rank - 1 + n) % n, right = (rank + 1) % n;
        double free_at;
        smpi_execute((double) m / rate);        /* the copy-in of one's own block */
        free_at = MPI_Wtime() + copy_portion;   /* one's own node's portion */
        for (int s = 1; s < n; s++) {
            exchange(buf, g, right, left);
            /* the node's processes copy this portion out after the
             * previous one, while the leader goes on */
            free_at = copy_out(free_at, MPI_Wtime(), (double) g, rate);
        }
        done = free_at;
    } else if (strcmp(algo, "logstep") == 0) {
        /* Bruck: step k sends 2^k portions (fewer at the last) to
         * rank - 2^k and receives from rank + 2^k; recursive doubling on
         * a power of two moves the same bytes in the same steps */
        smpi_execute((double) m / rate);
        for (int have = 1; have < n; have *= 2) {
            int cnt = have < n - have ? have : n - have;
            int to = (rank - have + n) % n, from = (rank + have) % n;
            exchange(buf, cnt * g, to, from);
        }
        done = MPI_Wtime() + n * copy_portion;
    } else {
        if (rank == 0)
            fprintf(stderr, "leaders: unknown ALGO %s\n", algo);
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    printf("%s,%d,%d,%lld,%.9f\n", algo, n, ppn, m, done - t0);
    free(buf);
    MPI_Finalize();
    return 0;
}
