/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Shared helpers of the topo_logic unit tests: check bookkeeping, a seeded
 * RNG, hwloc helpers, placement generators and the literal (brute-force)
 * versions of Algorithms 1 and 2 that the fast code is compared with. */

#ifndef TEST_TOPO_UTIL_H_INCLUDED
#define TEST_TOPO_UTIL_H_INCLUDED

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include "topo_logic.h"

/* ---------------------------------------------------------------------- */
/* check bookkeeping: one line per group, details of the first failures    */
/* ---------------------------------------------------------------------- */

static const char *tu_group;
static long tu_checks, tu_fails;
static int tu_groups_failed;

static inline void tu_begin(const char *name)
{
    tu_group = name;
    tu_checks = tu_fails = 0;
}

static inline void tu_end(void)
{
    if (tu_fails)
        printf("FAIL %s (%ld of %ld checks failed)\n", tu_group, tu_fails, tu_checks);
    else
        printf("PASS %s (%ld checks)\n", tu_group, tu_checks);
    tu_groups_failed += tu_fails != 0;
    fflush(stdout);
}

static inline int tu_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    if (tu_fails++ < 8) {
        printf("  %s:%d [%s] ", file, line, tu_group);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    return 0;
}

/* evaluates to cond; prints fmt on failure */
#define CHECK(cond, ...) \
    (tu_checks++, (cond) ? 1 : tu_fail(__FILE__, __LINE__, __VA_ARGS__))
#define CHECK_EQ(got, exp, what, ...) \
    CHECK((got) == (exp), "%s: got %d, expected %d " what, #got, (int) (got), (int) (exp), ##__VA_ARGS__)

static inline int tu_exit(void)
{
    return tu_groups_failed ? 1 : 0;
}

/* small test sizes under valgrind (the Makefile sets TOPO_UNIT_SMALL) */
static inline int tu_small(void)
{
    const char *s = getenv("TOPO_UNIT_SMALL");
    return s && *s && *s != '0';
}

/* ---------------------------------------------------------------------- */
/* RNG (xorshift64*), deterministic per seed                               */
/* ---------------------------------------------------------------------- */

static unsigned long long tu_rng_state = 88172645463325252ULL;

static inline void tu_seed(unsigned long long s)
{
    tu_rng_state = s * 2654435761ULL + 0x9E3779B97F4A7C15ULL;
    if (!tu_rng_state)
        tu_rng_state = 1;
}

static inline int tu_rand(int n)
{
    unsigned long long x = tu_rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    tu_rng_state = x;
    return (int) (((x * 2685821657736338717ULL) >> 33) % (unsigned long long) n);
}

static inline void tu_shuffle(int *a, int n)
{
    int i, j, t;
    for (i = n - 1; i > 0; i--) {
        j = tu_rand(i + 1);
        t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static inline void *tu_xmalloc(size_t sz)
{
    void *p = malloc(sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "test: out of memory\n");
        exit(2);
    }
    return p;
}

/* ---------------------------------------------------------------------- */
/* hwloc helpers                                                           */
/* ---------------------------------------------------------------------- */

static inline hwloc_topology_t tu_synthetic(const char *desc)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) || hwloc_topology_set_synthetic(t, desc) || hwloc_topology_load(t)) {
        fprintf(stderr, "test: cannot load synthetic topology \"%s\"\n", desc);
        exit(2);
    }
    return t;
}

static inline hwloc_topology_t tu_xml(const char *path)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) ||
        hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) ||
        hwloc_topology_set_xml(t, path) || hwloc_topology_load(t)) {
        fprintf(stderr, "test: cannot load XML topology %s\n", path);
        exit(2);
    }
    return t;
}

/* loc of a process bound to the i-th object of the given type */
static inline MPIR_Topo_loc_t tu_loc_obj(hwloc_topology_t t, hwloc_obj_type_t type, int i, int node)
{
    MPIR_Topo_loc_t l;
    hwloc_obj_t o = hwloc_get_obj_by_type(t, type, i);
    if (!o) {
        fprintf(stderr, "test: no object %d of type %s\n", i, hwloc_obj_type_string(type));
        exit(2);
    }
    if (MPIR_Topo_loc_from_hwloc(t, o->cpuset, node, &l)) {
        fprintf(stderr, "test: MPIR_Topo_loc_from_hwloc failed\n");
        exit(2);
    }
    return l;
}

