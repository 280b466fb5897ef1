/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"

/* Algorithm: multi-leader allgather (Kandalla et al.)
 *   MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_multileader
 *
 * The node-segment rounds of topo_pipeline (topo_allgather_pipeline.c):
 * every process copies its piece into the slot at its node-major position
 * and copies the whole round out at the end.  Between the two, leader g
 * exchanges its group's portions with the group-g leaders of the other
 * nodes in one allgatherv (MPICH's choice: recursive doubling or Bruck for
 * small totals, a ring for large ones) instead of a pipelined ring, so the
 * local processes copy out only once it has finished: no overlap inside a
 * round.
 *
 * Cost, m bytes per process, N nodes of L processes, k leaders per node:
 * every process copies m in and N.L.m out; a leader's allgatherv moves
 * (N-1).(L/k).m bytes, in log N steps (log N alpha) for small totals, N-1
 * (ring) for large ones. */

/* A schedule's sends carry the error bit once one of its entries failed:
 * this one, first, fails when the call has already failed here */
static int mark_failed(MPIR_Comm * comm, int tag, void *state)
{
    return MPI_ERR_OTHER;
}

/* Kandalla's leader exchange: recursive doubling (power-of-two leader
 * count) or Bruck if logstep, else a ring.  Run as a
 * nonblocking schedule so that our waiting loop, which yields, completes
 * it. */
static int leader_allgatherv(MPIDI_Topo_engine_t * e, char *buf, const MPI_Aint * counts,
                             const MPI_Aint * displs, int logstep, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, tag = -1, nn = e->nnodes;
    MPIR_Comm *lc = e->leader_comm;
    MPIR_Sched_t s = MPIR_SCHED_NULL;
    MPIR_Request *req = NULL;

    mpi_errno = MPIR_Sched_create(&s, MPIR_SCHED_KIND_REGULAR);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Sched_next_tag(lc, &tag);
    MPIR_ERR_CHECK(mpi_errno);
    MPIR_Sched_set_tag(s, tag);
    if (*errflag) {
        mpi_errno = MPIR_Sched_cb(&mark_failed, NULL, s);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (logstep && !(nn & (nn - 1)))
        mpi_errno = MPIR_Iallgatherv_intra_sched_recursive_doubling(MPI_IN_PLACE, 0,
                                                                    MPI_DATATYPE_NULL, buf,
                                                                    counts, displs, MPI_BYTE,
                                                                    lc, s);
    else if (logstep)
        mpi_errno = MPIR_Iallgatherv_intra_sched_brucks(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf,
                                                        counts, displs, MPI_BYTE, lc, s);
    else
        mpi_errno = MPIR_Iallgatherv_intra_sched_ring(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf,
                                                      counts, displs, MPI_BYTE, lc, s);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Sched_start(s, lc, &req);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIDI_Topo_waitall(e, 1, &req, errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Leader g's step of one round: its group's portion of every node,
 * gathered into slot by one allgatherv over its leader communicator, by
 * log steps if logstep, else by MPICH's rule (log steps below
 * MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE in all, a ring above).  counts and
 * displs: room for one entry per node. */
int MPIDI_Topo_multileader_step(MPIDI_Topo_engine_t * e, char *slot, MPI_Aint len,
                                MPI_Aint * counts, MPI_Aint * displs, int logstep,
                                MPIR_Errflag_t * errflag)
{
    const MPIR_Topo_layout_t *l = e->layout;
    int k = e->k, g = e->group;
    MPI_Aint total = 0;

    for (int x = 0; x < e->nnodes; x++) {
        counts[x] = (l->group_start[x * k + g + 1] - l->group_start[x * k + g]) * len;
        displs[x] = l->group_start[x * k + g] * len;
        total += counts[x];
    }
    return leader_allgatherv(e, slot, counts, displs,
                             logstep || total < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE, errflag);
}
