/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD
      category    : TOPO
      alt-env     : MPIR_CVAR_TOPO_CMA_THRESHOLD
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes per process from which allgather topo_pipeline copies
        between local processes with one kernel-assisted copy (Linux CMA,
        process_vm_readv) instead of through the node segment. -1
        (default) disables it. Measured in
        bench/results/dev-2core-allgather-cma: the pipelined segment
        (copy-in and copy-out overlapped) was 1.14-1.92x faster within a
        node from 4 MiB to 64 MiB per process, and 1.9x faster on 2
        emulated nodes of 2 processes with 1 Gbit/s NICs at 4-16 MiB.
        Where the kernel refuses CMA (ptrace restrictions, containers),
        the segment is used at every size.
        (Until the next release also read from MPIR_CVAR_TOPO_CMA_THRESHOLD,
        its old name.)

    - name        : MPIR_CVAR_TOPO_ALLGATHER_LEADERS
      category    : TOPO
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        The exchange among the node leaders of allgather topo_pipeline
        across nodes (blocking, nonblocking and persistent alike).
        auto    - the faster by the cost model (topo_model.c,
                  MPIR_Topo_model_allgather_leaders) from the node count,
                  processes per node, the bytes and
                  MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES: the log-step
                  exchange for small calls on 4 nodes or more, else the
                  ring (MPIR_CVAR_TOPO_PRINT shows the crossover).
        ring    - the pipelined ring: N-1 steps, each node portion copied
                  out while the next arrives.
        logstep - recursive doubling (a power-of-two node count) or Bruck:
                  ceil(log2 N) steps, copied out at the end.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithm: leader-based pipelined allgather
 *   MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline
 * (and the segment rounds that topo_multileader shares, with another
 * leader step: topo_allgather_multileader.c)
 *
 * Data is laid out in node-major order (MPIR_Topo_layout_t): a group's
 * blocks are contiguous, whatever the rank placement, so each leader moves
 * its group's data between nodes as one message per step.
 *
 * topo_pipeline, segment mode: rounds of slot_size/p bytes per process.  In
 * round r every process copies its bytes into the slot at its node-major
 * position; leader g waits for its group, then runs a ring over its leader
 * communicator (the group-g leaders of all nodes), raising its progress
 * counter after each step, and every process copies each node's portion out
 * as soon as the step that brought it completes.  Two slots let round r+1
 * fill while round r drains.  A call of one round within one node (up to
 * slot_size/p bytes per process, more than a piece) is copied in and out
 * in pieces of MPIDI_TOPO_ALLGATHER_PIECE bytes, each announced as it is
 * copied in (filled), so that processes that arrived first copy a late
 * one's block out behind its copy in rather than after it.
 *
 * topo_pipeline, direct mode (CMA, >= MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD bytes
 * per process): no staging.  Each leader reads its group's blocks from the
 * members' buffers with process_vm_readv, rings them between nodes inside
 * its receive buffer, and the others read each arriving node portion from
 * the leader's buffer (and their own node's blocks from their owners).
 *
 * topo_pipeline, levels within one node (segment mode,
 * MPIR_CVAR_TOPO_NODE_LEVELS: packages, NUMA groups, L3 domains, as
 * MPIR_Topo_node_units finds them): a round takes a (U+1)-th of a slot, U
 * the innermost units (MPIDI_Topo_areas_t); blocks arrive in area 0,
 * and the first member of each innermost unit copies every block from
 * outside its unit into the unit's own area (the same area every round,
 * so that its first touch keeps those pages in the unit's domain) and
 * raises its copied counter: from area 0 the blocks of its own parent
 * units, from its highest parent's area (made by that unit's first
 * member) the rest, so that each block crosses to each package, each
 * group of a package, each cache domain of a group once
 * (copy_out_levels).  The members read their own unit's blocks from
 * area 0 and the rest from its area, and wait on their own unit and its
 * first member only.
 *
 * Leaders' exchange across nodes (MPIR_CVAR_TOPO_ALLGATHER_LEADERS): the
 * ring below, or, where the cost model (topo_model.c) puts it first, as on
 * many nodes with small calls, topo_multileader's allgatherv by recursive
 * doubling or Bruck: ceil(log2 N) latencies instead of N-1, and the
 * copy-out after it.
 *
 * Cost, m bytes per process, N nodes of L processes, k leaders per node,
 * p = N.L: every process copies m in and p.m out (segment mode; direct
 * mode reads the same bytes once, with no copy in); a group leader's ring
 * takes (N-1).alpha + (N-1).(L/k).m.beta on the network, the lower bound
 * of a node's traffic split over its k leaders; rounds overlap the ring of
 * one with the copies of the next, and the pieces of a one-round call
 * overlap a block's copy in with its copy out by the others (one more
 * flag store per piece, one wait per piece read).  Levels (one node, U
 * innermost units of L/U processes): each unit's first member copies
 * (L - L/U).m more, and at each level of u units the bytes read across
 * its domains fall from L.(L - L/u).m (flat) to about U.(L - L/u).m, each
 * crossing once per innermost unit instead of once per process; a block
 * from another package waits for one copy more (its package's first
 * unit's); rounds are U+1 times smaller.
 *
 * Timeline, segment mode, N = 3 nodes, one leader each; round r moves
 * slot_size/p bytes of every process's block, in slot r % 2:
 *   round r:   everyone copies its piece in; the leader waits for its
 *              group, then ring step 1 (its node's portion to the next
 *              node), step 2 (the portion it just received): after each
 *              step it raises avail and the others copy that portion out
 *   round r+1: copies in to the other slot while round r's portions are
 *              still being copied out; the leader starts its ring as soon
 *              as its group has arrived */

/* A small allgather within one node (m at most MPIDI_TOPO_CELL_BYTES):
 * each process writes its block into its cell of the call (see
 * MPIDI_TOPO_CELL) and then the cell's sequence word, and copies every
 * process' block out of its cell once that word says it is there: one
 * cache-line transfer brings the word with the block's first bytes, and no
 * round (arrive counters, slot) is used.  Having seen every cell, a
 * process knows its own earlier cells are free.  Cost: one copy in, L
 * copies out, about 2 cache-line transfers of latency. */
static int allgather_cells(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * sb,
                           const MPIDI_Topo_tbuf_t * rb, MPI_Aint m, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS, all_seen = 1;
    uint64_t s;
    char *cell;

    MPIDI_Topo_cell_claim(e, 1, &s);
    cell = MPIDI_TOPO_CELL(e, e->local_rank, s);
    mpi_errno = MPIDI_Topo_tbuf_pack(sb, 0, cell + MPIDI_TOPO_CELL_DATA, m);
    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
    MPIDI_TOPO_CELL_PUBLISH(e, cell, m, s);
    /* (one node: local index a is node-major position a) */
    for (int a = 0; a < e->local_size; a++) {
        cell = MPIDI_TOPO_CELL(e, a, s);
        MPIDI_TOPO_WAIT_GE(e, MPIDI_TOPO_CELL_SEQ(cell), s);
        /* (a wait also ends when the node fails) */
        all_seen &= MPL_atomic_acquire_load_uint64(MPIDI_TOPO_CELL_SEQ(cell)) >= s;
        mpi_errno = MPIDI_Topo_tbuf_unpack(rb, e->layout->order[a] * m,
                                           cell + MPIDI_TOPO_CELL_DATA, m);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
    }
    /* Every process has begun call s, so each is done reading the cells of
     * the calls before it (a process runs its engine calls one at a time,
     * nonblocking ones included): the next claims need not read their
     * cell_done (a cache miss every few calls, 2-3% of this call). */
    if (all_seen && e->cells_free < s - 1 + MPIDI_TOPO_NCELLS)
        e->cells_free = s - 1 + MPIDI_TOPO_NCELLS;
    MPIDI_TOPO_EVENT(e, "out", 0, 0);
    MPIDI_Topo_cell_done(e, s);
    return MPIDI_Topo_check_node(e, mpi_errno_ret, errflag);
}

/* A call of one round within one node copies each block in and out in
 * pieces of this many bytes, the readers following the writer (filled).
 * 2 processes bound to cores, back to back, median of the slowest process,
 * same launches (bench/results/dev-2core-allgather-streamed): 64 KiB per
 * process 4.08-4.18 us whole, 3.09-3.13 in 16 KiB pieces, 3.12-3.52 in
 * 8 KiB ones; 32 KiB 2.34-2.77, 1.87-2.14 and 2.12-2.60.  With several
 * rounds, pieces made it slower (the rounds already overlap). */
#define MPIDI_TOPO_ALLGATHER_PIECE 16384

/* Round r's copy out in one level: node portions in the order the ring
 * brings them; this node's own block by block as each process arrives
 * (waiting for the leaders to relay them would cost a second hop, and
 * waiting for all of them would keep the first copies from overlapping
 * the last processes' copy in). */
static int copy_out_flat(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * rb, char *slot,
                         uint64_t r, MPI_Aint m, MPI_Aint off, MPI_Aint len,
                         MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    const MPIR_Topo_layout_t *l = e->layout;
    int nn = e->nnodes, k = e->k, n = e->node, nstart = l->node_start[n];

    for (int s = 1; s <= nn; s++) {
        int x = (n - s + 1 + nn) % nn;
        for (int grp = 0; grp < k; grp++) {
            MPIDI_Topo_ctrl_t *leader_ctrl = MPIDI_TOPO_CTRL(e, e->leader_local[grp]);
            int hi = l->group_start[x * k + grp + 1];
            if (s > 1)
                MPIDI_TOPO_WAIT_GE(e, &leader_ctrl->avail, MPIDI_TOPO_PROG(r, s));
            for (int pos = l->group_start[x * k + grp]; pos < hi; pos++) {
                if (s == 1)
                    MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, pos - nstart)->arrive, r);
                mpi_errno = MPIDI_Topo_tbuf_unpack(rb, (MPI_Aint) l->order[pos] * m + off,
                                                   slot + pos * len, len);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
        }
    }
    return mpi_errno_ret;
}