static inline MPIR_Topo_loc_t tu_loc_unbound(int node)
{
    MPIR_Topo_loc_t l;
    hwloc_topology_t t = tu_synthetic("pack:1 core:1 pu:1");
    MPIR_Topo_loc_from_hwloc(t, NULL, node, &l);
    hwloc_topology_destroy(t);
    return l;
}

/* ---------------------------------------------------------------------- */
/* literal Algorithm 1 / Algorithm 2 on MPIR_Topo_distance (O(p^2 log p))  */
/* ---------------------------------------------------------------------- */

typedef struct {
    int w, k0, k1, k2, u, v;
} tu_edge_t;

static inline int tu_edge_cmp(const void *x, const void *y)
{
    const tu_edge_t *a = x, *b = y;
    if (a->w != b->w)
        return a->w - b->w;
    if (a->k0 != b->k0)
        return a->k0 - b->k0;
    if (a->k1 != b->k1)
        return a->k1 - b->k1;
    return a->k2 - b->k2;
}

/* paper's union-find: the head is the root if in the set, else the min rank */
static inline int tu_head(int *uf, int x)
{
    while (uf[x] != x)
        x = uf[x];
    return x;
}

static inline void tu_union(int *uf, int root, int a, int b)
{
    int ha = tu_head(uf, a), hb = tu_head(uf, b), h;
    h = (ha == root || hb == root) ? root : (ha < hb ? ha : hb);
    uf[ha] = h;
    uf[hb] = h;
}

static inline int tu_pair_cmp(const void *x, const void *y)
{
    const int *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] - b[0];
    return a[1] - b[1];
}

/* when set, the brute force weighs edges with this map's cluster distance
 * instead of the pairwise distance (for non-nested random locations) */
static const MPIR_Topo_map_t *tu_weight_map;

/* all edges with their weights; the caller fills in the sort keys */
static inline tu_edge_t *tu_all_edges(int p, const MPIR_Topo_loc_t * locs, int *ne)
{
    tu_edge_t *e = tu_xmalloc(sizeof(tu_edge_t) * (size_t) p * (p - 1) / 2 + 1);
    int u, v, n = 0;
    for (u = 0; u < p; u++)
        for (v = u + 1; v < p; v++) {
            e[n].u = u;
            e[n].v = v;
            e[n].w = tu_weight_map ? MPIR_Topo_map_dist(tu_weight_map, u, v) :
                MPIR_Topo_distance(&locs[u], &locs[v]);
            n++;
        }
    *ne = n;
    return e;
}

/* Kruskal with the paper's queue order; out: p-1 sorted pairs (u < v) */
static inline void tu_brute_tree(int p, const MPIR_Topo_loc_t * locs, int root, int *pairs)
{
    int ne, i, n = 0;
    tu_edge_t *e = tu_all_edges(p, locs, &ne);
    int *uf = tu_xmalloc(sizeof(int) * p);

    for (i = 0; i < ne; i++) {
        int touch = e[i].u == root || e[i].v == root;
        e[i].k0 = !touch;
        e[i].k1 = touch ? (e[i].u == root ? e[i].v : e[i].u) : e[i].u;
        e[i].k2 = touch ? 0 : e[i].v;
    }
    qsort(e, ne, sizeof(tu_edge_t), tu_edge_cmp);
    for (i = 0; i < p; i++)
        uf[i] = i;
    for (i = 0; i < ne && n < p - 1; i++)
        if (tu_head(uf, e[i].u) != tu_head(uf, e[i].v)) {
            pairs[2 * n] = e[i].u;
            pairs[2 * n + 1] = e[i].v;
            n++;
            tu_union(uf, root, e[i].u, e[i].v);
        }
    qsort(pairs, n, 2 * sizeof(int), tu_pair_cmp);
    free(uf);
    free(e);
}

/* Algorithm 2; out: the ring order with the documented convention (walk the
 * path from its smaller end, rotate to start at 0) */
