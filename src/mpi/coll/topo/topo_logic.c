/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Distance-aware tree and ring construction (Ma et al., Algorithms 1 and 2)
 * without ever looking at the p x p distance matrix.
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
#include "topo_logic.h"

#define NLEV MPIR_TOPO_NLEVELS

#ifdef MPIR_TOPO_STANDALONE
int MPIR_Topo_standalone_fail_countdown = -1;

void *MPIR_Topo_standalone_malloc(size_t sz)
{
    if (MPIR_Topo_standalone_fail_countdown >= 0 && MPIR_Topo_standalone_fail_countdown-- == 0)
        return NULL;
    return malloc(sz ? sz : 1);
}
#endif

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

/* ---------------------------------------------------------------------- */
/* locations and distances                                                 */
/* ---------------------------------------------------------------------- */

int MPIR_Topo_loc_from_hwloc(hwloc_topology_t topo, hwloc_const_cpuset_t binding, int node_id,
                             MPIR_Topo_loc_t * loc)
{
    hwloc_obj_t obj, anc, cache = NULL, board = NULL, numa, first_numa = NULL, os;
    hwloc_const_cpuset_t topo_set;
    int nnic = 0, numa_ok = 1;

    if (loc == NULL || topo == NULL)
        return -1;
    loc->node = node_id;
    loc->board = 0;
    loc->package = -1;
    loc->numa = -1;
    loc->cache = -1;
    loc->core = -1;
    loc->nic = -1;
    loc->nic_far = 0;

    topo_set = hwloc_topology_get_topology_cpuset(topo);
    if (binding == NULL || hwloc_bitmap_iszero(binding) || hwloc_bitmap_isincluded(topo_set, binding))
        return 0;
    obj = hwloc_get_obj_covering_cpuset(topo, binding);
    if (obj == NULL)
        return 0;       /* binding outside of this topology: nothing is known */

    for (anc = obj; anc; anc = anc->parent) {
        if (anc->type == HWLOC_OBJ_CORE && loc->core < 0)
            loc->core = (int) anc->logical_index;
        else if (anc->type == HWLOC_OBJ_PACKAGE && loc->package < 0)
            loc->package = (int) anc->logical_index;
        else if (hwloc_obj_type_is_cache(anc->type))
            cache = anc;        /* keep going up: we want the largest one */
        else if (anc->type == HWLOC_OBJ_GROUP && !hwloc_bitmap_isequal(anc->cpuset, topo_set) &&
                 hwloc_get_nbobjs_inside_cpuset_by_type(topo, anc->cpuset, HWLOC_OBJ_PACKAGE) > 1)
            board = anc;        /* topmost such group wins */
    }
    if (cache)
        loc->cache = cache->depth * (1 << 20) + (int) (cache->logical_index & 0xfffff);
    if (board)
        loc->board = (int) board->logical_index;

    /* NUMA nodes with identical locality (e.g. DDR + HBM of one cluster) count
     * as one memory controller; memory-only nodes never intersect a binding */
    for (numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, NULL); numa;
         numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)) {
        if (!numa->cpuset || !hwloc_bitmap_intersects(numa->cpuset, binding))
            continue;
        if (first_numa == NULL)
            first_numa = numa;
        else if (!hwloc_bitmap_isequal(first_numa->cpuset, numa->cpuset))
            numa_ok = 0;
    }
    if (first_numa && numa_ok)
        loc->numa = (int) first_numa->logical_index;

    for (os = hwloc_get_next_osdev(topo, NULL); os; os = hwloc_get_next_osdev(topo, os)) {
        if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
            os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        anc = hwloc_get_non_io_ancestor_obj(topo, os);
        if (loc->nic < 0 && anc && anc->cpuset && hwloc_bitmap_isincluded(binding, anc->cpuset))
            loc->nic = nnic;
        nnic++;
    }
    loc->nic_far = (nnic > 0 && loc->nic < 0);
    return 0;
}

static int same(int x, int y)
{
    return x >= 0 && y >= 0 && x == y;
}

