/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"

/* Algorithm: parallel shared-memory allreduce with leaders
 * (MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline, Mamidala ch. 9)
 *
 * Rounds of c elements, c chosen so that the inputs of the largest node's
 * processes fit in a slot.  In round r each local process copies its
 * input into its own area of the slot; then process q reduces slice q (1/L of the round)
 * across all areas into area 0, starting with the area after its own so
 * that the processes do not all read the same area at once.  Leader g then
 * allreduces the g-th k-th of the round across nodes over its
 * leader communicator, in place in area 0, so each leader carries 1/k of
 * the node's traffic; everyone copies the result out.  The leaders'
 * step is nonblocking: round r crosses the network while the node drains
 * round r-1 and fills and reduces round r+1 (two slots).  Predefined ops
 * only: the local reduction order is not rank order, and the elements are
 * packed (MPIR_Topo_basic_t) while MPI calls a user-defined op with the
 * call's datatype.
 *
 * Reduce (MPIR_CVAR_REDUCE_INTRA_ALGORITHM=topo_pipeline) runs the same
 * rounds: the leaders' step is a reduce to the leaders of the root's node,
 * and only the root copies the result out; the others mark a round done as
 * soon as their slice is reduced (leaders: once their network step is).
 *
 * Cost, per round of c bytes, N nodes of L processes, k leaders per node:
 * each process copies c in and reduces c/L across L areas ((L-1).c/L
 * reductions); the leaders allreduce (reduce) c/k bytes each over the
 * network, recursive doubling or reduce-scatter/allgather on N nodes
 * (log N alpha + 2.c/k beta at least; reduce: log N alpha + c/k beta);
 * everyone (reduce: the root) copies c out.  Rounds overlap the network
 * step of one with the local work of the next. */

/* area a of a slot holds the span of local process a's elements; element
 * 0's base is the area minus true_lb */
#define AREA(slot, a) ((slot) + (a) * stride - true_lb)

/* Within one node, below this many bytes of reduction work per process
 * ((local processes - 1) x message), every process reduces all inputs
 * itself: one synchronisation (inputs arrived) instead of two (arrived,
 * slices reduced), which is what small messages pay for.  Measured on 2
 * ranks: whole 0.26 us vs sliced 0.30 us at 1 KiB, 0.41 vs 0.38 at 2 KiB,
 * 1.27 vs 0.75 at 8 KiB. */
#define MPIDI_TOPO_ALLREDUCE_WHOLE_WORK 2048

/* the leaders' network step, used as is by both the rounds and the
 * one-process-per-node case */
static int allreduce_net(const void *sendbuf, void *recvbuf, MPI_Aint count,
                         MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                         MPIR_Errflag_t * errflag)
{
    MPI_Aint tsize;

    MPIR_Datatype_get_size_macro(datatype, tsize);
    if (count >= MPL_pof2(comm->local_size) &&
        count * tsize > MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE)
        return MPIR_Allreduce_intra_reduce_scatter_allgather(sendbuf, recvbuf, count, datatype,
                                                             op, comm, errflag);
    return MPIR_Allreduce_intra_recursive_doubling(sendbuf, recvbuf, count, datatype, op, comm,
                                                   errflag);
}

static int reduce_net(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPI_Aint tsize;

    MPIR_Datatype_get_size_macro(datatype, tsize);
    if (count >= MPL_pof2(comm->local_size) && count * tsize > MPIR_CVAR_REDUCE_SHORT_MSG_SIZE)
        return MPIR_Reduce_intra_reduce_scatter_gather(sendbuf, recvbuf, count, datatype, op,
                                                       root, comm, errflag);
    return MPIR_Reduce_intra_binomial(sendbuf, recvbuf, count, datatype, op, root, comm,
                                      errflag);
}

/* The rounds, on count elements of a predefined type (MPIR_Topo_basic_t);
 * root < 0: allreduce, every process gets the result */
