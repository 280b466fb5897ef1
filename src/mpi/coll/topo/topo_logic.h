/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Pure (MPI-free) topology logic for the distance-aware collectives of
 * Ma et al. (process-distance-aware adaptive collectives): the distance
 * metric, the broadcast tree of their Algorithm 1 and the allgather ring of
 * their Algorithm 2, extended with node and NIC levels.
 *
 * Inside MPICH this file must not pull in anything but mpl.h and hwloc.h.
 * Define MPIR_TOPO_STANDALONE to build it with plain libc (unit tests). */

#ifndef TOPO_LOGIC_H_INCLUDED
#define TOPO_LOGIC_H_INCLUDED

#include <stddef.h>
#include <hwloc.h>

#ifdef MPIR_TOPO_STANDALONE
/* hookable so that the unit tests can inject allocation failures: when
 * MPIR_Topo_standalone_fail_countdown is >= 0 it is decremented by every
 * allocation and the allocation that finds it at 0 fails */
extern int MPIR_Topo_standalone_fail_countdown;
void *MPIR_Topo_standalone_malloc(size_t sz);
#define MPIR_TOPO_MALLOC(sz) MPIR_Topo_standalone_malloc(sz)
#define MPIR_TOPO_FREE(p)    free(p)
#include <stdlib.h>
#else
#include "mpl.h"
#define MPIR_TOPO_MALLOC(sz) MPL_malloc((sz), MPL_MEM_COLL)
#define MPIR_TOPO_FREE(p)    MPL_free(p)
#endif

/* distance levels, smaller = closer (Ma et al. extended with node and NIC) */
enum {
    MPIR_TOPO_DIST_SELF = 0,
    MPIR_TOPO_DIST_CACHE = 1,   /* share any cache (includes same core) */
    MPIR_TOPO_DIST_NUMA = 2,    /* same NUMA node and same package */
    MPIR_TOPO_DIST_NUMA_XPKG = 3,       /* same NUMA node (memory controller), other package */
    MPIR_TOPO_DIST_PACKAGE = 4, /* same package, other NUMA node */
    MPIR_TOPO_DIST_BOARD = 5,   /* same board */
    MPIR_TOPO_DIST_NODE = 6,    /* same node, other board */
    MPIR_TOPO_DIST_NET = 7,     /* other node, both processes close to a NIC */
    MPIR_TOPO_DIST_NET_FAR1 = 8,        /* other node, one of the two far from every NIC of its node */
    MPIR_TOPO_DIST_NET_FAR2 = 9,        /* other node, both far */
    MPIR_TOPO_DIST_MAX = 9
};

/* number of intra-node levels (CACHE .. NODE) */
#define MPIR_TOPO_NLEVELS 6

typedef struct MPIR_Topo_loc {
    int node;                   /* node id (>= 0), given by the caller */
    int board;                  /* board index within the node, 0 if no board-level Group */
    int package;                /* package logical index, -1 if unknown/unbound/spanning */
    int numa;                   /* NUMA node logical index if exactly one, else -1 */
    int cache;                  /* id of the largest cache covering the binding, -1 if none */
    int core;                   /* core logical index, -1 if the binding spans cores */
    int nic;                    /* index (among NIC os devices) of the first close NIC, -1 if none */
    int nic_far;                /* 1 iff the node has NICs and the process is close to none */
    int netdev;                 /* index (as nic) of the NIC its netmod sends through, -1 unknown */
    int link_mbps;              /* rate of the node's fastest network port, Mbit/s, 0 unknown */
    int link_kind;              /* that port's MPIR_TOPO_LINK_* */
} MPIR_Topo_loc_t;

/* Fill loc from hwloc.  binding NULL, empty or covering the whole machine
 * means unbound: only node and board (0) are set, the rest is -1, nic_far 0.
 * NICs are OS devices of type NETWORK or OPENFABRICS; a process is close to
 * one if its binding is included in the cpuset of the device's first non-I/O
 * ancestor.  board is the logical index of the topmost Group ancestor of the
 * binding's covering object that holds more than one package but not the
 * whole machine, 0 otherwise.  cache ids encode depth and logical index. */
