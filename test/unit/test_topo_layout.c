/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPIR_Topo_layout_create against a literal recomputation of the rules
 * documented in topo_logic.h: node-major order, node numbering by lowest
 * rank, k, groups (NUMA domains or near-equal runs) and NIC-aware leaders.
 *
 * Memory domain of a process, as documented: its NUMA node if known, else
 * its package if known.  An unbound process (both unknown) is counted in a
 * "no domain" class of its own. */

#include <time.h>
#include "test_topo_util.h"

#define NIC_PACK0 "xml/nic_pack0.xml"   /* NIC on package 0 only */
#define NIC_BOTH  "xml/nic_both.xml"    /* one NIC on each package */

/* ---------------------------------------------------------------------- */
/* reference                                                               */
/* ---------------------------------------------------------------------- */

/* domain class: 0 none, 1 NUMA node, 2 package (NUMA unknown) */
static int dom_class(const MPIR_Topo_loc_t * l)
{
    return l->numa >= 0 ? 1 : l->package >= 0 ? 2 : 0;
}

static int dom_id(const MPIR_Topo_loc_t * l)
{
    return l->numa >= 0 ? l->numa : l->package >= 0 ? l->package : 0;
}

static int dom_same(const MPIR_Topo_loc_t * a, const MPIR_Topo_loc_t * b)
{
    return dom_class(a) == dom_class(b) && dom_id(a) == dom_id(b);
}

static const MPIR_Topo_loc_t *ref_locs;
static const int *ref_nodeidx;

