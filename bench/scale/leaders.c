/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* One node leader per simulated process (SimGrid SMPI): the network step
 * of allgather topo_pipeline among the leaders of N nodes, sent with
 * point-to-point calls as src/mpid/ch4/shm/topo/ sends them, with the
 * node's shared-memory phases as delays.
 *
 *   smpirun ... leaders ALGO BYTES PPN COPY_GBS
 *     ALGO      pingpong (one way between the first and the last node,
 *               the platform's latency and bandwidth as the model sees
 *               them), ring (topo_pipeline's ring: portion s arrives at step s and
 *               is copied out by the node's processes while step s+1
 *               runs) or logstep (Bruck, or recursive doubling on a power
 *               of two: ceil(log2 N) steps, the copy-out after the last)
 *     BYTES     per process; a node portion is PPN x BYTES (one leader
 *               per node)
 *     COPY_GBS  one process's memory copy rate, GB/s: the copy-in of
 *               BYTES and the copy-out of each portion by every process
 *               are delays of bytes / rate
 *
 * Prints (rank 0) "ALGO,N,PPN,BYTES,seconds": the time from the first
 * process's start to the last node's last copy-out, the slowest node.
 * SMPI moves no data (a copy callback that does nothing, one small buffer
 * for every message): only the simulated times count, and a simulation of
 * 4,096 nodes fits in memory. */

#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void no_copy(smx_activity_t comm, void *buf, size_t size)
{
    (void) comm, (void) buf, (void) size;
}

/* bytes to "to" and from "from", in messages of at most 1 GiB (the
 * counts are ints; one latency more per GiB is lost in such a message) */
static void exchange(char *buf, long long bytes, int to, int from)
{
    do {
        int c = bytes > (1LL << 30) ? 1 << 30 : (int) bytes;
        MPI_Sendrecv(buf, c, MPI_BYTE, to, 0, buf, c, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bytes -= c;
    } while (bytes > 0);
}

/* one message of bytes to (send) or from (!send) peer */
static void exchange_one(char *buf, long long bytes, int peer, int send)
{
    int c = bytes > (1LL << 30) ? 1 << 30 : (int) bytes;
    if (send)
        MPI_Send(buf, c, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
    else
        MPI_Recv(buf, c, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    int rank, n;
    smpi_comm_set_copy_data_callback(&no_copy);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: leaders pingpong|ring|logstep BYTES PPN COPY_GBS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *algo = argv[1];
    long long m = atoll(argv[2]);
    int ppn = atoi(argv[3]);
    double rate = atof(argv[4]) * 1e9;
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
    smpi_execute((double) m / rate);    /* the copy-in of one's own block */
    if (strcmp(algo, "ring") == 0) {
        int left = (rank - 1 + n) % n, right = (rank + 1) % n;
        double free_at = MPI_Wtime() + copy_portion;    /* one's own node's portion */
        for (int s = 1; s < n; s++) {
            int send_node = (rank - s + 1 + n) % n, recv_node = (rank - s + n) % n;
            (void) send_node, (void) recv_node;     /* (the portions' places) */
            exchange(buf, g, right, left);
            /* the node's processes copy this portion out after the
             * previous one, while the leader goes on */
            double now = MPI_Wtime();
            free_at = (free_at > now ? free_at : now) + copy_portion;
        }
        done = free_at;
    } else {
        /* Bruck: step k sends 2^k portions (fewer at the last) to
         * rank - 2^k and receives from rank + 2^k; recursive doubling on
         * a power of two moves the same bytes in the same steps */
        for (int have = 1; have < n; have *= 2) {
            int cnt = have < n - have ? have : n - have;
            int to = (rank - have + n) % n, from = (rank + have) % n;
            exchange(buf, cnt * g, to, from);
        }
        done = MPI_Wtime() + n * copy_portion;
    }
    done -= t0;
    double slowest;
    MPI_Reduce(&done, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s,%d,%d,%lld,%.9f\n", algo, n, ppn, m, slowest);
    free(buf);
    MPI_Finalize();
    return 0;
}