/* Round r's copy out on one node in one level, following each block's copy
 * in piece by piece (filled): my own block first, then the others from
 * the next process on, so that a process that arrived early copies a late
 * one's block out while it is still being copied in, rather than after. */
static int copy_out_streamed(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * rb, char *slot,
                             uint64_t r, MPI_Aint m, MPI_Aint off, MPI_Aint len,
                             MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    int nlocal = e->local_size;

    for (int t = 0; t < nlocal; t++) {
        int a = (e->local_rank + t) % nlocal;
        MPIDI_Topo_ctrl_t *owner = MPIDI_TOPO_CTRL(e, a);
        uint64_t j = 1;
        for (MPI_Aint at = 0; at < len; at += MPIDI_TOPO_ALLGATHER_PIECE, j++) {
            MPI_Aint l = MPL_MIN(MPIDI_TOPO_ALLGATHER_PIECE, len - at);
            if (t > 0)
                MPIDI_TOPO_WAIT_GE(e, &owner->filled, MPIDI_TOPO_PROG(r, j));
            /* (one node: local index a is node-major position a) */
            mpi_errno = MPIDI_Topo_tbuf_unpack(rb, (MPI_Aint) e->layout->order[a] * m + off + at,
                                               slot + a * len + at, l);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        }
    }
    return mpi_errno_ret;
}

