/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The leader layout of the shared-memory engine: node-major order, groups
 * and their NIC-near leaders (see topo_logic.h, MPIR_Topo_layout_t). */

#include <stdlib.h>
#include <string.h>
#include "topo_logic.h"

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

void MPIR_Topo_reduce_stages(long long n, int k, int g, int gsize, int j, MPIR_Topo_stages_t * s)
{
    s->part_lo = n * j / gsize;
    s->part_hi = n * (j + 1) / gsize;
    s->share_lo = n * g / k;
    s->share_hi = n * (g + 1) / k;
    s->sub_lo = s->share_lo + (s->share_hi - s->share_lo) * j / gsize;
    s->sub_hi = s->share_lo + (s->share_hi - s->share_lo) * (j + 1) / gsize;
}

int MPIR_Topo_node_levels(int local_size, int k, int levels)
{
    if (k < 2 || levels == 1)
        return 1;
    if (levels >= 2)
        return 2;
    return local_size >= MPIR_TOPO_TWO_LEVEL_MIN_LOCAL ? 2 : 1;
}

/* Level candidates of MPIR_Topo_node_units: runs of equal key[i] (cut also
 * at cuts[], NULL: none) as first indices into u[0..n); returns the number
 * of units, or 0 where a key is unknown */
static int units_by_key(int n, const int *key, const int *cuts, int *u)
{
    int count = 0;

    for (int i = 0; i < n; i++) {
        if (key[i] < 0)
            return 0;
        if (i == 0 || key[i] != key[i - 1] || (cuts && cuts[i] != cuts[i - 1])) {
            u[i] = i;
            count++;
        } else
            u[i] = u[i - 1];
    }
    return count;
}

int MPIR_Topo_node_units(int n, int k, const int *group_lo, const int *package,
                         const int *cache, int levels, int *unit, int *group_level)
{
    /* candidates, outermost first: packages, groups, caches */
    enum { PKG, GRP, CACHE, NCAND };
    int *cand = NULL, count[NCAND] = { 0, 0, 0 }, use[NCAND] = { 0, 0, 0 };
    int nlevels = 1, cap;

    if (levels < 0)
        levels = 0;     /* as the CVAR says: automatic */
    cap = levels > 0 ? levels : MPIR_TOPO_MAX_NODE_LEVELS;
    *group_level = 0;
    for (int i = 0; i < n; i++)
        unit[i] = 0;
    if (n < 2 || levels == 1 || (levels == 0 && n < MPIR_TOPO_TWO_LEVEL_MIN_LOCAL) ||
        (cand = MPIR_TOPO_MALLOC(sizeof(int) * NCAND * n)) == NULL)
        goto done;

    if (k >= 2 && k < n) {
        for (int g = 0; g < k; g++)
            for (int i = group_lo[g]; i < group_lo[g + 1]; i++)
                cand[GRP * n + i] = group_lo[g];
        count[GRP] = k;
    }
    if (cache) {
        /* within the groups (one group: the node) */
        count[CACHE] = units_by_key(n, cache, count[GRP] ? &cand[GRP * n] : NULL,
                                    &cand[CACHE * n]);
        if (count[CACHE] <= (count[GRP] ? k : 1) || count[CACHE] >= n ||
            (levels == 0 && n < MPIR_TOPO_CACHE_LEVEL_MIN * count[CACHE]))
            count[CACHE] = 0;
    }
    if (package) {
        count[PKG] = units_by_key(n, package, NULL, &cand[PKG * n]);
        /* whole groups only: a group's members share its package */
        for (int g = 0; g < k && count[GRP] && count[PKG]; g++)
            for (int i = group_lo[g] + 1; i < group_lo[g + 1]; i++)
                if (package[i] != package[group_lo[g]])
                    count[PKG] = 0;
        if (count[PKG] < 2 || count[PKG] >= n || (count[GRP] && 2 * count[PKG] > k))
            count[PKG] = 0;
    }
    /* caches never span packages: as many caches as packages are the
     * packages themselves */
    if (count[CACHE] && count[CACHE] <= count[PKG])
        count[PKG] = 0;
    /* the groups first, then the caches, then the packages */
    if (count[GRP] && nlevels < cap)
        use[GRP] = nlevels++;
    if (count[CACHE] && nlevels < cap)
        use[CACHE] = nlevels++;
    if (count[PKG] && nlevels < cap)
        use[PKG] = nlevels++;
    /* nested in order: packages, groups, caches */
    nlevels = 1;
    for (int c = 0; c < NCAND; c++)
        if (use[c]) {
            memcpy(&unit[nlevels * n], &cand[c * n], sizeof(int) * n);
            if (c == GRP)
                *group_level = nlevels;
            nlevels++;
        }
  done:
    MPIR_TOPO_FREE(cand);
    return nlevels;
}