/* (node index, package, numa, cache, core, rank), written out field by field */
static int ref_cmp(const void *x, const void *y)
{
    int a = *(const int *) x, b = *(const int *) y;
    const MPIR_Topo_loc_t *la = &ref_locs[a], *lb = &ref_locs[b];
    int ka[6], kb[6], i;

    ka[0] = ref_nodeidx[a], kb[0] = ref_nodeidx[b];
    ka[1] = la->package, kb[1] = lb->package;
    ka[2] = la->numa, kb[2] = lb->numa;
    ka[3] = la->cache, kb[3] = lb->cache;
    ka[4] = la->core, kb[4] = lb->core;
    ka[5] = a, kb[5] = b;
    for (i = 0; i < 6; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

static int near_nic(const MPIR_Topo_loc_t * l)
{
    return l->nic >= 0 && l->nic_far == 0;
}

/* statistics over all checked layouts, to make sure the cases are covered */
static long st_layouts, st_domain_groups, st_even_groups, st_nic_leaders, st_capped;

/* Build the layout and compare it with the documented rules.  Returns 1 if
 * everything matched. */
static int check_layout(int p, const MPIR_Topo_loc_t * locs, int k_request, const char *tag)
{
    MPIR_Topo_layout_t *l = NULL;
    MPIR_Topo_map_t *map = NULL;
    int *nodeidx = tu_xmalloc(sizeof(int) * p), *ids = tu_xmalloc(sizeof(int) * p);
    int *cnt = tu_xmalloc(sizeof(int) * p), *ndom = tu_xmalloc(sizeof(int) * p);
    int *ref_order = tu_xmalloc(sizeof(int) * p), *seen = tu_xmalloc(sizeof(int) * p);
    int *dmem = tu_xmalloc(sizeof(int) * p);
    int r, i, n, g, nn = 0, kexp, min_size, min_dom, ok = 1;

    st_layouts++;
    /* node numbering: a new node id gets the next index when its lowest rank
     * is met while scanning the ranks in increasing order */
    for (r = 0; r < p; r++) {
        for (n = 0; n < nn && ids[n] != locs[r].node; n++);
        if (n == nn) {
            ids[nn] = locs[r].node;
            cnt[nn++] = 0;
        }
        nodeidx[r] = n;
        cnt[n]++;
    }
    /* expected order: sort every rank by the documented key */
    for (r = 0; r < p; r++)
        ref_order[r] = r;
    ref_locs = locs;
    ref_nodeidx = nodeidx;
    qsort(ref_order, p, sizeof(int), ref_cmp);
    /* distinct memory domains of every node */
    for (n = 0; n < nn; n++)
        ndom[n] = 0;
    for (n = 0, i = 0; n < nn; n++) {
        int e = i + cnt[n], nd = 0, j, q;
        for (j = i; j < e; j++) {
            for (q = 0; q < nd && !dom_same(&locs[dmem[q]], &locs[ref_order[j]]); q++);
            if (q == nd)
                dmem[nd++] = ref_order[j];
        }
        ndom[n] = nd;
        i = e;
    }
    min_size = p;
    min_dom = p;
    for (n = 0; n < nn; n++) {
        if (cnt[n] < min_size)
            min_size = cnt[n];
        if (ndom[n] < min_dom)
            min_dom = ndom[n];
    }
    kexp = k_request > 0 ? k_request : min_dom;
    if (kexp > min_size) {
        kexp = min_size;
        st_capped++;
    }
    if (kexp < 1)
        kexp = 1;

    if (!CHECK(MPIR_Topo_layout_create(p, locs, k_request, &l) == 0 && l != NULL,
               "%s p %d k_req %d: layout_create failed", tag, p, k_request))
        goto out;
    ok &= CHECK(l->p == p, "%s: layout p = %d, expected %d", tag, l->p, p);
    ok &= CHECK(l->nnodes == nn, "%s p %d: nnodes = %d, expected %d", tag, p, l->nnodes, nn);
    ok &= CHECK(l->k == kexp, "%s p %d k_req %d: k = %d, expected %d (smallest node %d, "
                "fewest domains %d)", tag, p, k_request, l->k, kexp, min_size, min_dom);
    if (!ok)
        goto out;

    /* order and pos: inverse permutations */
    for (r = 0; r < p; r++)
        seen[r] = 0;
    for (i = 0; i < p && ok; i++) {
        ok &= CHECK(l->order[i] >= 0 && l->order[i] < p && !seen[l->order[i]],
                    "%s p %d: order[%d] = %d repeated or out of range", tag, p, i, l->order[i]);
        if (ok) {
            seen[l->order[i]] = 1;
            ok &= CHECK(l->pos[l->order[i]] == i, "%s p %d: pos[order[%d] = %d] = %d", tag, p, i,
                        l->order[i], l->pos[l->order[i]]);
        }
    }
    /* node[] by lowest rank, and the same as the map's node index */
    if (CHECK(MPIR_Topo_map_create(p, locs, &map) == 0, "%s: map_create failed", tag)) {
        ok &= CHECK(MPIR_Topo_map_num_nodes(map) == nn, "%s: map has %d nodes, expected %d", tag,
                    MPIR_Topo_map_num_nodes(map), nn);
        for (r = 0; r < p && ok; r++)
            ok &= CHECK(l->node[r] == nodeidx[r] && l->node[r] == MPIR_Topo_map_node_index(map, r),
                        "%s p %d: node[%d] = %d, expected %d, map says %d", tag, p, r, l->node[r],
                        nodeidx[r], MPIR_Topo_map_node_index(map, r));
    } else {
        ok = 0;
    }
    if (!ok)
        goto out;

    /* node_start: each node's ranks, nothing else */
    ok &= CHECK(l->node_start[0] == 0 && l->node_start[nn] == p, "%s p %d: node_start[0] = %d, "
                "node_start[%d] = %d", tag, p, l->node_start[0], nn, l->node_start[nn]);
    for (n = 0; n < nn && ok; n++) {
        ok &= CHECK(l->node_start[n + 1] - l->node_start[n] == cnt[n], "%s p %d: node %d holds %d "
                    "positions, has %d ranks", tag, p, n, l->node_start[n + 1] - l->node_start[n],
                    cnt[n]);
        for (i = l->node_start[n]; i < l->node_start[n + 1] && ok; i++)
            ok &= CHECK(nodeidx[l->order[i]] == n, "%s p %d: position %d (rank %d of node %d) in "
                        "node %d's range", tag, p, i, l->order[i], nodeidx[l->order[i]], n);
    }
    /* within a node: (package, numa, cache, core, rank) */
    for (i = 0; i < p && ok; i++)
        ok &= CHECK(l->order[i] == ref_order[i], "%s p %d k_req %d: order[%d] = %d, expected %d",
                    tag, p, k_request, i, l->order[i], ref_order[i]);
    if (!ok)
        goto out;

    /* groups: k non-empty contiguous runs partitioning each node */
    ok &= CHECK(l->group_start[nn * kexp] == p, "%s p %d: group_start[%d] = %d", tag, p,
                nn * kexp, l->group_start[nn * kexp]);
    for (n = 0; n < nn && ok; n++) {
        int s = l->node_start[n], e = l->node_start[n + 1], m = e - s;
        int *gs = &l->group_start[n * kexp], mn = m, mx = 0;
        ok &= CHECK(gs[0] == s, "%s p %d: node %d starts at %d, its group 0 at %d", tag, p, n, s,
                    gs[0]);
        for (g = 0; g < kexp && ok; g++) {
            int ge = (g + 1 < kexp) ? gs[g + 1] : e;
            ok &= CHECK(gs[g] < ge && ge <= e, "%s p %d k %d: node %d [%d,%d) group %d is [%d,%d)",
                        tag, p, kexp, n, s, e, g, gs[g], ge);
            if (ge - gs[g] < mn)
                mn = ge - gs[g];
            if (ge - gs[g] > mx)
                mx = ge - gs[g];
        }
        if (n + 1 < nn)
            ok &= CHECK(gs[kexp] == e, "%s p %d: node %d ends at %d, next group starts at %d", tag,
                        p, n, e, gs[kexp]);
        if (!ok)
            break;
        if (ndom[n] == kexp) {
            /* the groups are the node's domains */
            st_domain_groups++;
            for (g = 0; g < kexp && ok; g++) {
                int ge = (g + 1 < kexp) ? gs[g + 1] : e, g2;
                for (i = gs[g] + 1; i < ge && ok; i++)
                    ok &= CHECK(dom_same(&locs[l->order[i]], &locs[l->order[gs[g]]]),
                                "%s p %d k %d: node %d group %d mixes domains (ranks %d, %d)",
                                tag, p, kexp, n, g, l->order[gs[g]], l->order[i]);
                for (g2 = 0; g2 < g && ok; g2++)
                    ok &= CHECK(!dom_same(&locs[l->order[gs[g]]], &locs[l->order[gs[g2]]]),
                                "%s p %d k %d: node %d groups %d and %d share a domain", tag, p,
                                kexp, n, g2, g);
            }
        } else {
            st_even_groups++;
            ok &= CHECK(mx - mn <= 1, "%s p %d k %d: node %d (%d procs, %d domains) group sizes "
                        "%d..%d", tag, p, kexp, n, m, ndom[n], mn, mx);
        }
    }
    if (!ok)
        goto out;

    /* leaders: first NIC-close member, else first member */
    for (i = 0; i < nn * kexp && ok; i++) {
        int s = l->group_start[i], e = l->group_start[i + 1], q, want = l->order[s];
        for (q = s; q < e; q++)
            if (near_nic(&locs[l->order[q]])) {
                want = l->order[q];
                break;
            }
        st_nic_leaders += want != l->order[s];
        ok &= CHECK(l->leader[i] >= 0 && l->leader[i] < p && l->pos[l->leader[i]] >= s &&
                    l->pos[l->leader[i]] < e, "%s p %d: leader %d of group %d is not a member",
                    tag, p, l->leader[i], i);
        ok &= CHECK(l->leader[i] == want, "%s p %d k %d: group %d leader %d, expected %d", tag, p,
                    kexp, i, l->leader[i], want);
    }

  out:
    MPIR_Topo_map_free(map);
    MPIR_Topo_layout_free(l);
    free(nodeidx), free(ids), free(cnt), free(ndom), free(ref_order), free(seen), free(dmem);
    return ok;
}

/* ---------------------------------------------------------------------- */
/* placements                                                              */
/* ---------------------------------------------------------------------- */

enum { BLOCK, CYCLIC, SHUFFLE };
static const char *mode_name[] = { "block", "round-robin", "shuffled" };

/* node id of node n: arbitrary, not in rank order */
static int node_id(int n)
{
    return (n * 37 + 11) % 101;
}

/* p = sum(cnt) ranks on nn nodes; node n uses cnt[n] of the nobj template
 * entries tmpl[n % ntypes][*].  BLOCK: consecutive ranks on a node, entries
 * in order; CYCLIC: ranks round-robin over the nodes, entries interleaved
 * over packages; SHUFFLE: random ranks and random entries. */
static int place(const MPIR_Topo_loc_t * tmpl, int ntypes, int nobj, int nn, const int *cnt,
                 int mode, unsigned seed, MPIR_Topo_loc_t * locs)
{
    int n, i, j, p = 0, ns = 0;
    int *obj = tu_xmalloc(sizeof(int) * nobj), *slots, *used = tu_xmalloc(sizeof(int) * nn);

    tu_seed(seed);
    for (n = 0; n < nn; n++)
        p += cnt[n];
    slots = tu_xmalloc(sizeof(int) * 2 * p);
    for (n = 0; n < nn; n++)
        used[n] = 0;
    if (mode == CYCLIC) {
        for (n = 0; ns < p; n = (n + 1) % nn)
            if (used[n] < cnt[n]) {
                slots[2 * ns] = n;
                slots[2 * ns + 1] = used[n]++;
                ns++;
            }
    } else {
        for (n = 0; n < nn; n++)
            for (i = 0; i < cnt[n]; i++) {
                slots[2 * ns] = n;
                slots[2 * ns + 1] = i;
                ns++;
            }
        if (mode == SHUFFLE)
            for (i = p - 1; i > 0; i--) {
                int k = tu_rand(i + 1), a = slots[2 * i], b = slots[2 * i + 1];
                slots[2 * i] = slots[2 * k];
                slots[2 * i + 1] = slots[2 * k + 1];
                slots[2 * k] = a;
                slots[2 * k + 1] = b;
            }
    }
    for (n = 0; n < nn; n++) {
        const MPIR_Topo_loc_t *t = &tmpl[(n % ntypes) * nobj];
        /* entry order of this node */
        for (i = 0; i < nobj; i++)
            obj[i] = i;
        if (mode == SHUFFLE)
            tu_shuffle(obj, nobj);
        else if (mode == CYCLIC) {
            /* by (index inside the package, package); unknown package last */
            int *key = tu_xmalloc(sizeof(int) * nobj), *in = tu_xmalloc(sizeof(int) * (nobj + 1));
            for (i = 0; i <= nobj; i++)
                in[i] = 0;
            for (i = 0; i < nobj; i++) {
                int pk = (t[i].package < 0 || t[i].package >= nobj) ? nobj : t[i].package;
                key[i] = in[pk]++ * (nobj + 1) + pk;
            }
            for (i = 1; i < nobj; i++)
                for (j = i; j > 0 && key[obj[j - 1]] > key[obj[j]]; j--) {
                    int x = obj[j];
                    obj[j] = obj[j - 1];
                    obj[j - 1] = x;
                }
            free(key), free(in);
        }
        for (i = 0; i < ns; i++)
            if (slots[2 * i] == n) {
                locs[i] = t[obj[slots[2 * i + 1] % nobj]];
                locs[i].node = node_id(n);
            }
    }
    free(obj), free(slots), free(used);
    return p;
}

/* node configurations, as process counts per node; 0 stands for nobj, -1
 * for nobj - 1, -2 for nobj / 2 */
#define MAXN 6
static const struct {
    const char *name;
    int nn;
    int cnt[MAXN];
} configs[] = {
    {"1 full node", 1, {0}},
    {"1 process", 1, {1}},
    {"1 node of 3", 1, {3}},
    {"4 equal nodes", 4, {0, 0, 0, 0}},
    {"3 uneven nodes with a single process", 3, {0, -2, 1}},
    {"6 uneven nodes", 6, {2, 0, 1, -1, 3, -2}},
    {"2 nodes, smaller first", 2, {3, 0}},
};

#define NCONFIGS ((int) (sizeof(configs) / sizeof(configs[0])))

static int config_counts(int c, int nobj, int *cnt)
{
    int n;
    for (n = 0; n < configs[c].nn; n++) {
        int v = configs[c].cnt[n];
        v = v == 0 ? nobj : v == -1 ? nobj - 1 : v == -2 ? nobj / 2 : v;
        cnt[n] = v < 1 ? 1 : v > nobj ? nobj : v;
    }
    return configs[c].nn;
}

/* k_request values: 0..3, one more than the smallest node, much larger */
static int k_values(int min_node, int *ks)
{
    ks[0] = 0, ks[1] = 1, ks[2] = 2, ks[3] = 3, ks[4] = min_node + 1, ks[5] = 1000;
    return 6;
}

static MPIR_Topo_loc_t unbound_loc(void)
{
    static int done;
    static MPIR_Topo_loc_t u;
    if (!done) {
        u = tu_loc_unbound(0);
        done = 1;
    }
    return u;
}

/* run every node configuration, placement and k on one template */
static void run_template(const MPIR_Topo_loc_t * tmpl, int ntypes, int nobj, int unb, int nicrand,
                         const char *tag)
{
    MPIR_Topo_loc_t *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * MAXN * nobj);
    int c, mode, seed, cnt[MAXN], ks[8], nk, ki, n, p, r, min_node;
    char buf[200];

    for (c = 0; c < NCONFIGS; c++) {
        int nn = config_counts(c, nobj, cnt);
        for (min_node = nobj, n = 0; n < nn; n++)
            if (cnt[n] < min_node)
                min_node = cnt[n];
        nk = k_values(min_node, ks);
        for (mode = BLOCK; mode <= SHUFFLE; mode++)
            for (seed = 0; seed < (mode == SHUFFLE ? (tu_small() ? 2 : 4) : 1); seed++) {
                p = place(tmpl, ntypes, nobj, nn, cnt, mode, 1000 * c + 17 * seed + mode, locs);
                for (r = 0; r < p; r++) {
                    /* unb 1: every fifth rank unbound; 2: all unbound */
                    if (unb == 2 || (unb == 1 && r % 5 == 2)) {
                        int node = locs[r].node;
                        locs[r] = unbound_loc();
                        locs[r].node = node;
                    }
                    /* any combination, also nic >= 0 with nic_far set */
                    if (nicrand && locs[r].package >= 0) {
                        locs[r].nic_far = tu_rand(2);
                        locs[r].nic = tu_rand(3) - 1;
                    }
                }
                snprintf(buf, sizeof(buf), "%s, %s, %s", tag, configs[c].name, mode_name[mode]);
                for (ki = 0; ki < nk; ki++)
                    if (!check_layout(p, locs, ks[ki], buf))
                        break;
            }
    }
    free(locs);
}

/* template: one entry per object of the given type */
static MPIR_Topo_loc_t *objs_template(hwloc_topology_t t, hwloc_obj_type_t type, int *nobj)
{
    int i, n = hwloc_get_nbobjs_by_type(t, type);
    MPIR_Topo_loc_t *tmpl = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * n);
    for (i = 0; i < n; i++)
        tmpl[i] = tu_loc_obj(t, type, i, 0);
    *nobj = n;
    return tmpl;
}

