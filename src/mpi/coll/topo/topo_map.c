/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The clusters of every level (a map), from which the distance-aware tree
 * (topo_tree.c) and ring (topo_ring.c) of Ma et al., Algorithms 1 and 2,
 * are built without ever looking at the p x p distance matrix.
 *
 * Intra-node, the level-w cluster of a process (w = 1..6) is the connected
 * component of "distance <= w".  Every cluster is a clique for the cluster
 * distance, so Kruskal and the greedy ring both process one level at a time
 * and, inside one level-w cluster, only see the level-(w-1) subclusters:
 *  - tree: the center of the cluster (root if inside, else its min rank) is
 *    linked to the center of every other subcluster;
 *  - ring: each subcluster is already one path, only its (at most two) free
 *    endpoints can take edges.
 * Across nodes the weight only depends on the near/far NIC class of the two
 * endpoints, so the same reasoning is done on three classes of edges. */

#include <stdlib.h>
#include <string.h>
#include "topo_map_impl.h"

typedef struct {
    int k0, k1, k2, rank;
} topo_key_t;

static int key_cmp(const void *x, const void *y)
{
    const topo_key_t *a = x, *b = y;
    if (a->k0 != b->k0)
        return a->k0 < b->k0 ? -1 : 1;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    if (a->k2 != b->k2)
        return a->k2 < b->k2 ? -1 : 1;
    return a->rank < b->rank ? -1 : (a->rank > b->rank);
}

/* key of rank r at level w; returns 0 if the level's fields are unknown.
 * The keys follow MPIR_Topo_distance exactly: dist <= w iff some key of a
 * level <= w is equal. */
static int level_key(const MPIR_Topo_loc_t * l, int w, topo_key_t * k)
{
    k->k0 = l->node;
    k->k1 = 0;
    k->k2 = 0;
    switch (w) {
        case 1:
            k->k1 = l->cache;
            return l->cache >= 0;
        case 2:
            k->k1 = l->numa;
            k->k2 = l->package;
            return l->numa >= 0 && l->package >= 0;
        case 3:
            k->k1 = l->numa;
            return l->numa >= 0;
        case 4:
            k->k1 = l->package;
            return l->package >= 0;
        case 5:
            k->k1 = l->board;
            return l->board >= 0;
        default:
            return 1;
    }
}