static int allreduce_elements(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                              const char **why_not, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = NULL;
    MPI_Aint extent, c, R, true_lb, true_extent, stride;
    MPIR_Request *nreq[2] = { NULL, NULL };
    int is_contig, L, me_l, k, g, wants, root_node = -1;
    uint64_t base;
    MPIDI_Topo_ctrl_t *me;
    char *rbuf;
    const char *sbuf;

    /* (all_arrived below relies on two slots) */
    MPL_COMPILE_TIME_ASSERT(MPIDI_TOPO_NSLOTS == 2);
    MPIR_Datatype_is_contig(datatype, &is_contig);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);

    MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag);
    if (e->one_per_node) {
        mpi_errno = root < 0 ?
            allreduce_net(sendbuf, recvbuf, count, datatype, op, comm, errflag) :
            reduce_net(sendbuf, recvbuf, count, datatype, op, root, comm, errflag);
        goto fn_exit;
    }
    wants = root < 0 || comm->rank == root;     /* this process gets the result */
    if (root >= 0)
        root_node = e->layout->node[root];
    L = e->local_size;
    me_l = e->local_rank;
    k = e->k;
    g = e->group;
    /* the same round size on every node: sized for the largest node */
    c = (MPI_Aint) (e->slot_size / e->max_local_size) / extent;
    if (c == 0) {
        *why_not = "one element is larger than a slot (MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE)";
        goto fn_exit;
    }
    R = (count + c - 1) / c;
    mpi_errno = MPIDI_Topo_rounds(e, R, &base, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    me = MPIDI_TOPO_CTRL(e, me_l);
    stride = c * extent;        /* bytes between areas */
    rbuf = (char *) recvbuf;
    sbuf = sendbuf == MPI_IN_PLACE ? rbuf : (const char *) sendbuf;

    if (e->nnodes == 1 && R == 1 &&
        (L - 1) * (count * extent) < MPIDI_TOPO_ALLREDUCE_WHOLE_WORK) {
        uint64_t r = base + 1;
        char *slot = MPIDI_TOPO_SLOT(e, r);

        /* a process arrives at the first round of a call only once it is
         * done with every earlier round: if this process saw them all
         * arrive at round r - 1 in such a call (this path), they are done
         * with round r - 2, whose slot this is */
        if (r > MPIDI_TOPO_NSLOTS && e->all_arrived + 1 < r)
            MPIDI_TOPO_WAIT_ALL(e, done, 0, L, r - MPIDI_TOPO_NSLOTS);
        memcpy(slot + me_l * stride, sbuf + true_lb, (count - 1) * extent + true_extent);
        MPIDI_TOPO_SHARED_DEFINED(slot + me_l * stride, (count - 1) * extent + true_extent);
        MPL_atomic_release_store_uint64(&me->arrive, r);
        if (!wants) {
            /* reduce: nothing to read (the root's done guards this slot) */
            MPL_atomic_release_store_uint64(&me->done, r);
            goto fn_exit;
        }
        MPIDI_TOPO_WAIT_ALL(e, arrive, 0, L, r);
        e->all_arrived = r;
        /* the same order everywhere, so that every process gets the same
         * bits (floating point): area 0 op (area 1 op (... op area L-1)) */
        mpi_errno = MPIR_Localcopy(AREA(slot, L - 1), count, datatype, rbuf, count, datatype);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        for (int a = L - 2; a >= 0; a--) {
            mpi_errno = MPIR_Reduce_local(AREA(slot, a), rbuf, count, datatype, op);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        }
        MPL_atomic_release_store_uint64(&me->done, r);
        goto fn_exit;
    }

    /* Round r's network step runs (nonblocking, progressed by our waits)
     * while the node copies round r-1 out and fills round r+1: iteration i
     * does the local part of round i and the copy-out of round i-1. */
    for (MPI_Aint i = 0; i <= R; i++) {
        if (i < R) {
            uint64_t r = base + 1 + i;
            MPI_Aint off = i * c, n = MPL_MIN(c, count - off);
            char *slot = MPIDI_TOPO_SLOT(e, r);
            MPI_Aint s0 = n * me_l / L, s1 = n * (me_l + 1) / L;

            if (r > MPIDI_TOPO_NSLOTS)
                MPIDI_TOPO_WAIT_ALL(e, done, 0, L, r - MPIDI_TOPO_NSLOTS);
            memcpy(slot + me_l * stride, sbuf + off * extent + true_lb,
                   (n - 1) * extent + true_extent);
            MPIDI_TOPO_SHARED_DEFINED(slot + me_l * stride, (n - 1) * extent + true_extent);
            MPL_atomic_release_store_uint64(&me->arrive, r);

            /* my slice, reduced across the areas into area 0 (no
             * all_arrived here: within these rounds a process arrives at
             * round r before it copies round r - 1 out) */
            MPIDI_TOPO_WAIT_ALL(e, arrive, 0, L, r);
            for (int j = 0; j < L && s1 > s0; j++) {
                int a = (me_l + j) % L;
                if (a == 0)
                    continue;
                mpi_errno = MPIR_Reduce_local(AREA(slot, a) + s0 * extent,
                                              AREA(slot, 0) + s0 * extent, s1 - s0, datatype, op);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
            MPL_atomic_release_store_uint64(&me->reduced, r);

            if (e->is_leader && e->nnodes > 1) {
                /* leader g's share of the round is the same element range
                 * on every node, whatever the node sizes */
                MPI_Aint g0 = n * g / k, g1 = n * (g + 1) / k;
                MPIDI_TOPO_WAIT_ALL(e, reduced, 0, L, r);
                if (e->leader_comm && g1 > g0) {
                    char *mine = AREA(slot, 0) + g0 * extent;
                    if (root < 0)
                        mpi_errno = MPIR_Iallreduce_impl(MPI_IN_PLACE, mine, g1 - g0, datatype,
                                                         op, e->leader_comm, &nreq[r % 2]);
                    else
                        mpi_errno = MPIR_Ireduce_impl(e->node == root_node ? MPI_IN_PLACE : mine,
                                                      mine, g1 - g0, datatype, op, root_node,
                                                      e->leader_comm, &nreq[r % 2]);
                    MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                }
            }
        }
        if (i > 0) {
            uint64_t r = base + i;
            MPI_Aint off = (i - 1) * c, n = MPL_MIN(c, count - off);
            char *slot = MPIDI_TOPO_SLOT(e, r);

            if (e->nnodes > 1 && e->is_leader) {
                mpi_errno = MPIDI_Topo_waitall(e, 1, &nreq[r % 2], errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
            }
            if (!wants) {
                /* reduce: done with the round once my slice (and, for a
                 * leader, its network step) is; the root's done guards
                 * the slot until it has copied the result out */
                MPL_atomic_release_store_uint64(&me->done, r);
                continue;
            }
            if (e->nnodes == 1) {
                /* nothing crosses the network: the slices themselves say
                 * when the round is reduced (one hop, not two via leaders) */
                MPIDI_TOPO_WAIT_ALL(e, reduced, 0, L, r);
            } else {
                for (int gg = 0; gg < k; gg++)
                    MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, e->leader_local[gg])->avail,
                                       MPIDI_TOPO_PROG(r, 1));
            }
            if (is_contig && extent == true_extent)
                memcpy(rbuf + off * extent + true_lb, slot, n * extent);
            else {
                /* leave the user's holes alone */
                mpi_errno = MPIR_Localcopy(AREA(slot, 0), n, datatype, rbuf + off * extent, n,
                                           datatype);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
            MPL_atomic_release_store_uint64(&me->done, r);
        }
    }

  fn_exit:
    /* only after an error can a network step still be pending */
    for (int j = 0; j < 2; j++)
        if (nreq[j]) {
            MPIDI_Topo_waitall(e, 1, &nreq[j], errflag);
        }
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

/* Every process stages and reduces the same elements whatever its own
 * layout of them: the datatype's predefined type, count x size bytes'
 * worth (see MPIR_Topo_basic_t).  A user-defined operation would have to
 * be called with each process' own datatype on whole units of it, which
 * neither the packed slots nor the slices keep: it goes elsewhere, decided
 * from the operation alone so that every process decides alike.
 * root < 0: allreduce. */
static int reduction(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPIR_Comm * comm, const char **why_not,
                     MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, wants = root < 0 || comm->rank == root;
    MPIR_Topo_basic_t b;

    *why_not = NULL;
    if (count == 0)
        return MPI_SUCCESS;
    if (!HANDLE_IS_BUILTIN(op)) {
        *why_not = "the operation is user-defined (MPI calls it with the call's datatype, "
            "which the packed shared-memory slices do not keep)";
        return MPI_SUCCESS;
    }
    if (comm->local_size == 1) {
        if (sendbuf != MPI_IN_PLACE)
            mpi_errno = MPIR_Localcopy(sendbuf, count, datatype, recvbuf, count, datatype);
        return mpi_errno;
    }
    mpi_errno = MPIR_Topo_basic_start(sendbuf, wants ? recvbuf : NULL, count, datatype, wants,
                                      &b);
    if (mpi_errno)
        return mpi_errno;
    if (b.type == MPI_DATATYPE_NULL) {
        *why_not = "the datatype is not made of one predefined type";
        return MPI_SUCCESS;
    }
    if (b.count > 0)
        mpi_errno = allreduce_elements(b.sendbuf, b.recvbuf, b.count, b.type, op, root, comm,
                                       why_not, errflag);
    if (*why_not)
        b.has_result = 0;       /* nothing to copy back: the caller falls back */
    return MPIR_Topo_basic_finish(&b, mpi_errno);
}

int MPIDI_Topo_allreduce_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                  MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                  const char **why_not, MPIR_Errflag_t * errflag)
{
    return reduction(sendbuf, recvbuf, count, datatype, op, -1, comm, why_not, errflag);
}

int MPIDI_Topo_reduce_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                               MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                               const char **why_not, MPIR_Errflag_t * errflag)
{
    return reduction(sendbuf, recvbuf, count, datatype, op, root, comm, why_not, errflag);
}
