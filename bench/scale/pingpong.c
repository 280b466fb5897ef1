/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* One-way time between ranks 0 and 1, half the round trip of BYTES there
 * and back, median of REPS (after a few untimed), for a platform file of
 * the emulated cluster (bench/scale/emulated.py).
 *   pingpong BYTES [REPS]   prints "pingpong,BYTES,seconds" on rank 0 */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, size, reps;
    long bytes;
    char *buf;
    double *t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bytes = argc > 1 ? atol(argv[1]) : 8;
    reps = argc > 2 ? atoi(argv[2]) : 50;
    buf = calloc(1, bytes > 0 ? (size_t) bytes : 1);
    t = malloc(sizeof(double) * (size_t) (reps + 5));
    for (int i = 0; i < reps + 5 && size > 1; i++) {
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int) bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int) bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int) bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 5)
            t[i - 5] = (MPI_Wtime() - t0) / 2;
    }
    if (rank == 0 && size > 1) {
        qsort(t, (size_t) reps, sizeof(double), cmp);
        printf("pingpong,%ld,%.9f\n", bytes, t[reps / 2]);
    }
    free(t);
    free(buf);
    MPI_Finalize();
    return 0;
}