int MPIR_Topo_loc_from_hwloc(hwloc_topology_t topo, hwloc_const_cpuset_t binding, int node_id,
                             MPIR_Topo_loc_t * loc);

/* Which of n network interfaces, named as the OS names them (libfabric's
 * tcp and sockets providers name their domains so), is nearest to a process
 * bound to binding: the one whose hwloc network device (NETWORK or
 * OPENFABRICS OS device of that name) has a first non-I/O ancestor sharing
 * the deepest object with the binding; the first such on a tie.  Names
 * hwloc does not know count as farther than any it knows.  Returns 0 when
 * no interface is nearer than names[0] (also when unbound or n < 2), so a
 * caller keeps its own first choice unless another is strictly nearer. */
int MPIR_Topo_nearest_netdev(hwloc_topology_t topo, hwloc_const_cpuset_t binding,
                             const char *const *names, int n);

/* The same, and nearest[i] (n of them) is 0 for every name hwloc places
 * farther than the nearest, 1 for the others (names it does not know
 * included; all 1 when unbound or n < 2). */
int MPIR_Topo_nearest_netdevs(hwloc_topology_t topo, hwloc_const_cpuset_t binding,
                              const char *const *names, int n, int *nearest);

/* whether name is an item of the comma-separated list (NULL: empty) */
int MPIR_Topo_listed(const char *list, const char *name);

/* appends item to the comma-separated list in buf (size bytes); 0 if it
 * does not fit */
int MPIR_Topo_list_append(char *buf, size_t size, const char *item);

/* whether a UCX_NET_DEVICES value is a list of devices (not unset, empty,
 * "all" or a "^" form) */
int MPIR_Topo_net_devices_list(const char *user);

/* user's UCX_NET_DEVICES list (into buf, size bytes) without those of
 * names[n] whose near[i] is 0.  Returns 0 (buf unspecified) where user is
 * no list (UCX_NET_DEVICES has no exclusion syntax: for "all", pass the
 * list of every device UCX knows), none is left out, or the value would
 * not fit. */
int MPIR_Topo_net_devices_value(const char *user, const char *const *names, const int *near,
                                int n, char *buf, size_t size);

/* index among the NIC OS devices (numbered as loc->nic) of the one named
 * name, -1 if hwloc has none of that name */
int MPIR_Topo_netdev_index(hwloc_topology_t topo, const char *name);

/* Pairwise distance (Ma et al. + node/NIC levels); never returns SELF. */
int MPIR_Topo_distance(const MPIR_Topo_loc_t * a, const MPIR_Topo_loc_t * b);

/* Per-communicator cluster structure, O(p * levels) memory. */
typedef struct MPIR_Topo_map MPIR_Topo_map_t;

int MPIR_Topo_map_create(int p, const MPIR_Topo_loc_t * locs, MPIR_Topo_map_t ** map);
void MPIR_Topo_map_free(MPIR_Topo_map_t * map);
int MPIR_Topo_map_size(const MPIR_Topo_map_t * map);
int MPIR_Topo_map_num_nodes(const MPIR_Topo_map_t * map);
/* 0..num_nodes-1, nodes numbered in the order of their lowest rank */
int MPIR_Topo_map_node_index(const MPIR_Topo_map_t * map, int rank);
/* cluster distance: smallest level w (1..6) whose cluster holds both ranks,
 * 7 + nic_far(a) + nic_far(b) across nodes, 0 if a == b */
int MPIR_Topo_map_dist(const MPIR_Topo_map_t * map, int a, int b);
/* bytes allocated by the map (for memory-footprint checks) */
size_t MPIR_Topo_map_bytes(const MPIR_Topo_map_t * map);

