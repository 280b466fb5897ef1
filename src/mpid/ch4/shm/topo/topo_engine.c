/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The engine on a communicator: its setup (the layout from the topology
 * module, leaders, sub-communicators, the node segment: topo_engine_segment.c,
 * the waiting policy: topo_engine_wait.c, CMA: topo_engine_cma.c), agreed
 * on by every member in phases so that all use it or none does, cached on
 * the communicator, and freed with it. */

#include "topo_engine.h"
#include "topo_hooks.h"
#include "coll_trace.h"
#include "mpidu_shm.h"
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_LEADERS_PER_NODE
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Leaders per node for the topo_pipeline and topo_multileader
        algorithms. 0 (default) means one per NUMA domain (or package) of the
        node with the fewest, each the member of its group closest to a NIC.
        Capped by the smallest number of processes any node has. Read when
        a communicator first uses the engine.

    - name        : MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The bytes a node's NIC moves in the time of one message's latency
        (latency times bandwidth): the B of the cost model (topo_model.c)
        that the topo_pipeline algorithms across nodes decide by. bcast
        weighs it against each chunk: the smaller it is, the smaller the
        chunks of the chain of nodes and the sooner the chain beats a
        binomial tree; the larger, the sooner the leaders' scatter +
        allgather (2 log2 N latencies) beats both. allgather's leaders
        take the log-step exchange instead of the ring, and allreduce's
        and reduce's leaders reduce-scatter + allgather (gather) instead
        of recursive doubling (a binomial tree) and take their step once
        instead of per round, where the model says so (never the split up
        to MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE,
        MPIR_CVAR_REDUCE_SHORT_MSG_SIZE). 0 (default): from the nodes'
        network, as MPIR_CVAR_TOPO_NETWORK_RATE finds it, times one
        message's latency by the kind of port (InfiniBand 1.5 us, RoCE 3
        us, Ethernet 10 us): 37500 on 200 Gbit/s InfiniBand, 31250 on 25
        Gbit/s Ethernet; 16384 where a node's network is not known (as on
        virtual interfaces; the emulated cluster's 250 Mbit/s NICs are
        about 2048). MPIR_CVAR_TOPO_PRINT shows what a communicator takes.

    - name        : MPIR_CVAR_TOPO_NETWORK_RATE
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The rate of the network between the nodes in Mbit/s, for the cost
        model of the topo_pipeline algorithms across nodes: its R, the
        bytes one process copies (one core, about 10 GB/s) while the NIC
        moves one, and its B where MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES is
        0. A NIC faster than one core's copies (R below 1: above 80
        Gbit/s) makes the node's copies the bottleneck: allgather's leaders
        keep the ring, whose copies overlap its steps, and bcast's keep
        the tree of nodes. 0 (default): from sysfs, each node's fastest
        active port (InfiniBand or RoCE under /sys/class/infiniband, else a
        network interface reporting a speed), the slowest of them on the
        communicator, so that every member decides alike; where some node's
        is not known (virtual interfaces report none), R is 6, a NIC 4 to 8
        times slower than a node's memory. Set it where that port is not
        the one the netmod sends through or its rate is shared.

    - name        : MPIR_CVAR_TOPO_CELL_FANIN
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Small allreduce and reduce within a node (up to 1 KiB, through each
        process' cells) in two stages: the node's processes form groups of
        at most this many that share a cache (L3) where the topology says
        so; one process per group reduces its group's inputs, and every
        process then reduces the groups' results, reading a few cache
        lines instead of every process' (a flat reduction's reads grow with
        the square of the processes). 0 or 1: flat, every process reads
        every input. -1 (default): groups of about the square root of the
        node's processes, from 16 processes per node (flat below). Read
        when a communicator first uses the engine.

    - name        : MPIR_CVAR_TOPO_DEBUG_SETUP_NOMEM
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For testing only: the process of this rank in MPI_COMM_WORLD acts as
        if it could not allocate memory while the engine sets itself up on
        a communicator, so that tests see every member return an error
        rather than wait for it. -1 (default): never.

    - name        : MPIR_CVAR_TOPO_DEBUG_NODE_FAILED
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For testing only: the process of this rank in MPI_COMM_WORLD fails
        its part of every engine collective as it starts (as a refused CMA
        read would), on every communicator with a node segment, so that
        tests see every process of the call, on every node, return an error
        rather than wait or take what its node sent as good. -1 (default):
        never.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* ---- setup and teardown ----------------------------------------------- */

