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

/* The communicators every topo_* test checks, in this order (k = 0..4):
 * MPI_COMM_WORLD; its ranks shuffled (seed); reversed (a non-commutative
 * result must follow the order); uneven halves (the first third against
 * the rest); the node-local one (a clique when cliques are emulated).
 * run(comm, name, k) on each. */
typedef void (*topo_test_run_fn) (MPI_Comm comm, const char *name, int k);

static void topo_test_each_comm(topo_test_run_fn run, unsigned seed)
{
    static const char *names[] = { "world", "shuffled", "reversed", "uneven halves",
        "node-local"
    };
    int rank, size;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run(MPI_COMM_WORLD, names[0], 0);
    for (int k = 1; k < 5; k++) {
        MPI_Comm comm;

        if (k == 1)
            comm = topo_test_shuffled(MPI_COMM_WORLD, seed);
        else if (k == 2)
            MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
        else if (k == 3)
            MPI_Comm_split(MPI_COMM_WORLD, rank < size / 3, rank, &comm);
        else
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comm);
        run(comm, names[k], k);
        MPI_Comm_free(&comm);
    }
}

#endif /* TOPO_TEST_UTIL_H_INCLUDED */