int MPIR_Topo_distance(const MPIR_Topo_loc_t * a, const MPIR_Topo_loc_t * b)
{
    int snuma, spkg;

    if (a->node != b->node)
        return MPIR_TOPO_DIST_NET + (a->nic_far != 0) + (b->nic_far != 0);
    if (same(a->cache, b->cache))
        return MPIR_TOPO_DIST_CACHE;
    snuma = same(a->numa, b->numa);
    spkg = same(a->package, b->package);
    if (snuma && spkg)
        return MPIR_TOPO_DIST_NUMA;
    if (snuma)
        return MPIR_TOPO_DIST_NUMA_XPKG;
    if (spkg)
        return MPIR_TOPO_DIST_PACKAGE;
    if (same(a->board, b->board))
        return MPIR_TOPO_DIST_BOARD;
    return MPIR_TOPO_DIST_NODE;
}

/* ---------------------------------------------------------------------- */
/* map: clusters per level                                                 */
/* ---------------------------------------------------------------------- */

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

static int uf_find(int *uf, int x)
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

/* ---------------------------------------------------------------------- */
/* broadcast tree (Algorithm 1)                                            */
/* ---------------------------------------------------------------------- */

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

/* ---------------------------------------------------------------------- */
/* ring (Algorithm 2)                                                      */
/* ---------------------------------------------------------------------- */

typedef struct {
    unsigned char *deg;
    int *adj;                   /* two slots per rank */
    int *uf;
} topo_ring_t;

/* next alive position >= j; dead positions point past themselves */
static int next_alive(int *nxt, int j)
{
    int r = j, t;
    while (nxt[r] != r)
        r = nxt[r];
    while (nxt[j] != r) {
        t = nxt[j];
        nxt[j] = r;
        j = t;
    }
    return r;
}

/* accept edge (u,v) if it keeps the graph a set of paths */
static int ring_try(topo_ring_t * R, int u, int v)
{
    int a, b;
    if (R->deg[u] >= 2 || R->deg[v] >= 2)
        return 0;
    a = uf_find(R->uf, u);
    b = uf_find(R->uf, v);
    if (a == b)
        return 0;
    R->uf[a] = b;
    R->adj[2 * u + R->deg[u]++] = v;
    R->adj[2 * v + R->deg[v]++] = u;
    return 1;
}

/* Greedy over all pairs of the sorted vertex list V[0..k): edges in order
 * (smaller, larger).  A vertex that reaches degree 2 is skipped for good;
 * per u at most two same-path vertices are passed over. */
static void ring_clique(topo_ring_t * R, const int *V, int k, int *nxt)
{
    int i, j;

    for (i = 0; i <= k; i++)
        nxt[i] = i;
    for (i = 0; i < k; i++) {
        int u = V[i];
        if (R->deg[u] >= 2)
            continue;
        for (j = next_alive(nxt, i + 1); j < k && R->deg[u] < 2; j = next_alive(nxt, j + 1))
            if (ring_try(R, u, V[j]) && R->deg[V[j]] >= 2)
                nxt[j] = j + 1;
        nxt[i] = i + 1;
    }
}

