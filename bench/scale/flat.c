/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPICH's flat algorithms over every process (SimGrid SMPI's own
 * implementations of them, chosen with --cfg=smpi/<coll>:ALGO, "mpich"
 * being MPICH's selection), beside bench/scale/leaders.c's hierarchical
 * schedules.  The platform gives each node PPN cores; messages within a
 * node cross its loopback (the memory copy rate), between nodes the NICs.
 *
 *   smpirun ... flat COLL BYTES
 *     COLL   allgather (BYTES per process), bcast from rank 0 (BYTES in
 *            all) or allreduce (BYTES in all, doubles, MPI_SUM)
 *
 * Prints, on every process, "COLL,P,BYTES,seconds": its time in one call
 * after a barrier; the slowest is the largest (as in leaders.c, an
 * MPI_Reduce of the times would carry no data).  As in leaders.c, SMPI moves no data, and the
 * buffers are SMPI's shared mallocs: 4,096 processes fit in memory.
 * SMPI's reductions inside its collectives take no simulated time, which
 * favours the flat algorithms here (leaders.c charges every reduction). */

#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void no_copy(smx_activity_t comm, void *buf, size_t size)
{
    (void) comm, (void) buf, (void) size;
}

int main(int argc, char **argv)
{
    int rank, p;
    smpi_comm_set_copy_data_callback(&no_copy);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: flat allgather|bcast|allreduce BYTES\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *coll = argv[1];
    long long m = atoll(argv[2]);
    long long rbytes = strcmp(coll, "allgather") == 0 ? m * p : m;
    char *sbuf = SMPI_SHARED_MALLOC(m > 8 ? m : 8), *rbuf = SMPI_SHARED_MALLOC(rbytes > 8 ? rbytes : 8);
    double t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (strcmp(coll, "allgather") == 0)
        MPI_Allgather(sbuf, (int) m, MPI_BYTE, rbuf, (int) m, MPI_BYTE, MPI_COMM_WORLD);
    else if (strcmp(coll, "bcast") == 0)
        MPI_Bcast(rbuf, (int) m, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (strcmp(coll, "allreduce") == 0)
        MPI_Allreduce(sbuf, rbuf, (int) (m >= 8 ? m / 8 : 1), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else {
        if (rank == 0)
            fprintf(stderr, "flat: unknown COLL %s\n", coll);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    printf("%s,%d,%lld,%.9f\n", coll, p, m, MPI_Wtime() - t0);
    SMPI_SHARED_FREE(sbuf);
    SMPI_SHARED_FREE(rbuf);
    MPI_Finalize();
    return 0;
}
