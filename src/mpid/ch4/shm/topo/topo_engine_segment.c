/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The node segment: its layout (control blocks and the failure word,
 * cells, two slots) and its creation at setup, with the CMA probe agreed
 * in the same allreduce; the pipeline rounds it is used in, the areas of a
 * slot per level, the small calls' cells, and the staging of typed user
 * buffers in and out of it. */

#include "topo_engine.h"
#include "mpidu_shm.h"
#include <stdio.h>
#include <unistd.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
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

extern MPL_atomic_uint64_t *MPIDI_POSIX_shm_limit_counter;

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

/* ---- creation --------------------------------------------------------- */

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
int MPIDI_Topo_setup_budget(MPIR_Comm * comm, MPIDI_Topo_engine_t * e)
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
int MPIDI_Topo_setup_segment(MPIR_Comm * comm, MPIDI_Topo_engine_t * e, MPIR_Errflag_t * errflag)
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
    if (MPIR_CVAR_TOPO_PRINT && e->node == 0 && e->local_rank == 0) {
        fprintf(stderr, "mpich-topo:   node segment: %d slots of %zu B, %zu B in all\n",
                MPIDI_TOPO_NSLOTS, e->slot_size, e->seg_size);
        if (e->nnodes > 1) {
            MPIDI_Topo_print_steps(e);
            MPIDI_Topo_print_bcast(e);
        }
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
