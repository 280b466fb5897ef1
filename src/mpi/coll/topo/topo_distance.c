/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Locations of processes (from hwloc and the node map) and the distance
 * between two of them: the pure topology logic, which needs no MPI (test/unit
 * builds it with -DMPIR_TOPO_STANDALONE). */

#include <stdlib.h>
#include <string.h>
#include "topo_logic.h"

#ifdef MPIR_TOPO_STANDALONE
int MPIR_Topo_standalone_fail_countdown = -1;

void *MPIR_Topo_standalone_malloc(size_t sz)
{
    if (MPIR_Topo_standalone_fail_countdown >= 0 && MPIR_Topo_standalone_fail_countdown-- == 0)
        return NULL;
    return malloc(sz ? sz : 1);
}
#endif

/* NICs: network interfaces and OpenFabrics (verbs) devices */
static int is_nic(hwloc_obj_t os)
{
    return os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
        os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
}

int MPIR_Topo_loc_from_hwloc(hwloc_topology_t topo, hwloc_const_cpuset_t binding, int node_id,
                             MPIR_Topo_loc_t * loc)
{
    hwloc_obj_t obj, anc, cache = NULL, board = NULL, numa, first_numa = NULL, os;
    hwloc_const_cpuset_t topo_set;
    int nnic = 0, numa_ok = 1;

    if (loc == NULL || topo == NULL)
        return -1;
    loc->node = node_id;
    loc->board = 0;
    loc->package = -1;
    loc->numa = -1;
    loc->cache = -1;
    loc->core = -1;
    loc->nic = -1;
    loc->nic_far = 0;
    loc->netdev = -1;
    loc->link_mbps = 0;
    loc->link_kind = MPIR_TOPO_LINK_UNKNOWN;

    topo_set = hwloc_topology_get_topology_cpuset(topo);
    if (binding == NULL || hwloc_bitmap_iszero(binding) || hwloc_bitmap_isincluded(topo_set, binding))
        return 0;
    obj = hwloc_get_obj_covering_cpuset(topo, binding);
    if (obj == NULL)
        return 0;       /* binding outside of this topology: nothing is known */

    for (anc = obj; anc; anc = anc->parent) {
        if (anc->type == HWLOC_OBJ_CORE && loc->core < 0)
            loc->core = (int) anc->logical_index;
        else if (anc->type == HWLOC_OBJ_PACKAGE && loc->package < 0)
            loc->package = (int) anc->logical_index;
        else if (hwloc_obj_type_is_cache(anc->type))
            cache = anc;        /* keep going up: we want the largest one */
        else if (anc->type == HWLOC_OBJ_GROUP && !hwloc_bitmap_isequal(anc->cpuset, topo_set) &&
                 hwloc_get_nbobjs_inside_cpuset_by_type(topo, anc->cpuset, HWLOC_OBJ_PACKAGE) > 1)
            board = anc;        /* topmost such group wins */
    }
    if (cache)
        loc->cache = cache->depth * (1 << 20) + (int) (cache->logical_index & 0xfffff);
    if (board)
        loc->board = (int) board->logical_index;

    /* NUMA nodes with identical locality (e.g. DDR + HBM of one cluster) count
     * as one memory controller; memory-only nodes never intersect a binding */
    for (numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, NULL); numa;
         numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)) {
        if (!numa->cpuset || !hwloc_bitmap_intersects(numa->cpuset, binding))
            continue;
        if (first_numa == NULL)
            first_numa = numa;
        else if (!hwloc_bitmap_isequal(first_numa->cpuset, numa->cpuset))
            numa_ok = 0;
    }
    if (first_numa && numa_ok)
        loc->numa = (int) first_numa->logical_index;

    for (os = hwloc_get_next_osdev(topo, NULL); os; os = hwloc_get_next_osdev(topo, os)) {
        if (!is_nic(os))
            continue;
        anc = hwloc_get_non_io_ancestor_obj(topo, os);
        if (loc->nic < 0 && anc && anc->cpuset && hwloc_bitmap_isincluded(binding, anc->cpuset))
            loc->nic = nnic;
        nnic++;
    }
    loc->nic_far = (nnic > 0 && loc->nic < 0);
    return 0;
}

/* the NIC OS device named name and its index among NICs; NULL if none */
static hwloc_obj_t find_netdev(hwloc_topology_t topo, const char *name, int *index)
{
    int i = 0;

    for (hwloc_obj_t os = hwloc_get_next_osdev(topo, NULL); os;
         os = hwloc_get_next_osdev(topo, os)) {
        if (!is_nic(os))
            continue;
        if (os->name && strcmp(os->name, name) == 0) {
            *index = i;
            return os;
        }
        i++;
    }
    return NULL;
}

int MPIR_Topo_netdev_index(hwloc_topology_t topo, const char *name)
{
    int i = -1;

    if (topo == NULL || name == NULL || find_netdev(topo, name, &i) == NULL)
        return -1;
    return i;
}

/* depth of the deepest object holding both the binding and the NIC named
 * name; -1 when hwloc has no NIC of that name */