/* the engine of a process that could not allocate its own, where the
 * members agreed that the setup failed */
static MPIDI_Topo_engine_t setup_failed = {.why_not = "setting up the engine failed" };

static void engine_free(void *ptr)
{
    MPIDI_Topo_engine_t *e = ptr;

    if (e == &setup_failed)
        return;
    MPIDI_Topo_ptracer_release(e);
    if (e->seg)
        MPIDU_shm_free(e->seg);
    if (e->budget && MPIDI_POSIX_shm_limit_counter)
        MPL_atomic_fetch_sub_uint64(MPIDI_POSIX_shm_limit_counter, e->budget);
    if (e->leader_comm)
        MPIR_Comm_free_impl(e->leader_comm);
    if (e->node_comm)
        MPIR_Comm_free_impl(e->node_comm);
    MPL_free(e->leader_local);
    MPL_free(e->group_lo);
    MPL_free(e->cell_lo);
    MPL_free(e->lv_units);
    MPL_free(e->net_aint);
    MPL_free(e->net_reqs);
    MPL_free(e->tl);
    MPL_free(e);
}

/* a communicator of the engine's own: its struct was allocated before
 * the split (spare), so that marking cannot fail on one process alone */
static void mark_own(MPIR_Comm * comm, MPIR_Topo_comm_t ** spare)
{
    if (comm->topo == NULL) {
        comm->topo = *spare;
        *spare = NULL;
    }
    comm->topo->step_aside = 1;
}

/* What the setup allocates for itself and frees when it ends: the structs
 * that mark the engine's own communicators (mark_own) and a leader's list
 * of its leader communicator's members */
typedef struct {
    MPIR_Topo_comm_t *spare[2];
    int *leaders;
} setup_scratch_t;

/* Setup, phase 1 (local): the leader layout and what the engine and its
 * setup allocate.  What can fail here on one process alone is agreed on
 * before any other collective of the setup (MPICH's own communicator
 * creation, MPIDU_shm_alloc's, can still fail on one process, as in
 * MPI_Comm_split).  Nonzero: it failed. */
static int setup_alloc(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, MPIDI_Topo_engine_t * e,
                       setup_scratch_t * x)
{
    int k, nnodes;

    if (MPIR_Topo_comm_get_layout(comm, topo, MPIR_CVAR_TOPO_LEADERS_PER_NODE) != 0)
        return 1;
    k = topo->layout->k;
    nnodes = topo->layout->nnodes;
    e->leader_local = MPL_malloc(k * sizeof(int), MPL_MEM_COLL);
    e->group_lo = MPL_malloc((k + 1) * sizeof(int), MPL_MEM_COLL);
    /* cache ids of the node's processes, then their cell groups */
    e->cell_lo = MPL_malloc((comm->local_size + 1) * sizeof(int), MPL_MEM_COLL);
    /* (this node's processes only: lv_units) */
    e->lv_units = MPL_malloc((2 * MPIR_TOPO_MAX_NODE_LEVELS + 3) * sizeof(int) *
                             (topo->layout->node_start[topo->layout->node[comm->rank] + 1] -
                              topo->layout->node_start[topo->layout->node[comm->rank]]),
                             MPL_MEM_COLL);
    e->net_aint = MPL_malloc(2 * nnodes * sizeof(MPI_Aint), MPL_MEM_COLL);
    e->net_reqs = MPL_malloc(2 * comm->local_size * sizeof(MPIR_Request *), MPL_MEM_COLL);
    x->leaders = MPL_malloc(nnodes * sizeof(int), MPL_MEM_COLL);
    for (int i = 0; i < 2; i++) {
        x->spare[i] = MPL_calloc(1, sizeof(MPIR_Topo_comm_t), MPL_MEM_COLL);
        if (x->spare[i])
            x->spare[i]->tree_root = -1;
    }
    return !e->leader_local || !e->group_lo || !e->cell_lo || !e->lv_units || !e->net_aint ||
        !e->net_reqs ||
        !x->leaders || !x->spare[0] || !x->spare[1] ||
        MPIR_CVAR_TOPO_DEBUG_SETUP_NOMEM == MPIR_Process.comm_world->rank;
}