/* Round r's copy out through the levels lv (one node): the first member f
 * of each innermost unit copies every block from outside its unit into
 * the unit's area (MPIR_Topo_gather_copies), waiting for each where it
 * copies it from; everyone reads its own unit's blocks from area 0, where
 * they arrived, and the rest from its unit's area, waiting on f only. */
static int copy_out_levels(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * rb, char *slot,
                           const MPIDI_Topo_areas_t * lv, uint64_t r, MPI_Aint m, MPI_Aint off,
                           MPI_Aint len, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    const MPIR_Topo_layout_t *l = e->layout;
    int me = e->local_rank, n = e->local_size, dp = lv->depth;
    int f = e->lv_lo[dp], lo = e->lv_lo[dp], hi = e->lv_hi[dp];
    char *mine = slot + lv->area_of[dp] * lv->area;

    if (me == f) {
        MPIR_Topo_copy_t c[MPIR_TOPO_MAX_COPIES];
        int nc = MPIR_Topo_gather_copies(n, dp, e->lv_lo, e->lv_hi, lv->area_of, me, c);
        for (int j = 0; j < nc; j++) {
            char *dst = mine + c[j].lo * len, *src = slot + c[j].src * lv->area + c[j].lo * len;
            if (c[j].src_maker < 0)
                MPIDI_TOPO_WAIT_ALL(e, arrive, c[j].lo, c[j].hi, r);
            else
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, c[j].src_maker)->copied, r);
            memcpy(dst, src, (c[j].hi - c[j].lo) * len);
            MPIDI_TOPO_SHARED_DEFINED(dst, (c[j].hi - c[j].lo) * len);
        }
        MPL_atomic_release_store_uint64(&MPIDI_TOPO_CTRL(e, me)->copied, r);
        MPIDI_TOPO_EVENT(e, "staged", 0, 0);
    }
    MPIDI_TOPO_WAIT_ALL(e, arrive, lo, hi, r);
    if (me != f)
        MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, f)->copied, r);
    for (int pos = 0; pos < n; pos++) {
        int own = pos >= lo && pos < hi;
        mpi_errno = MPIDI_Topo_tbuf_unpack(rb, (MPI_Aint) l->order[pos] * m + off,
                                           (own ? slot : mine) + pos * len, len);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
    }
    return mpi_errno_ret;
}