static int netdev_depth(hwloc_topology_t topo, hwloc_obj_t bound, const char *name)
{
    int i;
    hwloc_obj_t anc, os = find_netdev(topo, name, &i);

    if (os == NULL || (anc = hwloc_get_non_io_ancestor_obj(topo, os)) == NULL)
        return -1;
    anc = anc == bound ? anc : hwloc_get_common_ancestor_obj(topo, anc, bound);
    return anc ? anc->depth : -1;
}

int MPIR_Topo_nearest_netdevs(hwloc_topology_t topo, hwloc_const_cpuset_t binding,
                              const char *const *names, int n, int *nearest)
{
    hwloc_const_cpuset_t topo_set;
    hwloc_obj_t bound = NULL;
    int best = 0, best_depth = -1;

    if (nearest)
        for (int i = 0; i < n; i++)
            nearest[i] = 1;
    if (topo == NULL || names == NULL || n < 2 || binding == NULL || hwloc_bitmap_iszero(binding))
        return 0;
    topo_set = hwloc_topology_get_topology_cpuset(topo);
    if (hwloc_bitmap_isincluded(topo_set, binding))
        return 0;       /* unbound: every NIC is as near as any other */
    bound = hwloc_get_obj_covering_cpuset(topo, binding);
    if (bound == NULL)
        return 0;
    for (int i = 0; i < n; i++) {
        int d = netdev_depth(topo, bound, names[i]);
        if (nearest)
            nearest[i] = d;
        if (d > best_depth) {
            best = i;
            best_depth = d;
        }
    }
    /* names hwloc does not know (bonds, VLANs, virtual NICs) are not known
     * to be far: only those it places farther than the best are */
    if (nearest)
        for (int i = 0; i < n; i++)
            nearest[i] = nearest[i] == best_depth || nearest[i] < 0;
    return best;
}

int MPIR_Topo_nearest_netdev(hwloc_topology_t topo, hwloc_const_cpuset_t binding,
                             const char *const *names, int n)
{
    return MPIR_Topo_nearest_netdevs(topo, binding, names, n, NULL);
}

int MPIR_Topo_listed(const char *list, const char *name)
{
    size_t len = strlen(name);

    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t) (end - list) : strlen(list);
        if (n == len && !strncmp(list, name, n))
            return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

/* appends item (len bytes) to the comma-separated list in buf; 0 if it
 * does not fit */
static int append(char *buf, size_t size, const char *item, size_t len)
{
    size_t used = strlen(buf);
    int sep = used > 0;

    if (used + sep + len + 1 > size)
        return 0;
    if (sep)
        buf[used++] = ',';
    memcpy(buf + used, item, len);
    buf[used + len] = '\0';
    return 1;
}

/* whether item (len bytes) is one of names[] that near[] calls far */
static int far_name(const char *item, size_t len, const char *const *names, const int *near, int n)
{
    for (int i = 0; i < n; i++)
        if (!near[i] && strlen(names[i]) == len && !strncmp(names[i], item, len))
            return 1;
    return 0;
}

int MPIR_Topo_list_append(char *buf, size_t size, const char *item)
{
    return append(buf, size, item, strlen(item));
}

int MPIR_Topo_net_devices_list(const char *user)
{
    return user && *user && user[0] != '^' && !MPIR_Topo_listed(user, "all");
}

int MPIR_Topo_net_devices_value(const char *user, const char *const *names, const int *near,
                                int n, char *buf, size_t size)
{
    int dropped = 0, fits = size > 0;
    const char *item = user;

    for (int i = 0; i < n; i++)
        dropped += !near[i];
    /* UCX_NET_DEVICES names the devices to use and nothing else (no "^"):
     * only a list is narrowed; "all" or nothing is left alone */
    if (!dropped || !fits || !MPIR_Topo_net_devices_list(user))
        return 0;
    buf[0] = '\0';
    while (item && *item && fits) {
        const char *end = strchr(item, ',');
        size_t len = end ? (size_t) (end - item) : strlen(item);
        if (len > 0 && !far_name(item, len, names, near, n))
            fits = append(buf, size, item, len);
        item = end ? end + 1 : NULL;
    }
    return fits && buf[0];
}

static int same(int x, int y)
{
    return x >= 0 && y >= 0 && x == y;
}

int MPIR_Topo_distance(const MPIR_Topo_loc_t * a, const MPIR_Topo_loc_t * b)
{
    int snuma, spkg;

    if (a->node != b->node)
        return MPIR_TOPO_DIST_NET + (a->nic_far != 0) + (b->nic_far != 0);
    if (same(a->cache, b->cache))
        return MPIR_TOPO_DIST_CACHE;
    snuma = same(a->numa, b->numa);
    spkg = same(a->package, b->package);
    if (snuma && spkg)
        return MPIR_TOPO_DIST_NUMA;
    if (snuma)
        return MPIR_TOPO_DIST_NUMA_XPKG;
    if (spkg)
        return MPIR_TOPO_DIST_PACKAGE;
    if (same(a->board, b->board))
        return MPIR_TOPO_DIST_BOARD;
    return MPIR_TOPO_DIST_NODE;
}
