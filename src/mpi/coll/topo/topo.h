/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_H_INCLUDED
#define TOPO_H_INCLUDED

#include "topo_logic.h"

/* Per-communicator topology state, built on first use by a topology-aware
 * algorithm and freed with the communicator (MPII_Coll_comm_cleanup). */
typedef struct MPIR_Topo_comm {
    MPIR_Topo_map_t *map;       /* distances and clusters of all members */
    int *ring;                  /* distance-aware ring order, built on first use */
    int *ring_pos;              /* ring_pos[rank] = position of rank in ring */
    /* this process' place in the bcast tree of the last root asked for:
     * applications mostly broadcast from the same root again */
    int tree_root;              /* -1: none cached yet */
    int tree_parent;
    int tree_nchildren;
    int *tree_children;
} MPIR_Topo_comm_t;

/* Collective over comm the first time (allgathers the members' locations),
 * local afterwards. */
int MPIR_Topo_comm_get(MPIR_Comm * comm, MPIR_Topo_comm_t ** topo, MPIR_Errflag_t * errflag);
int MPIR_Topo_comm_get_ring(MPIR_Comm * comm, MPIR_Topo_comm_t * topo);
/* Local: sets topo->tree_parent/tree_nchildren/tree_children for root. */
int MPIR_Topo_comm_get_tree(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, int root);

/* This process' own location (node id from MPICH's node map, so cliques are
 * honoured; the rest from hwloc and the process binding). */
void MPIR_Topo_get_my_loc(MPIR_Comm * comm, MPIR_Topo_loc_t * loc);

/* Handles an algorithm that cannot run with these arguments, as
 * MPIR_CVAR_COLLECTIVE_FALLBACK says: returns an error naming the algorithm
 * and the reason (error), or prints that and returns MPI_SUCCESS so the
 * caller falls back (print), or just returns MPI_SUCCESS (silent). */
int MPIR_Topo_cannot_run(MPIR_Comm * comm, const char *algo, const char *reason);

#endif /* TOPO_H_INCLUDED */