/* a non-NULL value that create must overwrite with NULL on failure */
static MPIR_Topo_layout_t sentinel;

/* ---------------------------------------------------------------------- */
/* groups                                                                  */
/* ---------------------------------------------------------------------- */

static void args_group(void)
{
    MPIR_Topo_loc_t locs[4];
    MPIR_Topo_layout_t *l = &sentinel;
    int i;

    tu_begin("layout: bad arguments");
    for (i = 0; i < 4; i++) {
        locs[i] = unbound_loc();
        locs[i].node = i / 2;
    }
    CHECK(MPIR_Topo_layout_create(0, locs, 0, &l) == -1 && l == NULL, "p = 0 accepted");
    l = &sentinel;
    CHECK(MPIR_Topo_layout_create(-5, locs, 1, &l) == -1 && l == NULL, "p = -5 accepted");
    l = &sentinel;
    CHECK(MPIR_Topo_layout_create(4, NULL, 0, &l) == -1 && l == NULL, "NULL locs accepted");
    l = &sentinel;
    CHECK(MPIR_Topo_layout_create(4, locs, -1, &l) == -1 && l == NULL, "k_request -1 accepted");
    l = &sentinel;
    CHECK(MPIR_Topo_layout_create(4, locs, -100, &l) == -1 && l == NULL,
          "k_request -100 accepted");
    MPIR_Topo_layout_free(NULL);
    /* and a valid call right after still works */
    check_layout(4, locs, 2, "args");
    tu_end();
}

