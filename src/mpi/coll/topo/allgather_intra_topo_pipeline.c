/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo.h"
#include "topo_engine_api.h"

/* MPIR entry of both engine allgathers (topo_pipeline, topo_multileader):
 * the work is done by the shared-memory engine (src/mpid/ch4/shm/topo,
 * topo_allgather_pipeline.c); this handles intercommunicators and falls
 * back to a stock algorithm where the engine cannot run. */
int MPIR_Topo_allgather_entry(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                              MPIR_Comm * comm_ptr, int multileader, const char *name,
                              MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL;
    const char *me = multileader ? "topo_multileader" : "topo_pipeline";   /* for the trace */
    MPI_Aint tsize;

    if (comm_ptr->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        mpi_errno = MPIR_Topo_cannot_run(comm_ptr, name,
                                         "the communicator is an intercommunicator");
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "allgather", me, "local_gather_remote_bcast",
                                 "fallback", recvcount, recvtype);
        return MPIR_Allgather_inter_local_gather_remote_bcast(sendbuf, sendcount, sendtype,
                                                              recvbuf, recvcount, recvtype,
                                                              comm_ptr, errflag);
    }
    /* the engine's own communicators, and this one while the engine sets
     * itself up on it, use a stock algorithm */
    if (MPIR_TOPO_STEP_ASIDE(comm_ptr))
        goto fallback;

#ifdef MPIR_TOPO_HAVE_ENGINE
    {
        /* GPU memory is staged through host memory, as in bcast */
        MPI_Aint rcount = recvcount * comm_ptr->local_size;
        void *hsend = sendbuf == MPI_IN_PLACE ? NULL :
            MPIR_gpu_host_swap(sendbuf, sendcount, sendtype);
        void *hrecv = sendbuf == MPI_IN_PLACE ? MPIR_gpu_host_swap(recvbuf, rcount, recvtype) :
            MPIR_gpu_host_alloc(recvbuf, rcount, recvtype);

        mpi_errno = MPIDI_Topo_allgather(hsend ? hsend : sendbuf, sendcount, sendtype,
                                         hrecv ? hrecv : recvbuf, recvcount, recvtype, comm_ptr,
                                         multileader, &why_not, errflag);
        if (hsend)
            MPIR_gpu_host_free(hsend, sendcount, sendtype);
        if (hrecv && mpi_errno == MPI_SUCCESS && why_not == NULL)
            MPIR_gpu_swap_back(hrecv, recvbuf, rcount, recvtype);
        else if (hrecv)
            MPIR_gpu_host_free(hrecv, rcount, recvtype);
    }
    if (mpi_errno || why_not == NULL)
        goto fn_exit;
#else
    why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
#endif
    mpi_errno = MPIR_Topo_cannot_run(comm_ptr, name, why_not);
    MPIR_ERR_CHECK(mpi_errno);

  fallback:
    MPIR_Datatype_get_size_macro(recvtype, tsize);
    /* why_not is NULL when stepping aside */
    if (recvcount * tsize * comm_ptr->local_size < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE) {
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "allgather", me, "brucks",
                                 why_not ? "fallback" : "inside", recvcount, recvtype);
        mpi_errno = MPIR_Allgather_intra_brucks(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                                recvtype, comm_ptr, errflag);
    } else {
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "allgather", me, "ring",
                                 why_not ? "fallback" : "inside", recvcount, recvtype);
        mpi_errno = MPIR_Allgather_intra_ring(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, comm_ptr, errflag);
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Algorithm: leader-based allgather, pipelined: node segment or CMA, ring
 * among leaders overlapped with copy-out. */
int MPIR_Allgather_intra_topo_pipeline(const void *sendbuf, MPI_Aint sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                       MPI_Datatype recvtype, MPIR_Comm * comm_ptr,
                                       MPIR_Errflag_t * errflag)
{
    return MPIR_Topo_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm_ptr, 0, "MPIR_Allgather_intra_topo_pipeline", errflag);
}