/* The cost model's constants on this communicator: from the slowest of
 * its nodes' networks (where one node's is not known, the defaults),
 * which every member computes alike from the gathered locations, so that
 * all take the same choices */
static void set_model(MPIDI_Topo_engine_t * e, const MPIR_Topo_loc_t * locs, int p)
{
    int mbps = INT_MAX, kind = MPIR_TOPO_LINK_INFINIBAND;

    for (int i = 0; i < p; i++) {
        mbps = MPL_MIN(mbps, locs[i].link_mbps);
        kind = MPL_MIN(kind, locs[i].link_kind);
    }
    if (MPIR_CVAR_TOPO_NETWORK_RATE > 0)
        mbps = MPIR_CVAR_TOPO_NETWORK_RATE;
    e->link_mbps = mbps;
    e->link_kind = kind;
    e->model = MPIR_Topo_model_for_link(mbps, kind);
    if (MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES > 0)
        e->model.net_latency = MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES;
}

/* What the cost model chooses on this communicator (MPIR_CVAR_TOPO_PRINT):
 * the allgather sizes whose leaders take the log-step exchange, and where
 * the reductions' leaders switch to reduce-scatter */
static void print_model(MPIDI_Topo_engine_t * e, int p)
{
    MPI_Aint upto = 0;
    double ring = 0, logstep = 0;

    for (MPI_Aint m = 1; m <= ((MPI_Aint) 1 << 26); m *= 2)
        if (MPIDI_Topo_allgather_leaders(e, p, m, &ring, &logstep) == MPIDI_TOPO_LEADERS_LOGSTEP)
            upto = m;
    static const char *kinds[] = { "of unknown kind", "Ethernet", "RoCE", "InfiniBand" };
    MPIR_Topo_line_t line = { .len = 0 };
    MPIR_Topo_line_add(&line, "mpich-topo:   cost model, %d nodes: network ", e->nnodes);
    if (e->link_mbps > 0)
        MPIR_Topo_line_add(&line, "%d Mbit/s %s%s", e->link_mbps, kinds[e->link_kind],
                           MPIR_CVAR_TOPO_NETWORK_RATE > 0 ? " (MPIR_CVAR_TOPO_NETWORK_RATE)" : "");
    else
        MPIR_Topo_line_add(&line, "not known");
    MPIR_Topo_line_add(&line, ": latency %.0f B%s, copies %.2f and reductions %.2f bytes per "
                       "byte of NIC time", e->model.net_latency,
                       MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES > 0 ?
                       " (MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES)" : "", e->model.mem_speedup,
                       e->model.red_speedup);
    MPIR_Topo_line_print(&line);
    MPIR_Topo_line_add(&line, "mpich-topo:   allgather topo_pipeline leaders, %d nodes: ",
                       e->nnodes);
    if (MPIR_CVAR_TOPO_ALLGATHER_LEADERS != MPIR_CVAR_TOPO_ALLGATHER_LEADERS_auto)
        MPIR_Topo_line_add(&line, "%s at every size (MPIR_CVAR_TOPO_ALLGATHER_LEADERS)",
                           upto ? "log-step" : "ring");
    else if (upto) {
        MPIDI_Topo_allgather_leaders(e, p, upto, &ring, &logstep);
        MPIR_Topo_line_add(&line, "log-step up to %ld B per process, ring above (model at %ld B, "
                           "in bytes of NIC time: ring %.0f, log-step %.0f)", (long) upto,
                           (long) upto, ring, logstep);
    } else
        MPIR_Topo_line_add(&line, "ring at every size");
    MPIR_Topo_line_print(&line);

    /* the reductions' step among the leaders, for counts of bytes */
    MPI_Aint from = 0;
    for (MPI_Aint c = 1; c <= ((MPI_Aint) 1 << 26) && !from; c *= 2)
        if (MPIDI_Topo_reduce_split(&e->model, e->nnodes, c, c,
                                    MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE))
            from = c;
    MPIR_Topo_line_add(&line, "mpich-topo:   allreduce topo_pipeline leaders' step (one round), "
                       "%d nodes: ", e->nnodes);
    if (from)
        MPIR_Topo_line_add(&line, "recursive doubling below %ld B, reduce-scatter + allgather "
                           "from there", (long) from);
    else
        MPIR_Topo_line_add(&line, "recursive doubling at every size");
    MPIR_Topo_line_print(&line);
}

