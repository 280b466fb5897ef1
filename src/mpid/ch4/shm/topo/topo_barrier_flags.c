/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"

/* Algorithm: barrier on the node segment's counters
 * (MPIR_CVAR_BARRIER_INTRA_ALGORITHM=topo_flags)
 *
 * Every process raises its own arrival counter to the call's round.
 *  - One node of at most MPIDI_TOPO_BARRIER_ALL_POLL processes: each then
 *    waits for every local counter.  The last store releases everyone at
 *    once, so the processes leave within a cache-line transfer of each
 *    other.  (A gather-then-release barrier lets its root leave first, one
 *    transfer ahead, every time: whatever follows, a rooted collective or
 *    a timed call, starts skewed.)
 *  - Larger nodes, and several nodes: the first group's leader waits for
 *    its node, meets the other nodes' first leaders in a dissemination
 *    barrier, and raises its network counter, which the others wait for.
 *
 * Cost: one node of L processes, one store and L-1 cache-line reads per
 * process, about two cache-line transfers of latency; N nodes, plus
 * ceil(log2 N) alpha among the leaders and one transfer to release. */

/* Up to this many local processes everyone polls everyone: L-1 reads each,
 * in parallel.  Beyond it one process polls and the others wait on it, so
 * that the polling traffic stays linear in L. */
#define MPIDI_TOPO_BARRIER_ALL_POLL 16

int MPIDI_Topo_barrier_flags(MPIR_Comm * comm, const char **why_not, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = NULL;
    MPIDI_Topo_ctrl_t *me;
    uint64_t base, r;
    int hub;

    MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag);
    if (e->one_per_node) {
        /* one process per node: the network step alone */
        mpi_errno = MPIR_Barrier_intra_dissemination(comm, errflag);
        goto fn_exit;
    }

    mpi_errno = MPIDI_Topo_rounds(e, 1, &base, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    r = base + 1;
    me = MPIDI_TOPO_CTRL(e, e->local_rank);
    MPL_atomic_release_store_uint64(&me->arrive, r);

    if (e->nnodes == 1 && e->local_size <= MPIDI_TOPO_BARRIER_ALL_POLL) {
        MPIDI_TOPO_WAIT_ALL(e, arrive, 0, e->local_size, r);
    } else {
        hub = e->leader_local[0];
        if (e->local_rank == hub) {
            MPIDI_TOPO_WAIT_ALL(e, arrive, 0, e->local_size, r);
            if (e->leader_comm) {
                /* the first group's leaders, one per node; a node that
                 * failed marks its messages (its word stays set), and a
                 * marked message fails this node too */
                MPIDI_Topo_node_errflag(e, errflag);
                mpi_errno = MPIR_Barrier_intra_dissemination(e->leader_comm, errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                if (*errflag != MPIR_ERR_NONE)
                    MPL_atomic_release_store_uint64(e->node_failed, 1);
            }
            MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
        } else {
            MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, hub)->avail, MPIDI_TOPO_PROG(r, 1));
        }
    }
    /* no slot was used, but later rounds count on done reaching r */
    MPL_atomic_release_store_uint64(&me->done, r);
    mpi_errno = MPIDI_Topo_check_node(e, mpi_errno_ret, errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
