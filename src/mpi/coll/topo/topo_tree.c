/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Distance-aware broadcast tree (Ma et al., Algorithm 1): Kruskal's tree
 * over the clusters of a map (see topo_map.c), root-first ties. */

#include <stdlib.h>
#include <string.h>
#include "topo_map_impl.h"

static int cl_of(const MPIR_Topo_map_t * map, int w, int r)
{
    return w == 0 ? r : map->cid[w][r];
}

/* leader of a cluster: the root if it is inside, else the smallest rank */
static int center(const MPIR_Topo_map_t * map, int w, int cl, int root)
{
    if (cl_of(map, w, root) == cl)
        return root;
    return w == 0 ? cl : map->cmin[w][cl];
}

/* highest level at which v leads its cluster (0..NLEV) */
static int top_level(const MPIR_Topo_map_t * map, int root, int v)
{
    int w;
    for (w = 1; w <= NLEV; w++)
        if (center(map, w, map->cid[w][v], root) != v)
            return w - 1;
    return NLEV;
}

/* parent of v in the intra-node tree oriented from the node's leader */
static int node_parent(const MPIR_Topo_map_t * map, int root, int v)
{
    int w = top_level(map, root, v);
    return w == NLEV ? -1 : center(map, w + 1, map->cid[w + 1][v], root);
}

/* where the inter-node tree touches node n (n != node of the net center) */
static int port(const MPIR_Topo_map_t * map, int root, int n)
{
    if (n == map->cid[NLEV][root] && (!map->far[root] || map->node_minnear[n] < 0))
        return root;
    if (map->node_minnear[n] >= 0)
        return map->node_minnear[n];
    return map->cmin[NLEV][n];
}

typedef struct {
    int dist, rank;
} topo_child_t;

static int child_cmp(const void *x, const void *y)
{
    const topo_child_t *a = x, *b = y;
    if (a->dist != b->dist)
        return a->dist > b->dist ? -1 : 1;
    return a->rank < b->rank ? -1 : (a->rank > b->rank);
}

int MPIR_Topo_tree_get(const MPIR_Topo_map_t * map, int root, int rank, int *parent,
                       int *nchildren, int **children)
{
    int n_self, n_root, n_c, c, entry, entry_parent, par, zpar, lev, w, i, k, nmax, cnt = 0;
    int chain[NLEV + 2], nchain = 0;
    const int *nodecid = map->cid[NLEV];
    topo_child_t *tmp;
    int *out;

    *parent = -1;
    *nchildren = 0;
    *children = NULL;
    if (root < 0 || root >= map->p || rank < 0 || rank >= map->p)
        return -1;

    n_self = nodecid[rank];
    n_root = nodecid[root];
    /* net center: Kruskal links weight-7 (near-near) edges first */
    c = (!map->far[root] || map->min_near < 0) ? root : map->min_near;
    n_c = nodecid[c];

    if (n_self == n_root) {
        entry = root;
        entry_parent = -1;
    } else if (n_self == n_c) {
        entry = c;
        entry_parent = port(map, root, n_root);
    } else {
        entry = port(map, root, n_self);
        entry_parent = c;
    }

    /* reorient the node tree from its entry: only the up-chain of the entry
     * (at most NLEV + 1 vertices) changes direction */
    for (k = entry; k >= 0 && nchain < NLEV + 2; k = node_parent(map, root, k))
        chain[nchain++] = k;
    zpar = node_parent(map, root, rank);
    if (rank == entry) {
        par = entry_parent;
    } else {
        par = zpar;
        for (i = 1; i < nchain; i++)
            if (chain[i] == rank) {
                par = chain[i - 1];
                break;
            }
    }
    *parent = par;

    /* upper bound on the children; leaves allocate nothing */
    lev = top_level(map, root, rank);
    nmax = (zpar >= 0 && zpar != par);
    for (w = 1; w <= lev; w++) {
        int cl = map->cid[w][rank];
        nmax += map->sub_off[w][cl + 1] - map->sub_off[w][cl] - 1;
    }
    if (rank == c)
        nmax += map->ncl[NLEV];
    else if (n_c != n_root && rank == port(map, root, n_root))
        nmax += 1;
    if (nmax == 0)
        return 0;
    tmp = MPIR_TOPO_MALLOC((size_t) nmax * sizeof(topo_child_t));
    if (tmp == NULL)
        return -1;

    if (zpar >= 0 && zpar != par)
        tmp[cnt++].rank = zpar;
    for (w = 1; w <= lev; w++) {
        int cl = map->cid[w][rank], own = cl_of(map, w - 1, rank);
        for (i = map->sub_off[w][cl]; i < map->sub_off[w][cl + 1]; i++) {
            int d = map->sub[w][i], v;
            if (d == own)
                continue;
            v = center(map, w - 1, d, root);
            if (v != par)
                tmp[cnt++].rank = v;
        }
    }
    if (rank == c) {
        for (i = 0; i < map->ncl[NLEV]; i++)
            if (i != n_c && !(n_c != n_root && i == n_root))
                tmp[cnt++].rank = port(map, root, i);
    } else if (n_c != n_root && rank == port(map, root, n_root)) {
        tmp[cnt++].rank = c;
    }

    if (cnt > 0) {
        for (i = 0; i < cnt; i++)
            tmp[i].dist = MPIR_Topo_map_dist(map, rank, tmp[i].rank);
        qsort(tmp, cnt, sizeof(topo_child_t), child_cmp);
        /* reuse the buffer in place: ints are no larger than the pairs */
        out = (int *) tmp;
        for (i = 0; i < cnt; i++)
            out[i] = tmp[i].rank;
        *children = out;
    } else {
        MPIR_TOPO_FREE(tmp);
    }
    *nchildren = cnt;
    return 0;
}
