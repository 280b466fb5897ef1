/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* p = 16384 (256 nodes x 64 cores): map, ring and the tree of every rank for
 * two roots must take a few seconds at most, with O(p) memory, and have the
 * minimal number of slow edges at every level. */

#include <time.h>
#include "test_topo_util.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* per node: 2 packages x 2 NUMA/L3 domains x 16 cores */
#define SYNTH "pack:2 numa:2 l3:1 core:16 pu:1"

static void scale_group(int cyclic)
{
    int nn = tu_small() ? 32 : 256, ppn = 64, p = nn * ppn, r, i, k, root, roots[2];
    hwloc_topology_t t = tu_synthetic(SYNTH);
    MPIR_Topo_loc_t tmpl[64], *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * p);
    int *order = tu_xmalloc(sizeof(int) * p), *parent = tu_xmalloc(sizeof(int) * p);
    int *nch = tu_xmalloc(sizeof(int) * p), **ch = tu_xmalloc(sizeof(int *) * p);
    int tcnt[MPIR_TOPO_DIST_MAX + 1], rcnt[MPIR_TOPO_DIST_MAX + 1], ok = 1, nedges;
    MPIR_Topo_map_t *map;
    double t0, t_map, t_ring, t_tree;
    char name[128];

    snprintf(name, sizeof(name), "scale: p=%d (%d nodes x %d, %s), NIC on package 0 of even nodes",
             p, nn, ppn, cyclic ? "cyclic" : "block");
    tu_begin(name);
    for (i = 0; i < ppn; i++)
        tmpl[i] = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0);
    for (r = 0; r < p; r++) {
        int node = cyclic ? r % nn : r / ppn, c = cyclic ? r / nn : r % ppn;
        locs[r] = tmpl[c];
        locs[r].node = node;
        locs[r].nic_far = (node % 2 == 0) && locs[r].package != 0;
    }

    t0 = now();
    if (!CHECK(MPIR_Topo_map_create(p, locs, &map) == 0, "map_create failed"))
        goto done;
    t_map = now() - t0;
    t0 = now();
    ok &= CHECK(MPIR_Topo_ring_create(map, order) == 0, "ring_create failed");
    t_ring = now() - t0;
    roots[0] = 0;
    roots[1] = p / 2 + 37;      /* a far process when block-placed */
    t_tree = 0;
    for (k = 0; k < 2 && ok; k++) {
        root = roots[k];
        t0 = now();
        for (r = 0; r < p; r++)
            ok &= CHECK(MPIR_Topo_tree_get(map, root, r, &parent[r], &nch[r], &ch[r]) == 0,
                        "tree_get failed");
        t_tree += now() - t0;
        /* consistency and minimal number of edges at every distance */
        nedges = 0;
        for (i = 0; i <= MPIR_TOPO_DIST_MAX; i++)
            tcnt[i] = 0;
        for (r = 0; r < p && ok; r++) {
            for (i = 0; i < nch[r]; i++) {
                ok &= CHECK(parent[ch[r][i]] == r, "root %d: child %d of %d has parent %d",
                            root, ch[r][i], r, parent[ch[r][i]]);
                tcnt[MPIR_Topo_map_dist(map, r, ch[r][i])]++;
                nedges++;
            }
            MPIR_TOPO_FREE(ch[r]);
        }
        ok &= CHECK(nedges == p - 1, "root %d: %d edges", root, nedges);
        ok &= CHECK(tcnt[1] == p - 4 * nn && tcnt[4] == 2 * nn && tcnt[5] == nn &&
                    tcnt[7] == nn - 1, "root %d: tree edges by distance 1:%d 4:%d 5:%d 7:%d 8:%d",
                    root, tcnt[1], tcnt[4], tcnt[5], tcnt[7], tcnt[8]);
        for (r = 0; r < p && ok; r++) {
            int x = r, steps = 0;
            while (x != root && x >= 0 && steps++ < 64)
                x = parent[x];
            ok &= CHECK(x == root, "root %d: rank %d does not reach the root", root, r);
        }
    }
    if (ok) {
        for (i = 0; i <= MPIR_TOPO_DIST_MAX; i++)
            rcnt[i] = 0;
        for (i = 0; i < p; i++) {
            parent[i] = 0;
            rcnt[MPIR_Topo_map_dist(map, order[i], order[(i + 1) % p])]++;
        }
        for (i = 0; i < p; i++)
            parent[order[i]]++;
        for (i = 0; i < p; i++)
            ok &= CHECK(parent[i] == 1, "ring: rank %d appears %d times", i, parent[i]);
        ok &= CHECK(order[0] == 0 && rcnt[1] == p - 4 * nn && rcnt[4] == 2 * nn && rcnt[5] == nn &&
                    rcnt[7] + rcnt[8] + rcnt[9] == nn,
                    "ring edges by distance 1:%d 4:%d 5:%d 7:%d 8:%d 9:%d", rcnt[1], rcnt[4],
                    rcnt[5], rcnt[7], rcnt[8], rcnt[9]);
    }
    CHECK(MPIR_Topo_map_num_nodes(map) == nn, "num_nodes %d", MPIR_Topo_map_num_nodes(map));
    /* O(p): a fixed number of ints per rank */
    CHECK(MPIR_Topo_map_bytes(map) <= 128 * (size_t) p, "map uses %zu bytes for p = %d",
          MPIR_Topo_map_bytes(map), p);
    if (!tu_small())
        CHECK(t_map + t_ring + t_tree < 5.0, "too slow: map %.3fs ring %.3fs trees %.3fs",
              t_map, t_ring, t_tree);
    printf("  p=%d: map %.3fs, ring %.3fs, %d trees %.3fs, map %zu bytes\n", p, t_map, t_ring,
           2 * p, t_tree, MPIR_Topo_map_bytes(map));
    MPIR_Topo_map_free(map);
  done:
    tu_end();
    free(locs), free(order), free(parent), free(nch), free(ch);
    hwloc_topology_destroy(t);
}

int main(void)
{
    scale_group(0);
    scale_group(1);
    return tu_exit();
}
