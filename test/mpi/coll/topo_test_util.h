/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_TEST_UTIL_H_INCLUDED
#define TOPO_TEST_UTIL_H_INCLUDED

/* Helpers shared by the topo_* tests. */

#include "mpi.h"
#include <stdlib.h>

/* comm with its ranks in a seeded random order that every process
 * computes alike (the node-major layout must not depend on rank order) */
static MPI_Comm topo_test_shuffled(MPI_Comm comm, unsigned seed)
{
    int rank, size;
    MPI_Comm out;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *perm = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        perm[i] = i;
    srand(seed);
    for (int i = size - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    MPI_Comm_split(comm, 0, perm[rank], &out);
    free(perm);
    return out;
}

#endif /* TOPO_TEST_UTIL_H_INCLUDED */