/* small cases worked out by hand */
static void hand_group(void)
{
    hwloc_topology_t t = tu_synthetic("pack:2 numa:1 core:2 pu:1");
    static const int cores[8] = { 3, 0, 0, 2, 1, 3, 2, 1 };
    static const int nodes[8] = { 5, 2, 5, 2, 5, 2, 5, 2 };
    static const int exp_order[8] = { 2, 4, 6, 0, 1, 7, 3, 5 };
    static const int exp_gs[5] = { 0, 2, 4, 6, 8 };
    static const int exp_lead[4] = { 2, 6, 1, 3 };
    MPIR_Topo_loc_t locs[8];
    MPIR_Topo_layout_t *l;
    int i;

    tu_begin("layout: hand-checked examples");
    /* nodes 5 and 2 (node 5 holds rank 0, so it is node 0); 2 packages each */
    for (i = 0; i < 8; i++)
        locs[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, cores[i], nodes[i]);
    if (CHECK(MPIR_Topo_layout_create(8, locs, 0, &l) == 0, "create failed")) {
        CHECK(l->nnodes == 2 && l->k == 2, "nnodes %d k %d, expected 2 2", l->nnodes, l->k);
        for (i = 0; i < 8; i++) {
            CHECK_EQ(l->order[i], exp_order[i], "(i %d)", i);
            CHECK_EQ(l->pos[exp_order[i]], i, "(rank %d)", exp_order[i]);
            CHECK_EQ(l->node[i], nodes[i] == 5 ? 0 : 1, "(rank %d)", i);
        }
        for (i = 0; i < 3; i++)
            CHECK_EQ(l->node_start[i], 4 * i, "(n %d)", i);
        for (i = 0; i < 5 && l->k == 2; i++)
            CHECK_EQ(l->group_start[i], exp_gs[i], "(g %d)", i);
        for (i = 0; i < 4 && l->k == 2; i++)
            CHECK_EQ(l->leader[i], exp_lead[i], "(g %d)", i);
        MPIR_Topo_layout_free(l);
    }
    /* k_request 1: one group per node led by its first position */
    if (CHECK(MPIR_Topo_layout_create(8, locs, 1, &l) == 0, "create failed")) {
        CHECK(l->k == 1 && l->group_start[0] == 0 && l->group_start[1] == 4 &&
              l->group_start[2] == 8 && l->leader[0] == 2 && l->leader[1] == 1,
              "k_request 1: k %d groups %d %d %d leaders %d %d", l->k, l->group_start[0],
              l->group_start[1], l->group_start[2], l->leader[0], l->leader[1]);
        MPIR_Topo_layout_free(l);
    }
    /* rank 4 near a NIC, rank 2 far: rank 4 leads group 0 of node 0 */
    for (i = 0; i < 8; i++)
        locs[i].nic_far = 1;
    locs[4].nic = 0, locs[4].nic_far = 0;
    locs[3].nic = 1, locs[3].nic_far = 0;
    if (CHECK(MPIR_Topo_layout_create(8, locs, 0, &l) == 0, "create failed")) {
        CHECK(l->k == 2 && l->leader[0] == 4 && l->leader[1] == 6 && l->leader[2] == 1 &&
              l->leader[3] == 3, "NIC leaders %d %d %d %d, expected 4 6 1 3", l->leader[0],
              l->leader[1], l->leader[2], l->leader[3]);
        MPIR_Topo_layout_free(l);
    }
    /* a node of one process caps k; 3 nodes */
    locs[7].node = 9;
    if (CHECK(MPIR_Topo_layout_create(8, locs, 0, &l) == 0, "create failed")) {
        CHECK(l->nnodes == 3 && l->k == 1 && l->node[7] == 2 && l->node_start[2] == 7 &&
              l->group_start[3] == 8, "single-process node: nnodes %d k %d node[7] %d",
              l->nnodes, l->k, l->node[7]);
        MPIR_Topo_layout_free(l);
    }
    hwloc_topology_destroy(t);

    /* NUMA shared by two packages: 2 NUMA domains, so k = 2, not 4 */
    t = tu_synthetic("numa:2 pack:2 core:2 pu:1");
    for (i = 0; i < 8; i++)
        locs[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, 7 - i, 0);
    if (CHECK(MPIR_Topo_layout_create(8, locs, 0, &l) == 0, "create failed")) {
        CHECK(l->k == 2, "shared-MC node: k = %d, expected 2 (NUMA domains)", l->k);
        if (l->k == 2)
            CHECK(l->group_start[1] == 4 && l->order[0] == 7 && l->order[4] == 3,
                  "shared-MC groups: group 1 at %d, order[0] %d order[4] %d", l->group_start[1],
                  l->order[0], l->order[4]);
        MPIR_Topo_layout_free(l);
    }
    hwloc_topology_destroy(t);
    tu_end();
}