static inline void tu_brute_ring(int p, const MPIR_Topo_loc_t * locs, int *order)
{
    int ne, i, n = 0, s, prev, cur;
    tu_edge_t *e;
    int *uf = tu_xmalloc(sizeof(int) * p), *deg = calloc(p, sizeof(int));
    int *adj = tu_xmalloc(sizeof(int) * 2 * p), *seq = calloc(p, sizeof(int));

    if (p == 1) {
        order[0] = 0;
        free(uf), free(deg), free(adj), free(seq);
        return;
    }
    e = tu_all_edges(p, locs, &ne);
    for (i = 0; i < ne; i++) {
        e[i].k0 = e[i].u;
        e[i].k1 = e[i].v;
        e[i].k2 = 0;
    }
    qsort(e, ne, sizeof(tu_edge_t), tu_edge_cmp);
    for (i = 0; i < p; i++) {
        uf[i] = i;
        deg[i] = 0;
    }
    for (i = 0; i < ne && n < p - 1; i++) {
        int u = e[i].u, v = e[i].v;
        if (tu_head(uf, u) != tu_head(uf, v) && deg[u] < 2 && deg[v] < 2) {
            adj[2 * u + deg[u]++] = v;
            adj[2 * v + deg[v]++] = u;
            tu_union(uf, -1, u, v);
            n++;
        }
    }
    for (s = 0; deg[s] != 1; s++);
    prev = -1;
    cur = s;
    for (i = 0; i < p; i++) {
        int nx;
        seq[i] = cur;
        if (i == p - 1)
            break;
        nx = (adj[2 * cur] != prev) ? adj[2 * cur] : adj[2 * cur + 1];
        prev = cur;
        cur = nx;
    }
    for (s = 0; seq[s] != 0; s++);
    for (i = 0; i < p; i++)
        order[i] = seq[(s + i) % p];
    free(e), free(uf), free(deg), free(adj), free(seq);
}

/* ---------------------------------------------------------------------- */
/* verification of the fast code against the brute force                   */
/* ---------------------------------------------------------------------- */

/* Check tree_get for every rank; brute != NULL: compare with it.  Returns
 * the tree as parent[] (caller's array) for extra property checks. */
static inline int tu_check_tree(const MPIR_Topo_map_t * map, int p, int root, const int *brute,
                         int *parent, const char *tag)
{
    int r, i, ok = 1, nedges = 0, *seen = tu_xmalloc(sizeof(int) * p);
    int *pairs = tu_xmalloc(sizeof(int) * 2 * p);
    int **ch = tu_xmalloc(sizeof(int *) * p), *nch = tu_xmalloc(sizeof(int) * p);

    for (r = 0; r < p; r++) {
        seen[r] = 0;
        if (MPIR_Topo_tree_get(map, root, r, &parent[r], &nch[r], &ch[r])) {
            ok = CHECK(0, "%s root %d rank %d: tree_get failed", tag, root, r);
            nch[r] = 0;
            ch[r] = NULL;
        }
    }
    ok &= CHECK(parent[root] == -1, "%s root %d: root's parent is %d", tag, root, parent[root]);
    for (r = 0; r < p && ok; r++) {
        if (r != root)
            ok &= CHECK(parent[r] >= 0 && parent[r] < p && parent[r] != r,
                        "%s root %d: rank %d has parent %d", tag, root, r, parent[r]);
        ok &= CHECK(nch[r] == 0 || ch[r] != NULL, "%s: children NULL", tag);
        for (i = 0; i < nch[r] && ok; i++) {
            int c = ch[r][i];
            ok &= CHECK(c >= 0 && c < p && parent[c] == r,
                        "%s root %d: rank %d lists child %d whose parent is %d", tag, root, r, c,
                        (c >= 0 && c < p) ? parent[c] : -99);
            if (!ok)
                break;
            seen[c]++;
            nedges++;
            if (i > 0) {
                int d0 = MPIR_Topo_map_dist(map, r, ch[r][i - 1]), d1 = MPIR_Topo_map_dist(map, r, c);
                ok &= CHECK(d0 > d1 || (d0 == d1 && ch[r][i - 1] < c),
                            "%s root %d rank %d: children %d (d%d) before %d (d%d) misordered",
                            tag, root, r, ch[r][i - 1], d0, c, d1);
            }
        }
    }
    if (ok) {
        ok &= CHECK(nedges == p - 1, "%s root %d: %d edges, expected %d", tag, root, nedges, p - 1);
        for (r = 0; r < p && ok; r++)
            ok &= CHECK(seen[r] == (r != root), "%s root %d: rank %d is a child %d times",
                        tag, root, r, seen[r]);
    }
    /* connected: every rank reaches the root within p steps */
    for (r = 0; r < p && ok; r++) {
        int x = r, steps = 0;
        while (x != root && x >= 0 && steps <= p) {
            x = parent[x];
            steps++;
        }
        ok &= CHECK(x == root, "%s root %d: rank %d does not reach the root", tag, root, r);
    }
    if (ok && brute) {
        int n = 0;
        for (r = 0; r < p; r++)
            if (r != root) {
                pairs[2 * n] = r < parent[r] ? r : parent[r];
                pairs[2 * n + 1] = r < parent[r] ? parent[r] : r;
                n++;
            }
        qsort(pairs, n, 2 * sizeof(int), tu_pair_cmp);
        for (i = 0; i < n && ok; i++)
            ok &= CHECK(pairs[2 * i] == brute[2 * i] && pairs[2 * i + 1] == brute[2 * i + 1],
                        "%s p %d root %d: edge #%d is (%d,%d), Kruskal has (%d,%d)", tag, p, root, i,
                        pairs[2 * i], pairs[2 * i + 1], brute[2 * i], brute[2 * i + 1]);
    }
    for (r = 0; r < p; r++)
        MPIR_TOPO_FREE(ch[r]);
    free(ch), free(nch), free(seen), free(pairs);
    return ok;
}

