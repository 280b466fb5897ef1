/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Prints "NAME=VALUE" for each integer CVAR named on the command line, as
 * MPI_T reads it (selection.sh: the old names of renamed CVARs still set
 * them).  Run on one process. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    for (int a = 1; a < argc; a++) {
        int idx, count, val;
        MPI_T_cvar_handle h;

        if (MPI_T_cvar_get_index(argv[a], &idx) != MPI_SUCCESS) {
            printf("%s: no such CVAR\n", argv[a]);
            continue;
        }
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count);
        MPI_T_cvar_read(h, &val);
        MPI_T_cvar_handle_free(&h);
        printf("%s=%d\n", argv[a], val);
    }
    MPI_Finalize();
    MPI_T_finalize();
    return 0;
}
