/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Locations from hwloc synthetic topologies and hand-computed distances. */

#include "test_topo_util.h"

static MPIR_Topo_loc_t core(hwloc_topology_t t, int i, int node)
{
    return tu_loc_obj(t, HWLOC_OBJ_CORE, i, node);
}

static MPIR_Topo_loc_t pu(hwloc_topology_t t, int i, int node)
{
    return tu_loc_obj(t, HWLOC_OBJ_PU, i, node);
}

/* loc of a process bound to the union of cores [lo, hi] */
static MPIR_Topo_loc_t cores(hwloc_topology_t t, int lo, int hi, int node)
{
    MPIR_Topo_loc_t l;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int i;
    for (i = lo; i <= hi; i++)
        hwloc_bitmap_or(set, set, hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, i)->cpuset);
    MPIR_Topo_loc_from_hwloc(t, set, node, &l);
    hwloc_bitmap_free(set);
    return l;
}

#define DIST(a, b, exp, what) do {                                       \
        MPIR_Topo_loc_t a_ = (a), b_ = (b);                              \
        int d1_ = MPIR_Topo_distance(&a_, &b_), d2_ = MPIR_Topo_distance(&b_, &a_); \
        CHECK(d1_ == (exp) && d2_ == (exp), "%s: distance %d/%d, expected %d", \
              what, d1_, d2_, exp);                                      \
    } while (0)

#define FIELDS(l, n, b, pk, nu, co, what) do {                           \
        MPIR_Topo_loc_t l_ = (l);                                        \
        CHECK(l_.node == (n) && l_.board == (b) && l_.package == (pk) && \
              l_.numa == (nu) && l_.core == (co) && l_.nic == -1 && l_.nic_far == 0, \
              "%s: loc node %d board %d pkg %d numa %d core %d nic %d far %d, expected " \
              "%d %d %d %d %d -1 0", what, l_.node, l_.board, l_.package, l_.numa, l_.core, \
              l_.nic, l_.nic_far, n, b, pk, nu, co);                     \
    } while (0)

/* map_dist must agree with the pairwise distance on these locations */
static void check_map(MPIR_Topo_loc_t * l, int n, const char *tag)
{
    MPIR_Topo_map_t *map;
    if (!CHECK(MPIR_Topo_map_create(n, l, &map) == 0, "%s: map_create failed", tag))
        return;
    tu_check_map_dist(map, n, l, tag);
    MPIR_Topo_map_free(map);
}

