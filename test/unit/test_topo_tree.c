/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* MPIR_Topo_tree_get against a literal Kruskal (Algorithm 1) on many
 * placements, plus the weight properties of the paper's Fig. 4 example. */

#include "test_topo_util.h"

static void placement_group(const tu_place_t * pl, int idx)
{
    char name[160];
    hwloc_topology_t t = tu_synthetic(pl->synth);
    int nobj = hwloc_get_nbobjs_by_type(t, pl->pu_bind ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE);
    int cap = tu_place_cap(pl, nobj), p, i, roots[96], nroots;
    MPIR_Topo_loc_t *locs = tu_xmalloc(sizeof(MPIR_Topo_loc_t) * cap);
    int *brute = tu_xmalloc(sizeof(int) * 2 * cap), *parent = tu_xmalloc(sizeof(int) * cap);

    snprintf(name, sizeof(name), "tree vs Kruskal: %s", pl->name);
    tu_begin(name);
    for (p = 1; p; p = tu_next_p(p, cap)) {
        MPIR_Topo_map_t *map;
        if (!CHECK(tu_place(t, pl, p, 1000 + idx * 97 + p, locs) == 0, "p %d too big", p))
            break;
        if (!CHECK(MPIR_Topo_map_create(p, locs, &map) == 0, "p %d: map_create failed", p))
            continue;
        CHECK(MPIR_Topo_map_size(map) == p, "map_size %d != %d", MPIR_Topo_map_size(map), p);
        if (!tu_check_map_dist(map, p, locs, pl->name)) {
            MPIR_Topo_map_free(map);
            continue;
        }
        nroots = tu_roots(p, roots);
        for (i = 0; i < nroots; i++) {
            tu_brute_tree(p, locs, roots[i], brute);
            if (!tu_check_tree(map, p, roots[i], brute, parent, pl->name))
                break;
        }
        MPIR_Topo_map_free(map);
    }
    tu_end();
    free(locs), free(brute), free(parent);
    hwloc_topology_destroy(t);
}

/* Fig. 4: 12 processes on 4 NUMA nodes (no shared cache) on 2 boards,
 * random binding: distances 2/5/6; every slow link is crossed once. */
static void fig4_group(void)
{
    hwloc_topology_t t = tu_synthetic("group:2 pack:2 numa:1 core:3 pu:1");
    const tu_place_t pl = { "fig4", "", 1, TU_SHUFFLE, 0, 0, TU_BOUND, TU_NIC_NONE };
    MPIR_Topo_loc_t locs[12];
    int parent[12], brute[24], seed, root, r;

    tu_begin("tree: Fig. 4 weight properties (12 procs, 4 NUMA, 2 boards)");
    for (seed = 0; seed < (tu_small() ? 3 : 40); seed++) {
        MPIR_Topo_map_t *map;
        CHECK(tu_place(t, &pl, 12, 7 + seed, locs) == 0, "placement too small");
        MPIR_Topo_map_create(12, locs, &map);
        for (root = 0; root < 12; root++) {
            int cnt[10] = { 0 }, cross[4][4] = { { 0 } }, a, b, ok = 1;
            tu_brute_tree(12, locs, root, brute);
            if (!tu_check_tree(map, 12, root, brute, parent, "fig4"))
                break;
            for (r = 0; r < 12; r++) {
                if (r == root)
                    continue;
                cnt[MPIR_Topo_distance(&locs[r], &locs[parent[r]])]++;
                a = locs[r].numa, b = locs[parent[r]].numa;
                if (a != b)
                    cross[a < b ? a : b][a < b ? b : a]++;
            }
            ok &= CHECK(cnt[2] == 8 && cnt[5] == 2 && cnt[6] == 1 && cnt[1] + cnt[3] + cnt[4] == 0,
                        "seed %d root %d: edges per distance 2:%d 5:%d 6:%d, expected 8/2/1",
                        seed, root, cnt[2], cnt[5], cnt[6]);
            /* NUMA 0,1 on board 0 and 2,3 on board 1 */
            ok &= CHECK(cross[0][1] == 1 && cross[2][3] == 1 &&
                        cross[0][2] + cross[0][3] + cross[1][2] + cross[1][3] == 1,
                        "seed %d root %d: NUMA pair crossings wrong", seed, root);
            /* the root leads its NUMA cluster: its children include the
             * leaders of the other NUMA node of its board and of the other board */
            ok &= CHECK(cnt[6] == 1, "one board crossing");
            if (!ok)
                break;
        }
        MPIR_Topo_map_free(map);
    }
    hwloc_topology_destroy(t);
    tu_end();
}