static void synthetic_group(const char *synth, int pu_bind)
{
    hwloc_topology_t t = tu_synthetic(synth);
    int nobj;
    MPIR_Topo_loc_t *tmpl = objs_template(t, pu_bind ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE, &nobj);
    char name[200];

    snprintf(name, sizeof(name), "layout vs rules: \"%s\" (%s-bound, some unbound, random NIC)",
             synth, pu_bind ? "PU" : "core");
    tu_begin(name);
    run_template(tmpl, 1, nobj, 0, 0, synth);
    run_template(tmpl, 1, nobj, 1, 0, synth);
    run_template(tmpl, 1, nobj, 0, 1, synth);
    tu_end();
    free(tmpl);
    hwloc_topology_destroy(t);
}

/* processes bound to a core or to a whole L3 (core -1): the cache key
 * orders an L3-bound process after the cores of the L3s before it */
static void cache_group(void)
{
    hwloc_topology_t t = tu_synthetic("pack:2 numa:1 l3:2 core:2 pu:1");
    int nc = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    int nl3 = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L3CACHE), i;
    MPIR_Topo_loc_t *tmpl = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * (nc + nl3));

    tu_begin("layout vs rules: \"pack:2 numa:1 l3:2 core:2 pu:1\", core- and L3-bound processes");
    for (i = 0; i < nc; i++)
        tmpl[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0);
    for (i = 0; i < nl3; i++) {
        tmpl[nc + i] = tu_loc_obj(t, HWLOC_OBJ_L3CACHE, i, 0);
        CHECK(tmpl[nc + i].core == -1 && tmpl[nc + i].cache == tmpl[2 * i].cache &&
              tmpl[nc + i].cache != tmpl[(2 * i + 2) % nc].cache,
              "L3 %d binding: core %d cache %d", i, tmpl[nc + i].core, tmpl[nc + i].cache);
    }
    run_template(tmpl, 1, nc + nl3, 0, 0, "cores + L3s");
    run_template(tmpl, 1, nc + nl3, 1, 1, "cores + L3s, some unbound, random NIC");
    tu_end();
    free(tmpl);
    hwloc_topology_destroy(t);
}

