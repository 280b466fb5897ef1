/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPI_Comm_split_type(MPI_COMM_TYPE_HW_UNGUIDED) applied again and again,
 * from MPI_COMM_WORLD down to MPI_COMM_NULL, as MPI 4.0's example walks the
 * hierarchy.  At each step, on every process: the new communicator is a
 * strict subset of the one split; the info comes back with
 * mpi_hw_resource_type set; HW_GUIDED with that name on the same
 * communicator gives the same members; and a process gets MPI_COMM_NULL
 * only where HW_GUIDED with that name gives it MPI_COMM_NULL too.  Rank 0
 * prints "levels: NAME NAME ..." (the names it got, outermost first), then
 * " No Errors" or " Found N wrong" (split.sh). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "topo_finish.h"

/* whether a and b hold the same processes (either may be MPI_COMM_NULL) */
static int same_members(MPI_Comm a, MPI_Comm b)
{
    int result;

    if (a == MPI_COMM_NULL || b == MPI_COMM_NULL)
        return a == b;
    MPI_Comm_compare(a, b, &result);
    return result == MPI_IDENT || result == MPI_CONGRUENT || result == MPI_SIMILAR;
}

int main(int argc, char **argv)
{
    int rank, errs = 0, depth = 0;
    char levels[512] = "";
    MPI_Comm comm;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    /* every member of comm takes part in each split; one that got
     * MPI_COMM_NULL stops there, the others go on among themselves */
    while (comm != MPI_COMM_NULL && depth < 16) {
        MPI_Info info, guided_info;
        MPI_Comm sub, guided = MPI_COMM_NULL;
        char name[MPI_MAX_INFO_VAL + 1] = "";
        int size, subsize, flag = 0, any_sub = 0, has_sub;

        MPI_Comm_size(comm, &size);
        MPI_Info_create(&info);
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &sub);
        has_sub = sub != MPI_COMM_NULL;
        if (has_sub) {
            MPI_Comm_size(sub, &subsize);
            if (subsize >= size) {
                errs++;
                printf("rank %d, level %d: %d of %d processes, not a strict subset\n",
                       rank, depth, subsize, size);
            }
            MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, name, &flag);
            if (!flag || !name[0]) {
                errs++;
                printf("rank %d, level %d: no mpi_hw_resource_type in the info\n", rank, depth);
            }
        }
        MPI_Info_free(&info);
        /* the name that the members who got a communicator agree on: the
         * lowest rank of comm that has one tells the others */
        {
            int crank, who = -1, lowest;
            MPI_Comm_rank(comm, &crank);
            who = has_sub ? crank : size;
            MPI_Allreduce(&who, &lowest, 1, MPI_INT, MPI_MIN, comm);
            any_sub = lowest < size;
            if (any_sub)
                MPI_Bcast(name, sizeof(name), MPI_CHAR, lowest, comm);
        }
        if (any_sub) {
            MPI_Info_create(&guided_info);
            MPI_Info_set(guided_info, "mpi_hw_resource_type", name);
            MPI_Comm_split_type(comm, MPI_COMM_TYPE_HW_GUIDED, 0, guided_info, &guided);
            MPI_Info_free(&guided_info);
            if (!same_members(sub, guided)) {
                errs++;
                printf("rank %d, level %d (%s): HW_GUIDED gives other members\n", rank, depth,
                       name);
            }
            if (guided != MPI_COMM_NULL)
                MPI_Comm_free(&guided);
            if (rank == 0 && has_sub)
                snprintf(levels + strlen(levels), sizeof(levels) - strlen(levels), " %s", name);
        }
        MPI_Comm_free(&comm);
        comm = sub;
        depth++;
    }
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);
    if (rank == 0)
        printf("levels:%s\n", levels);
    return topo_finish(errs);
}