/* ring: a permutation starting at 0; brute != NULL: same order */
static inline int tu_check_ring(int p, const int *order, const int *brute, const char *tag)
{
    int i, ok = 1, *seen = calloc(p, sizeof(int));
    ok &= CHECK(order[0] == 0, "%s p %d: order[0] = %d", tag, p, order[0]);
    for (i = 0; i < p && ok; i++) {
        ok &= CHECK(order[i] >= 0 && order[i] < p && !seen[order[i]],
                    "%s p %d: order[%d] = %d repeated or out of range", tag, p, i, order[i]);
        if (ok)
            seen[order[i]] = 1;
    }
    for (i = 0; i < p && ok && brute; i++)
        ok &= CHECK(order[i] == brute[i], "%s p %d: order[%d] = %d, Algorithm 2 gives %d",
                    tag, p, i, order[i], brute[i]);
    free(seen);
    return ok;
}

/* map_dist must equal the pairwise distance on nested (hwloc) locations */
static inline int tu_check_map_dist(const MPIR_Topo_map_t * map, int p, const MPIR_Topo_loc_t * locs,
                             const char *tag)
{
    int a, b, ok = 1;
    for (a = 0; a < p && ok; a++)
        for (b = 0; b < p && ok; b++)
            ok &= CHECK(MPIR_Topo_map_dist(map, a, b) ==
                        (a == b ? 0 : MPIR_Topo_distance(&locs[a], &locs[b])),
                        "%s: map_dist(%d,%d) = %d, distance %d", tag, a, b,
                        MPIR_Topo_map_dist(map, a, b), MPIR_Topo_distance(&locs[a], &locs[b]));
    return ok;
}

/* ---------------------------------------------------------------------- */
/* placements: rank -> (node, core or PU) maps                             */
/* ---------------------------------------------------------------------- */

enum { TU_BLOCK, TU_CYCLIC, TU_SHUFFLE };
enum { TU_BOUND, TU_UNB_SOME, TU_UNB_ALL, TU_UNB_NODE1 };
enum { TU_NIC_NONE, TU_NIC_MIX, TU_NIC_RANDOM };

typedef struct {
    const char *name;
    const char *synth;          /* hwloc synthetic description of every node */
    int nnodes;
    int mode;                   /* TU_BLOCK / TU_CYCLIC / TU_SHUFFLE */
    int pu_bind;                /* bind to PUs instead of cores */
    int uneven;                 /* node n loses (n % 3) * nobj / 4 slots */
    int unbound;                /* TU_UNB_* */
    int nic;                    /* TU_NIC_* */
} tu_place_t;

/* Slot capacity of the placement (max p). */
static inline int tu_place_cap(const tu_place_t * pl, int nobj)
{
    int n, cap = 0;
    for (n = 0; n < pl->nnodes; n++)
        cap += nobj - (pl->uneven ? (n % 3) * nobj / 4 : 0);
    return cap;
}

/* Fill locs[0..p) for the placement; objects of the template topology are
 * visited package-interleaved in cyclic mode (round-robin over packages). */