static int allgather_segment(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * sb,
                             const MPIDI_Topo_tbuf_t * rb, MPI_Aint m,
                             MPIDI_Topo_leader_step_t leader_step, MPIR_Comm * comm,
                             MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    const MPIR_Topo_layout_t *l = e->layout;
    int p = comm->local_size, nn = e->nnodes, k = e->k, n = e->node, g = e->group;
    int nlocal = e->local_size, mypos = l->pos[comm->rank];
    /* levels on one node, while a process' share of an area is 1 KiB+ */
    const MPIDI_Topo_areas_t *lv = &e->allgather_areas;
    MPI_Aint per_round, nrounds;
    int streamed;
    MPI_Aint piece;
    uint64_t base;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    MPI_Aint *counts = e->net_aint, *displs = e->net_aint + nn;

    per_round = (lv->area ? lv->area : (MPI_Aint) e->slot_size) / p;
    nrounds = (m + per_round - 1) / per_round;
    streamed = nn == 1 && !lv->area && nrounds == 1 && m > MPIDI_TOPO_ALLGATHER_PIECE;
    piece = streamed ? MPIDI_TOPO_ALLGATHER_PIECE : MPL_MAX(m, 1);
    mpi_errno = MPIDI_Topo_rounds(e, nrounds, &base, errflag);
    MPIR_ERR_CHECK(mpi_errno);

    for (MPI_Aint i = 0; i < nrounds; i++) {
        uint64_t r = base + 1 + i;
        MPI_Aint off = i * per_round, len = MPL_MIN(per_round, m - off);
        char *slot = MPIDI_TOPO_SLOT(e, r);

        if (r > MPIDI_TOPO_NSLOTS)
            MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
        /* (one piece unless streamed) */
        for (MPI_Aint at = 0, j = 1; at < len; at += piece, j++) {
            MPI_Aint l = MPL_MIN(piece, len - at);
            mpi_errno = MPIDI_Topo_tbuf_pack(sb, off + at, slot + mypos * len + at, l);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            MPIDI_TOPO_SHARED_DEFINED(slot + mypos * len + at, l);
            if (streamed)
                MPL_atomic_release_store_uint64(&me->filled, MPIDI_TOPO_PROG(r, j));
        }
        MPL_atomic_release_store_uint64(&me->arrive, r);
        MPIDI_TOPO_EVENT(e, "in", i, 0);

        if (e->is_leader && nn > 1) {
            MPIDI_TOPO_WAIT_ALL(e, arrive, e->group_lo[g], e->group_lo[g + 1], r);
            MPIDI_Topo_node_errflag(e, errflag);
            if (leader_step != MPIDI_TOPO_LEADERS_RING) {
                mpi_errno = MPIDI_Topo_multileader_step(e, slot, len, counts, displs,
                                                        leader_step == MPIDI_TOPO_LEADERS_LOGSTEP,
                                                        errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                MPIDI_TOPO_EVENT(e, "leaders", i, 0);
                MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, nn));
            } else {
                int left = (n - 1 + nn) % nn, right = (n + 1) % nn;
                MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
                for (int s = 1; s < nn; s++) {
                    int send_node = (n - s + 1 + nn) % nn, recv_node = (n - s + nn) % nn;
                    int send_lo = l->group_start[send_node * k + g];
                    int send_hi = l->group_start[send_node * k + g + 1];
                    int recv_lo = l->group_start[recv_node * k + g];
                    int recv_hi = l->group_start[recv_node * k + g + 1];
                    MPIR_Request *reqs[2] = { NULL, NULL };
                    /* (a post that fails fails the node's call, and the
                     * ring goes on: nobody waits for this leader) */
                    mpi_errno = MPIC_Irecv(slot + recv_lo * len, (recv_hi - recv_lo) * len,
                                           MPI_BYTE, left,
                                           MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[0]);
                    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
                    mpi_errno = MPIC_Isend(slot + send_lo * len, (send_hi - send_lo) * len,
                                           MPI_BYTE, right,
                                           MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[1], errflag);
                    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
                    mpi_errno = MPIDI_Topo_waitall(e, 2, reqs, errflag);
                    MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                    MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, s + 1));
                    MPIDI_TOPO_EVENT(e, "ring", i, s);
                }
            }
        }

        if (lv->depth)
            mpi_errno = copy_out_levels(e, rb, slot, lv, r, m, off, len, errflag);
        else if (streamed)
            mpi_errno = copy_out_streamed(e, rb, slot, r, m, off, len, errflag);
        else
            mpi_errno = copy_out_flat(e, rb, slot, r, m, off, len, errflag);
        if (mpi_errno)
            MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        mpi_errno = MPI_SUCCESS;
        MPL_atomic_release_store_uint64(&me->done, r);
        MPIDI_TOPO_EVENT(e, "out", i, 0);
    }

  fn_exit:
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