/* inter-node edges of a multi-node placement: exactly nnodes - 1 of them
 * and, with NICs, they land on near processes whenever the node has one */
static void internode_group(void)
{
    const tu_place_t *pl = &tu_placements[6];   /* 8 nodes, NIC mix */
    hwloc_topology_t t = tu_synthetic(pl->synth);
    int p = tu_small() ? 30 : 50, root, r, parent[50], brute[100], nidx[50], nn = 0, x;
    MPIR_Topo_loc_t locs[50];
    MPIR_Topo_map_t *map;

    tu_begin("tree: inter-node edges touch NIC-near processes");
    if (!CHECK(tu_place(t, pl, p, 3, locs) == 0, "placement too small"))
        return;
    MPIR_Topo_map_create(p, locs, &map);
    /* nodes are numbered in the order of their lowest rank */
    for (r = 0; r < p; r++) {
        for (x = 0; x < r && locs[x].node != locs[r].node; x++);
        nidx[r] = x < r ? nidx[x] : nn++;
        CHECK(MPIR_Topo_map_node_index(map, r) == nidx[r], "node_index(%d) = %d, expected %d", r,
              MPIR_Topo_map_node_index(map, r), nidx[r]);
    }
    CHECK(MPIR_Topo_map_num_nodes(map) == 8 && nn == 8, "num_nodes %d", MPIR_Topo_map_num_nodes(map));
    for (root = 0; root < p; root++) {
        int inter = 0;
        tu_brute_tree(p, locs, root, brute);
        if (!tu_check_tree(map, p, root, brute, parent, "internode"))
            break;
        for (r = 0; r < p; r++) {
            int q = parent[r], hasnear_r = 0, hasnear_q = 0, x;
            if (r == root || locs[r].node == locs[q].node)
                continue;
            inter++;
            for (x = 0; x < p; x++) {
                hasnear_r |= locs[x].node == locs[r].node && !locs[x].nic_far;
                hasnear_q |= locs[x].node == locs[q].node && !locs[x].nic_far;
            }
            /* the root itself may be the far end when it starts the broadcast */
            CHECK((!locs[r].nic_far || !hasnear_r) && (!locs[q].nic_far || !hasnear_q || q == root),
                  "root %d: inter-node edge %d-%d leaves a far process (far %d/%d)",
                  root, q, r, locs[q].nic_far, locs[r].nic_far);
        }
        CHECK(inter == 7, "root %d: %d inter-node edges", root, inter);
    }
    MPIR_Topo_map_free(map);
    hwloc_topology_destroy(t);
    tu_end();
}

/* random, non-nested locations: the tree must still be exactly Kruskal on
 * the cluster distance map_dist */
static void random_group(void)
{
    MPIR_Topo_loc_t locs[60];
    int parent[60], brute[120], it, p, root;
    MPIR_Topo_map_t *map;

    tu_begin("tree vs Kruskal on map_dist: random non-nested locations");
    tu_seed(4242);
    for (it = 0; it < (tu_small() ? 20 : 400); it++) {
        p = 1 + tu_rand(60);
        tu_random_locs(p, 1 + tu_rand(4), locs);
        MPIR_Topo_map_create(p, locs, &map);
        tu_weight_map = map;
        for (root = 0; root < p; root += 1 + p / 10) {
            tu_brute_tree(p, locs, root, brute);
            if (!tu_check_tree(map, p, root, brute, parent, "random"))
                break;
        }
        tu_weight_map = NULL;
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
    fig4_group();
    internode_group();
    return tu_exit();
}
