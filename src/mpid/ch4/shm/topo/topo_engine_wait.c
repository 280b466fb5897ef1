/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The engine's waits and yields: a flag wait spins, polls the netmod
 * (every poll_mask + 1 spins, once it has lasted poll_after), yields the
 * core (every yield_mask + 1) and gives up as soon as the node's failure
 * word is set, so that no process waits for a member that has failed its
 * part.  Cost: nothing but the spin while the flag is already set; a
 * system call per poll on some netmods (tcp's epoll_wait), hence the
 * thresholds set here at setup. */

#include "topo_engine.h"
#include <sched.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
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

/* Setup, phase 5 (local): how often flag waits yield and poll the netmod */
void MPIDI_Topo_setup_waiting(MPIDI_Topo_engine_t * e)
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
