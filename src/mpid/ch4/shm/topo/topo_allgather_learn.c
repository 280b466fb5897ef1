/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"
#include "coll_trace.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_ALLGATHER_TRIALS
      category    : TOPO
      type        : int
      default     : 3
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Where the built-in tuning gives a large allgather within one node
        to topo_pipeline (from 512 KiB in all), the communicator's first
        calls of each size class (a power of two of bytes per process) time
        each way of doing it this many times (3: one trial disturbed by
        another process does not decide): MPICH's ring, the node segment,
        and CMA's single copy where the kernel allows it
        (MPIR_CVAR_TOPO_CMA). Each way first runs a few untimed calls: its
        first touch of new pages, and for the ring one pass over MPICH's
        shared cells (at most 32 calls), which ran 3-4x slower than later
        calls. The processes then agree, by one small
        allreduce, on the way whose fastest trial was fastest on the
        slowest process, and keep it for that size class. Which way wins
        depends on the processor (bench/results/dev-2core-xeon-allgather:
        on one VM the segment and CMA lead MPICH's ring by up to 1.4x, on
        another they trail it). 0 turns learning off: the segment, or CMA
        from MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD. A topo_pipeline that
        the user chose (CVAR or tuning file) never learns, nor does a
        nonblocking or persistent one (MPI_Iallgather, MPI_Allgather_init).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithm: allgather within one node that learns its way at run time
 *   (the built-in tuning's topo_pipeline, one node, >= 512 KiB in all)
 *
 * Ways, m bytes per process, p processes, bandwidth b of one copy:
 *   ring (MPICH):  p-1 steps, each a shared-memory message of m bytes
 *                  (CH4 copies it once, or twice through its cells):
 *                  (p-1).(alpha + m/b)
 *   segment:       every process copies m in and p.m out, pipelined in
 *                  slots (topo_allgather_pipeline.c): (m + p.m)/b, the
 *                  copy out overlapping the others' copies in
 *   CMA (direct):  every process reads (p-1).m from the others' buffers
 *                  with process_vm_readv: (p-1).m/b', b' the kernel's
 *                  copy, with page pinning per call
 * The model cannot order them: b and b' differ by processor, cache sizes
 * and kernel (the segment wins by 1.0-1.4x on one 2-core VM and loses by
 * as much on another, bench/results/dev-2core-xeon-allgather), so the
 * first calls measure them (topo_learn.c).
 *
 * Each size class runs the ways in turn, each first for its warm-up
 * (allgather_warm: the ring until the shared cells have all been used)
 * and then TRIALS timed calls, and keeps the one the processes agree on
 * (topo_learn.c).  Cost: the warm-ups' and trials' calls run the slower
 * ways (at most 32 + 2 + 1 + 3.TRIALS calls per size class, the ring's 32
 * only where p.m is small), plus one allreduce of 3 doubles. */

/* the built-in tuning's threshold for large one-node allgathers
 * (maint/patches/0017-tuning-select-mpir-json.patch) */
#define MPIDI_TOPO_AG_LEARN_MIN 524288

static const char *const way_name[MPIDI_TOPO_AG_WAYS] = { "ring", "segment", "cma" };

/* Whether an allgather of total bytes in all learns its way (topo_pipeline
 * within one node, chosen by the built-in tuning, from 512 KiB in all) */
static int allgather_learns(MPIDI_Topo_engine_t * e, MPIDI_Topo_leader_step_t leader_step,
                            MPI_Aint total)
{
    /* Not in a nonblocking or persistent call: the ring trial and the
     * agreement are MPICH's blocking algorithms on comm, with fixed tags,
     * which would match the messages of a blocking collective that the
     * user makes on comm while this call is pending.  (The user's choice
     * last: small calls skip its look-up.) */
    return total >= MPIDI_TOPO_AG_LEARN_MIN && e->nnodes == 1 && !MPIR_Topo_nb_current &&
        leader_step == MPIDI_TOPO_LEADERS_RING && MPIR_CVAR_TOPO_ALLGATHER_TRIALS > 0 &&
        !MPIR_Topo_user_chose("MPIR_Allgather_intra_topo_pipeline");
}

/* The untimed calls each way needs before it runs as it will for ever.
 * MPICH's ring sends through the POSIX shared cells, used in turn: until
 * every cell has carried a message, its pages are new to the receiver (and
 * cold), and the ring's calls took 3-4x their later time (256 KiB on 2
 * processes: 65-90 us, then 23, even with the cells faulted in at
 * MPI_Init by maint/patches/0048).  So the ring warms for one pass over
 * the cells, each call sending p-1 messages of m bytes, at most 32 calls.
 * The segment's first calls touch its slots' pages (one slot per round);
 * CMA's first call, the other processes' buffers. */
static void allgather_warm(int *warm, int p, MPI_Aint m)
{
    MPI_Aint cells = (MPI_Aint) MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS *
        MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE;
    MPI_Aint sent = (MPI_Aint) (p - 1) * m;

    warm[MPIDI_TOPO_AG_RING] = 1 + (int) MPL_MIN(31, (cells + sent - 1) / sent);
    warm[MPIDI_TOPO_AG_SEGMENT] = MPIDI_TOPO_NSLOTS;
    warm[MPIDI_TOPO_AG_DIRECT] = 1;
}

/* The call that learns (or has learned) its way */
static int allgather_learned(MPIDI_Topo_engine_t * e, const void *sendbuf, MPI_Aint sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                             MPI_Datatype recvtype, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, agree_errno;
    MPIDI_Topo_learn_info_t li = {
        "allgather", way_name, e->cma ? MPIDI_TOPO_AG_WAYS : MPIDI_TOPO_AG_DIRECT,
        MPIR_CVAR_TOPO_ALLGATHER_TRIALS, MPIDI_TOPO_AG_SEGMENT, 1, {0}
    };                          /* (CMA is the last way) */
    MPI_Aint tsize, m;
    MPIDI_Topo_learn_t *l;
    MPIDI_Topo_ag_way_t way;
    MPL_time_t t0, t1;
    double dt;

    MPIR_Datatype_get_size_macro(recvtype, tsize);
    m = recvcount * tsize;
    l = MPIDI_Topo_learn_class(e->ag_learn, m);
    /* (from the class's smallest size, not m: every call of the class
     * must see the same schedule, whatever its own size) */
    if (!l->chosen)
        allgather_warm(li.warm, comm->local_size, (MPI_Aint) 1 << (l - e->ag_learn));
    way = MPIDI_Topo_learn_way(l, &li);

    if (!l->chosen)
        MPL_wtime(&t0);
    if (way == MPIDI_TOPO_AG_RING) {
        MPIR_COLL_TRACE_REDIRECT(comm, "allgather", "topo_pipeline", "ring",
                                 l->chosen ? "learned" : "trial", recvcount, recvtype);
        mpi_errno = MPIR_Allgather_intra_ring(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, comm, errflag);
    } else {
        mpi_errno = MPIDI_Topo_allgather_way(e, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm, MPIDI_TOPO_LEADERS_RING, way,
                                             errflag);
    }
    if (l->chosen)
        return mpi_errno;

    MPL_wtime(&t1);
    MPL_wtime_diff(&t0, &t1, &dt);
    agree_errno = MPIDI_Topo_learn_trial(l, &li, way, mpi_errno ? 0.0 : dt, m, comm, errflag);
    if (mpi_errno == MPI_SUCCESS)
        mpi_errno = agree_errno;
    return mpi_errno;
}

/* The engine's allgather: the leaders' exchange across nodes by the cost
 * model, then the learned way (built-in tuning, one node, large) or the
 * way the CVARs give.  The learner calls the ways
 * (topo_allgather_pipeline.c); the ways do not know the learner. */
int MPIDI_Topo_allgather(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                         MPIR_Comm * comm, MPIDI_Topo_leader_step_t leader_step,
                         const char **why_not, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e;
    MPI_Aint tsize, m;
    int p = comm->local_size;

    *why_not = NULL;
    MPIR_Datatype_get_size_macro(recvtype, tsize);
    m = recvcount * tsize;
    if (m == 0)
        return MPI_SUCCESS;
    if (p == 1) {
        if (sendbuf != MPI_IN_PLACE)
            mpi_errno = MPIR_Localcopy(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
        return mpi_errno;
    }

    MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag);
    if (leader_step == MPIDI_TOPO_LEADERS_RING && e->nnodes > 1 && !e->one_per_node) {
        double ring, logstep;
        leader_step = MPIDI_Topo_allgather_leaders(e, p, m, &ring, &logstep);
    }
    if (allgather_learns(e, leader_step, p * m))
        mpi_errno = allgather_learned(e, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm, errflag);
    else
        mpi_errno = MPIDI_Topo_allgather_way(e, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm, leader_step, MPIDI_TOPO_AG_BY_CVAR,
                                             errflag);
    /* (returned as is: a frame more would push the cause, at the bottom of
     * the stack, out of MPI_MAX_ERROR_STRING) */

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
