/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The stages of the engine's two-level reduction within a node
 * (MPIR_Topo_reduce_stages): for every node of the leader layouts of the
 * shared placements, and for hand-made uneven groups, each group's stage-1
 * parts cover the round once, the shares cover it once, each group's
 * stage-2 subs cover its share once, and parts and subs are balanced
 * (sizes differ by at most one element).  A gap or an overlap here is an
 * element that a two-level allreduce leaves unreduced or reduces twice. */

#include "test_topo_util.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* counts how often each element of [0, n) is covered */
static void cover(int *hits, long long lo, long long hi)
{
    for (long long i = lo; i < hi; i++)
        hits[i]++;
}

static int all_once(const int *hits, long long lo, long long hi)
{
    for (long long i = lo; i < hi; i++)
        if (hits[i] != 1)
            return 0;
    return 1;
}

/* one node of k groups, sizes gsize[0..k), on a round of n elements */
static void check_node(int k, const int *gsize, long long n, const char *tag)
{
    int *round_hits = tu_xmalloc(sizeof(int) * (n + 1));
    int *part_hits = tu_xmalloc(sizeof(int) * (n + 1));
    long long share_end = 0;

    memset(round_hits, 0, sizeof(int) * (n + 1));
    for (int g = 0; g < k; g++) {
        MPIR_Topo_stages_t s0, s;
        long long pmin = n, pmax = 0, smin = n, smax = 0;

        if (!CHECK(gsize[g] > 0, "%s: group %d is empty", tag, g))
            continue;
        memset(part_hits, 0, sizeof(int) * (n + 1));
        MPIR_Topo_reduce_stages(n, k, g, gsize[g], 0, &s0);
        CHECK(s0.share_lo == share_end, "%s: share of group %d starts at %lld, not %lld", tag, g,
              s0.share_lo, share_end);
        share_end = s0.share_hi;
        for (int j = 0; j < gsize[g]; j++) {
            MPIR_Topo_reduce_stages(n, k, g, gsize[g], j, &s);
            CHECK(s.share_lo == s0.share_lo && s.share_hi == s0.share_hi,
                  "%s: members of group %d disagree on its share", tag, g);
            CHECK(s.part_lo <= s.part_hi && s.sub_lo <= s.sub_hi && s.part_lo >= 0 &&
                  s.part_hi <= n && s.sub_lo >= s.share_lo && s.sub_hi <= s.share_hi,
                  "%s: group %d member %d: ranges out of bounds", tag, g, j);
            cover(part_hits, s.part_lo, s.part_hi);
            cover(round_hits, s.sub_lo, s.sub_hi);
            pmin = MIN(pmin, s.part_hi - s.part_lo);
            pmax = MAX(pmax, s.part_hi - s.part_lo);
            smin = MIN(smin, s.sub_hi - s.sub_lo);
            smax = MAX(smax, s.sub_hi - s.sub_lo);
        }
        CHECK(all_once(part_hits, 0, n), "%s: group %d's parts do not cover the round once", tag,
              g);
        CHECK(pmax - pmin <= 1 && smax - smin <= 1,
              "%s: group %d unbalanced (parts %lld-%lld, subs %lld-%lld)", tag, g, pmin, pmax,
              smin, smax);
    }
    CHECK(share_end == n, "%s: the shares end at %lld, not %lld", tag, share_end, n);
    CHECK(all_once(round_hits, 0, n), "%s: the subs do not cover the round once", tag);
    free(round_hits);
    free(part_hits);
}

static const long long sizes[] = { 0, 1, 2, 3, 5, 7, 8, 63, 64, 65, 1000, 4097 };

#define NSIZES ((int) (sizeof(sizes) / sizeof(sizes[0])))

static void hand_group(void)
{
    static const int g1[] = { 1 }, g2[] = { 2, 1 }, g3[] = { 1, 1, 1 }, g4[] = { 3, 8, 1, 5 },
        g5[] = { 16, 16 }, g6[] = { 7, 6, 7, 6, 7, 6, 7, 6 };
    static const struct {
        int k;
        const int *gs;
    } nodes[] = { {1, g1}, {2, g2}, {3, g3}, {4, g4}, {2, g5}, {8, g6} };
    char tag[64];

    tu_begin("stages: hand-made groups (uneven, single members, more members than elements)");
    for (int c = 0; c < (int) (sizeof(nodes) / sizeof(nodes[0])); c++)
        for (int i = 0; i < NSIZES; i++) {
            snprintf(tag, sizeof(tag), "k=%d n=%lld", nodes[c].k, sizes[i]);
            check_node(nodes[c].k, nodes[c].gs, sizes[i], tag);
        }
    tu_end();
}

