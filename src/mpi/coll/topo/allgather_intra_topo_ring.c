/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"

/* Algorithm: distance-aware ring (Ma et al., Algorithm 2)
 *
 * The ring allgather of MPIR_Allgather_intra_ring, but the ring follows the
 * distance-aware order built by the topology module instead of rank order:
 * neighbours share a cache or a NUMA node wherever the placement allows, and
 * only the few edges that join clusters cross a slower link (socket
 * interconnect, node boundary). With ranks placed round-robin over sockets or
 * nodes, the rank-order ring crosses the slow link on every edge.
 *
 * Each process i forwards, at step s, the block that originated s-1 ring
 * positions to its left. Blocks land at their rank's offset in recvbuf.
 *
 * Cost = (p-1).alpha + n.((p-1)/p).beta, with the beta of the slowest
 * link used by the ring, which is what the ordering improves.
 *
 * Its MPIR entry, MPIR_Allgather_intra_topo_ring, is in topo_entry.c.
 */
int MPIR_Topo_allgather_ring(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                             MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    int mpi_errno_ret = MPI_SUCCESS;
    int p, rank, pos, left, right;
    MPI_Aint extent;
    MPIR_Topo_comm_t *topo;

    p = comm_ptr->local_size;
    rank = comm_ptr->rank;
    MPIR_Datatype_get_extent_macro(recvtype, extent);

    if (sendbuf != MPI_IN_PLACE) {
        mpi_errno = MPIR_Localcopy(sendbuf, sendcount, sendtype,
                                   (char *) recvbuf + rank * recvcount * extent, recvcount,
                                   recvtype);
        MPIR_ERR_CHECK(mpi_errno);
    }
    if (p == 1 || recvcount == 0)
        goto fn_exit;

    mpi_errno = MPIR_Topo_comm_get(comm_ptr, &topo, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Topo_comm_get_ring(comm_ptr, topo);
    MPIR_ERR_CHECK(mpi_errno);

    pos = topo->ring_pos[rank];
    right = topo->ring[(pos + 1) % p];
    left = topo->ring[(pos + p - 1) % p];

    for (int s = 1; s < p; s++) {
        int sblock = topo->ring[(pos - s + 1 + p) % p];
        int rblock = topo->ring[(pos - s + p) % p];
        mpi_errno = MPIC_Sendrecv((char *) recvbuf + sblock * recvcount * extent, recvcount,
                                  recvtype, right, MPIR_ALLGATHER_TAG,
                                  (char *) recvbuf + rblock * recvcount * extent, recvcount,
                                  recvtype, left, MPIR_ALLGATHER_TAG, comm_ptr,
                                  MPI_STATUS_IGNORE, errflag);
        /* communication errors are recorded and the ring goes on */
        MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
    }

  fn_exit:
    return MPIR_Topo_coll_result(mpi_errno, mpi_errno_ret, *errflag);
  fn_fail:
    goto fn_exit;
}
