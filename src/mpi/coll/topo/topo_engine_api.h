/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_ENGINE_API_H_INCLUDED
#define TOPO_ENGINE_API_H_INCLUDED

/* Entry points of the shared-memory + network engine
 * (src/mpid/ch4/shm/topo), built only with CH4 shared memory, which then
 * defines MPIR_TOPO_HAVE_ENGINE.  Each sets *why_not (and returns
 * MPI_SUCCESS without communicating) when it cannot run with these
 * arguments; the reason is the same on every member of comm. */
int MPIDI_Topo_bcast_pipeline(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                              MPIR_Comm * comm, const char **why_not, MPIR_Errflag_t * errflag);
/* how allgather's leaders exchange their nodes' data: the pipelined ring
 * (topo_pipeline) or one allgatherv after the aggregation (topo_multileader:
 * log-step below MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE, as MPICH; LOGSTEP:
 * log-step at every size, what topo_pipeline's cost model chose) */
typedef enum {
    MPIDI_TOPO_LEADERS_RING,
    MPIDI_TOPO_LEADERS_ALLGATHERV,
    MPIDI_TOPO_LEADERS_LOGSTEP
} MPIDI_Topo_leader_step_t;
/* (topo_pipeline chosen by the built-in tuning may, within one node, pick
 * its way from what its first calls of each size took:
 * MPIR_CVAR_TOPO_ALLGATHER_TRIALS) */
int MPIDI_Topo_allgather(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                         MPIR_Comm * comm, MPIDI_Topo_leader_step_t leader_step,
                         const char **why_not, MPIR_Errflag_t * errflag);
int MPIDI_Topo_allreduce_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                  MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                  const char **why_not, MPIR_Errflag_t * errflag);
int MPIDI_Topo_reduce_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                               MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                               const char **why_not, MPIR_Errflag_t * errflag);
int MPIDI_Topo_barrier_flags(MPIR_Comm * comm, const char **why_not, MPIR_Errflag_t * errflag);

/* Whether a nonblocking or persistent call can run the engine on comm:
 * NULL, or why not (the same on every member).  setup: a persistent
 * call's init, which may communicate, sets the engine up if it is not;
 * a nonblocking call only uses one that is (0).  *mpi_errno: an error of
 * that setup. */
const char *MPIDI_Topo_engine_nb_why_not(MPIR_Comm * comm, int setup, int *mpi_errno,
                                         MPIR_Errflag_t * errflag);

#endif /* TOPO_ENGINE_API_H_INCLUDED */