/* Distance-aware broadcast tree (Algorithm 1) rooted at root, seen from
 * rank.  *parent = -1 for the root.  *children is allocated with
 * MPIR_TOPO_MALLOC (NULL when *nchildren == 0; free with MPIR_TOPO_FREE),
 * ordered by decreasing map distance from rank, ties by increasing rank.
 * Cost O(levels^2 + nchildren log nchildren) (+ O(num_nodes) for the
 * process that links the nodes), independent of p.  Returns -1 on bad
 * arguments or allocation failure (then *children is NULL). */
int MPIR_Topo_tree_get(const MPIR_Topo_map_t * map, int root, int rank, int *parent,
                       int *nchildren, int **children);

/* Distance-aware ring (Algorithm 2) in order[0..p-1].  Convention: the
 * greedy phase yields a Hamiltonian path; the ring runs along that path from
 * its smaller-ranked end to its other end and back, rotated so that
 * order[0] = 0.  O(p log p) time, O(p) memory. */
int MPIR_Topo_ring_create(const MPIR_Topo_map_t * map, int *order);

/* Leader layout for the shared-memory + network engine.  Every node's
 * processes are split into k groups (one per NUMA domain or package by
 * default), each with a leader that carries that group's share of the
 * node's network traffic.  Positions are "node-major": nodes in the order of
 * their lowest rank, within a node the groups in order, within a group the
 * processes by (package, numa, cache, core, rank).  Every group of one node
 * is thus a contiguous run of positions, so a node's or a group's data can
 * travel as one contiguous message. */
typedef struct MPIR_Topo_layout {
    int p;                      /* processes */
    int nnodes;                 /* nodes */
    int k;                      /* groups (= leaders) per node, same on every node */
    int *order;                 /* order[pos] = rank at node-major position pos */
    int *pos;                   /* pos[rank] = node-major position of rank */
    int *node;                  /* node[rank] = node index of rank */
    int *node_start;            /* nnodes+1 entries: node n holds [node_start[n], node_start[n+1]) */
    int *group_start;           /* nnodes*k+1 entries: group g of node n holds
                                 * [group_start[n*k+g], group_start[n*k+g+1]) */
    int *leader;                /* nnodes*k entries: rank leading group g of node n */
} MPIR_Topo_layout_t;

/* k_request > 0 asks for that many leaders per node; 0 means one per NUMA
 * domain (or package when NUMA is unknown) on the node with the fewest.  k
 * is capped by the smallest node's process count.  When a node has exactly
 * k domains, the groups are its domains; otherwise the node's processes are
 * cut into k contiguous runs of near-equal size.  A group's leader is its
 * first member that is close to a NIC (nic >= 0 and nic_far == 0), or its
 * first member if none is.  Returns -1 on bad arguments or allocation
 * failure. */
int MPIR_Topo_layout_create(int p, const MPIR_Topo_loc_t * locs, int k_request,
                            MPIR_Topo_layout_t ** layout);
void MPIR_Topo_layout_free(MPIR_Topo_layout_t * layout);

/* The engine's reduction in two levels within a node (allreduce and reduce
 * topo_pipeline, MPIR_CVAR_TOPO_NODE_LEVELS=2), on a round of n elements,
 * for member j of group g (of gsize members) on a node of k groups: in
 * stage 1 it reduces part [part_lo, part_hi) of its group's inputs into
 * the group's partial; in stage 2 sub [sub_lo, sub_hi) of its group's
 * share [share_lo, share_hi), the part of the round that the group's
 * leader carries across nodes, across the k partials.  A group's parts
 * cover [0, n) once, its subs its share, the shares [0, n). */
typedef struct {
    long long part_lo, part_hi;
    long long share_lo, share_hi;
    long long sub_lo, sub_hi;
} MPIR_Topo_stages_t;
void MPIR_Topo_reduce_stages(long long n, int k, int g, int gsize, int j, MPIR_Topo_stages_t * s);
/* Levels of that reduction on a node of local_size processes in k groups,
 * as MPIR_CVAR_TOPO_NODE_LEVELS (levels) asks: 1 or 2; 0 takes 2 from
 * MPIR_TOPO_TWO_LEVEL_MIN_LOCAL processes and 2 groups.  That threshold is
 * not timed (no machine here has more than 2 cores): below it a flat
 * reduction's extra reads across domains are few and its one
 * synchronisation fewer counts more. */
