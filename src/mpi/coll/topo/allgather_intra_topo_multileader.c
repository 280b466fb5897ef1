/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"

/* Algorithm: leader-based allgather, Kandalla et al.: shared-memory
 * aggregation, leaders exchange with one allgatherv.  Shares its MPIR entry
 * (MPIR_Topo_allgather_entry) and the engine's round driver with
 * topo_pipeline. */
int MPIR_Allgather_intra_topo_multileader(const void *sendbuf, MPI_Aint sendcount,
                                          MPI_Datatype sendtype, void *recvbuf,
                                          MPI_Aint recvcount, MPI_Datatype recvtype,
                                          MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    return MPIR_Topo_allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                     comm_ptr, 1, "MPIR_Allgather_intra_topo_multileader",
                                     errflag);
}