static inline int tu_place(hwloc_topology_t t, const tu_place_t * pl, int p, unsigned seed,
                           MPIR_Topo_loc_t * locs)
{
    hwloc_obj_type_t type = pl->pu_bind ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    int nobj = hwloc_get_nbobjs_by_type(t, type), npkg = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    int *cap = tu_xmalloc(sizeof(int) * pl->nnodes), *used = tu_xmalloc(sizeof(int) * pl->nnodes);
    int *objorder = tu_xmalloc(sizeof(int) * nobj), *inpkg = tu_xmalloc(sizeof(int) * (npkg + 1));
    int total = tu_place_cap(pl, nobj), *slots = tu_xmalloc(sizeof(int) * 2 * total);
    MPIR_Topo_loc_t *tmpl = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * nobj);
    int n, i, k, r, ns = 0;

    if (p > total) {
        free(cap), free(used), free(objorder), free(inpkg), free(slots), free(tmpl);
        return -1;
    }
    tu_seed(seed);
    for (i = 0; i < nobj; i++)
        tmpl[i] = tu_loc_obj(t, type, i, 0);
    /* package-interleaved object order: by (index inside package, package) */
    for (i = 0; i <= npkg; i++)
        inpkg[i] = 0;
    {
        int *key = tu_xmalloc(sizeof(int) * nobj);
        for (i = 0; i < nobj; i++) {
            int pk = tmpl[i].package < 0 ? npkg : tmpl[i].package;
            key[i] = inpkg[pk]++ * (npkg + 1) + pk;
        }
        for (i = 0; i < nobj; i++)
            objorder[i] = i;
        if (pl->mode == TU_CYCLIC)
            for (i = 1; i < nobj; i++)
                for (k = i; k > 0 && key[objorder[k - 1]] > key[objorder[k]]; k--) {
                    int x = objorder[k];
                    objorder[k] = objorder[k - 1];
                    objorder[k - 1] = x;
                }
        free(key);
    }
    for (n = 0; n < pl->nnodes; n++) {
        cap[n] = nobj - (pl->uneven ? (n % 3) * nobj / 4 : 0);
        used[n] = 0;
    }
    if (pl->mode == TU_CYCLIC) {
        /* round-robin over the nodes that still have room */
        for (n = 0; ns < total; n = (n + 1) % pl->nnodes)
            if (used[n] < cap[n]) {
                slots[2 * ns] = n;
                slots[2 * ns + 1] = objorder[used[n]++];
                ns++;
            }
    } else {
        for (n = 0; n < pl->nnodes; n++)
            for (i = 0; i < cap[n]; i++) {
                slots[2 * ns] = n;
                slots[2 * ns + 1] = i;
                ns++;
            }
        if (pl->mode == TU_SHUFFLE)
            for (i = ns - 1; i > 0; i--) {
                int j = tu_rand(i + 1), a = slots[2 * i], b = slots[2 * i + 1];
                slots[2 * i] = slots[2 * j];
                slots[2 * i + 1] = slots[2 * j + 1];
                slots[2 * j] = a;
                slots[2 * j + 1] = b;
            }
    }
    for (r = 0; r < p; r++) {
        int node = slots[2 * r], unb;
        unb = pl->unbound == TU_UNB_ALL || (pl->unbound == TU_UNB_SOME && r % 5 == 2) ||
            (pl->unbound == TU_UNB_NODE1 && node == 1);
        if (unb) {
            MPIR_Topo_loc_from_hwloc(t, NULL, node, &locs[r]);
        } else {
            locs[r] = tmpl[slots[2 * r + 1]];
            locs[r].node = node;
            if (pl->nic == TU_NIC_MIX) {
                /* node%3: 0 NIC on package 0, 1 no NIC, 2 NIC nobody is close to */
                locs[r].nic_far = (node % 3 == 0) ? locs[r].package != 0 : node % 3 == 2;
                locs[r].nic = (node % 3 == 0 && locs[r].package == 0) ? 0 : -1;
            } else if (pl->nic == TU_NIC_RANDOM) {
                locs[r].nic_far = tu_rand(3) == 0;
                locs[r].nic = locs[r].nic_far ? -1 : 0;
            }
        }
    }
    free(cap), free(used), free(objorder), free(inpkg), free(slots), free(tmpl);
    return 0;
}

