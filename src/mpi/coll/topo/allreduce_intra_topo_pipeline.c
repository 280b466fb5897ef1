/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo.h"
#include "topo_engine_api.h"

/* Algorithm: parallel shared-memory allreduce with leaders, pipelined.  The
 * work is done by the shared-memory engine
 * (src/mpid/ch4/shm/topo/topo_allreduce_pipeline.c); this is its MPIR entry
 * point, which falls back to a stock algorithm where the engine cannot run
 * (user-defined operations among others). */
int MPIR_Allreduce_intra_topo_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                       MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                       MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL;

    if (comm_ptr->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Allreduce_intra_topo_pipeline",
                                         "the communicator is an intercommunicator");
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "allreduce", "topo_pipeline",
                                 "reduce_exchange_bcast", "fallback", count, datatype);
        return MPIR_Allreduce_inter_reduce_exchange_bcast(sendbuf, recvbuf, count, datatype, op,
                                                          comm_ptr, errflag);
    }
    if (MPIR_TOPO_STEP_ASIDE(comm_ptr))
        goto fallback;

#ifdef MPIR_TOPO_HAVE_ENGINE
    mpi_errno = MPIDI_Topo_allreduce_pipeline(sendbuf, recvbuf, count, datatype, op, comm_ptr,
                                              &why_not, errflag);
    if (mpi_errno || why_not == NULL)
        goto fn_exit;
#else
    why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
#endif
    mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Allreduce_intra_topo_pipeline", why_not);
    MPIR_ERR_CHECK(mpi_errno);

  fallback:
    /* why_not is NULL when stepping aside */
    MPIR_COLL_TRACE_REDIRECT(comm_ptr, "allreduce", "topo_pipeline", "recursive_doubling",
                             why_not ? "fallback" : "inside", count, datatype);
    mpi_errno = MPIR_Allreduce_intra_recursive_doubling(sendbuf, recvbuf, count, datatype, op,
                                                        comm_ptr, errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