/* fn(l, locs, n, tag) for every node n of the leader layouts the engine
 * builds from the shared placements (tag: placement and size); returns the
 * number of nodes */
typedef void (*node_fn) (const MPIR_Topo_layout_t * l, const MPIR_Topo_loc_t * locs, int n,
                         const char *tag);
static long each_layout_node(node_fn fn)
{
    char tag[128];
    long nodes = 0;

    for (int pi = 0; pi < TU_NPLACEMENTS; pi++) {
        const tu_place_t *pl = &tu_placements[pi];
        hwloc_topology_t t = tu_synthetic(pl->synth);
        int nobj = hwloc_get_nbobjs_by_type(t, pl->pu_bind ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE);
        int cap = tu_place_cap(pl, nobj);

        for (int p = 1; p; p = tu_next_p(p, cap)) {
            MPIR_Topo_loc_t *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * p);
            MPIR_Topo_layout_t *l = NULL;

            if (tu_place(t, pl, p, 7 * p + pi, locs) != 0) {
                free(locs);
                break;
            }
            if (!CHECK(MPIR_Topo_layout_create(p, locs, 0, &l) == 0, "%s p=%d: no layout",
                       pl->name, p)) {
                free(locs);
                continue;
            }
            for (int n = 0; n < l->nnodes; n++, nodes++) {
                snprintf(tag, sizeof(tag), "%s p=%d node %d", pl->name, p, n);
                fn(l, locs, n, tag);
            }
            MPIR_Topo_layout_free(l);
            free(locs);
        }
        hwloc_topology_destroy(t);
    }
    return nodes;
}

static void layout_node(const MPIR_Topo_layout_t * l, const MPIR_Topo_loc_t * locs, int n,
                        const char *where)
{
    char tag[192];
    int *gs = tu_xmalloc(sizeof(int) * l->k);

    (void) locs;
    for (int g = 0; g < l->k; g++)
        gs[g] = l->group_start[n * l->k + g + 1] - l->group_start[n * l->k + g];
    for (int i = 0; i < NSIZES; i += 3) {
        snprintf(tag, sizeof(tag), "%s k=%d n=%lld", where, l->k, sizes[i]);
        check_node(l->k, gs, sizes[i], tag);
    }
    free(gs);
}

/* the groups of the layouts the engine builds from real placements */
static void layout_group(void)
{
    long nodes_checked;

    tu_begin("stages: every node of the leader layouts of the shared placements");
    nodes_checked = each_layout_node(layout_node);
    CHECK(nodes_checked > 100, "only %ld nodes checked", nodes_checked);
    tu_end();
}

static void levels_group(void)
{
    tu_begin("stages: levels chosen (MPIR_Topo_node_levels)");
    CHECK_EQ(MPIR_Topo_node_levels(MPIR_TOPO_TWO_LEVEL_MIN_LOCAL, 2, 0), 2, "(auto, large node)");
    CHECK_EQ(MPIR_Topo_node_levels(MPIR_TOPO_TWO_LEVEL_MIN_LOCAL - 1, 2, 0), 1, "(auto, small)");
    CHECK_EQ(MPIR_Topo_node_levels(256, 1, 0), 1, "(auto, one group)");
    CHECK_EQ(MPIR_Topo_node_levels(4, 2, 2), 2, "(forced)");
    CHECK_EQ(MPIR_Topo_node_levels(4, 2, 5), 2, "(more than 2 asked)");
    CHECK_EQ(MPIR_Topo_node_levels(4, 1, 2), 1, "(forced, one group)");
    CHECK_EQ(MPIR_Topo_node_levels(256, 8, 1), 1, "(capped at 1)");
    tu_end();
}

/* the unit of level d holding local process i is [first, end) */
static int in_unit(const int *unit, int n, int d, int first, int i)
{
    return i >= 0 && i < n && unit[d * n + i] == first;
}

/* Each unit of level d with first member u must have received exactly
 * want[u] of the crossings counted in got[] (one per unit and level,
 * indexed by d * n + first). */
