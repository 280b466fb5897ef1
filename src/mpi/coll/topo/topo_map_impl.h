/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Private to the pure topology logic (topo_map.c, topo_tree.c,
 * topo_ring.c): the clusters of a map, which the tree and the ring walk
 * level by level. */

#ifndef TOPO_MAP_IMPL_H_INCLUDED
#define TOPO_MAP_IMPL_H_INCLUDED

#include "topo_logic.h"

#define NLEV MPIR_TOPO_NLEVELS

struct MPIR_Topo_map {
    int p;
    int ncl[NLEV + 1];          /* clusters per level, ncl[0] = p (singletons) */
    int *cid[NLEV + 1];         /* cid[w][rank], w = 1..NLEV; level 0 is the rank itself */
    int *cmin[NLEV + 1];        /* smallest rank of each cluster; clusters are numbered
                                 * by it, so cmin[w] is increasing */
    int *sub_off[NLEV + 1];     /* level-w cluster -> its level-(w-1) subclusters (CSR) */
    int *sub[NLEV + 1];
    unsigned char *far;         /* nic_far per rank */
    int *node_minnear;          /* smallest near rank of each node, -1 if none */
    int min_near;               /* smallest near rank overall, -1 if none */
    size_t bytes;
    void *block;
};

/* union-find with path compression */
static inline int uf_find(int *uf, int x)
{
    int r = x, t;
    while (uf[r] != r)
        r = uf[r];
    while (uf[x] != r) {
        t = uf[x];
        uf[x] = r;
        x = t;
    }
    return r;
}

#endif /* TOPO_MAP_IMPL_H_INCLUDED */