/* recv: contiguous receive buffer, block of rank i at recv + i*m; my block
 * already holds my contribution.  recv NULL: this process could not stage
 * its data (MPIDI_Topo_staging_failed); it reads nothing, and as a leader
 * takes its messages into m bytes of scratch and passes on empty ones,
 * marked failed. */
static int allgather_direct(MPIDI_Topo_engine_t * e, char *recv, MPI_Aint m, MPIR_Comm * comm,
                            MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    const MPIR_Topo_layout_t *l = e->layout;
    int nn = e->nnodes, k = e->k, n = e->node, g = e->group, nlocal = e->local_size;
    int nstart = l->node_start[n];
    uint64_t r;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    int leading = e->is_leader && nn > 1;
    int sink = recv == NULL;
    char *sink_buf = NULL;
    MPIR_Request **reqs = e->net_reqs;

    mpi_errno = MPIDI_Topo_rounds(e, 1, &r, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    r++;
    me->addr = (uint64_t) (uintptr_t) recv;
    MPL_atomic_release_store_uint64(&me->arrive, r);

    if (leading) {
        /* (reqs: 2 x max_local_size, two groups' blocks at most) */
        int left = (n - 1 + nn) % nn, right = (n + 1) % nn;
        if (sink)
            sink_buf = MPIR_Topo_sink_alloc(comm, m);
        /* gather my group's blocks from their owners */
        for (int pos = l->group_start[n * k + g]; pos < l->group_start[n * k + g + 1]; pos++) {
            int loc = pos - nstart, rk = l->order[pos];
            MPIDI_Topo_ctrl_t *owner_ctrl = MPIDI_TOPO_CTRL(e, loc);
            if (loc == e->local_rank || sink)
                continue;
            MPIDI_TOPO_WAIT_GE(e, &owner_ctrl->arrive, r);
            mpi_errno = MPIDI_Topo_cma_read(e, loc, recv + rk * m, owner_ctrl->addr + rk * m, m);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        }
        MPIDI_Topo_node_errflag(e, errflag);
        MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
        for (int s = 1; s < nn; s++) {
            int send_node = (n - s + 1 + nn) % nn, recv_node = (n - s + nn) % nn, nr = 0;
            int recv_hi = l->group_start[recv_node * k + g + 1];
            int send_hi = l->group_start[send_node * k + g + 1];
            for (int pos = l->group_start[recv_node * k + g]; pos < recv_hi; pos++) {
                reqs[nr] = NULL;
                mpi_errno = MPIC_Irecv(sink ? sink_buf : recv + l->order[pos] * m, m, MPI_BYTE,
                                       left,
                                       MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[nr++]);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
            for (int pos = l->group_start[send_node * k + g]; pos < send_hi; pos++) {
                reqs[nr] = NULL;
                mpi_errno = MPIC_Isend(sink ? NULL : recv + l->order[pos] * m, sink ? 0 : m,
                                       MPI_BYTE, right,
                                       MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[nr++], errflag);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
            mpi_errno = MPIDI_Topo_waitall(e, nr, reqs, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, s + 1));
            MPIDI_TOPO_EVENT(e, "ring", 0, s);
        }
    }

    /* my node's blocks, straight from their owners */
    for (int loc = 0; loc < nlocal; loc++) {
        int rk = l->order[nstart + loc];
        MPIDI_Topo_ctrl_t *owner_ctrl = MPIDI_TOPO_CTRL(e, loc);
        if (sink || loc == e->local_rank ||
            (leading && loc >= e->group_lo[g] && loc < e->group_lo[g + 1]))
            continue;
        MPIDI_TOPO_WAIT_GE(e, &owner_ctrl->arrive, r);
        mpi_errno = MPIDI_Topo_cma_read(e, loc, recv + rk * m, owner_ctrl->addr + rk * m, m);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
    }
    /* other nodes' blocks, from the leader that brought them */
    for (int s = 2; s <= nn; s++) {
        int x = (n - s + 1 + nn) % nn;
        for (int grp = 0; grp < k; grp++) {
            int grp_leader = e->leader_local[grp];
            MPIDI_Topo_ctrl_t *leader_ctrl = MPIDI_TOPO_CTRL(e, grp_leader);
            if (sink || (leading && grp == g))
                continue;
            MPIDI_TOPO_WAIT_GE(e, &leader_ctrl->avail, MPIDI_TOPO_PROG(r, s));
            int hi = l->group_start[x * k + grp + 1];
            for (int pos = l->group_start[x * k + grp]; pos < hi; pos++) {
                int rk = l->order[pos];
                mpi_errno = MPIDI_Topo_cma_read(e, grp_leader, recv + rk * m,
                                                leader_ctrl->addr + rk * m, m);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
        }
    }
    MPL_atomic_release_store_uint64(&me->done, r);
    MPIDI_TOPO_EVENT(e, "out", 0, 0);
    MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r);

  fn_exit:
    MPL_free(sink_buf);
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

/* The leaders' exchange of topo_pipeline across nodes: its ring, or,
 * where the cost model puts the log-step exchange first (many nodes, small
 * calls: the ring pays N-1 latencies, Bruck ceil(log2 N)), recursive
 * doubling or Bruck in topo_multileader's place.  Every process decides
 * alike: the inputs are the same everywhere. */
MPIDI_Topo_leader_step_t MPIDI_Topo_allgather_leaders(MPIDI_Topo_engine_t * e, int p, MPI_Aint m,
                                                      double *ring, double *logstep)
{
    int nn = e->nnodes, ppn = (p + nn - 1) / nn, choice;

    choice = MPIR_Topo_model_allgather_leaders(&e->model, nn, ppn, (ppn + e->k - 1) / e->k, m,
                                               ring, logstep);
    if (MPIR_CVAR_TOPO_ALLGATHER_LEADERS == MPIR_CVAR_TOPO_ALLGATHER_LEADERS_ring)
        return MPIDI_TOPO_LEADERS_RING;
    if (MPIR_CVAR_TOPO_ALLGATHER_LEADERS == MPIR_CVAR_TOPO_ALLGATHER_LEADERS_logstep)
        return MPIDI_TOPO_LEADERS_LOGSTEP;
    return choice == MPIR_TOPO_MODEL_LOGSTEP ? MPIDI_TOPO_LEADERS_LOGSTEP :
        MPIDI_TOPO_LEADERS_RING;
}

int MPIDI_Topo_allgather_way(MPIDI_Topo_engine_t * e, const void *sendbuf, MPI_Aint sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                             MPI_Datatype recvtype, MPIR_Comm * comm,
                             MPIDI_Topo_leader_step_t leader_step, MPIDI_Topo_ag_way_t way,
                             MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, staging_errno = MPI_SUCCESS;
    MPIDI_Topo_tbuf_t sb, rb;
    MPI_Aint tsize, extent, m;
    int p = comm->local_size, rank = comm->rank, direct;
    char *tmp = NULL, *whole = NULL;

    MPIR_Datatype_get_size_macro(recvtype, tsize);
    MPIR_Datatype_get_extent_macro(recvtype, extent);
    m = recvcount * tsize;
    if (way == MPIDI_TOPO_AG_BY_CVAR)
        direct = leader_step == MPIDI_TOPO_LEADERS_RING && e->cma &&
            MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD >= 0 &&
            m >= MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD;
    else
        direct = way == MPIDI_TOPO_AG_DIRECT && e->cma;

    if (e->one_per_node) {
        /* one process per node: the leaders' exchange alone, on comm (the
         * choice by size of topo_multileader's leader step) */
        if (p * m < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE && !(p & (p - 1)))
            mpi_errno = MPIR_Allgather_intra_recursive_doubling(sendbuf, sendcount, sendtype,
                                                                recvbuf, recvcount, recvtype,
                                                                comm, errflag);
        else if (p * m < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE)
            mpi_errno = MPIR_Allgather_intra_brucks(sendbuf, sendcount, sendtype, recvbuf,
                                                    recvcount, recvtype, comm, errflag);
        else
            mpi_errno = MPIR_Allgather_intra_ring(sendbuf, sendcount, sendtype, recvbuf,
                                                  recvcount, recvtype, comm, errflag);
        goto fn_exit;
    }
    MPIDI_Topo_tbuf_init(&rb, recvbuf, p * recvcount, recvtype);
    if (sendbuf == MPI_IN_PLACE)
        MPIDI_Topo_tbuf_init(&sb, (char *) recvbuf + rank * recvcount * extent, recvcount,
                             recvtype);
    else
        MPIDI_Topo_tbuf_init(&sb, sendbuf, sendcount, sendtype);

    /* A non-contiguous receive type goes through a contiguous copy of the
     * whole result, unpacked once: the rounds would otherwise seek into the
     * middle of derived-type elements at every chunk boundary, which the
     * dataloop engine does not do reliably.  A non-contiguous send type
     * alone needs only its own block packed. */
    if (!rb.contig || !sb.contig) {
        MPI_Aint at = rb.contig ? 0 : rank * m, n = rb.contig ? m : p * m;
        tmp = MPIR_Topo_staging_alloc(n);
        if (tmp == NULL) {
            /* take part without data rather than leave the others waiting */
            staging_errno = MPIDI_Topo_staging_failed(e, n, errflag);
            MPIDI_Topo_tbuf_discard(&sb);
            if (!rb.contig)
                MPIDI_Topo_tbuf_discard(&rb);
        } else {
            /* a failed pack also takes part (the node fails the call):
             * leaving would put this process a call behind the others */
            mpi_errno = MPIDI_Topo_tbuf_pack(&sb, 0, tmp + at, m);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, staging_errno, errflag);
            MPIDI_Topo_tbuf_init(&sb, tmp + at, m, MPI_BYTE);
            if (!rb.contig)
                whole = tmp;
        }
    }
    MPIDI_Topo_timeline_begin(e, comm, leader_step == MPIDI_TOPO_LEADERS_RING ?
                              "allgather" : "allgather_multileader", m);
    if (e->nnodes == 1 && m <= MPIDI_TOPO_CELL_BYTES) {
        MPIDI_Topo_tbuf_t cb;
        if (whole)
            MPIDI_Topo_tbuf_init(&cb, whole, p * m, MPI_BYTE);
        mpi_errno = allgather_cells(e, &sb, whole ? &cb : &rb, m, errflag);
    } else if (direct) {
        char *recv = whole ? whole : rb.discard ? NULL : rb.buf + rb.lb;
        if (sendbuf != MPI_IN_PLACE && !whole && recv)
            mpi_errno = MPIDI_Topo_tbuf_pack(&sb, 0, recv + rank * m, m);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, staging_errno, errflag);
        mpi_errno = allgather_direct(e, recv, m, comm, errflag);
    } else {
        MPIDI_Topo_tbuf_t cb;
        if (whole)
            MPIDI_Topo_tbuf_init(&cb, whole, p * m, MPI_BYTE);
        mpi_errno = allgather_segment(e, &sb, whole ? &cb : &rb, m, leader_step, comm, errflag);
    }
    MPIDI_Topo_timeline_end(e);
    mpi_errno = MPIDI_Topo_staged_result(&rb, whole, p * m, staging_errno, mpi_errno);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPL_free(tmp);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