/* The same for allreduce's and reduce's calls of several rounds, once
 * the slot's size is known (MPIR_CVAR_TOPO_PRINT, after the segment): the
 * leaders' step per round or once, for calls of doubles */
void MPIDI_Topo_print_steps(MPIDI_Topo_engine_t * e)
{
    MPI_Aint rc = (MPI_Aint) (e->slot_size / e->max_local_size / 8);

    for (int is_reduce = 0; is_reduce < 2; is_reduce++) {
        MPIR_Topo_line_t line = { .len = 0 };
        int forced = is_reduce ?
            MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP != MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP_auto :
            MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP != MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP_auto;
        MPI_Aint once = 0;

        for (MPI_Aint c = 2 * rc; c <= ((MPI_Aint) 1 << 24) && rc > 0 && !once; c *= 2)
            if (MPIDI_Topo_leaders_once(e, is_reduce, c, rc, 8))
                once = c * 8;
        MPIR_Topo_line_add(&line, "mpich-topo:   %s topo_pipeline, calls of several rounds "
                           "(%ld B each): the leaders' step ", is_reduce ? "reduce" : "allreduce",
                           (long) rc * 8);
        if (forced)
            MPIR_Topo_line_add(&line, "%s at every size (MPIR_CVAR_TOPO_%s_LEADERS_STEP)",
                               once ? "once" : "per round", is_reduce ? "REDUCE" : "ALLREDUCE");
        else if (once)
            MPIR_Topo_line_add(&line, "per round below %ld B, once on the whole call from there",
                               (long) once);
        else
            MPIR_Topo_line_add(&line, "per round up to 128 MiB");
        MPIR_Topo_line_print(&line);
    }
}

/* Setup, phase 2: the levels of the reduction within this node, and this
 * process' units and their children at each (see lv_lo) */