/* NUMA unknown: domains are packages */
static void nonuma_group(void)
{
    hwloc_topology_t t = tu_synthetic("pack:2 core:4 pu:1");
    int nobj, i, nc, np;
    MPIR_Topo_loc_t *tmpl = objs_template(t, HWLOC_OBJ_CORE, &nobj), *mix;

    tu_begin("layout vs rules: no NUMA info (package domains), package-bound processes");
    for (i = 0; i < nobj; i++)
        tmpl[i].numa = -1;
    run_template(tmpl, 1, nobj, 0, 0, "pack:2 core:4, numa unknown");
    run_template(tmpl, 1, nobj, 1, 0, "pack:2 core:4, numa unknown, some unbound");
    free(tmpl);
    hwloc_topology_destroy(t);

    /* bound to cores (NUMA known) or to a whole package (NUMA unknown) */
    t = tu_synthetic("pack:2 numa:2 core:2 pu:1");
    nc = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    np = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    mix = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * (nc + 2 * np));
    for (i = 0; i < nc; i++)
        mix[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0);
    for (i = 0; i < 2 * np; i++) {
        mix[nc + i] = tu_loc_obj(t, HWLOC_OBJ_PACKAGE, i % np, 0);
        CHECK(mix[nc + i].numa == -1 && mix[nc + i].package == i % np,
              "package binding: numa %d package %d", mix[nc + i].numa, mix[nc + i].package);
    }
    run_template(mix, 1, nc + 2 * np, 0, 0, "pack:2 numa:2 core:2, cores + packages");
    /* packages only: two package domains per full node */
    run_template(mix + nc, 1, 2 * np, 0, 0, "pack:2 numa:2 core:2, packages only");
    free(mix);
    hwloc_topology_destroy(t);
    tu_end();
}

