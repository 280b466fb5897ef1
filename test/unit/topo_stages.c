/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* What the engine's allreduce, bcast and allgather do at each level of a
 * given machine, without MPI: the leader layout it builds (groups and
 * leaders per node) and, for one call of BYTES bytes per process, the
 * bytes each process reduces at each stage within a node, one level
 * (flat) against two (MPIR_CVAR_TOPO_NODE_LEVELS=2), the reads that cross
 * groups (NUMA domains or packages) on each node, in the reduction, on the
 * way out, in bcast and in allgather (one node), what each leader carries
 * across nodes and what every process copies out; then every level the
 * node has (MPIR_Topo_node_units, as MPIR_CVAR_TOPO_NODE_LEVELS=0 and 4
 * take them), what allreduce reduces at each, and what bcast and
 * allgather read across each level's domains and copy.
 *
 *   make -C test/unit topo_stages
 *   test/unit/topo_stages TOPOLOGY NODES PPN [BYTES [block|cyclic]]
 *
 * TOPOLOGY: an hwloc synthetic description ("pack:2 numa:4 l3:2 core:4
 * pu:1") or an XML file; NODES nodes of it, each with PPN processes bound
 * to its first PPN cores (block) or to cores taken from each package in
 * turn (cyclic).  BYTES: 1 MiB by default.  Counts ignore the rounding at
 * the edges of the engine's rounds.  Also the groups of a small allreduce
 * through cells (MPIR_CVAR_TOPO_CELL_FANIN) and the cells each process
 * reads, flat against two stages. */

#include "test_topo_util.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))

static long long flat_slice(long long n, int q, int L)
{
    return n * (q + 1) / L - n * q / L;
}

/* units of a node of L processes at level d */
static int count_units(const int *unit, int d, int L)
{
    int units = 0;

    for (int i = 0; i < L; i++)
        units += unit[d * L + i] == i;
    return units;
}

/* bcast and allgather (segment mode) through the same levels
 * (MPIDI_Topo_areas_t): per level, the bytes read across its domains
 * by one level (flat) against the levels (each unit receives what comes
 * from outside it once), and the innermost level the default slot's areas
 * allow (MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=131072: 4 KiB for bcast,
 * 1 KiB per process for allgather) */
static void print_copies(const int *unit, int nl, int L, long long m)
{
    int leaves = count_units(unit, nl - 1, L), depth[2] = { 0, 0 };
    long long min[2] = { 4096, 1024LL * L };

    for (int c = 0; c < 2; c++)
        for (int d = nl - 1; d > 0 && !depth[c]; d--)
            if ((131072 / (1 + count_units(unit, d, L)) & ~4095) >= min[c])
                depth[c] = d;
    printf("    bcast (root at the node's first process), allgather (one node): bytes "
           "read across each level's domains, one level / levels\n");
    for (int d = 1; d < nl; d++) {
        long long ag_flat = 0, ag_lv = 0, root_unit = 0;
        int units = count_units(unit, d, L);
        for (int i = 0; i < L; i++) {
            int lo = unit[d * L + i], hi = lo;
            if (lo != i)
                continue;
            while (hi < L && unit[d * L + hi] == lo)
                hi++;
            if (lo == 0)
                root_unit = hi;
            ag_flat += (long long) (hi - lo) * (L - (hi - lo)) * m;
            ag_lv += (long long) (L - (hi - lo)) * m;
        }
        printf("    level %d: bcast %lld / %lld, allgather %lld / %lld\n", d,
               (L - root_unit) * m, (units - 1) * m, ag_flat, ag_lv);
    }
    printf("    copies into the %d innermost units: bcast %lld, allgather up to %lld bytes; "
           "levels used at the default chunk size: bcast %d, allgather %d\n", leaves,
           (leaves - 1) * m, (long long) leaves * (L - 1) * m, depth[0] + 1, depth[1] + 1);
}

/* allreduce's and reduce's levels on node n (MPIR_Topo_node_units), by
 * default and with all 4 asked: each level's units (ranks), and per stage
 * the bytes the busiest process reduces and the flags it waits on */
static void print_units(const MPIR_Topo_loc_t * locs, const MPIR_Topo_layout_t * l, int n,
                        long long m)
{
    int k = l->k, s = l->node_start[n], L = l->node_start[n + 1] - s;
    int *pkg = malloc(sizeof(int) * L), *cache = malloc(sizeof(int) * L);
    int *glo = malloc(sizeof(int) * (k + 1));
    int *unit = malloc(sizeof(int) * MPIR_TOPO_MAX_NODE_LEVELS * L);

    for (int i = 0; i < L; i++) {
        pkg[i] = locs[l->order[s + i]].package;
        cache[i] = locs[l->order[s + i]].cache;
    }
    for (int g = 0; g <= k; g++)
        glo[g] = l->group_start[n * k + g] - s;
    for (int asked = 0; asked <= MPIR_TOPO_MAX_NODE_LEVELS; asked += MPIR_TOPO_MAX_NODE_LEVELS) {
        int gl, nl = MPIR_Topo_node_units(L, k, glo, pkg, cache, asked, unit, &gl);

        printf("  allreduce, bcast, allgather, MPIR_CVAR_TOPO_NODE_LEVELS=%d: %d level(s)%s\n", asked, nl,
               gl ? "" : " (the groups are not one)");
        /* innermost first, as the rounds run */
        for (int d = nl - 1; d >= 0; d--) {
            long long red = 0;
            int units = 0, most_children = 0;
            printf("    level %d%s:", d, d == 0 ? " (node)" : d == gl ? " (groups)" : "");
            for (int i = 0; i < L; i++) {
                int lo = unit[d * L + i], hi = lo, nc = 0;
                if (lo != i)
                    continue;
                while (hi < L && unit[d * L + hi] == lo)
                    hi++;
                for (int c = lo; c < hi; c++)
                    nc += d == nl - 1 || unit[(d + 1) * L + c] == c;
                units++;
                most_children = MAX(most_children, nc);
                /* the node's level splits by the groups' shares where they
                 * are a level: about m / L each as well */
                red = MAX(red, (nc - 1) * ((m + hi - lo - 1) / (hi - lo)));
                if (d > 0 && L <= 64) {
                    printf(" [");
                    for (int c = lo; c < hi; c++)
                        printf(c > lo ? " %d" : "%d", l->order[s + c]);
                    printf("]");
                }
            }
            printf(" %d unit(s); busiest process reduces %lld bytes, waits on %d flag(s)\n",
                   units, red, most_children);
        }
        if (nl > 1)
            print_copies(unit, nl, L, m);
    }
    free(pkg);
    free(cache);
    free(glo);
    free(unit);
}

static void usage(void) __attribute__((noreturn));
static void usage(void)
{
    fprintf(stderr, "usage: topo_stages TOPOLOGY NODES PPN [BYTES [block|cyclic]]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    hwloc_topology_t t;
    int nnodes, ppn, cyclic = 0, ncores, npkg, p;
    long long m = 1 << 20;
    MPIR_Topo_loc_t *locs;
    MPIR_Topo_layout_t *l = NULL;

    if (argc < 4 || (nnodes = atoi(argv[2])) < 1 || (ppn = atoi(argv[3])) < 1)
        usage();
    if (argc > 4 && (m = atoll(argv[4])) < 1)
        usage();
    if (argc > 5)
        cyclic = strcmp(argv[5], "cyclic") == 0;
    t = strchr(argv[1], ':') ? tu_synthetic(argv[1]) : tu_xml(argv[1]);
    ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    npkg = MAX(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE), 1);
    if (ppn > ncores) {
        fprintf(stderr, "topo_stages: %d processes per node, but the topology has %d cores\n",
                ppn, ncores);
        return 2;
    }
    p = nnodes * ppn;
    locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * p);
    for (int r = 0; r < p; r++) {
        int i = r % ppn, core = i;
        if (cyclic && ncores % npkg == 0)
            core = (i % npkg) * (ncores / npkg) + i / npkg;
        locs[r] = tu_loc_obj(t, HWLOC_OBJ_CORE, core, r / ppn);
    }
    if (MPIR_Topo_layout_create(p, locs, 0, &l) != 0) {
        fprintf(stderr, "topo_stages: no layout\n");
        return 1;
    }
    printf("topology \"%s\": %d cores; %d node(s) x %d processes (%s); "
           "%lld bytes per process\n", argv[1], ncores, nnodes, ppn,
           cyclic ? "cyclic" : "block", m);
    printf("layout: %d group(s) per node (MPIR_CVAR_TOPO_LEADERS_PER_NODE=0)\n", l->k);

    for (int n = 0; n < l->nnodes; n++) {
        int k = l->k, s = l->node_start[n], L = l->node_start[n + 1] - s;
        long long flat_red = 0, flat_cross = 0, two_red = 0, two_cross = 0;
        int max_gs = 0;

        printf("\nnode %d: %d processes; groups (ranks, leader first):", n, L);
        for (int g = 0; g < k; g++) {
            int lo = l->group_start[n * k + g], hi = l->group_start[n * k + g + 1];
            printf(" [%d", l->leader[n * k + g]);
            for (int i = lo; i < hi; i++)
                if (l->order[i] != l->leader[n * k + g])
                    printf(" %d", l->order[i]);
            printf("]");
        }
        printf("\n");
        /* flat: local process q reduces its slice across the other L - 1
         * areas; those of other groups are crossing reads */
        for (int g = 0, q = 0; g < k; g++) {
            int gs = l->group_start[n * k + g + 1] - l->group_start[n * k + g];
            for (int j = 0; j < gs; j++, q++) {
                long long sl = flat_slice(m, q, L);
                flat_red = MAX(flat_red, sl * (L - 1));
                flat_cross += sl * (L - gs);
            }
        }
        /* two levels: stage 1 within the group, stage 2 across k partials */
        for (int g = 0; g < k; g++) {
            int gs = l->group_start[n * k + g + 1] - l->group_start[n * k + g];
            max_gs = MAX(max_gs, gs);
            for (int j = 0; j < gs; j++) {
                MPIR_Topo_stages_t st;
                MPIR_Topo_reduce_stages(m, k, g, gs, j, &st);
                two_red = MAX(two_red, (st.part_hi - st.part_lo) * (gs - 1) +
                              (st.sub_hi - st.sub_lo) * (k - 1));
                two_cross += (st.sub_hi - st.sub_lo) * (k - 1);
            }
        }
        printf("  %-34s %14s %14s\n", "bytes per call", "one level", "groups (=2)");
        printf("  %-34s %14lld %14lld\n", "reduced, busiest process", flat_red, two_red);
        printf("  %-34s %14lld %14lld\n", "read across groups, node", flat_cross, two_cross);
        /* waits of the reduction, busiest process: one level, every
         * arrival and every slice; two, a leader's: its group's arrivals,
         * parts and slices, the k partials; the way out, the k leaders
         * and its group's copies (the slot's reuse waits for all L in both) */
        printf("  %-34s %14d %14d\n", "flags polled to reduce, busiest", 2 * L,
               4 * max_gs + 2 * k);
        if (nnodes > 1)
            printf("  across nodes: each leader allreduces its group's share, %lld bytes, "
                   "with the %d other nodes' leader of that group\n", m / k, nnodes - 1);
        /* out: one level, everyone reads area 0 (group 0's); two, each
         * group > 0 copies it into its own area once */
        printf("  %-34s %14lld %14lld\n", "result read across groups, node",
               (long long) (L - (l->group_start[n * k + 1] - l->group_start[n * k])) * m,
               (long long) (k - 1) * m);
        printf("  copied out by every process: %lld\n", m);
        /* bcast (segment mode), the root in group 0: one level, the other
         * groups read the slot; two, each other group's leader copies it
         * into its group's area once and its members read that */
        printf("  %-34s %14lld %14lld\n", "bcast, read across groups, node",
               (long long) (L - (l->group_start[n * k + 1] - l->group_start[n * k])) * m,
               (long long) (k - 1) * m);
        /* allgather (segment mode, one node): one level, every process
         * reads the other groups' blocks where they arrived; two, each
         * group's leader copies them into its group's area once */
        if (nnodes == 1) {
            long long ag_flat = 0, ag_two = 0;
            for (int g = 0; g < k; g++) {
                int gs = l->group_start[g + 1] - l->group_start[g];
                ag_flat += (long long) gs * (L - gs) * m;
                ag_two += (long long) (L - gs) * m;
            }
            printf("  %-34s %14lld %14lld\n", "allgather, read across groups", ag_flat,
                   ag_two);
        }
        print_units(locs, l, n, m);
        /* small allreduce and reduce (up to 1 KiB) through cells, with
         * MPIR_CVAR_TOPO_CELL_FANIN=-1 (default): groups by shared cache */
        {
            int *cl = malloc(sizeof(int) * (L + 1)), ng, most = 0;
            for (int i = 0; i < L; i++)
                cl[i] = locs[l->order[s + i]].cache;
            ng = MPIR_Topo_cell_groups(L, cl, -1, cl);
            printf("  small calls (cells, MPIR_CVAR_TOPO_CELL_FANIN=-1): %d group(s):", ng);
            for (int g = 0; g < ng; g++) {
                printf(" [");
                for (int i = cl[g]; i < cl[g + 1]; i++)
                    printf(i > cl[g] ? " %d" : "%d", l->order[s + i]);
                printf("]");
                most = MAX(most, cl[g + 1] - cl[g]);
            }
            printf("\n  %-34s %14d %14d\n", "cells read, busiest process", L,
                   ng > 1 ? most + ng : L);
            printf("  %-34s %14d %14d\n", "readers of each input cell", L, ng > 1 ? 1 : L);
            free(cl);
        }
    }
    MPIR_Topo_layout_free(l);
    free(locs);
    hwloc_topology_destroy(t);
    return 0;
}
