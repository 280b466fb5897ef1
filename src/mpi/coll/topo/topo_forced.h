/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_FORCED_H_INCLUDED
#define TOPO_FORCED_H_INCLUDED

/* True when the user forced a topology-aware bcast with
 * MPIR_CVAR_BCAST_INTRA_ALGORITHM. CH4's MPID_Bcast then hands the call to
 * MPIR_Bcast_impl on the user's communicator instead of running a CH4
 * composition, which would apply the CVAR to the node sub-communicators. */
#define MPIR_TOPO_BCAST_FORCED(comm)                                    \
    ((comm)->comm_kind == MPIR_COMM_KIND__INTRACOMM &&                  \
     MPIR_CVAR_BCAST_INTRA_ALGORITHM == MPIR_CVAR_BCAST_INTRA_ALGORITHM_topo_tree)

#endif /* TOPO_FORCED_H_INCLUDED */