static void unbound_group(void)
{
    hwloc_topology_t t = tu_synthetic("pack:2 numa:2 core:2 pu:1");
    int nobj;
    MPIR_Topo_loc_t *tmpl = objs_template(t, HWLOC_OBJ_CORE, &nobj);

    tu_begin("layout vs rules: unbound processes (all -1)");
    run_template(tmpl, 1, nobj, 2, 0, "all unbound");
    tu_end();
    free(tmpl);
    hwloc_topology_destroy(t);
}

/* nodes from the NIC XML files (and one without NIC); also processes
 * unbound or bound across packages, which sort first and are not near */
static void nic_group(void)
{
    hwloc_topology_t tx[3];
    int ty, i, nobj = 10;
    MPIR_Topo_loc_t tmpl[3 * 10];
    hwloc_bitmap_t cross = hwloc_bitmap_alloc();
    long before;

    tu_begin("layout vs rules: NIC XML nodes (NIC on package 0 / both / none), NIC-first leaders");
    tx[0] = tu_xml(NIC_PACK0);
    tx[1] = tu_xml(NIC_BOTH);
    tx[2] = tu_synthetic("pack:2 core:4 pu:1");
    hwloc_bitmap_set_range(cross, 3, 4);
    for (ty = 0; ty < 3; ty++) {
        for (i = 0; i < 8; i++)
            tmpl[ty * nobj + i] = tu_loc_obj(tx[ty], HWLOC_OBJ_CORE, i, 0);
        MPIR_Topo_loc_from_hwloc(tx[ty], NULL, 0, &tmpl[ty * nobj + 8]);
        MPIR_Topo_loc_from_hwloc(tx[ty], cross, 0, &tmpl[ty * nobj + 9]);
    }
    CHECK(near_nic(&tmpl[0]) && !near_nic(&tmpl[4]) && near_nic(&tmpl[nobj + 4]) &&
          !near_nic(&tmpl[2 * nobj]) && !near_nic(&tmpl[9]) && tmpl[9].nic_far,
          "unexpected NIC locality in the XML templates");
    before = st_nic_leaders;
    /* cores only, then cores + unbound + cross-package */
    run_template(tmpl, 3, nobj, 0, 0, "NIC xml");
    run_template(tmpl, 3, nobj, 1, 0, "NIC xml, some unbound");
    /* nodes with only package-1 (far) processes of nic_pack0.xml */
    {
        MPIR_Topo_loc_t far[3 * 6];
        for (ty = 0; ty < 3; ty++)
            for (i = 0; i < 6; i++)
                far[ty * 6 + i] = ty == 0 ? tmpl[4 + i % 4] : tmpl[ty * nobj + (i < 4 ? i : 4 + i)];
        run_template(far, 3, 6, 0, 0, "NIC xml, far-only nodes");
    }
    CHECK(st_nic_leaders > before, "no group had a NIC-close leader other than its first member");
    hwloc_bitmap_free(cross);
    for (ty = 0; ty < 3; ty++)
        hwloc_topology_destroy(tx[ty]);
    tu_end();
}

