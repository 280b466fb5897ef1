/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* tuning.sh: one MPI_MINLOC allreduce on MPI_DOUBLE_INT; prints the
 * error message if it fails (errors return) */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    struct { double v; int i; } in, out;
    int rank, rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    in.v = rank == 1 ? -1.0 : rank;
    in.i = rank;
    rc = MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        printf("rank %d: error: %s\n", rank, msg);
    } else if (rank == 0)
        printf(out.v == -1.0 && out.i == 1 ? " No Errors\n" : " Found 1 errors\n");
    MPI_Finalize();
    return 0;
}