int main(void)
{
    hwloc_topology_t t;
    MPIR_Topo_loc_t l[8];

    tu_begin("distance: pack:2 l3:1 core:4 pu:2 (one machine-wide NUMA node)");
    t = tu_synthetic("pack:2 l3:1 core:4 pu:2");
    FIELDS(core(t, 0, 0), 0, 0, 0, 0, 0, "core 0");
    FIELDS(core(t, 5, 3), 3, 0, 1, 0, 5, "core 5 node 3");
    FIELDS(pu(t, 3, 0), 0, 0, 0, 0, 1, "pu 3");
    CHECK(core(t, 0, 0).cache >= 0 && core(t, 0, 0).cache == core(t, 3, 0).cache &&
          core(t, 0, 0).cache != core(t, 4, 0).cache, "L3 ids: core0 %d core3 %d core4 %d",
          core(t, 0, 0).cache, core(t, 3, 0).cache, core(t, 4, 0).cache);
    DIST(pu(t, 0, 0), pu(t, 1, 0), 1, "hyperthreads of one core");
    DIST(core(t, 0, 0), core(t, 0, 0), 1, "same core");
    DIST(core(t, 0, 0), core(t, 3, 0), 1, "two cores under one L3");
    /* one memory controller for both sockets: Zoot-like distance 3 */
    DIST(core(t, 0, 0), core(t, 4, 0), 3, "other package, shared NUMA node");
    DIST(core(t, 0, 0), core(t, 4, 1), 7, "other node, no NIC");
    DIST(cores(t, 0, 3, 0), core(t, 2, 0), 1, "package-wide binding vs its core");
    FIELDS(cores(t, 3, 4, 0), 0, 0, -1, 0, -1, "binding across packages");
    DIST(cores(t, 3, 4, 0), core(t, 0, 0), 3, "binding across packages vs core");
    FIELDS(cores(t, 0, 7, 0), 0, 0, -1, -1, -1, "whole machine = unbound");
    CHECK(cores(t, 0, 7, 0).cache == -1, "unbound cache %d", cores(t, 0, 7, 0).cache);
    DIST(tu_loc_unbound(0), core(t, 0, 0), 5, "unbound vs bound");
    DIST(tu_loc_unbound(0), tu_loc_unbound(0), 5, "two unbound");
    l[0] = core(t, 0, 0), l[1] = core(t, 1, 0), l[2] = core(t, 5, 0), l[3] = pu(t, 1, 0);
    l[4] = core(t, 7, 1), l[5] = tu_loc_unbound(0), l[6] = cores(t, 3, 4, 0);
    check_map(l, 7, "map");
    hwloc_topology_destroy(t);
    tu_end();

    tu_begin("distance: pack:4 numa:2 core:3 pu:2 (multi-die packages, no cache)");
    t = tu_synthetic("pack:4 numa:2 core:3 pu:2");
    FIELDS(core(t, 4, 0), 0, 0, 0, 1, 4, "core 4");
    FIELDS(core(t, 23, 0), 0, 0, 3, 7, 23, "core 23");
    CHECK(core(t, 4, 0).cache == -1, "no cache object, cache %d", core(t, 4, 0).cache);
    DIST(core(t, 0, 0), core(t, 1, 0), 2, "same NUMA node");
    DIST(pu(t, 0, 0), pu(t, 1, 0), 2, "same core but no cache object");
    DIST(core(t, 0, 0), core(t, 3, 0), 4, "same package, other NUMA node");
    DIST(core(t, 0, 0), core(t, 6, 0), 5, "other package (no board group)");
    DIST(core(t, 0, 0), core(t, 6, 1), 7, "other node");
    DIST(cores(t, 0, 1, 0), core(t, 2, 0), 2, "two-core binding vs same NUMA core");
    DIST(cores(t, 0, 5, 0), core(t, 3, 0), 4, "package binding (numa unknown) vs its core");
    FIELDS(cores(t, 0, 5, 0), 0, 0, 0, -1, -1, "package-wide binding");
    l[0] = core(t, 0, 0), l[1] = core(t, 1, 0), l[2] = core(t, 3, 0), l[3] = core(t, 6, 0);
    l[4] = core(t, 13, 0), l[5] = pu(t, 1, 0), l[6] = core(t, 8, 2), l[7] = tu_loc_unbound(0);
    check_map(l, 8, "map");
    hwloc_topology_destroy(t);
    tu_end();

    tu_begin("distance: numa:2 pack:2 core:2 pu:1 (shared memory controller groups)");
    t = tu_synthetic("numa:2 pack:2 core:2 pu:1");
    /* the NUMA group holds two packages, so it is also a board */
    FIELDS(core(t, 0, 0), 0, 0, 0, 0, 0, "core 0");
    FIELDS(core(t, 6, 0), 0, 1, 3, 1, 6, "core 6");
    DIST(core(t, 0, 0), core(t, 1, 0), 2, "same package and NUMA node");
    DIST(core(t, 0, 0), core(t, 2, 0), 3, "same NUMA node, other package");
    DIST(core(t, 0, 0), core(t, 4, 0), 6, "other NUMA group = other board");
    DIST(tu_loc_unbound(0), core(t, 1, 0), 5, "unbound vs board 0");
    DIST(tu_loc_unbound(0), core(t, 5, 0), 6, "unbound vs board 1");
    l[0] = core(t, 0, 0), l[1] = core(t, 1, 0), l[2] = core(t, 2, 0), l[3] = core(t, 4, 0);
    l[4] = core(t, 7, 0), l[5] = tu_loc_unbound(0);
    check_map(l, 6, "map");
    hwloc_topology_destroy(t);
    tu_end();

    tu_begin("distance: group:2 pack:2 [numa:1] core:2 pu:1 (boards)");
    t = tu_synthetic("group:2 pack:2 numa:1 core:2 pu:1");
    FIELDS(core(t, 0, 0), 0, 0, 0, 0, 0, "core 0");
    FIELDS(core(t, 5, 0), 0, 1, 2, 2, 5, "core 5");
    DIST(core(t, 0, 0), core(t, 1, 0), 2, "same package");
    DIST(core(t, 0, 0), core(t, 2, 0), 5, "other package, same board");
    DIST(core(t, 0, 0), core(t, 4, 0), 6, "other board");
    DIST(core(t, 3, 0), core(t, 7, 0), 6, "other board (2)");
    DIST(core(t, 3, 0), core(t, 7, 4), 7, "other node");
    FIELDS(cores(t, 0, 3, 0), 0, 0, -1, -1, -1, "board-wide binding");
    DIST(cores(t, 0, 3, 0), core(t, 2, 0), 5, "board-wide binding vs its core");
    l[0] = core(t, 0, 0), l[1] = core(t, 1, 0), l[2] = core(t, 2, 0), l[3] = core(t, 4, 0);
    l[4] = core(t, 7, 0), l[5] = tu_loc_unbound(0), l[6] = cores(t, 0, 3, 0);
    check_map(l, 7, "map");
    hwloc_topology_destroy(t);
    /* a single machine-wide memory controller beats the board level */
    t = tu_synthetic("group:2 pack:2 core:2 pu:1");
    FIELDS(core(t, 5, 0), 0, 1, 2, 0, 5, "core 5 (one NUMA node)");
    DIST(core(t, 0, 0), core(t, 4, 0), 3, "other board, shared NUMA node");
    hwloc_topology_destroy(t);
    tu_end();

    tu_begin("distance: pack:2 l3:1 l2:2 core:2 pu:1 (nested caches) and NIC classes");
    t = tu_synthetic("pack:2 l3:1 l2:2 core:2 pu:1");
    DIST(core(t, 0, 0), core(t, 1, 0), 1, "same L2");
    DIST(core(t, 0, 0), core(t, 3, 0), 1, "same L3, other L2");
    CHECK(core(t, 0, 0).cache == core(t, 3, 0).cache, "largest cache: %d vs %d",
          core(t, 0, 0).cache, core(t, 3, 0).cache);
    DIST(core(t, 0, 0), core(t, 4, 0), 3, "other package");
    l[0] = core(t, 0, 0), l[1] = core(t, 6, 1);
    l[1].nic_far = 1;
    DIST(l[0], l[1], 8, "other node, one far from the NIC");
    l[0].nic_far = 1;
    DIST(l[0], l[1], 9, "other node, both far");
    l[1].node = 0;
    DIST(l[0], l[1], 3, "far flags do not matter inside a node");
    hwloc_topology_destroy(t);
    tu_end();

    return tu_exit();
}
