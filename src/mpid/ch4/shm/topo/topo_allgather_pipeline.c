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
      default     : 4194304
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes per process from which allgather topo_pipeline copies
        between local processes with one kernel-assisted copy (Linux CMA,
        process_vm_readv) instead of through the node segment. -1 disables
        it. The default comes from bench/: CMA copies ran at about a quarter
        of memcpy's speed on cache-resident data, so the pipelined segment
        (copy-in and copy-out overlapped) wins up to about 4 MiB and CMA's
        single copy from there. Where the kernel refuses CMA (ptrace
        restrictions, containers), the segment is used at every size.
        (Until the next release also read from MPIR_CVAR_TOPO_CMA_THRESHOLD,
        its old name.)

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithms: leader-based allgather
 *   MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline
 *   MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_multileader
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
 * fill while round r drains.
 *
 * topo_pipeline, direct mode (CMA, >= MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD bytes
 * per process): no staging.  Each leader reads its group's blocks from the
 * members' buffers with process_vm_readv, rings them between nodes inside
 * its receive buffer, and the others read each arriving node portion from
 * the leader's buffer (and their own node's blocks from their owners).
 *
 * topo_multileader (Kandalla et al.): the same shared-memory aggregation,
 * but leaders exchange with one allgatherv (MPICH's choice: recursive
 * doubling or Bruck for small totals, a ring for large ones), and local
 * processes copy out after it; no overlap inside a round.
 *
 * Cost, m bytes per process, N nodes of L processes, k leaders per node,
 * p = N.L: every process copies m in and p.m out (segment mode; direct
 * mode reads the same bytes once, with no copy in); a group leader's ring
 * takes (N-1).alpha + (N-1).(L/k).m.beta on the network, the lower bound
 * of a node's traffic split over its k leaders; rounds overlap the ring of
 * one with the copies of the next.  topo_multileader pays its allgatherv's
 * cost (log N alpha for small totals) and no overlap. */

/* A schedule's sends carry the error bit once one of its entries failed:
 * this one, first, fails when the call has already failed here */
static int mark_failed(MPIR_Comm * comm, int tag, void *state)
{
    return MPI_ERR_OTHER;
}

/* Kandalla's leader exchange: recursive doubling (power-of-two leader
 * count) or Bruck for small totals, a ring for large ones.  Run as a
 * nonblocking schedule so that our waiting loop, which yields, completes
 * it. */
static int leader_allgatherv(MPIDI_Topo_engine_t * e, char *buf, const MPI_Aint * counts,
                             const MPI_Aint * displs, MPI_Aint total, MPIR_Errflag_t * errflag)
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
    if (total < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE && !(nn & (nn - 1)))
        mpi_errno = MPIR_Iallgatherv_intra_sched_recursive_doubling(MPI_IN_PLACE, 0,
                                                                    MPI_DATATYPE_NULL, buf,
                                                                    counts, displs, MPI_BYTE,
                                                                    lc, s);
    else if (total < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE)
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