static void check_crossings(const int *unit, int n, int depth, const int *got, const int *want,
                            const char *tag, const char *what)
{
    for (int d = 1; d <= depth; d++)
        for (int u = 0; u < n; u++)
            if (unit[d * n + u] == u)
                CHECK_EQ(got[d * n + u], want[d * n + u], "%s: %s: level %d unit at %d", tag,
                         what, d, u);
}

/* bcast's and allgather's copies through a node's levels down to each
 * depth (MPIR_Topo_unit_chain, MPIR_Topo_copy_path, MPIR_Topo_gather_copies),
 * played out: every process reads what it needs where it is, each area is
 * written by one process only (its innermost unit's first member) and
 * holds exactly the data from outside its unit, no copy waits on one
 * that waits on it, and data cross into each unit of each level exactly
 * once when it lacks them (never into one that holds them).  A wrong
 * area, source or wait here is a wrong byte or a hang in the engine. */
static void check_copies(int n, int nl, const int *unit, const char *tag)
{
    const int ML = MPIR_TOPO_MAX_NODE_LEVELS;
    int *lo = tu_xmalloc(sizeof(int) * ML * n), *hi = tu_xmalloc(sizeof(int) * ML * n);
    int *ao = tu_xmalloc(sizeof(int) * ML * n), *first = tu_xmalloc(sizeof(int) * (n + 1));
    int *got = tu_xmalloc(sizeof(int) * ML * n), *want = tu_xmalloc(sizeof(int) * ML * n);
    int *src_of = tu_xmalloc(sizeof(int) * (n + 1)), *done = tu_xmalloc(sizeof(int) * n);
    int *have = tu_xmalloc(sizeof(int) * (n + 1) * n);
    int step = n > 64 ? n / 16 : 1;

    for (int depth = 1; depth < nl; depth++) {
        int leaves = 0, copies, progress;

        for (int i = 0; i < n; i++) {
            MPIR_Topo_unit_chain(n, nl, unit, i, depth, lo + i * ML, hi + i * ML, ao + i * ML);
            if (unit[depth * n + i] == i)
                first[++leaves] = i;
            CHECK_EQ(first[ao[i * ML + depth]], lo[i * ML + depth], "%s: depth %d: area of %d",
                     tag, depth, i);
        }
        /* bcast, data arriving at a */
        for (int a = 0; a < n; a += step) {
            memset(got, 0, sizeof(int) * ML * n);
            for (int x = 0; x <= leaves; x++)
                src_of[x] = -1;
            for (int i = 0; i < n; i++) {
                int at, mk, src, smk, *L = lo + i * ML, *H = hi + i * ML;
                int holds = a >= L[depth] && a < H[depth];
                MPIR_Topo_copy_path(depth, L, H, ao + i * ML, a, &at, &mk, &src, &smk);
                CHECK_EQ(at, holds ? 0 : ao[i * ML + depth], "%s: depth %d, bcast from %d: "
                         "area of %d", tag, depth, a, i);
                if (at == 0)
                    continue;
                CHECK_EQ(mk, first[at], "%s: depth %d, bcast from %d: maker of %d's area", tag,
                         depth, a, i);
                CHECK_EQ(smk, src ? first[src] : -1, "%s: depth %d, bcast from %d: maker of "
                         "%d's source", tag, depth, a, i);
                if (mk == i)
                    src_of[at] = src;
            }
            copies = 0;
            for (int x = 1; x <= leaves; x++) {
                int from = src_of[x], hops = 0;
                int holds = in_unit(unit, n, depth, first[x], a);
                CHECK((from >= 0) == !holds, "%s: depth %d, bcast from %d: area %d %s", tag,
                      depth, a, x, holds ? "copied into its unit holding the root" : "not made");
                if (from < 0)
                    continue;
                copies++;
                while (from > 0 && hops++ <= depth)
                    from = src_of[from];
                CHECK_EQ(from, 0, "%s: depth %d, bcast from %d: area %d's copies loop", tag,
                         depth, a, x);
                /* a crossing into each unit holding the copy, not its source */
                for (int d = 1; d <= depth; d++) {
                    int u = unit[d * n + first[x]], s = src_of[x] ? first[src_of[x]] : a;
                    if (!in_unit(unit, n, d, u, s))
                        got[d * n + u]++;
                }
            }
            CHECK_EQ(copies, leaves - 1, "%s: depth %d, bcast from %d: copies", tag, depth, a);
            for (int d = 1; d <= depth; d++)
                for (int u = 0; u < n; u++)
                    want[d * n + u] = !in_unit(unit, n, d, u, a);
            check_crossings(unit, n, depth, got, want, tag, "bcast crossings");
        }
        /* allgather: every block arrived in area 0 */
        memset(have, 0, sizeof(int) * (n + 1) * n);
        memset(got, 0, sizeof(int) * ML * n);
        memset(done, 0, sizeof(int) * n);
        do {
            progress = 0;
            for (int x = 1; x <= leaves; x++) {
                MPIR_Topo_copy_t c[MPIR_TOPO_MAX_COPIES];
                int f = first[x], ready = 1, nc;
                if (done[f])
                    continue;
                nc = MPIR_Topo_gather_copies(n, depth, lo + f * ML, hi + f * ML, ao + f * ML, f,
                                             c);
                CHECK(nc >= 0 && nc <= MPIR_TOPO_MAX_COPIES, "%s: %d copies", tag, nc);
                for (int j = 0; j < nc; j++)
                    ready &= c[j].src_maker < 0 || done[c[j].src_maker];
                if (!ready)
                    continue;
                for (int j = 0; j < nc; j++) {
                    CHECK_EQ(c[j].src_maker, c[j].src ? first[c[j].src] : -1,
                             "%s: depth %d, allgather: maker of area %d", tag, depth, c[j].src);
                    for (int b = c[j].lo; b < c[j].hi; b++) {
                        int s = c[j].src ? first[c[j].src] : b;
                        CHECK(c[j].src == 0 || have[c[j].src * n + b] == 1, "%s: depth %d, "
                              "allgather: block %d copied from area %d before it was there",
                              tag, depth, b, c[j].src);
                        have[x * n + b]++;
                        for (int d = 1; d <= depth; d++)
                            if (!in_unit(unit, n, d, unit[d * n + f], s))
                                got[d * n + unit[d * n + f]]++;
                    }
                }
                done[f] = progress = 1;
            }
        } while (progress);
        for (int x = 1; x <= leaves; x++) {
            int f = first[x];
            CHECK(done[f], "%s: depth %d, allgather: area %d never made (waits in a loop)",
                  tag, depth, x);
            for (int b = 0; b < n; b++)
                CHECK_EQ(have[x * n + b], !in_unit(unit, n, depth, f, b), "%s: depth %d, "
                         "allgather: copies of block %d in area %d", tag, depth, b, x);
        }
        for (int i = 0; i < n; i++) {
            MPIR_Topo_copy_t c[MPIR_TOPO_MAX_COPIES];
            if (unit[depth * n + i] != i)
                CHECK_EQ(MPIR_Topo_gather_copies(n, depth, lo + i * ML, hi + i * ML, ao + i * ML,
                                                 i, c), 0, "%s: depth %d: %d copies", tag,
                         depth, i);
        }
        for (int d = 1; d <= depth; d++)
            for (int u = 0; u < n; u++) {
                int size = 0;
                for (int i = u; i < n && unit[d * n + i] == u; i++)
                    size++;
                want[d * n + u] = unit[d * n + u] == u ? n - size : 0;
            }
        check_crossings(unit, n, depth, got, want, tag, "allgather crossings");
    }
    free(lo);
    free(hi);
    free(ao);
    free(first);
    free(got);
    free(want);
    free(src_of);
    free(done);
    free(have);
}