int MPIR_Topo_map_create(int p, const MPIR_Topo_loc_t * locs, MPIR_Topo_map_t ** map_out)
{
    MPIR_Topo_map_t *map;
    int *ints, *uf = NULL, *lab = NULL;
    topo_key_t *keys = NULL;
    size_t nints;
    int w, r, i, n, c;

    *map_out = NULL;
    if (p < 1 || locs == NULL)
        return -1;

    map = MPIR_TOPO_MALLOC(sizeof(*map));
    if (map == NULL)
        return -1;
    memset(map, 0, sizeof(*map));
    /* one block: per level cid, cmin, sub_off, sub, plus node_minnear */
    nints = (size_t) NLEV * (4 * (size_t) p + 1) + (size_t) p;
    map->bytes = sizeof(*map) + nints * sizeof(int) + (size_t) p;
    map->block = MPIR_TOPO_MALLOC(nints * sizeof(int) + (size_t) p);
    uf = MPIR_TOPO_MALLOC((size_t) p * sizeof(int));
    lab = MPIR_TOPO_MALLOC((size_t) p * sizeof(int));
    keys = MPIR_TOPO_MALLOC((size_t) p * sizeof(topo_key_t));
    if (!map->block || !uf || !lab || !keys)
        goto fn_fail;

    ints = map->block;
    map->p = p;
    map->ncl[0] = p;
    for (w = 1; w <= NLEV; w++) {
        map->cid[w] = ints;
        map->cmin[w] = ints + p;
        map->sub_off[w] = ints + 2 * p;
        map->sub[w] = ints + 3 * p + 1;
        ints += 4 * p + 1;
    }
    map->node_minnear = ints;
    map->far = (unsigned char *) (ints + p);

    for (r = 0; r < p; r++) {
        uf[r] = r;
        lab[r] = -1;
    }
    for (w = 1; w <= NLEV; w++) {
        /* union-find carries over: level-w clusters contain level-(w-1) ones */
        n = 0;
        for (r = 0; r < p; r++)
            if (level_key(&locs[r], w, &keys[n])) {
                keys[n].rank = r;
                n++;
            }
        qsort(keys, n, sizeof(topo_key_t), key_cmp);
        for (i = 1; i < n; i++)
            if (keys[i].k0 == keys[i - 1].k0 && keys[i].k1 == keys[i - 1].k1 &&
                keys[i].k2 == keys[i - 1].k2) {
                int a = uf_find(uf, keys[i].rank), b = uf_find(uf, keys[i - 1].rank);
                if (a != b)
                    uf[a < b ? b : a] = a < b ? a : b;
            }

        /* number clusters by their smallest rank */
        c = 0;
        for (r = 0; r < p; r++) {
            int h = uf_find(uf, r);
            if (lab[h] < 0) {
                lab[h] = c;
                map->cmin[w][c] = r;
                c++;
            }
            map->cid[w][r] = lab[h];
        }
        for (r = 0; r < p; r++)
            lab[uf_find(uf, r)] = -1;
        map->ncl[w] = c;

        /* subclusters: walked in increasing order, so each list is sorted */
        memset(map->sub_off[w], 0, (c + 1) * sizeof(int));
        for (i = 0; i < map->ncl[w - 1]; i++) {
            int m = (w == 1) ? i : map->cmin[w - 1][i];
            map->sub_off[w][map->cid[w][m] + 1]++;
        }
        for (i = 0; i < c; i++)
            map->sub_off[w][i + 1] += map->sub_off[w][i];
        for (i = 0; i < c; i++)
            lab[i] = map->sub_off[w][i];
        for (i = 0; i < map->ncl[w - 1]; i++) {
            int m = (w == 1) ? i : map->cmin[w - 1][i];
            map->sub[w][lab[map->cid[w][m]]++] = i;
        }
        for (i = 0; i < c; i++)
            lab[i] = -1;
    }

    map->min_near = -1;
    for (i = 0; i < map->ncl[NLEV]; i++)
        map->node_minnear[i] = -1;
    for (r = 0; r < p; r++) {
        map->far[r] = locs[r].nic_far != 0;
        if (!map->far[r]) {
            if (map->min_near < 0)
                map->min_near = r;
            if (map->node_minnear[map->cid[NLEV][r]] < 0)
                map->node_minnear[map->cid[NLEV][r]] = r;
        }
    }

    MPIR_TOPO_FREE(uf);
    MPIR_TOPO_FREE(lab);
    MPIR_TOPO_FREE(keys);
    *map_out = map;
    return 0;

  fn_fail:
    MPIR_TOPO_FREE(uf);
    MPIR_TOPO_FREE(lab);
    MPIR_TOPO_FREE(keys);
    MPIR_TOPO_FREE(map->block);
    MPIR_TOPO_FREE(map);
    return -1;
}

void MPIR_Topo_map_free(MPIR_Topo_map_t * map)
{
    if (map) {
        MPIR_TOPO_FREE(map->block);
        MPIR_TOPO_FREE(map);
    }
}

int MPIR_Topo_map_size(const MPIR_Topo_map_t * map)
{
    return map->p;
}

int MPIR_Topo_map_num_nodes(const MPIR_Topo_map_t * map)
{
    return map->ncl[NLEV];
}

int MPIR_Topo_map_node_index(const MPIR_Topo_map_t * map, int rank)
{
    return map->cid[NLEV][rank];
}

size_t MPIR_Topo_map_bytes(const MPIR_Topo_map_t * map)
{
    return map->bytes;
}

int MPIR_Topo_map_dist(const MPIR_Topo_map_t * map, int a, int b)
{
    int w;

    if (a == b)
        return MPIR_TOPO_DIST_SELF;
    if (map->cid[NLEV][a] != map->cid[NLEV][b])
        return MPIR_TOPO_DIST_NET + map->far[a] + map->far[b];
    for (w = 1; w < NLEV; w++)
        if (map->cid[w][a] == map->cid[w][b])
            break;
    return w;
}