static void setup_levels(MPIR_Topo_comm_t * topo, MPIDI_Topo_engine_t * e)
{
    MPIR_Topo_layout_t *l = e->layout;
    int n = e->local_size, me = e->local_rank;
    int *unit = e->lv_units, *package = unit + MPIR_TOPO_MAX_NODE_LEVELS * n;
    int *cache = package + n;

    for (int i = 0; i < n; i++) {
        const MPIR_Topo_loc_t *loc = &topo->locs[l->order[l->node_start[e->node] + i]];
        package[i] = loc->package;
        cache[i] = loc->cache;
    }
    e->nlevels = MPIR_Topo_node_units(n, e->k, e->group_lo, package, cache,
                                      MPIR_CVAR_TOPO_NODE_LEVELS, unit, &e->group_level);
    if (MPIR_CVAR_TOPO_PRINT && me == 0) {
        /* the node's levels, units as comm ranks */
        MPIR_Topo_line_t line = { .len = 0 };
        MPIR_Topo_line_add(&line, "mpich-topo:   node %d: %d level(s) of reduction (groups: "
                           "level %d)", e->node, e->nlevels, e->group_level);
        for (int d = 1; d < e->nlevels; d++) {
            MPIR_Topo_line_add(&line, "; level %d:", d);
            for (int i = 0; i < n; i++)
                MPIR_Topo_line_add(&line, "%s%d%s", unit[d * n + i] == i ? " [" : " ",
                                   l->order[l->node_start[e->node] + i],
                                   i + 1 == n || unit[d * n + i + 1] == i + 1 ? "]" : "");
        }
        MPIR_Topo_line_print(&line);
    }
    /* each level's children after the previous level's (at most n each) */
    for (int d = e->nlevels - 1, used = 0; d >= 0; d--) {
        int lo = unit[d * n + me], hi = lo, *child = package + n * 2 + used;

        while (hi < n && unit[d * n + hi] == lo)
            hi++;
        e->lv_lo[d] = lo;
        e->lv_hi[d] = hi;
        e->lv_nchild[d] = 0;
        e->lv_mine[d] = 0;
        for (int i = lo; i < hi; i++)
            if (d == e->nlevels - 1 || unit[(d + 1) * n + i] == i) {
                if (i <= me)
                    e->lv_mine[d] = e->lv_nchild[d];
                child[e->lv_nchild[d]++] = i;
            }
        e->lv_child[d] = child;
        used += e->lv_nchild[d];
    }
    e->pkg_first = package + n * (MPIR_TOPO_MAX_NODE_LEVELS + 2);
    for (int g = 0, h = 0; g < e->k; g++) {
        if (e->group_level == 2 && unit[n + e->group_lo[g]] != e->group_lo[g])
            e->pkg_first[g] = h;        /* h: the first group of g's package */
        else
            e->pkg_first[g] = h = g;
    }
}

/* Setup, phase 2 (local): this process's place in the layout */
static void setup_place(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, MPIDI_Topo_engine_t * e)
{
    MPIR_Topo_layout_t *l = e->layout = topo->layout;
    int k = e->k = l->k;

    e->nnodes = l->nnodes;
    set_model(e, topo->locs, comm->local_size);
    e->node = l->node[comm->rank];
    e->local_rank = l->pos[comm->rank] - l->node_start[e->node];
    e->local_size = l->node_start[e->node + 1] - l->node_start[e->node];
    for (int x = 0; x < e->nnodes; x++)
        e->max_local_size = MPL_MAX(e->max_local_size, l->node_start[x + 1] - l->node_start[x]);
    if (e->nnodes > MPIDI_TOPO_MAX_STEPS) {
        e->why_not = "it spans more nodes than its progress counters can step through";
        return;
    }
    if (e->max_local_size == 1) {
        /* no shared-memory stage: the algorithms run their network step on
         * comm itself, so no sub-communicators or segment are needed */
        e->one_per_node = 1;
        return;
    }
    for (int g = 0; g <= k; g++)
        e->group_lo[g] = l->group_start[e->node * k + g] - l->node_start[e->node];
    for (int g = 0; g < k; g++) {
        e->leader_local[g] = l->pos[l->leader[e->node * k + g]] - l->node_start[e->node];
        if (e->local_rank >= e->group_lo[g] && e->local_rank < e->group_lo[g + 1])
            e->group = g;
    }
    e->is_leader = (e->leader_local[e->group] == e->local_rank);

    /* groups of a small reduction through cells, by shared cache (the
     * ids go in place: group g's start never passes process g's id);
     * cells reduce on one node only, so several nodes keep one group and
     * their segments no partial cells */
    for (int i = 0; i < e->local_size; i++)
        e->cell_lo[i] = topo->locs[l->order[l->node_start[e->node] + i]].cache;
    e->ncell_groups = MPIR_Topo_cell_groups(e->local_size, e->cell_lo,
                                            e->nnodes == 1 ? MPIR_CVAR_TOPO_CELL_FANIN : 0,
                                            e->cell_lo);
    for (int g = 0; g < e->ncell_groups; g++)
        if (e->local_rank >= e->cell_lo[g])
            e->cell_group = g;
    setup_levels(topo, e);
    if (MPIR_CVAR_TOPO_PRINT && e->nnodes > 1 && e->node == 0 && e->local_rank == 0)
        print_model(e, l->node_start[e->nnodes]);
}