/* One node's levels (MPIR_Topo_node_units) as levels asks, the node's
 * processes (local order) with packages pkg[] and caches cache[] in k
 * groups from group_lo[]: level 0 is the node; every unit is a run of
 * local indices named by its first, within one unit of the level above,
 * and each level cuts the one above finer without leaving every process
 * alone; the groups' level holds exactly the groups, and any other level's
 * units share a package (outside the groups) or a cache within a group.
 * Returns the number of levels. */
static int check_units(int n, int k, const int *group_lo, const int *pkg, const int *cache,
                       int levels, const char *tag)
{
    int *unit = tu_xmalloc(sizeof(int) * MPIR_TOPO_MAX_NODE_LEVELS * n), gl = -1, prev = 1;
    int nl = MPIR_Topo_node_units(n, k, group_lo, pkg, cache, levels, unit, &gl);

    CHECK(nl >= 1 && nl <= MPIR_TOPO_MAX_NODE_LEVELS && (levels < 1 || nl <= levels),
          "%s: %d levels (asked %d)", tag, nl, levels);
    CHECK(gl >= 0 && gl < nl, "%s: groups at level %d of %d", tag, gl, nl);
    if (levels == 1 || (levels == 0 && n < MPIR_TOPO_TWO_LEVEL_MIN_LOCAL))
        CHECK_EQ(nl, 1, "%s: one level", tag);
    if (levels == 2 && k >= 2 && k < n)
        CHECK(nl == 2 && gl == 1, "%s: 2 levels, the groups", tag);
    for (int i = 0; i < n; i++)
        CHECK_EQ(unit[i], 0, "%s: level 0 is the node", tag);
    for (int d = 1; d < nl; d++) {
        int *u = unit + d * n, count = 0, is_groups = d == gl, shares_pkg = 1;
        for (int i = 0; i < n; i++) {
            int first = u[i] == i;
            count += first;
            CHECK(first || (i > 0 && u[i] == u[i - 1]), "%s: level %d: %d not in a run", tag, d,
                  i);
            if (!first)
                CHECK(unit[(d - 1) * n + i] == unit[(d - 1) * n + i - 1],
                      "%s: level %d: a unit spans two of level %d", tag, d, d - 1);
            if (!first && !is_groups && cache[i] != cache[u[i]])
                shares_pkg &= pkg[i] == pkg[u[i]];
        }
        if (is_groups) {
            CHECK_EQ(count, k, "%s: level %d: groups", tag, d);
            for (int g = 0; g < k; g++)
                for (int i = group_lo[g]; i < group_lo[g + 1]; i++)
                    CHECK_EQ(u[i], group_lo[g], "%s: level %d: group %d", tag, d, g);
        }
        CHECK(shares_pkg, "%s: level %d: a unit spans packages and caches", tag, d);
        CHECK(count > prev && count < n, "%s: level %d has %d units (level above %d, %d "
              "processes)", tag, d, count, prev, n);
        prev = count;
    }
    check_copies(n, nl, unit, tag);
    free(unit);
    return nl;
}

