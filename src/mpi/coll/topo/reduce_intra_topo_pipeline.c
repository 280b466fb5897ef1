/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo.h"
#include "topo_engine_api.h"

/* Algorithm: parallel shared-memory reduce with leaders, pipelined: the
 * allreduce engine's rounds (src/mpid/ch4/shm/topo/topo_allreduce_pipeline.c)
 * with a reduce among the leaders towards the root's node, and only the
 * root copying out.
 *
 * Cost, per round of c bytes, N nodes of L processes, k leaders per node:
 * each process copies c in and reduces c/L across L areas ((L-1) c/L
 * reductions); the leaders reduce c/k each over the network, a binomial
 * or reduce-scatter/gather reduce on N nodes (log N alpha + c/k beta
 * at least); the root copies c out.  Rounds overlap the network step of
 * one with the local work of the next.
 *
 * This is the MPIR entry point: it falls back to a stock algorithm where
 * the engine cannot run (user-defined operations among others). */
int MPIR_Reduce_intra_topo_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                    MPI_Datatype datatype, MPI_Op op, int root,
                                    MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL;

    if (comm_ptr->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Reduce_intra_topo_pipeline",
                                         "the communicator is an intercommunicator");
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_COLL_TRACE_REDIRECT(comm_ptr, "reduce", "topo_pipeline",
                                 "local_reduce_remote_send", "fallback", count, datatype);
        return MPIR_Reduce_inter_local_reduce_remote_send(sendbuf, recvbuf, count, datatype, op,
                                                          root, comm_ptr, errflag);
    }
    /* CH4's reduce compositions pass MPI_IN_PLACE, meaning "in recvbuf",
     * also at processes other than the root (see topo_basic.c): the engine
     * and the binomial reduce take it at the root only */
    if (sendbuf == MPI_IN_PLACE && comm_ptr->rank != root)
        sendbuf = recvbuf;
    if (MPIR_TOPO_STEP_ASIDE(comm_ptr))
        goto fallback;

#ifdef MPIR_TOPO_HAVE_ENGINE
    mpi_errno = MPIDI_Topo_reduce_pipeline(sendbuf, recvbuf, count, datatype, op, root, comm_ptr,
                                           &why_not, errflag);
    if (mpi_errno || why_not == NULL)
        goto fn_exit;
#else
    why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
#endif
    mpi_errno = MPIR_Topo_cannot_run(comm_ptr, "MPIR_Reduce_intra_topo_pipeline", why_not);
    MPIR_ERR_CHECK(mpi_errno);

  fallback:
    /* why_not is NULL when stepping aside */
    MPIR_COLL_TRACE_REDIRECT(comm_ptr, "reduce", "topo_pipeline", "binomial",
                             why_not ? "fallback" : "inside", count, datatype);
    mpi_errno = MPIR_Reduce_intra_binomial(sendbuf, recvbuf, count, datatype, op, root, comm_ptr,
                                           errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
