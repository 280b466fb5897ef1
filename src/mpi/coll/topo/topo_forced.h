/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_FORCED_H_INCLUDED
#define TOPO_FORCED_H_INCLUDED

/* True when the user forced a topology-aware barrier/bcast/reduce/allreduce
 * with MPIR_CVAR_<COLL>_INTRA_ALGORITHM.  CH4's MPID_Barrier/_Bcast/_Reduce/
 * _Allreduce then hand the call to MPIR_<Coll>_impl on the user's
 * communicator instead of running a CH4 composition, which would apply the
 * CVAR to the node sub-communicators.  (Allgather needs no such hook: its CH4 composition
 * already runs the MPIR selection on the whole communicator.) */
#define MPIR_TOPO_BARRIER_FORCED(comm)                                          \
    ((comm)->comm_kind == MPIR_COMM_KIND__INTRACOMM &&                          \
     MPIR_CVAR_BARRIER_INTRA_ALGORITHM == MPIR_CVAR_BARRIER_INTRA_ALGORITHM_topo_flags)

#define MPIR_TOPO_BCAST_FORCED(comm)                                            \
    ((comm)->comm_kind == MPIR_COMM_KIND__INTRACOMM &&                          \
     (MPIR_CVAR_BCAST_INTRA_ALGORITHM == MPIR_CVAR_BCAST_INTRA_ALGORITHM_topo_tree ||     \
      MPIR_CVAR_BCAST_INTRA_ALGORITHM == MPIR_CVAR_BCAST_INTRA_ALGORITHM_topo_pipeline))

#define MPIR_TOPO_REDUCE_FORCED(comm)                                           \
    ((comm)->comm_kind == MPIR_COMM_KIND__INTRACOMM &&                          \
     MPIR_CVAR_REDUCE_INTRA_ALGORITHM == MPIR_CVAR_REDUCE_INTRA_ALGORITHM_topo_pipeline)

#define MPIR_TOPO_ALLREDUCE_FORCED(comm)                                        \
    ((comm)->comm_kind == MPIR_COMM_KIND__INTRACOMM &&                          \
     MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM == MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM_topo_pipeline)

#endif /* TOPO_FORCED_H_INCLUDED */