/* levels of nodes whose processes fill a synthetic topology's cores in
 * order, with the groups the layout makes */
static int units_of(const char *synth, int n, int levels, int *group_level)
{
    hwloc_topology_t t = strchr(synth, ':') ? tu_synthetic(synth) : tu_xml(synth);
    MPIR_Topo_loc_t *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * n);
    MPIR_Topo_layout_t *l = NULL;
    int *pkg = tu_xmalloc(sizeof(int) * n), *cache = tu_xmalloc(sizeof(int) * n), nl = 0;
    int *unit = tu_xmalloc(sizeof(int) * MPIR_TOPO_MAX_NODE_LEVELS * n);

    for (int i = 0; i < n; i++)
        locs[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0);
    if (CHECK(MPIR_Topo_layout_create(n, locs, 0, &l) == 0, "%s: no layout", synth)) {
        for (int i = 0; i < n; i++) {
            pkg[i] = locs[l->order[i]].package;
            cache[i] = locs[l->order[i]].cache;
        }
        check_units(n, l->k, l->group_start, pkg, cache, levels, synth);
        nl = MPIR_Topo_node_units(n, l->k, l->group_start, pkg, cache, levels, unit,
                                  group_level);
    }
    MPIR_Topo_layout_free(l);
    free(locs);
    free(pkg);
    free(cache);
    free(unit);
    hwloc_topology_destroy(t);
    return nl;
}

static void units_node(const MPIR_Topo_layout_t * l, const MPIR_Topo_loc_t * locs, int n,
                       const char *where)
{
    char tag[192];
    int s = l->node_start[n], L = l->node_start[n + 1] - s, k = l->k;
    int *pkg = tu_xmalloc(sizeof(int) * L), *cache = tu_xmalloc(sizeof(int) * L);
    int *glo = tu_xmalloc(sizeof(int) * (k + 1));

    for (int i = 0; i < L; i++) {
        pkg[i] = locs[l->order[s + i]].package;
        cache[i] = locs[l->order[s + i]].cache;
    }
    for (int g = 0; g <= k; g++)
        glo[g] = l->group_start[n * k + g] - s;
    for (int levels = 0; levels <= 5; levels++) {
        snprintf(tag, sizeof(tag), "%s levels=%d", where, levels);
        check_units(L, k, glo, pkg, cache, levels, tag);
    }
    free(pkg);
    free(cache);
    free(glo);
}