/* An engine communicator of comm's members map[0..n) (comm ranks), this
 * process at rank, made without a new context id: it takes comm's with the
 * IS_LOCALCOMM bit and the SUBCOMM field set.  MPICH gives those bits to
 * an intercommunicator's local communicator (and its node communicators),
 * whose prefix is that intercommunicator's own, never one an
 * intracommunicator owns; MPICH's node communicators of comm take
 * SUBCOMM 1 and 2 without the bit.  Freeing it gives nothing back
 * (MPIR_Free_contextid skips such ids), and its commit makes no node
 * communicators of its own (SUBCOMM is not 0).  Each engine thus costs
 * no context id, where two splits cost two of the 2048 an application
 * may hold, and two allgathers. */
static int derive_subcomm(MPIR_Comm * comm, int subcomm, int *map, int n, int rank,
                          MPIR_Comm ** out)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Comm *c = NULL;

    mpi_errno = MPIR_Comm_create(&c);
    MPIR_ERR_CHECK(mpi_errno);
    c->context_id = MPIR_CONTEXT_SET_FIELD(SUBCOMM,
                                           MPIR_CONTEXT_SET_FIELD(IS_LOCALCOMM, comm->context_id,
                                                                  1), subcomm);
    c->recvcontext_id = c->context_id;
    c->rank = rank;
    c->local_size = c->remote_size = n;
    c->comm_kind = MPIR_COMM_KIND__INTRACOMM;
    c->local_comm = NULL;
    mpi_errno = MPIR_Comm_map_irregular(c, comm, map, n, MPIR_COMM_MAP_DIR__L2L, NULL);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Comm_commit(c);
    MPIR_ERR_CHECK(mpi_errno);
    *out = c;

  fn_exit:
    return mpi_errno;
  fn_fail:
    /* (as MPICH's own node communicators, a half-made one is not released:
     * its free hooks would undo a commit that did not happen) */
    goto fn_exit;
}

/* Whether comm's engine communicators can be derived from its context id:
 * an intracommunicator that owns its prefix (not a sub-communicator, a
 * local communicator of an intercommunicator, one from MPI_Comm_connect
 * or MPI_Intercomm_merge's temporary one). */
static int can_derive(MPIR_Comm * comm)
{
    return !comm->tainted && comm->context_id == comm->recvcontext_id &&
        MPIR_CONTEXT_READ_FIELD(DYNAMIC_PROC, comm->context_id) == 0 &&
        MPIR_CONTEXT_READ_FIELD(IS_LOCALCOMM, comm->context_id) == 0 &&
        MPIR_CONTEXT_READ_FIELD(SUBCOMM, comm->context_id) == 0;
}

/* Setup, phase 4: node_comm and leader_comm, derived from comm's context
 * id where it can be (derive_subcomm), otherwise split off.  A split fails
 * on every member alike when no context id is left (an application
 * holding about 2000 communicators): then the engine does not run on comm,
 * and MPICH's algorithms do; that is not an error of the call.  The
 * collectives on comm that a split runs, and on the new communicators
 * their commits run, find our algorithms stepping aside
 * (topo->step_aside, MPIR_Topo_setup_hold). */
