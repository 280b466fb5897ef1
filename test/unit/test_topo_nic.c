/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* NIC locality from hwloc XML topologies with PCI/OS devices, and NIC-aware
 * inter-node tree and ring edges. */

#include "test_topo_util.h"

#define NIC_PACK0 "xml/nic_pack0.xml"   /* ib0 + mlx5_0 under package 0 */
#define NIC_BOTH  "xml/nic_both.xml"    /* hsn0 on package 0; sda + hsn1 on package 1 */

static void loc_group(void)
{
    hwloc_topology_t t;
    MPIR_Topo_loc_t l;
    hwloc_bitmap_t set;
    int i;

    tu_begin("nic: locality from XML (NIC on package 0, NICs on both)");
    t = tu_xml(NIC_PACK0);
    for (i = 0; i < 8; i++) {
        l = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0);
        CHECK(l.package == i / 4 && l.nic == (i < 4 ? 0 : -1) && l.nic_far == (i >= 4),
              "pack0 xml core %d: package %d nic %d far %d", i, l.package, l.nic, l.nic_far);
    }
    l = tu_loc_obj(t, HWLOC_OBJ_PACKAGE, 0, 0);
    CHECK(l.nic == 0 && l.nic_far == 0, "package-0 binding: nic %d far %d", l.nic, l.nic_far);
    set = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(set, 3, 4);
    MPIR_Topo_loc_from_hwloc(t, set, 0, &l);
    CHECK(l.nic == -1 && l.nic_far == 1, "binding across packages: nic %d far %d", l.nic,
          l.nic_far);
    MPIR_Topo_loc_from_hwloc(t, NULL, 2, &l);
    CHECK(l.nic == -1 && l.nic_far == 0 && l.node == 2, "unbound: nic %d far %d", l.nic,
          l.nic_far);
    hwloc_topology_destroy(t);

    t = tu_xml(NIC_BOTH);
    for (i = 0; i < 8; i++) {
        l = tu_loc_obj(t, HWLOC_OBJ_CORE, i, 0);
        /* the block device sda is not a NIC: hsn1 is NIC #1 */
        CHECK(l.nic == i / 4 && l.nic_far == 0, "both xml core %d: nic %d far %d", i, l.nic,
              l.nic_far);
    }
    MPIR_Topo_loc_from_hwloc(t, set, 0, &l);
    CHECK(l.nic == -1 && l.nic_far == 1, "both xml, binding across packages: nic %d far %d",
          l.nic, l.nic_far);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);

    /* no I/O objects: nobody is far */
    t = tu_synthetic("pack:2 core:4 pu:1");
    l = tu_loc_obj(t, HWLOC_OBJ_CORE, 6, 0);
    CHECK(l.nic == -1 && l.nic_far == 0, "no NIC: nic %d far %d", l.nic, l.nic_far);
    hwloc_topology_destroy(t);
    /* the I/O filter default drops PCI objects: then there is no NIC either */
    hwloc_topology_init(&t);
    hwloc_topology_set_xml(t, NIC_PACK0);
    hwloc_topology_load(t);
    l = tu_loc_obj(t, HWLOC_OBJ_CORE, 6, 0);
    CHECK(l.nic == -1 && l.nic_far == 0, "I/O filtered out: nic %d far %d", l.nic, l.nic_far);
    hwloc_topology_destroy(t);
    tu_end();
}

/* the interface a netmod should use: the one hwloc puts nearest */
static int nearest_of(hwloc_topology_t t, int core, const char *const *names, int n)
{
    hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, core);
    return MPIR_Topo_nearest_netdev(t, c->cpuset, names, n);
}