/* arbitrary locations, not necessarily consistent with any hwloc tree */
static inline void tu_random_locs(int p, int nodes, MPIR_Topo_loc_t * locs)
{
    int r;
    for (r = 0; r < p; r++) {
        locs[r].node = tu_rand(nodes);
        locs[r].board = tu_rand(2);
        locs[r].package = tu_rand(4) - 1;
        locs[r].numa = tu_rand(4) - 1;
        locs[r].cache = tu_rand(5) - 1;
        locs[r].core = -1;
        locs[r].nic_far = tu_rand(3) == 0;
        locs[r].nic = locs[r].nic_far ? -1 : 0;
    }
}

/* the placements used by the tree and ring tests */
static const tu_place_t tu_placements[] __attribute__((unused)) = {
    {"1 node block, PU binding", "pack:2 l3:1 core:4 pu:2", 1, TU_BLOCK, 1, 0, TU_BOUND, TU_NIC_NONE},
    {"1 node cyclic, multi-die", "pack:4 numa:2 core:3 pu:2", 1, TU_CYCLIC, 0, 0, TU_BOUND, TU_NIC_NONE},
    {"1 node shuffled, boards", "group:2 pack:2 numa:1 core:3 pu:1", 1, TU_SHUFFLE, 0, 0, TU_BOUND,
     TU_NIC_NONE},
    {"1 node shuffled, shared MC", "numa:2 pack:2 core:2 pu:1", 1, TU_SHUFFLE, 0, 0, TU_BOUND,
     TU_NIC_NONE},
    {"IG cross-socket (cyclic)", "pack:8 numa:1 l3:1 core:6 pu:1", 1, TU_CYCLIC, 0, 0, TU_BOUND,
     TU_NIC_NONE},
    {"10 nodes block uneven", "pack:2 l3:1 l2:2 core:2 pu:1", 10, TU_BLOCK, 0, 1, TU_BOUND,
     TU_NIC_NONE},
    {"8 nodes cyclic uneven, NIC mix", "pack:2 l3:1 core:4 pu:1", 8, TU_CYCLIC, 0, 1, TU_BOUND,
     TU_NIC_MIX},
    {"4 nodes shuffled PUs, random NIC", "pack:4 numa:2 core:3 pu:2", 4, TU_SHUFFLE, 1, 0, TU_BOUND,
     TU_NIC_RANDOM},
    {"5 nodes shuffled, some unbound", "group:2 pack:2 numa:1 core:3 pu:1", 5, TU_SHUFFLE, 0, 1,
     TU_UNB_SOME, TU_NIC_MIX},
    {"4 nodes all unbound", "pack:2 core:8 pu:1", 4, TU_CYCLIC, 0, 1, TU_UNB_ALL, TU_NIC_NONE},
    {"6 nodes cyclic, node 1 unbound", "numa:2 pack:2 core:2 pu:1", 6, TU_CYCLIC, 0, 1, TU_UNB_NODE1,
     TU_NIC_MIX},
    {"3 nodes shuffled, random NIC", "pack:2 numa:2 l3:1 core:4 pu:1", 3, TU_SHUFFLE, 0, 1,
     TU_UNB_SOME, TU_NIC_RANDOM},
};

#define TU_NPLACEMENTS ((int) (sizeof(tu_placements) / sizeof(tu_placements[0])))

/* p values to test: all small ones, then a sample up to the capacity */
static inline int tu_next_p(int p, int cap)
{
    int maxp = tu_small() ? 24 : 80;
    if (cap < maxp)
        maxp = cap;
    if (p >= maxp)
        return 0;
    if (p < 24)
        return p + 1;
    return p + 7 > maxp ? maxp : p + 7;
}

/* roots to test: all for small p, else a sample */
static inline int tu_roots(int p, int *roots)
{
    int i, n = 0, lim = tu_small() ? 6 : 80;
    if (p <= lim) {
        for (i = 0; i < p; i++)
            roots[n++] = i;
        return n;
    }
    roots[n++] = 0;
    roots[n++] = 1;
    roots[n++] = p / 2;
    roots[n++] = p - 1;
    for (i = 0; i < 6; i++)
        roots[n++] = tu_rand(p);
    return n;
}

#endif /* TEST_TOPO_UTIL_H_INCLUDED */