void MPIR_Topo_unit_chain(int n, int nlevels, const int *unit, int me, int depth, int *lo,
                          int *hi, int *area_of)
{
    for (int d = 0; d < nlevels; d++) {
        lo[d] = unit[d * n + me];
        for (hi[d] = lo[d]; hi[d] < n && unit[d * n + hi[d]] == lo[d]; hi[d]++);
    }
    for (int d = 0; d <= depth; d++) {
        area_of[d] = 1;
        for (int i = 0; i < lo[d]; i++)
            area_of[d] += unit[depth * n + i] == i;
    }
}

void MPIR_Topo_copy_path(int depth, const int *lo, const int *hi, const int *area_of, int a,
                         int *area, int *maker, int *src, int *src_maker)
{
    *area = *src = 0;
    *maker = *src_maker = -1;
    for (int d = 1; d <= depth; d++) {
        if ((a >= lo[d] && a < hi[d]) || (*area && lo[d] == lo[d - 1]))
            continue;
        *src = *area;
        *src_maker = *maker;
        *area = area_of[d];
        *maker = lo[d];
    }
}

static int add_copy(MPIR_Topo_copy_t * c, int count, int lo, int hi, int src, int src_maker)
{
    if (lo < hi) {
        c[count].lo = lo;
        c[count].hi = hi;
        c[count].src = src;
        c[count].src_maker = src_maker;
        count++;
    }
    return count;
}

int MPIR_Topo_gather_copies(int n, int depth, const int *lo, const int *hi, const int *area_of,
                            int me, MPIR_Topo_copy_t * copies)
{
    int count = 0, top = depth;

    if (depth < 1 || lo[depth] != me)
        return 0;
    /* the highest level whose unit me starts */
    while (top > 0 && lo[top - 1] == me)
        top--;
    for (int d = top > 1 ? top : 1; d <= depth; d++) {
        count = add_copy(copies, count, lo[d - 1], lo[d], 0, -1);
        count = add_copy(copies, count, hi[d], hi[d - 1], 0, -1);
    }
    if (top > 0) {
        count = add_copy(copies, count, 0, lo[top - 1], area_of[top - 1], lo[top - 1]);
        count = add_copy(copies, count, hi[top - 1], n, area_of[top - 1], lo[top - 1]);
    }
    return count;
}

/* the groups of MPIR_Topo_cell_groups, cache domains kept apart where
 * by_cache is set */
static int cut_groups(int n, const int *cache, int by_cache, int fanin, int *lo)
{
    int count = 0;

    for (int s = 0; s < n;) {
        int e = s + 1, pieces;
        while (e < n && (!by_cache || cache[e] == cache[s]))
            e++;
        pieces = (e - s + fanin - 1) / fanin;
        for (int i = 0; i < pieces; i++)
            lo[count++] = s + (int) ((long long) (e - s) * i / pieces);
        s = e;
    }
    lo[count] = n;
    return count;
}

int MPIR_Topo_cell_groups(int n, const int *cache, int fanin, int *lo)
{
    int runs = 1;

    if (fanin < 0) {
        if (n < MPIR_TOPO_CELL_GROUPS_MIN_LOCAL)
            fanin = 0;
        else
            for (fanin = 1; fanin * fanin < n; fanin++);
    }
    if (n <= 0 || fanin < 2 || fanin >= n) {
        lo[0] = 0;
        lo[1] = n > 0 ? n : 0;
        return 1;
    }
    /* caches private to one or two processes on average (a core's L2)
     * would leave groups too small to save any reads: the node is one run */
    for (int i = 1; cache && i < n; i++)
        runs += cache[i] != cache[i - 1];
    return cut_groups(n, cache, cache && runs * 2 < n, fanin, lo);
}