static void netdev_group(void)
{
    hwloc_topology_t t;
    hwloc_bitmap_t set;
    const char *both[] = { "hsn0", "hsn1" }, *swapped[] = { "hsn1", "hsn0" };
    const char *unknown_first[] = { "lo", "eth9", "hsn1" }, *unknown_later[] = { "hsn0", "eth9" };
    const char *same_pkg[] = { "ib0", "mlx5_0" }, *disk[] = { "sda", "hsn0" };
    int i, got;

    tu_begin("nic: the interface nearest to a binding (multirail)");
    t = tu_xml(NIC_BOTH);
    for (i = 0; i < 8; i++) {
        got = nearest_of(t, i, both, 2);
        CHECK(got == i / 4, "core %d of {hsn0, hsn1}: %d", i, got);
        got = nearest_of(t, i, swapped, 2);
        CHECK(got == 1 - i / 4, "core %d of {hsn1, hsn0}: %d", i, got);
        /* names hwloc does not know lose to any it knows, even a far one */
        got = nearest_of(t, i, unknown_first, 3);
        CHECK(got == 2, "core %d of {lo, eth9, hsn1}: %d", i, got);
        got = nearest_of(t, i, unknown_later, 2);
        CHECK(got == 0, "core %d of {hsn0, eth9}: %d", i, got);
        /* a block device of that name is no NIC */
        got = nearest_of(t, i, disk, 2);
        CHECK(got == 1, "core %d of {sda, hsn0}: %d", i, got);
    }
    set = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(set, 3, 4);
    got = MPIR_Topo_nearest_netdev(t, set, swapped, 2);
    CHECK(got == 0, "binding across packages keeps the first: %d", got);
    got = MPIR_Topo_nearest_netdev(t, NULL, swapped, 2);
    CHECK(got == 0, "unbound keeps the first: %d", got);
    hwloc_bitmap_fill(set);
    got = MPIR_Topo_nearest_netdev(t, set, swapped, 2);
    CHECK(got == 0, "bound to the whole machine keeps the first: %d", got);
    got = nearest_of(t, 5, swapped, 1);
    CHECK(got == 0, "one name: %d", got);
    CHECK(MPIR_Topo_netdev_index(t, "hsn0") == 0 && MPIR_Topo_netdev_index(t, "hsn1") == 1 &&
          MPIR_Topo_netdev_index(t, "sda") == -1 && MPIR_Topo_netdev_index(t, "eth9") == -1,
          "NIC indices: hsn0 %d hsn1 %d sda %d eth9 %d", MPIR_Topo_netdev_index(t, "hsn0"),
          MPIR_Topo_netdev_index(t, "hsn1"), MPIR_Topo_netdev_index(t, "sda"),
          MPIR_Topo_netdev_index(t, "eth9"));
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(t);

    t = tu_xml(NIC_PACK0);
    for (i = 0; i < 8; i++) {
        got = nearest_of(t, i, same_pkg, 2);
        CHECK(got == 0, "core %d, both NICs on package 0: %d", i, got);
    }
    hwloc_topology_destroy(t);
    tu_end();
}

/* which interfaces are as near as the nearest, and the UCX_NET_DEVICES
 * value that leaves the others out */
static void net_devices_group(void)
{
    hwloc_topology_t t;
    const char *three[] = { "hsn0", "hsn1", "eth9" }, *same_pkg[] = { "ib0", "mlx5_0" };
    const char *unknown[] = { "lo", "eth9" }, *names[] = { "eth0", "eth1", "eth2" };
    int near[3], i, got, far1[] = { 1, 0, 1 }, far02[] = { 0, 1, 0 }, none[] = { 1, 1, 1 };
    char buf[64];

    tu_begin("nic: interfaces as near as the nearest, UCX device lists");
    t = tu_xml(NIC_BOTH);
    for (i = 0; i < 8; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, i);
        got = MPIR_Topo_nearest_netdevs(t, c->cpuset, three, 3, near);
        /* eth9: hwloc does not know it, so it is not known to be far */
        CHECK(got == i / 4 && near[0] == (i < 4) && near[1] == (i >= 4) && near[2] == 1,
              "core %d of {hsn0, hsn1, eth9}: %d, near %d %d %d", i, got, near[0], near[1],
              near[2]);
        got = MPIR_Topo_nearest_netdevs(t, c->cpuset, unknown, 2, near);
        CHECK(got == 0 && near[0] && near[1], "core %d, no name known: all as near (%d %d)", i,
              near[0], near[1]);
    }
    got = MPIR_Topo_nearest_netdevs(t, NULL, three, 3, near);
    CHECK(got == 0 && near[0] && near[1] && near[2], "unbound: all as near (%d %d %d)", near[0],
          near[1], near[2]);
    hwloc_topology_destroy(t);
    t = tu_xml(NIC_PACK0);
    for (i = 0; i < 8; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, i);
        MPIR_Topo_nearest_netdevs(t, c->cpuset, same_pkg, 2, near);
        CHECK(near[0] && near[1], "core %d, both NICs on package 0: both near (%d %d)", i,
              near[0], near[1]);
    }
    hwloc_topology_destroy(t);

    /* UCX_NET_DEVICES has no exclusion syntax: nothing but a list is
     * touched (unset, empty, "all", "^...") */
    got = MPIR_Topo_net_devices_value(NULL, names, far1, 3, buf, sizeof(buf));
    CHECK(!got, "unset: %d", got);
    got = MPIR_Topo_net_devices_value("", names, far1, 3, buf, sizeof(buf));
    CHECK(!got, "empty: %d", got);
    got = MPIR_Topo_net_devices_value("all", names, far02, 3, buf, sizeof(buf));
    CHECK(!got, "all: %d", got);
    got = MPIR_Topo_net_devices_value("eth0,all", names, far02, 3, buf, sizeof(buf));
    CHECK(!got, "a list with all: %d", got);
    got = MPIR_Topo_net_devices_value("^ib9", names, far1, 3, buf, sizeof(buf));
    CHECK(!got, "^ form: %d", got);
    /* a list is narrowed, devices that are no interface of ours kept */
    got = MPIR_Topo_net_devices_value("mlx5_0:1,eth0,eth1,eth2", names, far1, 3, buf,
                                      sizeof(buf));
    CHECK(got && !strcmp(buf, "mlx5_0:1,eth0,eth2"), "list narrowed: %d '%s'", got, buf);
    got = MPIR_Topo_net_devices_value("eth1,,eth10,eth0", names, far02, 3, buf, sizeof(buf));
    CHECK(got && !strcmp(buf, "eth1,eth10"), "no prefix match, empty items dropped: %d '%s'", got,
          buf);
    /* nothing far, or no room: leave UCX's choice */
    got = MPIR_Topo_net_devices_value("eth0,eth1,eth2", names, none, 3, buf, sizeof(buf));
    CHECK(!got, "nothing far: %d", got);
    got = MPIR_Topo_net_devices_value("eth0,eth1,eth2", names, far02, 3, buf, 4);
    CHECK(!got, "value too long for the buffer: %d", got);
    got = MPIR_Topo_net_devices_value("eth0,eth1,eth2", names, far02, 3, buf, 5);
    CHECK(got && !strcmp(buf, "eth1"), "value just fits: %d '%s'", got, buf);
    CHECK(MPIR_Topo_net_devices_list("eth0") && MPIR_Topo_net_devices_list("mlx5_0:1,eth1") &&
          !MPIR_Topo_net_devices_list(NULL) && !MPIR_Topo_net_devices_list("") &&
          !MPIR_Topo_net_devices_list("all") && !MPIR_Topo_net_devices_list("^eth0"),
          "which values are lists");
    CHECK(MPIR_Topo_listed("eth0,eth1", "eth1") && !MPIR_Topo_listed("eth0,eth10", "eth1") &&
          !MPIR_Topo_listed(NULL, "eth1") && !MPIR_Topo_listed("", "eth1"), "listed");
    tu_end();
}

