/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Page faults that intra-node messages take after the first: rank 0
 * sends N messages of 256 KiB to rank 1 (one before, so that the user
 * buffers are faulted in), and each prints the minor faults it took
 * during the N.  With the shared cells faulted in at MPI_Init by their
 * owner (maint/patches/0048), the sender takes almost none; before, every
 * first use of a cell's pages faulted (17 per 68 KiB cell). */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MSG (256 * 1024)

static long minflt(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 48, bad = 0;
    char *buf;
    long f0, f1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = malloc(MSG);
    memset(buf, rank, MSG);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "warmup_faults: run on 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i <= n; i++) {
        if (i == 1) {
            MPI_Barrier(MPI_COMM_WORLD);
            f0 = minflt();
        }
        if (rank == 0) {
            memset(buf, i & 0x7f, MSG);
            MPI_Send(buf, MSG, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, MSG, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* the bytes arrive right, or the fault counts mean nothing */
            bad += buf[0] != (i & 0x7f) || buf[MSG - 1] != (i & 0x7f);
        }
    }
    f1 = minflt();
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d faults %ld in %d messages%s\n", rank, f1 - f0, n, bad ? " WRONG DATA" : "");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
