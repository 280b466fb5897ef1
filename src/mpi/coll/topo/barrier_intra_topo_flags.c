/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo.h"
#include "topo_engine_api.h"

/* Algorithm: barrier on the node segment's counters, with the nodes'
 * first leaders meeting over the network.  The work is done by the engine
 * (src/mpid/ch4/shm/topo/topo_barrier_flags.c, where the algorithm and its
 * cost are described); this is its MPIR entry point, which falls back to
 * the dissemination barrier where the engine cannot run. */
int MPIR_Barrier_intra_topo_flags(MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL;

    if (comm_ptr->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Barrier_intra_topo_flags",
                                         "the communicator is an intercommunicator");
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "barrier", "topo_flags", "bcast", "fallback", 0,
                                 MPI_DATATYPE_NULL);
        return MPIR_Barrier_inter_bcast(comm_ptr, errflag);
    }
    if (MPIR_TOPO_STEP_ASIDE(comm_ptr))
        goto fallback;

#ifdef MPIR_TOPO_HAVE_ENGINE
    mpi_errno = MPIDI_Topo_barrier_flags(comm_ptr, &why_not, errflag);
    if (mpi_errno || why_not == NULL)
        goto fn_exit;
#else
    why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
#endif
    mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Barrier_intra_topo_flags", why_not);
    MPIR_ERR_CHECK(mpi_errno);

  fallback:
    /* why_not is NULL when stepping aside */
    MPIR_COLL_TRACE_REDIRECT(comm_ptr, "barrier", "topo_flags", "dissemination",
                             why_not ? "fallback" : "inside", 0, MPI_DATATYPE_NULL);
    mpi_errno = MPIR_Barrier_intra_dissemination(comm_ptr, errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