/* nodes of type pack0/both/none, ranks shuffled over all cores */
static void tree_ring_group(void)
{
    hwloc_topology_t tp = tu_xml(NIC_PACK0), tb = tu_xml(NIC_BOTH), ts;
    int nn = 6, maxp = 48, p, i, r, root, seed;
    int slots[48], parent[48], brute[96], order[48], border[48];
    MPIR_Topo_loc_t tmpl[3][8], locs[48];

    ts = tu_synthetic("pack:2 core:4 pu:1");
    for (i = 0; i < 8; i++) {
        tmpl[0][i] = tu_loc_obj(tp, HWLOC_OBJ_CORE, i, 0);
        tmpl[1][i] = tu_loc_obj(tb, HWLOC_OBJ_CORE, i, 0);
        tmpl[2][i] = tu_loc_obj(ts, HWLOC_OBJ_CORE, i, 0);
    }
    tu_begin("nic: tree and ring on NIC-near/far mixes vs brute force");
    for (seed = 0; seed < (tu_small() ? 2 : 12); seed++) {
        tu_seed(77 + seed);
        for (i = 0; i < nn * 8; i++)
            slots[i] = i;
        tu_shuffle(slots, nn * 8);
        for (p = 1; p <= maxp; p += (tu_small() ? 11 : 1 + p / 8)) {
            MPIR_Topo_map_t *map;
            for (r = 0; r < p; r++) {
                /* nodes 0,3: NIC on package 0; 1,4: both; 2,5: no NIC */
                int node = slots[r] / 8, c = slots[r] % 8;
                locs[r] = tmpl[node % 3][c];
                locs[r].node = node;
            }
            if (seed % 3 == 2)  /* some nodes with only far processes */
                for (r = 0; r < p; r++)
                    if (locs[r].node == 3 && locs[r].package == 0)
                        locs[r].package = 1, locs[r].nic = -1, locs[r].nic_far = 1;
            MPIR_Topo_map_create(p, locs, &map);
            if (!tu_check_map_dist(map, p, locs, "nic"))
                break;
            for (root = 0; root < p; root += (p > 20 ? 3 : 1)) {
                tu_brute_tree(p, locs, root, brute);
                if (!tu_check_tree(map, p, root, brute, parent, "nic"))
                    break;
                for (r = 0; r < p; r++) {
                    int q = parent[r], x, near_r = 0;
                    if (r == root || locs[q].node == locs[r].node)
                        continue;
                    for (x = 0; x < p; x++)
                        near_r |= locs[x].node == locs[r].node && !locs[x].nic_far;
                    CHECK(!near_r || !locs[r].nic_far, "p %d root %d: data enters node %d at far "
                          "rank %d although it has a near process", p, root, locs[r].node, r);
                }
            }
            MPIR_Topo_ring_create(map, order);
            tu_brute_ring(p, locs, border);
            tu_check_ring(p, order, border, "nic ring");
            MPIR_Topo_map_free(map);
        }
    }
    tu_end();
    hwloc_topology_destroy(tp);
    hwloc_topology_destroy(tb);
    hwloc_topology_destroy(ts);
}

int main(void)
{
    loc_group();
    netdev_group();
    net_devices_group();
    tree_ring_group();
    return tu_exit();
}