static int allgather_segment(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * sb,
                             const MPIDI_Topo_tbuf_t * rb, MPI_Aint m, int multileader,
                             MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    const MPIR_Topo_layout_t *l = e->layout;
    int p = comm->local_size, nn = e->nnodes, k = e->k, n = e->node, g = e->group;
    int L = e->local_size, mypos = l->pos[comm->rank];
    MPI_Aint c = (MPI_Aint) (e->slot_size / p), R = (m + c - 1) / c;
    uint64_t base;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    MPI_Aint *counts = NULL, *displs = NULL;
    MPIR_CHKLMEM_DECL(2);

    mpi_errno = MPIDI_Topo_rounds(e, R, &base, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (multileader && e->leader_comm) {
        MPIR_CHKLMEM_MALLOC(counts, MPI_Aint *, nn * sizeof(MPI_Aint), mpi_errno, "counts",
                            MPL_MEM_COLL);
        MPIR_CHKLMEM_MALLOC(displs, MPI_Aint *, nn * sizeof(MPI_Aint), mpi_errno, "displs",
                            MPL_MEM_COLL);
    }

    for (MPI_Aint i = 0; i < R; i++) {
        uint64_t r = base + 1 + i;
        MPI_Aint off = i * c, len = MPL_MIN(c, m - off);
        char *slot = MPIDI_TOPO_SLOT(e, r);

        if (r > MPIDI_TOPO_NSLOTS)
            MPIDI_TOPO_WAIT_ALL(e, done, 0, L, r - MPIDI_TOPO_NSLOTS);
        mpi_errno = MPIDI_Topo_tbuf_pack(sb, off, slot + mypos * len, len);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        MPIDI_TOPO_SHARED_DEFINED(slot + mypos * len, len);
        MPL_atomic_release_store_uint64(&me->arrive, r);

        if (e->is_leader && nn > 1) {
            MPIDI_TOPO_WAIT_ALL(e, arrive, e->group_lo[g], e->group_lo[g + 1], r);
            MPIDI_Topo_node_errflag(e, errflag);
            if (multileader) {
                MPI_Aint total = 0;
                for (int x = 0; x < nn; x++) {
                    counts[x] = (l->group_start[x * k + g + 1] - l->group_start[x * k + g]) * len;
                    displs[x] = l->group_start[x * k + g] * len;
                    total += counts[x];
                }
                mpi_errno = leader_allgatherv(e, slot, counts, displs, total, errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, nn));
            } else {
                int left = (n - 1 + nn) % nn, right = (n + 1) % nn;
                MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
                for (int s = 1; s < nn; s++) {
                    int sx = (n - s + 1 + nn) % nn, rx = (n - s + nn) % nn;
                    int s0 = l->group_start[sx * k + g], s1 = l->group_start[sx * k + g + 1];
                    int r0 = l->group_start[rx * k + g], r1 = l->group_start[rx * k + g + 1];
                    MPIR_Request *reqs[2];
                    mpi_errno = MPIC_Irecv(slot + r0 * len, (r1 - r0) * len, MPI_BYTE, left,
                                           MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[0]);
                    MPIR_ERR_CHECK(mpi_errno);
                    mpi_errno = MPIC_Isend(slot + s0 * len, (s1 - s0) * len, MPI_BYTE, right,
                                           MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[1], errflag);
                    MPIR_ERR_CHECK(mpi_errno);
                    mpi_errno = MPIDI_Topo_waitall(e, 2, reqs, errflag);
                    MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                    MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, s + 1));
                }
            }
        }

        /* copy out node portions in the order the ring brings them; this
         * node's own as soon as its processes have arrived (waiting for the
         * leaders to relay that would cost a second hop) */
        MPIDI_TOPO_WAIT_ALL(e, arrive, 0, L, r);
        for (int s = 1; s <= nn; s++) {
            int x = (n - s + 1 + nn) % nn;
            for (int gg = 0; gg < k; gg++) {
                MPIDI_Topo_ctrl_t *lc = MPIDI_TOPO_CTRL(e, e->leader_local[gg]);
                if (s > 1)
                    MPIDI_TOPO_WAIT_GE(e, &lc->avail, MPIDI_TOPO_PROG(r, s));
                for (int q = l->group_start[x * k + gg]; q < l->group_start[x * k + gg + 1]; q++) {
                    mpi_errno = MPIDI_Topo_tbuf_unpack(rb, (MPI_Aint) l->order[q] * m + off,
                                                       slot + q * len, len);
                    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
                }
            }
        }
        MPL_atomic_release_store_uint64(&me->done, r);
    }

  fn_exit:
    MPIR_CHKLMEM_FREEALL();
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
    int nn = e->nnodes, k = e->k, n = e->node, g = e->group, L = e->local_size;
    int nstart = l->node_start[n];
    uint64_t r;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    int leading = e->is_leader && nn > 1;
    int sink = recv == NULL;
    char *sink_buf = NULL;
    MPIR_Request **reqs = NULL;
    MPIR_CHKLMEM_DECL(1);

    mpi_errno = MPIDI_Topo_rounds(e, 1, &r, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    r++;
    me->addr = (uint64_t) (uintptr_t) recv;
    MPL_atomic_release_store_uint64(&me->arrive, r);

    if (leading) {
        int maxg = 0, left = (n - 1 + nn) % nn, right = (n + 1) % nn;
        for (int x = 0; x < nn; x++) {
            int sz = l->group_start[x * k + g + 1] - l->group_start[x * k + g];
            maxg = MPL_MAX(maxg, sz);
        }
        MPIR_CHKLMEM_MALLOC(reqs, MPIR_Request **, 2 * maxg * sizeof(MPIR_Request *), mpi_errno,
                            "requests", MPL_MEM_COLL);
        if (sink)
            sink_buf = MPIR_Topo_sink_alloc(comm, m);
        /* gather my group's blocks from their owners */
        for (int q = l->group_start[n * k + g]; q < l->group_start[n * k + g + 1]; q++) {
            int loc = q - nstart, rk = l->order[q];
            MPIDI_Topo_ctrl_t *xc = MPIDI_TOPO_CTRL(e, loc);
            if (loc == e->local_rank || sink)
                continue;
            MPIDI_TOPO_WAIT_GE(e, &xc->arrive, r);
            mpi_errno = MPIDI_Topo_cma_read(e, loc, recv + rk * m, xc->addr + rk * m, m);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        }
        MPIDI_Topo_node_errflag(e, errflag);
        MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
        for (int s = 1; s < nn; s++) {
            int sx = (n - s + 1 + nn) % nn, rx = (n - s + nn) % nn, nr = 0;
            for (int q = l->group_start[rx * k + g]; q < l->group_start[rx * k + g + 1]; q++) {
                mpi_errno = MPIC_Irecv(sink ? sink_buf : recv + l->order[q] * m, m, MPI_BYTE, left,
                                       MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[nr++]);
                MPIR_ERR_CHECK(mpi_errno);
            }
            for (int q = l->group_start[sx * k + g]; q < l->group_start[sx * k + g + 1]; q++) {
                mpi_errno = MPIC_Isend(sink ? NULL : recv + l->order[q] * m, sink ? 0 : m,
                                       MPI_BYTE, right,
                                       MPIR_ALLGATHER_TAG, e->leader_comm, &reqs[nr++], errflag);
                MPIR_ERR_CHECK(mpi_errno);
            }
            mpi_errno = MPIDI_Topo_waitall(e, nr, reqs, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, s + 1));
        }
    }

    /* my node's blocks, straight from their owners */
    for (int loc = 0; loc < L; loc++) {
        int rk = l->order[nstart + loc];
        MPIDI_Topo_ctrl_t *xc = MPIDI_TOPO_CTRL(e, loc);
        if (sink || loc == e->local_rank ||
            (leading && loc >= e->group_lo[g] && loc < e->group_lo[g + 1]))
            continue;
        MPIDI_TOPO_WAIT_GE(e, &xc->arrive, r);
        mpi_errno = MPIDI_Topo_cma_read(e, loc, recv + rk * m, xc->addr + rk * m, m);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
    }
    /* other nodes' blocks, from the leader that brought them */
    for (int s = 2; s <= nn; s++) {
        int x = (n - s + 1 + nn) % nn;
        for (int gg = 0; gg < k; gg++) {
            int ll = e->leader_local[gg];
            MPIDI_Topo_ctrl_t *lc = MPIDI_TOPO_CTRL(e, ll);
            if (sink || (leading && gg == g))
                continue;
            MPIDI_TOPO_WAIT_GE(e, &lc->avail, MPIDI_TOPO_PROG(r, s));
            for (int q = l->group_start[x * k + gg]; q < l->group_start[x * k + gg + 1]; q++) {
                int rk = l->order[q];
                mpi_errno = MPIDI_Topo_cma_read(e, ll, recv + rk * m, lc->addr + rk * m, m);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
        }
    }
    MPL_atomic_release_store_uint64(&me->done, r);
    MPIDI_TOPO_WAIT_ALL(e, done, 0, L, r);

  fn_exit:
    MPL_free(sink_buf);
    MPIR_CHKLMEM_FREEALL();
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

int MPIDI_Topo_allgather(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                         MPIR_Comm * comm, int multileader, const char **why_not,
                         MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, staging_errno = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e;
    MPIDI_Topo_tbuf_t sb, rb;
    MPI_Aint tsize, extent, m;
    int p = comm->local_size, rank = comm->rank;
    char *tmp = NULL, *whole = NULL;

    *why_not = NULL;
    MPIR_Datatype_get_size_macro(recvtype, tsize);
    MPIR_Datatype_get_extent_macro(recvtype, extent);
    m = recvcount * tsize;
    if (m == 0)
        return MPI_SUCCESS;
    if (p == 1) {
        if (sendbuf != MPI_IN_PLACE)
            mpi_errno = MPIR_Localcopy(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
        return mpi_errno;
    }

    MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag);

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
            mpi_errno = MPIDI_Topo_tbuf_pack(&sb, 0, tmp + at, m);
            MPIR_ERR_CHECK(mpi_errno);
            MPIDI_Topo_tbuf_init(&sb, tmp + at, m, MPI_BYTE);
            if (!rb.contig)
                whole = tmp;
        }
    }
    if (!multileader && e->cma && MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD >= 0 &&
        m >= MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD) {
        char *recv = whole ? whole : rb.discard ? NULL : rb.buf + rb.lb;
        if (sendbuf != MPI_IN_PLACE && !whole && recv)
            mpi_errno = MPIDI_Topo_tbuf_pack(&sb, 0, recv + rank * m, m);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = allgather_direct(e, recv, m, comm, errflag);
    } else {
        MPIDI_Topo_tbuf_t cb;
        if (whole)
            MPIDI_Topo_tbuf_init(&cb, whole, p * m, MPI_BYTE);
        mpi_errno = allgather_segment(e, &sb, whole ? &cb : &rb, m, multileader, comm, errflag);
    }
    mpi_errno = MPIDI_Topo_staged_result(&rb, whole, p * m, staging_errno, mpi_errno);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPL_free(tmp);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