static int setup_subcomms(MPIR_Comm * comm, MPIDI_Topo_engine_t * e, setup_scratch_t * x)
{
    int mpi_errno = MPI_SUCCESS;
    int pos = e->layout->pos[comm->rank];

    if (can_derive(comm)) {
        MPIR_Topo_layout_t *l = e->layout;

        mpi_errno = derive_subcomm(comm, 1, &l->order[l->node_start[e->node]], e->local_size,
                                   e->local_rank, &e->node_comm);
        MPIR_ERR_CHECK(mpi_errno);
        if (e->nnodes > 1 && e->is_leader) {
            for (int n = 0; n < e->nnodes; n++)
                x->leaders[n] = l->leader[n * e->k + e->group];
            mpi_errno = derive_subcomm(comm, 2, x->leaders, e->nnodes, e->node, &e->leader_comm);
            MPIR_ERR_CHECK(mpi_errno);
        }
    } else {
        if (MPIR_Comm_split_impl(comm, e->node, pos, &e->node_comm)) {
            e->node_comm = NULL;
            goto no_context_id;
        }
        if (e->nnodes > 1 &&
            MPIR_Comm_split_impl(comm, e->is_leader ? e->group : MPI_UNDEFINED,
                                 e->node, &e->leader_comm)) {
            e->leader_comm = NULL;
            goto no_context_id;
        }
    }
    mark_own(e->node_comm, &x->spare[0]);
    MPIR_Assert(e->node_comm->rank == e->local_rank);
    if (e->leader_comm) {
        mark_own(e->leader_comm, &x->spare[1]);
        MPIR_Assert(e->leader_comm->rank == e->node && e->leader_comm->local_size == e->nnodes);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;

  no_context_id:
    /* what was created gives its context id back */
    if (e->node_comm) {
        MPIR_Comm_free_impl(e->node_comm);
        e->node_comm = NULL;
    }
    e->why_not = "no context id is left for its sub-communicators (too many communicators)";
    goto fn_exit;
}

/* Sets the engine up on comm once its members agreed on phases 1-3
 * (nb_any: some member cannot run nonblocking calls in the engine,
 * nb_stack_any: some member has no stack for them); a
 * phase that finds the engine cannot run here (the same on every member)
 * says why in e->why_not and ends the setup without error. */
static int engine_setup(MPIR_Comm * comm, MPIDI_Topo_engine_t * e, int nb_any, int nb_stack_any,
                        setup_scratch_t * x, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;

    if (e->why_not || e->one_per_node)
        goto fn_exit;
    /* each process has its own thread level: one that cannot run the
     * engine's nonblocking calls keeps every member from them */
    if (nb_any)
        e->nb_why_not = MPIR_Topo_nb_why_not_some();
    else if (nb_stack_any)
        e->nb_why_not = "a member could not map the stack its nonblocking calls run on "
            "(MPIR_CVAR_TOPO_NB_STACK_SIZE)";
    mpi_errno = setup_subcomms(comm, e, x);
    {
        /* a sub-communicator that one process alone could not make (an
         * allocation, a split that failed there) is agreed on before the
         * node segment and the calls rely on them */
        int none = e->why_not != NULL;
        int agree_errno = MPIR_Topo_agree_max(comm, mpi_errno != MPI_SUCCESS, &none, 1, errflag);

        if (mpi_errno == MPI_SUCCESS)
            mpi_errno = agree_errno;
        MPIR_ERR_CHECK(mpi_errno);
        if (none && e->why_not == NULL)
            e->why_not = "a member could not make the engine's sub-communicators "
                "(no context id was left there)";
    }
    if (e->why_not)
        goto fn_exit;
    MPIDI_Topo_setup_waiting(e);
    mpi_errno = MPIDI_Topo_setup_segment(comm, e, errflag);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* what an engine that does not run holds: its segment and budget */
static void engine_give_back(MPIDI_Topo_engine_t * e)
{
    MPIDI_Topo_ptracer_release(e);
    if (e->seg) {
        MPIDU_shm_free(e->seg);
        e->seg = NULL;
    }
    if (e->budget) {
        MPL_atomic_fetch_sub_uint64(MPIDI_POSIX_shm_limit_counter, e->budget);
        e->budget = 0;
    }
}

int MPIDI_Topo_engine_get(MPIR_Comm * comm, MPIDI_Topo_engine_t ** e_out, const char **why_not,
                          MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, raised, fail;
    /* some member cannot run nonblocking calls, budget exceeded, some
     * member has no stack for them */
    int agreed[3] = { 0, 0, 0 };
    MPIR_Topo_comm_t *topo;
    setup_scratch_t x = { {NULL, NULL}, NULL };
    MPIDI_Topo_engine_t *e;

    *why_not = NULL;
    /* nonblocking calls started before this one take their rounds first */
    mpi_errno = MPIR_Topo_nb_drain(comm);
    MPIR_ERR_CHECK(mpi_errno);
    if (comm->topo && comm->topo->engine) {
        *e_out = comm->topo->engine;
        *why_not = (*e_out)->why_not;
        if (MPIR_CVAR_TOPO_DEBUG_NODE_FAILED == MPIR_Process.comm_world->rank &&
            (*e_out)->node_failed && !*why_not)
            MPL_atomic_release_store_uint64((*e_out)->node_failed, 1);
        return MPI_SUCCESS;
    }

    /* (MPIR_Topo_comm_get agrees on a struct that could not be allocated;
     * our algorithms step aside on comm while its collectives set up) */
    topo = MPIR_Topo_comm_struct(comm);
    raised = (topo != NULL);
    if (raised)
        topo->step_aside++;
    mpi_errno = MPIR_Topo_comm_get(comm, &topo, errflag);
    if (mpi_errno) {
        if (raised)
            comm->topo->step_aside--;
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (!raised)
        topo->step_aside++;

    /* One allreduce agrees on what each member allocated, the members'
     * thread levels and the nodes' budgets.  Where an allocation failed,
     * all return the error and keep a failed engine: a failed setup is not
     * retried, and the next calls fall back alike. */
    e = MPL_calloc(1, sizeof(*e), MPL_MEM_COLL);
    fail = e == NULL || setup_alloc(comm, topo, e, &x);
    if (!fail) {
        setup_place(comm, topo, e);
        agreed[1] = MPIDI_Topo_setup_budget(comm, e);
    }
    agreed[0] = MPIR_Topo_nb_usable() != NULL;
    /* the stack of its nonblocking calls (where they can run at all): a
     * mapping that fails only takes them away from the engine, everywhere */
    agreed[2] = !agreed[0] && !fail && !e->why_not && !e->one_per_node &&
        MPIR_Topo_nb_stack_reserve(topo) != 0;
    mpi_errno = MPIR_Topo_agree_max(comm, fail, agreed, 3, errflag);
    topo->engine = e ? e : &setup_failed;
    topo->engine_free = engine_free;
    if (mpi_errno) {
        topo->step_aside--;
        if (e) {
            e->why_not = setup_failed.why_not;
            engine_give_back(e);
        }
        goto fn_fail;
    }
    if (agreed[1] && !e->why_not && !e->one_per_node)
        e->why_not = "its node segment would exceed MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE";
    /* (the communicators the setup creates are the engine's own) */
    MPIR_Topo_setup_hold++;
    mpi_errno = engine_setup(comm, e, agreed[0], agreed[2], &x, errflag);
    MPIR_Topo_setup_hold--;
    topo->step_aside--;
    if (mpi_errno) {
        /* (not retried either: the same error would follow) */
        e->why_not = setup_failed.why_not;
        engine_give_back(e);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (e->why_not)
        engine_give_back(e);
    *e_out = e;
    *why_not = e->why_not;

  fn_exit:
    MPL_free(x.spare[0]);
    MPL_free(x.spare[1]);
    MPL_free(x.leaders);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

const char *MPIDI_Topo_engine_nb_why_not(MPIR_Comm * comm, int setup, int *mpi_errno,
                                         MPIR_Errflag_t * errflag)
{
    MPIDI_Topo_engine_t *e = NULL;
    const char *why_not = NULL;

    *mpi_errno = MPI_SUCCESS;
    if (setup) {
        *mpi_errno = MPIDI_Topo_engine_get(comm, &e, &why_not, errflag);
        if (*mpi_errno)
            return NULL;
    } else if (comm->topo)
        e = comm->topo->engine;
    if (e == NULL)
        return "the engine is not set up on this communicator yet (a blocking collective "
            "that uses it, or a persistent one's init, sets it up)";
    if (e->why_not)
        return e->why_not;
    if (e->one_per_node)
        return "one process per node (the network step alone: MPICH's own nonblocking "
            "algorithms are that)";
    return e->nb_why_not;
}