#define MPIR_TOPO_TWO_LEVEL_MIN_LOCAL 16
int MPIR_Topo_node_levels(int local_size, int k, int levels);
/* All the levels of that reduction on a node of n processes (in local
 * order) in k groups starting at group_lo[0..k], package[i] and cache[i]
 * (-1 unknown) their package and largest cache: level 0 is the node, then
 * as nested units, each a run of local indices within one unit of the
 * level above, any of
 *  - packages, where every package holds whole groups and has two or more
 *    on average (a 2-socket node of NUMA groups), or where the groups are
 *    not a level (one NUMA domain over 2 packages);
 *  - the groups, where k >= 2 and not every process is a group alone;
 *  - shared caches within the groups, where they cut the groups finer and
 *    not every process alone (L3 domains of a NUMA group).
 * levels caps the count, taking the groups first, then the caches, then the
 * packages: 1 is one level, 2 the groups alone (as before there were more).
 * 0 (automatic) takes from MPIR_TOPO_TWO_LEVEL_MIN_LOCAL processes the
 * groups, the caches where their units have MPIR_TOPO_CACHE_LEVEL_MIN
 * processes or more on average, and the packages; one level below.
 * Writes unit[d * n + i], the first local index of the level-d unit of
 * process i (level 0: 0), and returns the number of levels, at most
 * MPIR_TOPO_MAX_NODE_LEVELS; *group_level is the groups' level (0: not
 * a level).  Neither threshold is timed (no machine here has more than 2
 * cores): a level costs every process a wait and a synchronisation per
 * round, and saves reads across the domain it keeps apart. */
#define MPIR_TOPO_MAX_NODE_LEVELS 4
#define MPIR_TOPO_CACHE_LEVEL_MIN 4
int MPIR_Topo_node_units(int n, int k, const int *group_lo, const int *package,
                         const int *cache, int levels, int *unit, int *group_level);
/* The copies of bcast and allgather through those levels
 * (MPIDI_Topo_areas_t), down to level depth of unit (n processes,
 * nlevels levels).  Data arrive in area 0; the innermost units (level
 * depth) have areas 1, 2, ... in local order, and a unit that needs its
 * own copy keeps it in its first innermost unit's area.
 * MPIR_Topo_unit_chain: process me's unit at each level d, [lo[d], hi[d])
 * (d < nlevels), and area_of[d], the area of the innermost unit that
 * starts at lo[d] (d <= depth). */
void MPIR_Topo_unit_chain(int n, int nlevels, const int *unit, int me, int depth, int *lo,
                          int *hi, int *area_of);
/* bcast: where the process of that chain reads data that arrived at
 * local process a: *area (0: where it arrived), whose copy local process
 * *maker makes from *src, made by *src_maker (-1: area 0, the arrival).
 * The first level whose unit of the process does not hold a has its own
 * copy; below it a unit copies again unless it is its parent's first
 * child, which shares its parent's area.  So data cross into each unit
 * of each level once, and each innermost unit without a gets one copy. */
void MPIR_Topo_copy_path(int depth, const int *lo, const int *hi, const int *area_of, int a,
                         int *area, int *maker, int *src, int *src_maker);
/* allgather (one node): the copies the process me of that chain makes
 * into its innermost unit's area, which holds every block from outside
 * that unit, if me is the unit's first member (else none): blocks of local
 * processes [lo, hi) from area src, made by src_maker (-1: area 0, where
 * each block arrived).  For each level at which me starts its unit, the
 * blocks of the parent unit outside it from area 0; if me does not start
 * the whole chain, the blocks outside the highest parent from that
 * parent's area, made by its first member the same way.  So every block
 * crosses into each unit of each level once.  Returns the count (at most
 * MPIR_TOPO_MAX_COPIES). */
