/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo.h"
#include "topo_engine_api.h"

/* Algorithm: leader-based pipelined bcast.  The work is done by the
 * shared-memory engine (src/mpid/ch4/shm/topo/topo_bcast_pipeline.c); this
 * is its MPIR entry point, which falls back to a stock algorithm where the
 * engine cannot run. */
int MPIR_Bcast_intra_topo_pipeline(void *buffer, MPI_Aint count, MPI_Datatype datatype,
                                   int root, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL;

    if (comm_ptr->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Bcast_intra_topo_pipeline",
                                         "the communicator is an intercommunicator");
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "bcast", "topo_pipeline", "remote_send_local_bcast",
                                 "fallback", count, datatype);
        return MPIR_Bcast_inter_remote_send_local_bcast(buffer, count, datatype, root, comm_ptr,
                                                        errflag);
    }
    if (MPIR_TOPO_STEP_ASIDE(comm_ptr))
        goto fallback;

#ifdef MPIR_TOPO_HAVE_ENGINE
    {
        /* GPU memory never reaches the engine's memcpy or CMA reads: it is
         * staged through host memory (NULL for host memory), so that every
         * process runs the engine whatever its buffer */
        void *host = MPIR_gpu_host_swap(buffer, count, datatype);

        mpi_errno = MPIDI_Topo_bcast_pipeline(host ? host : buffer, count, datatype, root,
                                              comm_ptr, &why_not, errflag);
        if (host && mpi_errno == MPI_SUCCESS && why_not == NULL)
            MPIR_gpu_swap_back(host, buffer, count, datatype);
        else if (host)
            MPIR_gpu_host_free(host, count, datatype);
    }
    if (mpi_errno || why_not == NULL)
        goto fn_exit;
#else
    why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
#endif
    mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Bcast_intra_topo_pipeline", why_not);
    MPIR_ERR_CHECK(mpi_errno);

  fallback:
    /* why_not is NULL when stepping aside */
    MPIR_COLL_TRACE_REDIRECT(comm_ptr, "bcast", "topo_pipeline", "binomial",
                             why_not ? "fallback" : "inside", count, datatype);
    mpi_errno = MPIR_Bcast_intra_binomial(buffer, count, datatype, root, comm_ptr, errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