/* first index in V[0..k) with V[idx] > u */
static int upper_bound(const int *V, int k, int u)
{
    int lo = 0, hi = k;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (V[mid] <= u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int MPIR_Topo_ring_create(const MPIR_Topo_map_t * map, int *order)
{
    int p = map->p, w, r, i, j, n, k0, k1, s, prev, cur, z;
    topo_ring_t R;
    int *V, *nxt, *off, *V1, *nxt1;
    void *block;
    size_t sz;

    if (p == 1) {
        order[0] = 0;
        return 0;
    }
    /* adj 2p, uf p, V p, nxt p+1, off p+1, V1 p... nxt1 p+1, deg p */
    sz = (size_t) (2 * p + p + p + (p + 1) + (p + 1) + (p + 1)) * sizeof(int) + (size_t) p;
    block = MPIR_TOPO_MALLOC(sz);
    if (block == NULL)
        return -1;
    R.adj = block;
    R.uf = R.adj + 2 * p;
    V = R.uf + p;
    nxt = V + p;
    off = nxt + p + 1;
    nxt1 = off + p + 1;
    R.deg = (unsigned char *) (nxt1 + p + 1);
    memset(R.deg, 0, p);
    for (r = 0; r < p; r++)
        R.uf[r] = r;

    /* intra-node levels: bucket the free vertices of each cluster; ranks are
     * visited in increasing order so each bucket is sorted */
    for (w = 1; w <= NLEV; w++) {
        int ncl = map->ncl[w];
        const int *cid = map->cid[w];
        memset(off, 0, (ncl + 1) * sizeof(int));
        for (r = 0; r < p; r++)
            if (R.deg[r] < 2)
                off[cid[r] + 1]++;
        for (i = 0; i < ncl; i++)
            off[i + 1] += off[i];
        for (r = 0; r < p; r++)
            if (R.deg[r] < 2)
                V[off[cid[r]]++] = r;
        /* off[i] now holds the end of bucket i */
        for (i = 0, j = 0; i < ncl; j = off[i], i++)
            if (off[i] - j > 1)
                ring_clique(&R, V + j, off[i] - j, nxt);
    }

    /* across nodes: weight 7 among near, 8 near-far, 9 among far */
    n = 0;
    for (r = 0; r < p; r++)
        if (R.deg[r] < 2 && !map->far[r])
            V[n++] = r;
    ring_clique(&R, V, n, nxt);

    k0 = k1 = 0;
    V1 = off;   /* far list */
    for (r = 0; r < p; r++)
        if (R.deg[r] < 2) {
            if (map->far[r])
                V1[k1++] = r;
            else
                V[k0++] = r;
        }
    for (i = 0; i <= k0; i++)
        nxt[i] = i;
    for (i = 0; i <= k1; i++)
        nxt1[i] = i;
    for (i = 0, j = 0; i < k0 || j < k1;) {
        /* merge walk: u is the next free vertex of either class */
        int u, is_far, *onxt, ok, *mynxt, myidx;
        const int *oV;
        if (j >= k1 || (i < k0 && V[i] < V1[j])) {
            u = V[i];
            is_far = 0;
            myidx = i++;
        } else {
            u = V1[j];
            is_far = 1;
            myidx = j++;
        }
        mynxt = is_far ? nxt1 : nxt;
        if (R.deg[u] >= 2)
            continue;
        oV = is_far ? V : V1;
        ok = is_far ? k0 : k1;
        onxt = is_far ? nxt : nxt1;
        for (z = next_alive(onxt, upper_bound(oV, ok, u)); z < ok && R.deg[u] < 2;
             z = next_alive(onxt, z + 1))
            if (ring_try(&R, u, oV[z]) && R.deg[oV[z]] >= 2)
                onxt[z] = z + 1;
        if (R.deg[u] >= 2)
            mynxt[myidx] = myidx + 1;
    }

    n = 0;
    for (r = 0; r < p; r++)
        if (R.deg[r] < 2 && map->far[r])
            V[n++] = r;
    ring_clique(&R, V, n, nxt);

    /* walk the Hamiltonian path from its smaller end (the first rank of
     * degree < 2); the closing edge is implicit */
    for (s = 0; s < p && R.deg[s] >= 2; s++);
    prev = -1;
    cur = s;
    for (i = 0; i < p; i++) {
        V[i] = cur;
        if (i == p - 1)
            break;
        /* every vertex but the two ends has two neighbours */
        if (cur < 0 || R.deg[cur] == 0 || (i > 0 && R.deg[cur] < 2)) {
            MPIR_TOPO_FREE(block);
            return -1;  /* not a Hamiltonian path: cannot happen */
        }
        z = R.adj[2 * cur] != prev ? R.adj[2 * cur] : R.adj[2 * cur + 1];
        prev = cur;
        cur = z;
    }
    for (z = 0; z < p && V[z] != 0; z++);
    for (i = 0; i < p; i++)
        order[i] = V[(z + i) % p];

    MPIR_TOPO_FREE(block);
    return 0;
}

/* ---- leader layout ---------------------------------------------------- */

typedef struct {
    int node_idx, package, numa, cache, core, rank;
} topo_lkey_t;

static int lkey_cmp(const void *a, const void *b)
{
    const topo_lkey_t *x = a, *y = b;
    if (x->node_idx != y->node_idx)
        return x->node_idx < y->node_idx ? -1 : 1;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    if (x->numa != y->numa)
        return x->numa < y->numa ? -1 : 1;
    if (x->cache != y->cache)
        return x->cache < y->cache ? -1 : 1;
    if (x->core != y->core)
        return x->core < y->core ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

/* a process' memory domain: its NUMA node, else its package, else none.
 * A NUMA node may span packages (one NUMA node per machine, shared memory
 * controller): the package does not matter then. */
static int same_domain(const MPIR_Topo_loc_t * a, const MPIR_Topo_loc_t * b)
{
    if (a->numa >= 0 || b->numa >= 0)
        return a->numa == b->numa;
    return a->package == b->package;
}

void MPIR_Topo_layout_free(MPIR_Topo_layout_t * l)
{
    if (l == NULL)
        return;
    MPIR_TOPO_FREE(l->order);
    MPIR_TOPO_FREE(l->pos);
    MPIR_TOPO_FREE(l->node);
    MPIR_TOPO_FREE(l->node_start);
    MPIR_TOPO_FREE(l->group_start);
    MPIR_TOPO_FREE(l->leader);
    MPIR_TOPO_FREE(l);
}

int MPIR_Topo_layout_create(int p, const MPIR_Topo_loc_t * locs, int k_request,
                            MPIR_Topo_layout_t ** layout)
{
    MPIR_Topo_layout_t *l = NULL;
    topo_lkey_t *keys = NULL;
    int *node_ids = NULL;       /* node id of each node index, in order of lowest rank */
    int nnodes = 0, k, min_size, min_domains;

    *layout = NULL;
    if (p <= 0 || locs == NULL || k_request < 0)
        return -1;

    l = MPIR_TOPO_MALLOC(sizeof(*l));
    keys = MPIR_TOPO_MALLOC(p * sizeof(*keys));
    node_ids = MPIR_TOPO_MALLOC(p * sizeof(int));
    if (l == NULL || keys == NULL || node_ids == NULL)
        goto fail_early;
    memset(l, 0, sizeof(*l));
    l->p = p;
    l->order = MPIR_TOPO_MALLOC(p * sizeof(int));
    l->pos = MPIR_TOPO_MALLOC(p * sizeof(int));
    l->node = MPIR_TOPO_MALLOC(p * sizeof(int));
    if (l->order == NULL || l->pos == NULL || l->node == NULL)
        goto fail;

    /* node index = order of the node's lowest rank; O(p * nnodes) is fine
     * for the node counts one communicator spans on one call, but use a
     * sort to stay O(p log p) at scale */
    {
        topo_lkey_t *by_id = MPIR_TOPO_MALLOC(p * sizeof(*by_id));
        if (by_id == NULL)
            goto fail;
        for (int r = 0; r < p; r++) {
            by_id[r].node_idx = locs[r].node;
            by_id[r].package = r;       /* sort key 2: rank */
            by_id[r].numa = by_id[r].cache = by_id[r].core = by_id[r].rank = 0;
        }
        qsort(by_id, p, sizeof(*by_id), lkey_cmp);
        /* by_id is grouped by node id; the first entry of each run is the
         * node's lowest rank.  Order the runs by that rank. */
        topo_lkey_t *firsts = keys;     /* reuse as scratch */
        int nruns = 0;
        for (int i = 0; i < p; i++)
            if (i == 0 || by_id[i].node_idx != by_id[i - 1].node_idx) {
                firsts[nruns].node_idx = by_id[i].package;      /* lowest rank */
                firsts[nruns].package = by_id[i].node_idx;      /* node id */
                firsts[nruns].numa = firsts[nruns].cache = firsts[nruns].core = 0;
                firsts[nruns].rank = 0;
                nruns++;
            }
        qsort(firsts, nruns, sizeof(*firsts), lkey_cmp);
        for (int i = 0; i < nruns; i++)
            node_ids[i] = firsts[i].package;
        nnodes = nruns;
        MPIR_TOPO_FREE(by_id);
        /* (node id, node index) pairs sorted by id, for a binary search per rank */
        int *sorted_ids = MPIR_TOPO_MALLOC(nnodes * 2 * sizeof(int));
        if (sorted_ids == NULL)
            goto fail;
        for (int i = 0; i < nnodes; i++) {
            firsts[i].node_idx = node_ids[i];
            firsts[i].package = i;
        }
        qsort(firsts, nnodes, sizeof(*firsts), lkey_cmp);
        for (int i = 0; i < nnodes; i++) {
            sorted_ids[2 * i] = firsts[i].node_idx;
            sorted_ids[2 * i + 1] = firsts[i].package;
        }
        for (int r = 0; r < p; r++) {
            int lo = 0, hi = nnodes - 1;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (sorted_ids[2 * mid] < locs[r].node)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            l->node[r] = sorted_ids[2 * lo + 1];
        }
        MPIR_TOPO_FREE(sorted_ids);
    }
    l->nnodes = nnodes;

    for (int r = 0; r < p; r++) {
        keys[r].node_idx = l->node[r];
        keys[r].package = locs[r].package;
        keys[r].numa = locs[r].numa;
        keys[r].cache = locs[r].cache;
        keys[r].core = locs[r].core;
        keys[r].rank = r;
    }
    qsort(keys, p, sizeof(*keys), lkey_cmp);
    for (int i = 0; i < p; i++) {
        l->order[i] = keys[i].rank;
        l->pos[keys[i].rank] = i;
    }

    l->node_start = MPIR_TOPO_MALLOC((nnodes + 1) * sizeof(int));
    if (l->node_start == NULL)
        goto fail;
    for (int n = 0, i = 0; n <= nnodes; n++) {
        while (i < p && l->node[l->order[i]] < n)
            i++;
        l->node_start[n] = i;
    }

    /* k: the request, or the fewest memory domains any node has; never more
     * than the smallest node's process count */
    min_size = p;
    min_domains = p;
    for (int n = 0; n < nnodes; n++) {
        int s = l->node_start[n], e = l->node_start[n + 1], nd = 1;
        if (e - s < min_size)
            min_size = e - s;
        for (int i = s + 1; i < e; i++)
            if (!same_domain(&locs[l->order[i]], &locs[l->order[i - 1]]))
                nd++;
        if (nd < min_domains)
            min_domains = nd;
    }
    k = k_request > 0 ? k_request : min_domains;
    if (k > min_size)
        k = min_size;
    if (k < 1)
        k = 1;
    l->k = k;

    l->group_start = MPIR_TOPO_MALLOC((nnodes * k + 1) * sizeof(int));
    l->leader = MPIR_TOPO_MALLOC(nnodes * k * sizeof(int));
    if (l->group_start == NULL || l->leader == NULL)
        goto fail;
    for (int n = 0; n < nnodes; n++) {
        int s = l->node_start[n], e = l->node_start[n + 1], nd = 1;
        for (int i = s + 1; i < e; i++)
            if (!same_domain(&locs[l->order[i]], &locs[l->order[i - 1]]))
                nd++;
        if (nd == k) {
            /* one group per domain */
            int g = 0;
            l->group_start[n * k] = s;
            for (int i = s + 1; i < e; i++)
                if (!same_domain(&locs[l->order[i]], &locs[l->order[i - 1]]))
                    l->group_start[n * k + ++g] = i;
        } else {
            for (int g = 0; g < k; g++)
                l->group_start[n * k + g] = s + (int) ((long long) (e - s) * g / k);
        }
    }
    l->group_start[nnodes * k] = p;

    for (int gi = 0; gi < nnodes * k; gi++) {
        int s = l->group_start[gi], e = l->group_start[gi + 1];
        l->leader[gi] = l->order[s];
        for (int i = s; i < e; i++) {
            const MPIR_Topo_loc_t *lc = &locs[l->order[i]];
            if (lc->nic >= 0 && !lc->nic_far) {
                l->leader[gi] = l->order[i];
                break;
            }
        }
    }

    MPIR_TOPO_FREE(keys);
    MPIR_TOPO_FREE(node_ids);
    *layout = l;
    return 0;

  fail:
    MPIR_Topo_layout_free(l);
    l = NULL;
  fail_early:
    MPIR_TOPO_FREE(l);
    MPIR_TOPO_FREE(keys);
    MPIR_TOPO_FREE(node_ids);
    return -1;
}