typedef struct {
    int lo, hi, src, src_maker;
} MPIR_Topo_copy_t;
#define MPIR_TOPO_MAX_COPIES (2 * MPIR_TOPO_MAX_NODE_LEVELS)
int MPIR_Topo_gather_copies(int n, int depth, const int *lo, const int *hi, const int *area_of,
                            int me, MPIR_Topo_copy_t * copies);
/* Groups of a node's n processes (in local order) for a small reduction
 * through cells in two stages: runs of processes that share their largest
 * cache (cache[i], -1 unknown; the layout orders a node by package, NUMA
 * node and cache, so a cache domain is one run), each cut into near-equal
 * groups of at most fanin; where runs hold two processes or fewer on
 * average (caches private to a core), the node is one run.  fanin < 0:
 * about sqrt(n), and only from MPIR_TOPO_CELL_GROUPS_MIN_LOCAL processes;
 * 0 or 1: one group.  Writes the groups' first indices to lo[0..count]
 * (lo[count] = n; n + 1 entries at most) and returns count, 1 meaning a
 * flat reduction.  cache may be NULL (nothing known), or lo itself: no id
 * is read after its entry is written.  The threshold is not timed (no
 * machine here has more than 2 cores): below it a flat reduction's p
 * reads per process are few, and its one wait fewer counts more. */
#define MPIR_TOPO_CELL_GROUPS_MIN_LOCAL 16
int MPIR_Topo_cell_groups(int n, const int *cache, int fanin, int *lo);

/* Local reductions in vectors (topo_op.c): in[i] applied to inout[i] for n
 * elements, bit for bit what MPICH's scalar loops give.  Kinds of element
 * and operations: */
enum {
    MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_U32, MPIR_TOPO_ELEM_I64, MPIR_TOPO_ELEM_U64,
    MPIR_TOPO_ELEM_F32, MPIR_TOPO_ELEM_F64, MPIR_TOPO_ELEM_I8, MPIR_TOPO_ELEM_U8,
    MPIR_TOPO_ELEM_I16, MPIR_TOPO_ELEM_U16, MPIR_TOPO_ELEM_COUNT
};
enum {
    MPIR_TOPO_OP_SUM, MPIR_TOPO_OP_PROD, MPIR_TOPO_OP_MIN, MPIR_TOPO_OP_MAX,
    MPIR_TOPO_OP_BAND, MPIR_TOPO_OP_BOR, MPIR_TOPO_OP_BXOR, MPIR_TOPO_OP_COUNT
};
/* 1 if done, 0 if this kind and operation are not covered (bitwise
 * operations on floating point); the widest vectors the CPU has */
int MPIR_Topo_op_apply(int kind, int op, const void *in, void *inout, size_t n);
/* the same in vectors of width bytes (16, or 32 where the CPU has AVX2);
 * 0 where that width is not available */
int MPIR_Topo_op_apply_width(int width, int kind, int op, const void *in, void *inout,
                             size_t n);

/* ---------------------------------------------------------------- cost model
 * (topo_model.c: units, formulas and constants) */
typedef struct MPIR_Topo_model {
    double net_latency;         /* B: bytes a NIC moves in one message's latency */
    double mem_speedup;         /* R: bytes copied within a node per byte the NIC moves */
    double red_speedup;         /* F: bytes a process reduces per byte the NIC moves */
    double once_margin;         /* allreduce's step once where predicted this much faster */
} MPIR_Topo_model_t;
extern const MPIR_Topo_model_t MPIR_Topo_model_default;

/* kinds of network port, by the latency of one message (topo_model.c's
 * table), the slowest first */
