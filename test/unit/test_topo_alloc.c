/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Every allocation failure is reported with a nonzero return, leaves no
 * output allocated (run under valgrind to see leaks) and a retry works. */

#include "test_topo_util.h"

int main(void)
{
    const tu_place_t *pl = &tu_placements[11];  /* 3 nodes, unbound, random NIC */
    hwloc_topology_t t = tu_synthetic(pl->synth);
    MPIR_Topo_loc_t locs[40];
    MPIR_Topo_map_t *map, *ref;
    int p = 32, k, rc, r, fails, order[32], rorder[32];
    int par, nch, *ch, rpar, rnch, *rch;

    tu_begin("alloc: failure injection in map_create, tree_get, ring_create");
    if (!CHECK(tu_place(t, pl, p, 11, locs) == 0, "placement too small"))
        return 1;
    CHECK(MPIR_Topo_map_create(p, locs, &ref) == 0, "reference map");
    CHECK(MPIR_Topo_map_create(0, locs, &map) != 0 && map == NULL, "p = 0 accepted");

    for (k = 0, fails = 0;; k++) {
        MPIR_Topo_standalone_fail_countdown = k;
        rc = MPIR_Topo_map_create(p, locs, &map);
        MPIR_Topo_standalone_fail_countdown = -1;
        if (rc == 0)
            break;
        fails++;
        CHECK(map == NULL, "map_create failed at allocation %d but returned a map", k);
    }
    CHECK(fails >= 1, "map_create: no allocation failure was seen");
    for (r = 0; r < p; r++)
        CHECK(MPIR_Topo_map_dist(map, r, (r * 7) % p) == MPIR_Topo_map_dist(ref, r, (r * 7) % p),
              "map after retries differs");

    for (k = 0, fails = 0;; k++) {
        MPIR_Topo_standalone_fail_countdown = k;
        rc = MPIR_Topo_ring_create(map, order);
        MPIR_Topo_standalone_fail_countdown = -1;
        if (rc == 0)
            break;
        fails++;
    }
    CHECK(fails >= 1, "ring_create: no allocation failure was seen");
    MPIR_Topo_ring_create(ref, rorder);
    CHECK(memcmp(order, rorder, sizeof(order)) == 0, "ring after retries differs");

    for (r = 0, fails = 0; r < p; r++) {
        MPIR_Topo_standalone_fail_countdown = 0;
        rc = MPIR_Topo_tree_get(map, 3, r, &par, &nch, &ch);
        MPIR_Topo_standalone_fail_countdown = -1;
        /* leaves need no allocation */
        CHECK((rc != 0 && ch == NULL && nch == 0) || (rc == 0 && nch == 0),
              "tree_get(rank %d) ignored the failure (rc %d, %d children)", r, rc, nch);
        fails += rc != 0;
        MPIR_Topo_tree_get(map, 3, r, &par, &nch, &ch);
        MPIR_Topo_tree_get(ref, 3, r, &rpar, &rnch, &rch);
        CHECK(par == rpar && nch == rnch && (nch == 0 || !memcmp(ch, rch, nch * sizeof(int))),
              "tree_get(rank %d) after a failure differs", r);
        MPIR_TOPO_FREE(ch);
        MPIR_TOPO_FREE(rch);
    }
    CHECK(fails >= 1, "tree_get: no allocation failure was seen");
    MPIR_Topo_map_free(map);
    MPIR_Topo_map_free(ref);
    MPIR_Topo_map_free(NULL);
    hwloc_topology_destroy(t);
    tu_end();
    return tu_exit();
}
