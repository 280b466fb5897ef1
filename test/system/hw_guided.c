/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPI_Comm_split_type(MPI_COMM_TYPE_HW_GUIDED) for each resource name on
 * the command line, checked against what every process reads from hwloc
 * itself (its own topology and binding): the members of each new
 * communicator must be exactly the processes of its node whose binding
 * lies in the same instance of that type, and a process whose binding lies
 * in no single instance (or a name hwloc does not know) must get
 * MPI_COMM_NULL.  Rank 0 prints "NAME: C communicators, N null" per name,
 * then " No Errors" or " Found N wrong" (split.sh). */
#include <mpi.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "topo_finish.h"

static hwloc_topology_t topo;
static hwloc_bitmap_t binding;

/* the instance of the named type holding this process's binding, -1 if
 * none (MPICH's "node" is the machine; mpi_shared_memory is the node) */
static int instance(const char *name)
{
    hwloc_obj_type_t type;
    hwloc_obj_t obj = NULL;

    if (!strcmp(name, "mpi_shared_memory"))
        return 0;
    if (!strcasecmp(name, "node"))
        name = "Machine";
    if (hwloc_type_sscanf(name, &type, NULL, 0) < 0)
        return -1;
    while ((obj = hwloc_get_next_obj_by_type(topo, type, obj)) != NULL)
        if (hwloc_bitmap_isincluded(binding, obj->cpuset))
            return (int) obj->logical_index;
    return -1;
}

int main(int argc, char **argv)
{
    int rank, size, node, errs = 0;
    MPI_Comm shared;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    binding = hwloc_bitmap_alloc();
    hwloc_get_cpubind(topo, binding, HWLOC_CPUBIND_PROCESS);

    /* a node is named by its lowest world rank */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    MPI_Allreduce(&rank, &node, 1, MPI_INT, MPI_MIN, shared);
    MPI_Comm_free(&shared);

    int *all = malloc(3 * size * sizeof(int));
    for (int a = 1; a < argc; a++) {
        int mine[3] = { node, instance(argv[a]), -1 }, ncomms = 0, nnull = 0;
        MPI_Info info;
        MPI_Comm comm;

        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_hw_resource_type", argv[a]);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &comm);
        MPI_Info_free(&info);
        /* the new communicator is named by its lowest world rank */
        if (comm != MPI_COMM_NULL) {
            MPI_Allreduce(&rank, &mine[2], 1, MPI_INT, MPI_MIN, comm);
            MPI_Comm_free(&comm);
        }
        MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD);
        for (int q = 0; q < size; q++) {
            int want = mine[1] >= 0 && all[3 * q] == node && all[3 * q + 1] == mine[1];
            int got = mine[2] >= 0 && all[3 * q + 2] == mine[2];
            if (want != got) {
                errs++;
                printf("rank %d, %s: rank %d %s my communicator\n", rank, argv[a], q,
                       got ? "is wrongly in" : "is missing from");
            }
            nnull += all[3 * q + 2] < 0;
            ncomms += all[3 * q + 2] == q;
        }
        if ((mine[1] < 0) != (mine[2] < 0)) {
            errs++;
            printf("rank %d, %s: %s\n", rank, argv[a],
                   mine[1] < 0 ? "got a communicator, expected MPI_COMM_NULL" :
                   "got MPI_COMM_NULL, expected a communicator");
        }
        if (rank == 0)
            printf("%s: %d communicators, %d null\n", argv[a], ncomms, nnull);
    }
    free(all);
    hwloc_bitmap_free(binding);
    hwloc_topology_destroy(topo);
    return topo_finish(errs);
}