enum {
    MPIR_TOPO_LINK_UNKNOWN = 0,
    MPIR_TOPO_LINK_ETHERNET = 1,        /* a network interface (TCP sockets) */
    MPIR_TOPO_LINK_ROCE = 2,    /* an RDMA port whose link layer is Ethernet */
    MPIR_TOPO_LINK_INFINIBAND = 3
};
/* The fastest active network port under sysfs ("/sys"): its rate in
 * Mbit/s (0: none found) and its kind. */
int MPIR_Topo_link_probe(const char *sysfs, int *kind);
/* The speed of network interface ifname under sysfs in Mbit/s (its
 * class/net/IF/speed), -1 where it reports none. */
long MPIR_Topo_net_speed(const char *sysfs, const char *ifname);
/* The model for a network of links of mbps Mbit/s (0: unknown) and kind:
 * B = the kind's latency x rate, R = a process' copy rate over the rate,
 * F = R / 2; the defaults where unknown. */
MPIR_Topo_model_t MPIR_Topo_model_for_link(long mbps, int kind);

/* the leaders' exchange of an allgather across nodes */
enum { MPIR_TOPO_MODEL_RING = 0, MPIR_TOPO_MODEL_LOGSTEP = 1 };
/* the leaders' step of a reduction: recursive doubling (allreduce) or the
 * binomial tree (reduce); reduce-scatter then allgather (allreduce) or
 * gather (reduce) */
enum { MPIR_TOPO_MODEL_DOUBLING = 0, MPIR_TOPO_MODEL_SPLIT = 1 };
/* an allreduce of several rounds across nodes: the leaders' step per round,
 * or once, on the whole call */
enum { MPIR_TOPO_MODEL_ROUNDS = 0, MPIR_TOPO_MODEL_ONCE = 1 };
/* the tree of nodes of a bcast */
enum { MPIR_TOPO_TREE_AUTO = 0, MPIR_TOPO_TREE_BINOMIAL = 1, MPIR_TOPO_TREE_CHAIN = 2 };

/* Which exchange among the leaders of nn nodes (ppn processes each, ppl
 * per leader group) the model puts first for m bytes per process, with
 * both predictions (bytes of NIC time). */
int MPIR_Topo_model_allgather_leaders(const MPIR_Topo_model_t * md, int nn, int ppn, int ppl,
                                      long long m, double *ring, double *logstep);
/* Which step among nn leaders the model puts first for a reduction of c
 * bytes in count elements (the split needs count >= the largest power of
 * two <= nn), with both predictions (bytes of NIC time). */
int MPIR_Topo_model_reduce_leaders(const MPIR_Topo_model_t * md, int nn, long long c,
                                   long long count, double *doubling, double *split);
/* Whether an allreduce of c bytes (count elements) across nn nodes, k
 * leaders per node, in rounds of r bytes (c > r) takes the leaders' step
 * per round or once on the whole call, with both predictions. */
int MPIR_Topo_model_allreduce_steps(const MPIR_Topo_model_t * md, int nn, int k, int ko,
                                    long long c, long long r, long long count, double *rounds,
                                    double *once);
/* The tree of nodes of a bcast (1: the chain), its chunk and its cost. */
int MPIR_Topo_model_bcast_nodes(const MPIR_Topo_model_t * md, int nn, long long m, long long slot,
                                long long b, int tree, long long min_chunk, long long *chunk,
                                double *cost);
/* MPICH's scatter + allgather bcast, one process per node (*doubling: the
 * allgather by recursive doubling, else the ring). */
double MPIR_Topo_model_bcast_scatter(const MPIR_Topo_model_t * md, int p, long long m,
                                     int *doubling);
/* Whether a bcast across nn nodes of several processes (one leader each)
 * takes MPICH's scatter + allgather among the leaders rather than the tree
 * of nodes (cost tree, chunks of tree_chunk), with that step's allgather and its cost. */
int MPIR_Topo_model_bcast_leaders_scatter(const MPIR_Topo_model_t * md, int nn, long long m,
                                          double tree, long long tree_chunk, int root_leads,
                                          int *doubling, double *cost);

#endif /* TOPO_LOGIC_H_INCLUDED */
