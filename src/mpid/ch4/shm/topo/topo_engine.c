/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"
#include "topo_hooks.h"
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

    - name        : MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes per pipeline round of the topo_pipeline/topo_multileader
        algorithms: the size of each of the two shared-memory slots of a
        communicator's node segment and of each network chunk. 0 (default):
        128 KiB on communicators that span nodes, 1 MiB on communicators
        within one node, where a process copying into a slot that the
        others read one slot earlier waits for their caches to give the
        lines up, unless the two slots outgrow a core's L2 cache (2
        processes: bcast 2.6-3.6x, reduce 1.4-2.1x, allreduce 1.15-1.4x faster
        from 1 MiB, bench/results/dev-2core-slots). Raised to at least 64
        bytes per process. Read when a communicator first uses the engine;
        the segment (two slots plus 128 bytes per local process) counts
        against MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE.

    - name        : MPIR_CVAR_TOPO_TIMELINE
      category    : TOPO
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        A file name prefix: each process appends to PREFIX.<rank in
        MPI_COMM_WORLD> the timeline of one call of the topo_pipeline and
        topo_multileader engine on each communicator (when each chunk or
        round was copied in, received, sent, reduced and copied out, in
        microseconds of the node's clock), for bench/timeline.py. Empty
        (default): no timeline. Only that call is slowed down.

    - name        : MPIR_CVAR_TOPO_TIMELINE_CALL
      category    : TOPO
      type        : int
      default     : 2
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Which call of each collective (bcast, allgather, allreduce with
        reduce) on each communicator MPIR_CVAR_TOPO_TIMELINE records, among
        those the topo_pipeline and topo_multileader engine runs, counting
        from 1 (default 2: the first after the one that first touched the
        buffers).

    - name        : MPIR_CVAR_TOPO_SPINS_BEFORE_YIELD
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        How many times the engine's waiting loops poll before each
        sched_yield (rounded up to a power of two); where a wait pauses the
        core at each poll (processes with no network step), a pause counts
        as 64. -1 (default): 0 when CH4's blocking waits yield
        (MPIR_CVAR_CH4_YIELD_WHEN_IDLE), 16384 otherwise.

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

    - name        : MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        For testing only: a communicator's engine starts counting its
        pipeline rounds this many below the limit (2^43) at which every
        local process resets its counters and counting starts from 0 again,
        so that tests reach the reset. 0 (default) starts from 0.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* ---- waiting ---------------------------------------------------------- */

int MPIDI_Topo_pause(MPIDI_Topo_engine_t * e, unsigned spins, int poll)
{
    if (MPIR_Topo_nb_current) {
        /* a nonblocking call: the progress poll that resumed it polls the
         * netmod, and the rest of the process runs meanwhile */
        MPIR_Topo_nb_yield();
        return e->node_failed && MPL_atomic_acquire_load_uint64(e->node_failed) != 0;
    }
    if (poll)
        MPID_Progress_test(NULL);
#if MPICH_THREAD_GRANULARITY == MPICH_THREAD_GRANULARITY__GLOBAL
    /* as MPID_Progress_wait: another thread may be the one to make the
     * collective we wait for, on another communicator, progress */
    MPID_THREAD_CS_YIELD(GLOBAL, MPIR_THREAD_GLOBAL_ALLFUNC_MUTEX);
#endif
    if ((spins & e->yield_mask) == 0)
        sched_yield();
    return e->node_failed && MPL_atomic_acquire_load_uint64(e->node_failed) != 0;
}

int MPIDI_Topo_check_node(MPIDI_Topo_engine_t * e, int mpi_errno_ret, MPIR_Errflag_t * errflag)
{
    if (e && e->node_failed && MPL_atomic_acquire_load_uint64(e->node_failed) && !mpi_errno_ret) {
        *errflag = MPIR_ERR_OTHER;
        MPIR_ERR_SET(mpi_errno_ret, MPI_ERR_OTHER, "**topo_peer_failed");
    }
    return mpi_errno_ret;
}

void MPIDI_Topo_wait_all(MPIDI_Topo_engine_t * e, size_t field_offset, int lo, int hi,
                         uint64_t value)
{
    for (int i = lo; i < hi && !MPL_atomic_acquire_load_uint64(e->node_failed); i++) {
        MPL_atomic_uint64_t *c = (MPL_atomic_uint64_t *) ((char *) MPIDI_TOPO_CTRL(e, i) +
                                                          field_offset);
        MPIDI_TOPO_WAIT_GE(e, c, value);
    }
}

int MPIDI_Topo_waitall(MPIDI_Topo_engine_t * e, int n, MPIR_Request ** reqs,
                       MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;

    for (int i = 0; i < n; i++) {
        unsigned spins = 0;
        MPIR_Request *req = reqs[i];
        if (req == NULL)
            continue;
        /* only progress completes a request: poll at every turn (after a
         * local failure too: every process still sends its messages) */
        while (!MPIR_Request_is_complete(req))
            (void) MPIDI_Topo_pause(e, ++spins, 1);
        if (req->kind == MPIR_REQUEST_KIND__RECV)
            MPIR_Process_status(&req->status, errflag);
        mpi_errno = req->status.MPI_ERROR;
        MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
        MPIR_Request_free(req);
        reqs[i] = NULL;
    }
    /* a message marked failed (a process elsewhere failed its part) fails
     * the call here too, on every local process: none may take what came
     * with it as good */
    if (*errflag != MPIR_ERR_NONE && e->node_failed) {
        MPL_atomic_release_store_uint64(e->node_failed, 1);
        if (!mpi_errno_ret)
            MPIR_ERR_SET(mpi_errno_ret, *errflag, "**coll_fail");
    }
    return mpi_errno_ret;
}

/* units of this node at level d */
static int units_at(MPIDI_Topo_engine_t * e, int d)
{
    int n = e->local_size, count = 0;

    for (int i = 0; i < n; i++)
        count += e->lv_units[d * n + i] == i;
    return count;
}

/* The areas of MPIDI_Topo_areas_t of at least min bytes, units[d] the
 * most units any node has at level d (agreed) */
static void level_areas(MPIDI_Topo_engine_t * e, const int *units, MPI_Aint min,
                        MPIDI_Topo_areas_t * a)
{
    int ld, lo[MPIR_TOPO_MAX_NODE_LEVELS], hi[MPIR_TOPO_MAX_NODE_LEVELS];

    a->area = 0;
    a->depth = 0;
    for (ld = MPIR_TOPO_MAX_NODE_LEVELS - 1; ld > 0; ld--) {
        if (units[ld] < 2)
            continue;
        a->area = ((MPI_Aint) e->slot_size / (1 + units[ld])) & ~(MPI_Aint) 4095;
        if (a->area >= min)
            break;
        a->area = 0;
    }
    if (a->area == 0)
        return;
    /* a node with fewer levels copies through all of its own */
    a->depth = MPL_MIN(ld, e->nlevels - 1);
    MPIR_Topo_unit_chain(e->local_size, e->nlevels, e->lv_units, e->local_rank, a->depth, lo, hi,
                         a->area_of);
}

int MPIDI_Topo_rounds(MPIDI_Topo_engine_t * e, uint64_t n, uint64_t * base,
                      MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;

    if (e->round + n >= MPIDI_TOPO_MAX_ROUND) {
        MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);

        mpi_errno = MPIR_Barrier_impl(e->node_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
        MPL_atomic_relaxed_store_uint64(&me->arrive, 0);
        MPL_atomic_relaxed_store_uint64(&me->done, 0);
        MPL_atomic_relaxed_store_uint64(&me->avail, 0);
        MPL_atomic_relaxed_store_uint64(&me->reduced, 0);
        MPL_atomic_relaxed_store_uint64(&me->partial, 0);
        MPL_atomic_relaxed_store_uint64(&me->grouped, 0);
        MPL_atomic_relaxed_store_uint64(&me->copied, 0);
        MPL_atomic_relaxed_store_uint64(&me->filled, 0);
        e->round = 0;
        e->all_arrived = 0;
        /* (the barrier orders the stores before anyone's next wait) */
        mpi_errno = MPIR_Barrier_impl(e->node_comm, errflag);
        MPIR_ERR_CHECK(mpi_errno);
    }
    *base = e->round;
    e->round += n;
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* ---- small calls' cells -------------------------------------------------- */

void MPIDI_Topo_cell_claim(MPIDI_Topo_engine_t * e, int writes, uint64_t * s)
{
    *s = ++e->cell_seq;
    if (writes && *s > e->cells_free) {
        /* learn how far every process is, so that the next calls need not */
        uint64_t lo = UINT64_MAX;
        MPIDI_TOPO_WAIT_ALL(e, cell_done, 0, e->local_size, *s - MPIDI_TOPO_NCELLS);
        for (int i = 0; i < e->local_size; i++) {
            /* one load: MPL_MIN evaluates its arguments twice, and on a
             * tie it would keep a second load of a process that has moved
             * on meanwhile, losing a slower one's count */
            uint64_t d = MPL_atomic_acquire_load_uint64(&MPIDI_TOPO_CTRL(e, i)->cell_done);
            lo = MPL_MIN(lo, d);
        }
        e->cells_free = lo + MPIDI_TOPO_NCELLS;
    }
}

/* ---- typed buffers ---------------------------------------------------- */

void MPIDI_Topo_tbuf_init(MPIDI_Topo_tbuf_t * t, const void *buf, MPI_Aint count,
                          MPI_Datatype dt)
{
    MPI_Aint extent, size, true_lb, true_extent;
    int contig;

    t->buf = (char *) buf;
    t->count = count;
    t->dt = dt;
    t->discard = 0;
    if (HANDLE_IS_BUILTIN(dt)) {
        /* (small calls: the true-extent look-up was a tenth of their time
         * outside the waits) */
        t->contig = 1;
        t->lb = 0;
        return;
    }
    MPIR_Datatype_is_contig(dt, &contig);
    MPIR_Datatype_get_extent_macro(dt, extent);
    MPIR_Datatype_get_size_macro(dt, size);
    MPIR_Type_get_true_extent_impl(dt, &true_lb, &true_extent);
    t->contig = contig && (count <= 1 || extent == size);
    t->lb = true_lb;
}

void MPIDI_Topo_tbuf_discard(MPIDI_Topo_tbuf_t * t)
{
    t->buf = NULL;
    t->lb = 0;
    t->contig = 0;
    t->discard = 1;
}

int MPIDI_Topo_staging_failed(MPIDI_Topo_engine_t * e, MPI_Aint n, MPIR_Errflag_t * errflag)
{
    /* (one process per node: no segment, no word; errflag marks the sends) */
    if (e->node_failed)
        MPL_atomic_release_store_uint64(e->node_failed, 1);
    return MPIR_Topo_staging_failed(n, errflag);
}

int MPIDI_Topo_tbuf_pack(const MPIDI_Topo_tbuf_t * t, MPI_Aint off, void *out, MPI_Aint len)
{
    MPI_Aint actual;

    if (len == 0)
        return MPI_SUCCESS;
    if (t->discard) {
        memset(out, 0, len);
        return MPI_SUCCESS;
    }
    if (t->contig) {
        memcpy(out, t->buf + t->lb + off, len);
        return MPI_SUCCESS;
    }
    return MPIR_Typerep_pack(t->buf, t->count, t->dt, off, out, len, &actual);
}

int MPIDI_Topo_tbuf_unpack(const MPIDI_Topo_tbuf_t * t, MPI_Aint off, const void *in,
                           MPI_Aint len)
{
    MPI_Aint actual;

    if (len == 0 || t->discard)
        return MPI_SUCCESS;
    if (t->contig) {
        memcpy(t->buf + t->lb + off, in, len);
        return MPI_SUCCESS;
    }
    return MPIR_Typerep_unpack(in, len, t->buf, t->count, t->dt, off, &actual);
}

/* ---- timeline of one call --------------------------------------------- */

#define MPIDI_TOPO_TIMELINE_MAX 16384

struct MPIDI_Topo_timeline {
    const char *coll;
    int context_id;
    uint64_t first;             /* rank 0's process: disjoint communicators
                                 * (node communicators) share context ids */
    MPI_Aint bytes;
    int n, lost;
    struct {
        double t;
        const char *what;
        MPI_Aint a, b;
    } ev[MPIDI_TOPO_TIMELINE_MAX];
};

void MPIDI_Topo_timeline_begin(MPIDI_Topo_engine_t * e, MPIR_Comm * comm, const char *coll,
                               MPI_Aint bytes)
{
    int which;

    /* (every engine call comes here: nothing more than this test when off) */
    if (MPIR_CVAR_TOPO_TIMELINE == NULL || MPIR_CVAR_TOPO_TIMELINE[0] == '\0')
        return;
    /* counted per collective: a bcast's timeline is not lost to the
     * allgathers an application makes first */
    which = strcmp(coll, "bcast") == 0 ? 0 : strncmp(coll, "allgather", 9) == 0 ? 1 : 2;
    if (++e->calls[which] != (uint64_t) MPIR_CVAR_TOPO_TIMELINE_CALL || e->tl)
        return;
    /* a diagnostic: without memory, no timeline rather than a failed call */
    e->tl = MPL_malloc(sizeof(*e->tl), MPL_MEM_OTHER);
    if (e->tl == NULL)
        return;
    e->tl->coll = coll;
    e->tl->context_id = comm->context_id;
    if (MPID_Comm_get_lpid(comm, 0, &e->tl->first, FALSE) != MPI_SUCCESS)
        e->tl->first = 0;
    e->tl->bytes = bytes;
    e->tl->n = e->tl->lost = 0;
    MPIDI_Topo_timeline_event(e, "begin", 0, 0);
}

void MPIDI_Topo_timeline_event(MPIDI_Topo_engine_t * e, const char *what, MPI_Aint a,
                               MPI_Aint b)
{
    struct MPIDI_Topo_timeline *tl = e->tl;
    MPL_time_t now;

    if (tl->n == MPIDI_TOPO_TIMELINE_MAX) {
        tl->lost++;
        return;
    }
    MPL_wtime(&now);
    MPL_wtime_todouble(&now, &tl->ev[tl->n].t);
    tl->ev[tl->n].what = what;
    tl->ev[tl->n].a = a;
    tl->ev[tl->n].b = b;
    tl->n++;
}

void MPIDI_Topo_timeline_end(MPIDI_Topo_engine_t * e)
{
    struct MPIDI_Topo_timeline *tl = e->tl;
    char path[4096];
    FILE *f;

    if (tl == NULL)
        return;
    MPIDI_Topo_timeline_event(e, "end", tl->lost, 0);
    snprintf(path, sizeof(path), "%s.%d", MPIR_CVAR_TOPO_TIMELINE,
             MPIR_Process.comm_world->rank);
    f = fopen(path, "a");
    if (f == NULL) {
        fprintf(stderr, "mpich-topo: cannot write the timeline to %s: %s\n", path,
                strerror(errno));
    } else {
        /* context,first,collective,bytes,rank,node,local,leader,t_us,event,a,b */
        for (int i = 0; i < tl->n; i++)
            fprintf(f, "%d,%llu,%s,%lld,%d,%d,%d,%d,%.3f,%s,%lld,%lld\n", tl->context_id,
                    (unsigned long long) tl->first, tl->coll, (long long) tl->bytes, MPIR_Process.comm_world->rank, e->node, e->local_rank,
                    e->is_leader, tl->ev[i].t * 1e6, tl->ev[i].what, (long long) tl->ev[i].a,
                    (long long) tl->ev[i].b);
        fclose(f);
    }
    MPL_free(tl);
    e->tl = NULL;
}

/* ---- setup and teardown ----------------------------------------------- */

extern MPL_atomic_uint64_t *MPIDI_POSIX_shm_limit_counter;

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
    fprintf(stderr, "mpich-topo:   allgather topo_pipeline leaders, %d nodes, latency %d B: ",
            e->nnodes, MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES);
    if (MPIR_CVAR_TOPO_ALLGATHER_LEADERS != MPIR_CVAR_TOPO_ALLGATHER_LEADERS_auto)
        fprintf(stderr, "%s at every size (MPIR_CVAR_TOPO_ALLGATHER_LEADERS)\n",
                upto ? "log-step" : "ring");
    else if (upto) {
        MPIDI_Topo_allgather_leaders(e, p, upto, &ring, &logstep);
        fprintf(stderr, "log-step up to %ld B per process, ring above (model at %ld B, in "
                "bytes of NIC time: ring %.0f, log-step %.0f)\n", (long) upto, (long) upto,
                ring, logstep);
    } else
        fprintf(stderr, "ring at every size\n");

    /* the reductions' step among the leaders, for counts of bytes */
    MPI_Aint from = 0;
    for (MPI_Aint c = 1; c <= ((MPI_Aint) 1 << 26) && !from; c *= 2)
        if (MPIDI_Topo_reduce_split(e->nnodes, c, c, MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE))
            from = c;
    fprintf(stderr, "mpich-topo:   allreduce topo_pipeline leaders' step (one round), %d nodes: ",
            e->nnodes);
    if (from)
        fprintf(stderr, "recursive doubling below %ld B, reduce-scatter + allgather from there\n",
                (long) from);
    else
        fprintf(stderr, "recursive doubling at every size\n");
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
        fprintf(stderr, "mpich-topo:   node %d: %d level(s) of reduction (groups: level %d)",
                e->node, e->nlevels, e->group_level);
        for (int d = 1; d < e->nlevels; d++) {
            fprintf(stderr, "; level %d:", d);
            for (int i = 0; i < n; i++)
                fprintf(stderr, "%s%d%s", unit[d * n + i] == i ? " [" : " ",
                        l->order[l->node_start[e->node] + i],
                        i + 1 == n || unit[d * n + i + 1] == i + 1 ? "]" : "");
        }
        fprintf(stderr, "\n");
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

/* Setup, phase 5 (local): how often flag waits yield and poll the netmod */
static void setup_waiting(MPIDI_Topo_engine_t * e)
{
    int spins;

    if (MPIR_CVAR_TOPO_SPINS_BEFORE_YIELD >= 0)
        spins = MPIR_CVAR_TOPO_SPINS_BEFORE_YIELD;
    else    /* one waiting policy for MPICH's algorithms and ours */
        spins = (MPIDI_yield_when_idle > 0 ||
                 (MPIDI_yield_when_idle < 0 && MPIDI_yield_when_idle_resolve())) ? 0 : 16384;
    if (spins > 0) {
        int ceil = 1;
        MPL_is_pof2(MPL_MIN(spins, 1 << 30), &ceil);
        e->yield_mask = (unsigned) ceil - 1;
    } else
        e->yield_mask = 0;
    /* leaders overlap their network steps with flag waits: those need
     * the netmod polled often; others every 1024 spins.  A poll costs a
     * system call on some providers (tcp) and a sched_yield another: with
     * a core each, yielding every 256 spins made a 2-rank bcast's receiver
     * 3x slower (0.48 vs 0.16 us), hence 16384. */
    e->poll_mask = MPL_MIN(e->is_leader && e->nnodes > 1 ? 63 : 1023, e->yield_mask);
    /* Processes whose own steps need no netmod poll it only once a wait
     * has lasted 16 polling periods: a poll that is a system call (tcp's
     * epoll_wait, 1-2 us on a virtual machine) made the other process
     * late, its waits long enough to poll too, and both stayed there: 2 us
     * a call instead of 0.25 (2 processes, 64 B allgather).  Other
     * operations of the process still progress in waits that last. */
    e->poll_after = (e->is_leader && e->nnodes > 1) || e->yield_mask == 0 ?
        0 : 16 * (e->poll_mask + 1);
}

/* The node segment's size: control blocks, cells, slots */
static void segment_layout(MPIR_Comm * comm, MPIDI_Topo_engine_t * e, size_t * ctrl_bytes,
                           size_t * cell_bytes)
{
    size_t pg = (size_t) sysconf(_SC_PAGESIZE);

    if (MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE > 0)
        e->slot_size = MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE;
    else {
        e->slot_size = e->nnodes == 1 ? MPIDI_TOPO_NODE_SLOT : MPIDI_TOPO_NET_SLOT;
        /* (a persistent request's own segment: its call's need, as before
         * the node's slots grew, so that many requests fit the budget) */
        if (comm->topo && comm->topo->slot_need > 0)
            e->slot_size = MPL_MIN(e->slot_size, MPL_MAX(comm->topo->slot_need,
                                                         MPIDI_TOPO_NET_SLOT));
    }
    if (e->slot_size < (size_t) comm->local_size * 64)
        e->slot_size = (size_t) comm->local_size * 64;
    e->slot_size = (e->slot_size + 63) & ~(size_t) 63;
    /* one control block per local process, then the node's failure word */
    *ctrl_bytes = ((size_t) (e->local_size + 1) * MPIDI_TOPO_CTRL_SIZE + pg - 1) / pg * pg;
    /* the cells, then (two-stage small reductions) each group's partials */
    *cell_bytes = (size_t) (e->local_size + (e->ncell_groups > 1 ? e->ncell_groups : 0)) *
        MPIDI_TOPO_NCELLS * MPIDI_TOPO_CELL_STRIDE;
    e->seg_size = *ctrl_bytes + *cell_bytes + MPIDI_TOPO_NSLOTS * e->slot_size;
}

/* Setup, phase 3 (local rank 0 of each node): the node segment is charged
 * to the node's collective shared-memory budget before it is created;
 * nonzero: it would exceed it (agreed on with phase 1's allocations) */
static int setup_budget(MPIR_Comm * comm, MPIDI_Topo_engine_t * e)
{
    size_t ctrl_bytes, cell_bytes;
    uint64_t used;

    if (e->why_not || e->one_per_node || e->local_rank != 0 || !MPIDI_POSIX_shm_limit_counter)
        return 0;
    segment_layout(comm, e, &ctrl_bytes, &cell_bytes);
    used = MPL_atomic_fetch_add_uint64(MPIDI_POSIX_shm_limit_counter, e->seg_size);
    e->budget = e->seg_size;
    return used + e->seg_size > (uint64_t) MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE * 1024;
}

/* Setup, phase 6: the node segment, and whether local copies may use CMA
 * (MPIDI_Topo_probe_cma); one allreduce on comm agrees on both, and publishes the
 * pids and zeroed counters before any call reads them. */
static int setup_segment(MPIR_Comm * comm, MPIDI_Topo_engine_t * e, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, use_cma, cma_ok = 1;
    /* no segment, no CMA, then the units at each level (level_areas) */
    int mine[1 + MPIR_TOPO_MAX_NODE_LEVELS] = { 0 }, all[1 + MPIR_TOPO_MAX_NODE_LEVELS];
    bool map_fail = false;
    size_t ctrl_bytes, cell_bytes;

    segment_layout(comm, e, &ctrl_bytes, &cell_bytes);
    /* (agreed on within the node) */
    mpi_errno = MPIDU_shm_alloc(e->node_comm, e->seg_size, &e->seg, &map_fail);
    if (mpi_errno) {
        /* (on this process alone: agreed below as a failed mapping, so that
         * every member falls back alike) */
        map_fail = true;
        mpi_errno = MPI_SUCCESS;
    }
    use_cma = MPIR_CVAR_TOPO_CMA != MPIR_CVAR_TOPO_CMA_off &&
        (MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD >= 0 || MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD >= 0 ||
         (e->nnodes == 1 && (MPIR_CVAR_TOPO_ALLGATHER_TRIALS > 0 ||
                             MPIR_CVAR_TOPO_BCAST_TRIALS > 0)));
    if (map_fail) {
        e->seg = NULL;
        mine[0] = 1;
    } else {
        MPIDI_Topo_ctrl_t *me;

        e->ctrl_base = e->seg;
        me = MPIDI_TOPO_CTRL(e, e->local_rank);
        me->pid = (uint64_t) getpid();
        if (MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT > 0) {
            e->round = MPIDI_TOPO_MAX_ROUND - (uint64_t) MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT;
            e->all_arrived = e->round;
            MPL_atomic_relaxed_store_uint64(&me->arrive, e->round);
            MPL_atomic_relaxed_store_uint64(&me->done, e->round);
            MPL_atomic_relaxed_store_uint64(&me->avail, MPIDI_TOPO_PROG(e->round, 0));
            MPL_atomic_relaxed_store_uint64(&me->reduced, e->round);
            MPL_atomic_relaxed_store_uint64(&me->partial, MPIDI_TOPO_PROG(e->round, 0));
            MPL_atomic_relaxed_store_uint64(&me->grouped, MPIDI_TOPO_PROG(e->round, 0));
            MPL_atomic_relaxed_store_uint64(&me->copied, e->round);
        }
        if (e->local_size > 1 && use_cma) {
            mpi_errno = MPIDI_Topo_probe_cma(e, &cma_ok, errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    /* CMA only if it works on every node: the choice changes no message
     * between nodes, but keep the behaviour uniform and predictable */
    mine[1] = !cma_ok;
    for (int d = 1; d < MPIR_TOPO_MAX_NODE_LEVELS && e->nlevels > 1; d++)
        mine[1 + d] = units_at(e, MPL_MIN(d, e->nlevels - 1));
    mpi_errno = MPIR_Allreduce_impl(mine, all, 1 + MPIR_TOPO_MAX_NODE_LEVELS, MPI_INT, MPI_MAX,
                                    comm, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    level_areas(e, all + 1, MPIDI_TOPO_BCAST_MIN_CHUNK, &e->bcast_areas);
    if (e->nnodes == 1)
        level_areas(e, all + 1, 1024 * (MPI_Aint) comm->local_size, &e->allgather_areas);
    e->cma = use_cma && !all[0] && !all[1];
    if (!e->cma)
        MPIDI_Topo_ptracer_release(e);
    if (all[0]) {
        e->why_not = "the node shared-memory segment could not be created";
        goto fn_exit;
    }
    e->node_failed = &MPIDI_TOPO_CTRL(e, e->local_size)->arrive;
    e->cells = (char *) e->seg + ctrl_bytes;
    e->pcells = e->cells + (size_t) e->local_size * MPIDI_TOPO_NCELLS * MPIDI_TOPO_CELL_STRIDE;
    e->data = e->cells + cell_bytes;
    e->cells_free = MPIDI_TOPO_NCELLS;
    if (MPIR_CVAR_TOPO_PRINT && e->node == 0 && e->local_rank == 0)
        fprintf(stderr, "mpich-topo:   node segment: %d slots of %zu B, %zu B in all\n",
                MPIDI_TOPO_NSLOTS, e->slot_size, e->seg_size);

  fn_exit:
    return mpi_errno;
  fn_fail:
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
    setup_waiting(e);
    mpi_errno = setup_segment(comm, e, errflag);
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
        agreed[1] = setup_budget(comm, e);
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