static void units_group(void)
{
    long nodes_checked;
    int gl;

    tu_begin("stages: levels within a node (MPIR_Topo_node_units)");
    /* 2 packages of 4 NUMA domains of 2 L3 caches of 4 cores (an EPYC):
     * every level by default; the cap drops packages, then caches */
    CHECK_EQ(units_of("pack:2 numa:4 l3:2 core:4 pu:1", 64, 0, &gl), 4, "(64 on 4 levels)");
    CHECK_EQ(gl, 2, "(64 on 4 levels: groups under packages)");
    CHECK_EQ(units_of("pack:2 numa:4 l3:2 core:4 pu:1", 64, 3, &gl), 3, "(capped at 3)");
    CHECK_EQ(gl, 1, "(capped at 3: groups, then caches)");
    CHECK_EQ(units_of("pack:2 numa:4 l3:2 core:4 pu:1", 64, 2, &gl), 2, "(capped at 2)");
    CHECK_EQ(units_of("pack:2 numa:4 l3:2 core:4 pu:1", 64, 1, &gl), 1, "(capped at 1)");
    /* caches of 2 cores: a level only where asked for */
    CHECK_EQ(units_of("pack:2 numa:2 l3:4 core:2 pu:1", 32, 0, &gl), 3, "(caches of 2: auto)");
    CHECK_EQ(units_of("pack:2 numa:2 l3:4 core:2 pu:1", 32, 4, &gl), 4, "(caches of 2: 4)");
    /* one L3 per package, one NUMA domain per package: groups only */
    CHECK_EQ(units_of("pack:2 numa:1 l3:1 core:8 pu:1", 16, 0, &gl), 2, "(a Xeon)");
    CHECK_EQ(units_of("pack:2 numa:1 l3:1 core:8 pu:1", 16, 4, &gl), 2, "(a Xeon, 4 asked)");
    /* one NUMA domain with L3 domains (one group): caches below the node */
    CHECK_EQ(units_of("pack:1 numa:1 l3:4 core:4 pu:1", 16, 0, &gl), 2, "(one group)");
    CHECK_EQ(gl, 0, "(one group: no groups' level)");
    CHECK_EQ(units_of("pack:2 numa:2 l3:2 core:4 pu:1", 15, 0, &gl), 1, "(small node)");
    CHECK_EQ(units_of("pack:2 numa:2 l3:2 core:4 pu:1", 15, -1, &gl), 1, "(below 0: auto)");
    CHECK_EQ(units_of("pack:2 numa:2 l3:4 core:2 pu:1", 32, -3, &gl), 3, "(below 0: auto)");

    /* the XML machines of test/unit (2 packages of 4 cores, one NUMA
     * domain over both, no L3): one group, the packages a level */
    CHECK_EQ(units_of("xml/nic_both.xml", 6, 4, &gl), 2, "(nic_both.xml)");
    CHECK_EQ(gl, 0, "(nic_both.xml: one group)");
    CHECK_EQ(units_of("xml/nic_both.xml", 8, 1, &gl), 1, "(nic_both.xml, capped at 1)");
    CHECK_EQ(units_of("xml/nic_pack0.xml", 6, 0, &gl), 1, "(nic_pack0.xml, auto: small)");

    /* every node of the shared placements, at every cap */
    nodes_checked = each_layout_node(units_node);
    CHECK(nodes_checked > 100, "only %ld nodes checked", nodes_checked);
    tu_end();
}

/* One node's cell groups (MPIR_Topo_cell_groups): they cover the node's
 * processes in order, none is empty or above the fan-in, a group never
 * spans two caches where caches hold more than two processes each, every
 * cache domain of such a node is cut into the fewest groups the fan-in
 * allows, and a flat reduction comes back where the fan-in or the node is
 * too small. */
