/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_FINISH_H_INCLUDED
#define TOPO_FINISH_H_INCLUDED

#include <mpi.h>
#include <stdio.h>

/* The end of the test programs of test/system: every process's count of
 * wrong values summed, and rank 0 prints " No Errors" or " Found N wrong"
 * (what the scripts look for).  Returns main's exit status. */
static inline int topo_finish(int errs)
{
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs ? " Found %d wrong\n" : " No Errors\n", errs);
    MPI_Finalize();
    return 0;
}

#endif /* TOPO_FINISH_H_INCLUDED */