/* allocation failures: -1, *layout NULL, nothing leaked; a retry works */
static void alloc_group(void)
{
    hwloc_topology_t t = tu_synthetic("pack:2 numa:2 core:2 pu:1");
    MPIR_Topo_loc_t locs[24];
    MPIR_Topo_layout_t *l;
    int cnt[3] = { 8, 8, 8 }, nobj, p, k, rc, fails = 0;
    MPIR_Topo_loc_t *tmpl = objs_template(t, HWLOC_OBJ_CORE, &nobj);

    tu_begin("layout: allocation failures");
    p = place(tmpl, 1, nobj, 3, cnt, SHUFFLE, 5, locs);
    for (k = 0;; k++) {
        l = &sentinel;
        MPIR_Topo_standalone_fail_countdown = k;
        rc = MPIR_Topo_layout_create(p, locs, 0, &l);
        MPIR_Topo_standalone_fail_countdown = -1;
        if (rc == 0)
            break;
        fails++;
        CHECK(rc == -1 && l == NULL, "failure at allocation %d: rc %d layout %p", k, rc,
              (void *) l);
    }
    MPIR_Topo_layout_free(l);
    CHECK(fails >= 3, "only %d allocation failures seen", fails);
    check_layout(p, locs, 0, "after allocation failures");
    free(tmpl);
    hwloc_topology_destroy(t);
    tu_end();
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* p = 16384: 64 nodes x 256 cores (8 NUMA domains each), round-robin,
 * NIC on package 0 of even nodes */
static void scale_group(void)
{
    int nn = tu_small() ? 8 : 64, ppn = 256, p = nn * ppn, r, ki;
    static const int ks[3] = { 0, 3, 1000 };
    hwloc_topology_t t = tu_synthetic("pack:2 numa:4 l3:1 core:32 pu:1");
    MPIR_Topo_loc_t tmpl[256], *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * p);
    MPIR_Topo_layout_t *l;
    double t0, t_create = 0;
    char name[160];

    snprintf(name, sizeof(name), "layout scale: p=%d (%d nodes x %d, round-robin)", p, nn, ppn);
    tu_begin(name);
    for (r = 0; r < ppn; r++)
        tmpl[r] = tu_loc_obj(t, HWLOC_OBJ_CORE, r, 0);
    for (r = 0; r < p; r++) {
        int node = r % nn;
        locs[r] = tmpl[(r / nn * 37) % ppn];    /* 37 is odd: a permutation of the cores */
        locs[r].node = 1000 - node;
        locs[r].nic = (node % 2 == 0 && locs[r].package == 0) ? 0 : -1;
        locs[r].nic_far = node % 2 == 0 && locs[r].package != 0;
    }
    for (ki = 0; ki < 3; ki++) {
        t0 = now();
        if (CHECK(MPIR_Topo_layout_create(p, locs, ks[ki], &l) == 0, "create failed")) {
            t_create += now() - t0;
            CHECK(l->nnodes == nn && l->k == (ks[ki] == 0 ? 8 : ks[ki] > ppn ? ppn : ks[ki]),
                  "nnodes %d k %d", l->nnodes, l->k);
            MPIR_Topo_layout_free(l);
        }
        check_layout(p, locs, ks[ki], "scale");
    }
    if (!tu_small())
        CHECK(t_create < 2.0, "too slow: 3 layouts in %.3fs", t_create);
    printf("  p=%d: 3 layouts in %.3fs\n", p, t_create);
    tu_end();
    free(locs);
    hwloc_topology_destroy(t);
}

int main(void)
{
    args_group();
    hand_group();
    synthetic_group("pack:2 numa:1 core:4 pu:1", 0);
    synthetic_group("pack:2 numa:2 core:2 pu:1", 0);
    synthetic_group("pack:1 core:2 pu:1", 0);
    synthetic_group("numa:2 pack:2 core:2 pu:1", 0);
    synthetic_group("pack:2 numa:2 l3:1 l2:2 core:2 pu:2", 1);
    cache_group();
    nonuma_group();
    unbound_group();
    nic_group();
    alloc_group();
    scale_group();
    tu_begin("layout: coverage of the checked cases");
    CHECK(st_domain_groups > 0 && st_even_groups > 0 && st_capped > 0,
          "cases not covered: %ld domain-grouped nodes, %ld near-equal nodes, %ld capped k",
          st_domain_groups, st_even_groups, st_capped);
    printf("  %ld layouts: %ld nodes grouped by domain, %ld in near-equal runs, %ld capped k, "
           "%ld NIC-close leaders after the first member\n", st_layouts, st_domain_groups,
           st_even_groups, st_capped, st_nic_leaders);
    tu_end();
    return tu_exit();
}