static void check_cells(int L, const int *cache, int fanin, const char *tag)
{
    int *lo = tu_xmalloc(sizeof(int) * (L + 2)), *copy = tu_xmalloc(sizeof(int) * (L + 1));
    int f = fanin, count, count_inplace, runs = 1, min_run = L, expect = 0;

    if (f < 0)
        for (f = 1; f * f < L; f++);
    for (int i = 1, start = 0; i <= L; i++)
        if (i == L || cache[i] != cache[i - 1]) {
            min_run = MIN(min_run, i - start);
            if (i < L)
                runs++;
            start = i;
        }
    count = MPIR_Topo_cell_groups(L, cache, fanin, lo);
    memcpy(copy, cache, sizeof(int) * L);
    count_inplace = MPIR_Topo_cell_groups(L, copy, fanin, copy);
    CHECK_EQ(count_inplace, count, "%s: groups in place", tag);
    for (int g = 0; g <= count && count == count_inplace; g++)
        CHECK_EQ(copy[g], lo[g], "%s: group %d's start in place", tag, g);
    CHECK(lo[0] == 0 && lo[count] == L, "%s: groups cover [%d, %d), not [0, %d)", tag, lo[0],
          lo[count], L);
    if ((fanin < 0 && L < MPIR_TOPO_CELL_GROUPS_MIN_LOCAL) || (fanin >= 0 && fanin < 2) ||
        f >= L) {
        CHECK_EQ(count, 1, "%s: flat", tag);
        goto done;
    }
    for (int g = 0; g < count; g++) {
        int n = lo[g + 1] - lo[g];
        CHECK(n >= 1 && n <= f, "%s: group %d has %d processes (fan-in %d)", tag, g, n, f);
        if (min_run > 2)
            for (int i = lo[g] + 1; i < lo[g + 1]; i++)
                CHECK(cache[i] == cache[lo[g]], "%s: group %d spans caches %d and %d", tag, g,
                      cache[lo[g]], cache[i]);
    }
    if (min_run > 2) {
        for (int i = 0, start = 0; i <= L; i++)
            if (i == L || cache[i] != cache[start]) {
                expect += (i - start + f - 1) / f;
                start = i;
            }
        CHECK_EQ(count, expect, "%s: groups (%d cache runs)", tag, runs);
    }
  done:
    free(lo);
    free(copy);
}

static void cells_group(void)
{
    char tag[160];
    static const char *synths[] = {
        "pack:2 numa:2 l3:2 core:4 pu:1", "pack:1 l3:8 core:8 pu:1", "pack:2 core:16 pu:1",
        "pack:1 numa:1 l3:16 l2:1 core:1 pu:1", "pack:2 numa:4 l3:3 core:5 pu:1"
    };
    static const int fanins[] = { -1, 0, 1, 2, 3, 4, 8, 64 };

    tu_begin("stages: cell groups of small reductions (MPIR_Topo_cell_groups)");
    for (size_t si = 0; si < sizeof(synths) / sizeof(synths[0]); si++) {
        hwloc_topology_t t = tu_synthetic(synths[si]);
        int ncores = MAX(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), 1);
        int *cache = tu_xmalloc(sizeof(int) * ncores);

        for (int i = 0; i < ncores; i++)
            cache[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0).cache;
        for (int L = 1; L <= ncores; L++)
            for (size_t fi = 0; fi < sizeof(fanins) / sizeof(fanins[0]); fi++) {
                snprintf(tag, sizeof(tag), "\"%s\" L=%d fan-in %d", synths[si], L, fanins[fi]);
                check_cells(L, cache, fanins[fi], tag);
            }
        free(cache);
        hwloc_topology_destroy(t);
    }
    /* unbound processes (no cache known), and private caches: one run */
    {
        int none[64], own[64], lo[66];
        for (int i = 0; i < 64; i++) {
            none[i] = -1;
            own[i] = i;
        }
        check_cells(64, none, -1, "64 unbound");
        CHECK_EQ(MPIR_Topo_cell_groups(64, none, -1, lo), 8, "64 unbound, auto");
        CHECK_EQ(MPIR_Topo_cell_groups(64, own, -1, lo), 8, "64 private caches, auto");
        CHECK_EQ(MPIR_Topo_cell_groups(64, NULL, 4, lo), 16, "64 unknown, fan-in 4");
        CHECK_EQ(MPIR_Topo_cell_groups(16, NULL, -1, lo), 4, "16 unknown, auto");
        CHECK_EQ(MPIR_Topo_cell_groups(15, NULL, -1, lo), 1, "15 unknown, auto");
        CHECK_EQ(MPIR_Topo_cell_groups(0, NULL, 4, lo), 1, "empty node");
    }
    tu_end();
}

int main(void)
{
    cells_group();
    levels_group();
    units_group();
    hand_group();
    layout_group();
    return tu_exit();
}
