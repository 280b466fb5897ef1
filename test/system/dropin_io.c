/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* dropin.sh: MPI-IO (ROMIO) on this build.  Each process writes its block
 * with a collective write at an explicit offset, then all read the file
 * back collectively through an interleaved view (every process takes every
 * size-th int), which ROMIO's two-phase I/O serves with collectives of its
 * own; every int is checked.  argv[1]: the file. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0, n = 4096;
    MPI_File fh;
    MPI_Datatype every;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *w = malloc(n * sizeof(int)), *r = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        w[i] = rank * n + i;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset) rank * n * sizeof(int), w, n, MPI_INT, &st);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Type_vector(n, 1, size, MPI_INT, &every);
    MPI_Type_commit(&every);
    MPI_File_set_view(fh, rank * sizeof(int), MPI_INT, every, "native", MPI_INFO_NULL);
    MPI_File_read_all(fh, r, n, MPI_INT, &st);
    for (int i = 0; i < n; i++)
        errs += r[i] != i * size + rank;
    MPI_File_close(&fh);
    MPI_Type_free(&every);
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(argv[1], MPI_INFO_NULL);
        printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
    }
    free(w);
    free(r);
    MPI_Finalize();
    return 0;
}
