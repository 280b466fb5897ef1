/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPIR_Topo_ring_create against a literal Algorithm 2 on many placements:
 * same cycle, same documented orientation and starting point. */

#include "test_topo_util.h"

/* number of ring edges (closing edge included) of each distance */
static void ring_weights(int p, const MPIR_Topo_loc_t * locs, const int *order, int *cnt)
{
    int i;
    for (i = 0; i <= MPIR_TOPO_DIST_MAX; i++)
        cnt[i] = 0;
    for (i = 0; i < p && p > 1; i++)
        cnt[MPIR_Topo_distance(&locs[order[i]], &locs[order[(i + 1) % p]])]++;
}

static void placement_group(const tu_place_t * pl, int idx)
{
    char name[160];
    hwloc_topology_t t = tu_synthetic(pl->synth);
    int nobj = hwloc_get_nbobjs_by_type(t, pl->pu_bind ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE);
    int cap = tu_place_cap(pl, nobj), p;
    MPIR_Topo_loc_t *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * cap);
    int *brute = tu_xmalloc(sizeof(int) * cap), *order = tu_xmalloc(sizeof(int) * cap);

    snprintf(name, sizeof(name), "ring vs Algorithm 2: %s", pl->name);
    tu_begin(name);
    for (p = 1; p; p = tu_next_p(p, cap)) {
        MPIR_Topo_map_t *map;
        int seed;
        /* several random placements per size for the shuffled ones */
        for (seed = 0; seed < (pl->mode == TU_SHUFFLE ? 4 : 1); seed++) {
            if (!CHECK(tu_place(t, pl, p, 500 + idx * 131 + p * 7 + seed, locs) == 0, "p %d too big", p))
                break;
            if (!CHECK(MPIR_Topo_map_create(p, locs, &map) == 0, "p %d: map_create failed", p))
                continue;
            tu_brute_ring(p, locs, brute);
            if (CHECK(MPIR_Topo_ring_create(map, order) == 0, "p %d: ring_create failed", p))
                tu_check_ring(p, order, brute, pl->name);
            MPIR_Topo_map_free(map);
        }
    }
    tu_end();
    free(locs), free(brute), free(order);
    hwloc_topology_destroy(t);
}

/* Ma et al. IG example: 48 processes, 8 sockets of 6 cores sharing an L3:
 * every socket is contiguous on the ring, whatever the binding */
static void ig_group(void)
{
    const tu_place_t *pl = &tu_placements[4];
    hwloc_topology_t t = tu_synthetic(pl->synth);
    MPIR_Topo_loc_t locs[48];
    MPIR_Topo_map_t *map;
    int order[48], brute[48], cnt[MPIR_TOPO_DIST_MAX + 1], i;

    tu_begin("ring: IG 48 procs cross-socket, 8 L3 sets contiguous");
    CHECK(tu_place(t, pl, 48, 1, locs) == 0, "placement too small");
    /* cross-socket binding of the paper: core (r mod 8) * 6 + r / 8 */
    for (i = 0; i < 48; i++)
        CHECK(locs[i].core == (i % 8) * 6 + i / 8, "rank %d on core %d", i, locs[i].core);
    MPIR_Topo_map_create(48, locs, &map);
    MPIR_Topo_ring_create(map, order);
    tu_brute_ring(48, locs, brute);
    tu_check_ring(48, order, brute, "IG");
    ring_weights(48, locs, order, cnt);
    CHECK(cnt[1] == 40 && cnt[5] == 8, "ring edges: %d at distance 1, %d at 5; expected 40/8",
          cnt[1], cnt[5]);
    /* inside a socket, the greedy path zig-zags: 0-8 is the first edge */
    CHECK(order[1] == 8 || order[47] == 8, "0 and 8 not neighbours");
    MPIR_Topo_map_free(map);
    hwloc_topology_destroy(t);
    tu_end();
}

/* random, non-nested locations: the ring must still be exactly
 * Algorithm 2 on the cluster distance map_dist */
static void random_group(void)
{
    MPIR_Topo_loc_t locs[60];
    int order[60], brute[60], it, p;
    MPIR_Topo_map_t *map;

    tu_begin("ring vs Algorithm 2 on map_dist: random non-nested locations");
    tu_seed(2424);
    for (it = 0; it < (tu_small() ? 20 : 1000); it++) {
        p = 1 + tu_rand(60);
        tu_random_locs(p, 1 + tu_rand(4), locs);
        MPIR_Topo_map_create(p, locs, &map);
        tu_weight_map = map;
        tu_brute_ring(p, locs, brute);
        tu_weight_map = NULL;
        if (CHECK(MPIR_Topo_ring_create(map, order) == 0, "ring_create failed"))
            tu_check_ring(p, order, brute, "random");
        MPIR_Topo_map_free(map);
    }
    tu_end();
}

int main(void)
{
    int i;
    random_group();
    for (i = 0; i < TU_NPLACEMENTS; i++)
        placement_group(&tu_placements[i], i);
    ig_group();
    return tu_exit();
}
