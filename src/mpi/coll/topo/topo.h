/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_H_INCLUDED
#define TOPO_H_INCLUDED

#include "topo_logic.h"
#include "csel_topo.h"
#include "tsp_impl.h"

/* Per-communicator topology state, built on first use by a topology-aware
 * algorithm and freed with the communicator (MPII_Coll_comm_cleanup). */
typedef struct MPIR_Topo_comm {
    MPIR_Topo_map_t *map;       /* distances and clusters of all members */
    int *ring;                  /* distance-aware ring order, built on first use */
    int *ring_pos;              /* ring_pos[rank] = position of rank in ring */
    /* this process' place in the bcast tree of the last root asked for:
     * applications mostly broadcast from the same root again */
    int tree_root;              /* -1: none cached yet */
    int tree_parent;
    int tree_nchildren;
    int *tree_children;
    int *tree_child_forwards;   /* per child: it has children of its own */
    MPIR_Topo_loc_t *locs;      /* every member's location */
    MPIR_Topo_layout_t *layout; /* leaders and node-major order, built on first use */
    /* The shared-memory engine (src/mpid/ch4/shm/topo) keeps its state here
     * and frees it with the communicator. */
    void *engine;
    void (*engine_free) (void *engine);
    /* > 0: the topology-aware algorithms step aside for a stock one here,
     * since the engine's own collectives must not re-enter it.  1 for life
     * on the communicators the engine creates for itself, and raised while
     * the engine sets itself up on this one. */
    int step_aside;
    /* nonblocking and persistent calls started and not yet finished, in
     * start order (topo_nb.c) */
    struct MPIR_Topo_nb *nb_queue, *nb_last;
    /* the stack they run on, one at a time (MPIR_Topo_nb_stack_reserve) */
    struct MPIR_Topo_nb_stack *nb_stack;
    /* where every member asserts mpi_assert_strict_persistent_collective_ordering:
     * the communicator its persistent calls share (topo_entry.c) */
    struct MPIR_Comm *persist_comm;
    /* > 0: what the engine's slots need hold at most here, a persistent
     * request's own communicator (its segment is its alone) */
    MPI_Aint slot_need;
    /* values of the selection's topology predicates (csel_topo.c) */
    MPIR_Csel_topo_facts_t csel;
} MPIR_Topo_comm_t;

/* The contiguous copy (n bytes) that a call stages a non-contiguous
 * datatype through, or NULL (also where MPIR_CVAR_TOPO_DEBUG_STAGING_NOMEM
 * says so).  A process that gets NULL takes part in the call without data,
 * so that no process waits for it, and the call fails. */
void *MPIR_Topo_staging_alloc(MPI_Aint n);
/* Such a process' own error (MPI_ERR_NO_MEM); its sends from then on carry
 * the error bit (errflag). */
int MPIR_Topo_staging_failed(MPI_Aint n, MPIR_Errflag_t * errflag);
/* Scratch of n bytes that such a process receives its messages into, their
 * contents dropped: a message must be taken in whole (a truncated receive
 * breaks libfabric's tcp connections).  Without even that much memory the
 * process cannot take part: the job ends (MPID_Abort) rather than hang. */
void *MPIR_Topo_sink_alloc(MPIR_Comm * comm, MPI_Aint n);
/* Collective: what failed on one process alone (failed != 0, an
 * allocation) is learnt by all; returns MPI_ERR_NO_MEM on a process that
 * failed, an error naming a peer on the others, MPI_SUCCESS when none did. */
int MPIR_Topo_agree(MPIR_Comm * comm, int failed, MPIR_Errflag_t * errflag);
/* The same, and each of values[0..n) becomes the members' largest, in
 * the same allreduce (set wherever it succeeded, errors or not) */
#define MPIR_TOPO_AGREE_MAX 4
int MPIR_Topo_agree_max(MPIR_Comm * comm, int failed, int *values, int n,
                        MPIR_Errflag_t * errflag);
/* What a blocking algorithm returns: its own errors (mpi_errno_ret, as
 * MPIR_ERR_COLL_CHECKANDCONT gathers them), else a failure elsewhere in the
 * call (errflag, from a message marked failed), else mpi_errno. */
int MPIR_Topo_coll_result(int mpi_errno, int mpi_errno_ret, MPIR_Errflag_t errflag);
/* Collective over comm the first time (allgathers the members' locations),
 * local afterwards. */
int MPIR_Topo_comm_get(MPIR_Comm * comm, MPIR_Topo_comm_t ** topo, MPIR_Errflag_t * errflag);
/* Local: the comm's topo struct without building the map (NULL-safe for
 * marking the engine's own communicators). */
MPIR_Topo_comm_t *MPIR_Topo_comm_struct(MPIR_Comm * comm);
/* True when an engine algorithm must step aside for a stock one on comm:
 * the engine's own communicators and one it is setting itself up on (see
 * MPIR_Topo_comm_t.step_aside), and MPICH's node sub-communicators, on
 * which CH4 compositions run their parts (a barrier's node bcast, say):
 * an engine there would be a second, nested one.  Also during MPI_Init:
 * the netmod's post-init allreduce on MPI_COMM_WORLD runs before CH4 has
 * set up that communicator's selection, which the engine's splits need.
 * And on a communicator still being committed (MPIR_Comm_commit bcasts its
 * seq, still 0, through the selection): the engine's own splits would
 * commit another one, and so on.  (Tainted communicators, from
 * MPI_Intercomm_merge, get no seq and no such bcast.) */
#define MPIR_TOPO_STEP_ASIDE(comm) \
    (MPL_atomic_load_int(&MPIR_Process.mpich_state) != MPICH_MPI_STATE__INITIALIZED || \
     (!HANDLE_IS_BUILTIN((comm)->handle) && !(comm)->tainted && (comm)->seq == 0) || \
     (comm)->hierarchy_kind == MPIR_COMM_HIERARCHY_KIND__NODE ||            \
     (comm)->hierarchy_kind == MPIR_COMM_HIERARCHY_KIND__NODE_ROOTS ||      \
     ((comm)->topo && (comm)->topo->step_aside > 0))
/* Local after MPIR_Topo_comm_get: the leader layout for k_request leaders
 * per node (0 = automatic); built on the first call, kept afterwards. */
int MPIR_Topo_comm_get_layout(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, int k_request);
int MPIR_Topo_comm_get_ring(MPIR_Comm * comm, MPIR_Topo_comm_t * topo);
/* Local: sets topo->tree_parent/tree_nchildren/tree_children (and
 * tree_child_forwards) for root. */
int MPIR_Topo_comm_get_tree(MPIR_Comm * comm, MPIR_Topo_comm_t * topo, int root);

/* This process' own location (node id from MPICH's node map, so cliques are
 * honoured; the rest from hwloc and the process binding). */
void MPIR_Topo_get_my_loc(MPIR_Comm * comm, MPIR_Topo_loc_t * loc);

/* Replaces each integer mpich-topo CVAR outside its range by its default,
 * saying so on stderr (once, when the first communicator is committed) */
void MPIR_Topo_cvars_check(void);

/* Handles an algorithm that cannot run with these arguments, as
 * MPIR_CVAR_COLLECTIVE_FALLBACK says: returns an error naming the algorithm
 * and the reason (error), or prints that and returns MPI_SUCCESS so the
 * caller falls back (print), or just returns MPI_SUCCESS (silent). */
int MPIR_Topo_cannot_run(MPIR_Comm * comm, const char *algo, const char *reason);

/* Nonblocking and persistent calls that run a blocking algorithm as a
 * coroutine (topo_nb.c). */
typedef struct MPIR_Topo_nb MPIR_Topo_nb_t;
/* the algorithm: runs on the call's own stack; errflag as for a blocking
 * collective */
typedef int (*MPIR_Topo_nb_body_fn) (void *arg, MPIR_Errflag_t * errflag);
/* A call to be: a persistent one takes its stack here, before its members
 * agree that the call may run (so that a mapping that fails on one process
 * is agreed on); NULL where memory ran out.  Local. */
MPIR_Topo_nb_t *MPIR_Topo_nb_new(int persistent);
/* one that will not be scheduled after all */
void MPIR_Topo_nb_discard(MPIR_Topo_nb_t * op);
/* Adds to sched a vertex that runs op, body(arg), after the calls started
 * before it on comm.  op and arg are the schedule's from here on:
 * arg_free(arg) when the schedule is freed (also on error).  Local. */
int MPIR_Topo_nb_sched(MPIR_Topo_nb_t * op, MPIR_Comm * comm, MPIR_Topo_nb_body_fn body,
                       void *arg, void (*arg_free) (void *arg), MPIR_TSP_sched_t sched);
/* Maps the stack that the nonblocking calls on topo's communicator share
 * (once; where the engine sets itself up, which agrees on a failure);
 * nonzero where the mapping failed.  Released with the communicator. */
int MPIR_Topo_nb_stack_reserve(MPIR_Topo_comm_t * topo);
void MPIR_Topo_nb_stack_release(MPIR_Topo_comm_t * topo);
/* Before a blocking call that uses what the queued calls use: runs them to
 * completion (outside a coroutine; a no-op inside one). */
int MPIR_Topo_nb_drain(MPIR_Comm * comm);
/* NULL, or why coroutines cannot be used in this process */
const char *MPIR_Topo_nb_usable(void);
/* why, where some member of a communicator cannot use them (agreed) */
const char *MPIR_Topo_nb_why_not_some(void);
/* The csel predicate topo_engine=yes: nonzero when the engine is set up on
 * comm and can run its nonblocking calls there.  With setup (a persistent
 * init, which may communicate: collective over comm) the engine is set up
 * first; a setup that fails answers 0 on every member. */
int MPIR_Topo_engine_ready(MPIR_Comm * comm, int setup);
/* Did the user choose algo, an MPIR function name or its prefix
 * ("MPIR_Iallreduce_"), by its collective's _INTRA_ALGORITHM CVAR or an
 * MPIR tuning file, rather than MPICH's built-in tuning? */
int MPIR_Topo_user_chose(const char *algo);
/* Counts a call on comm that would have run the engine if it were set up,
 * as weight small calls (comm->topo_calls, MPIR_CVAR_TOPO_SETUP_CALLS).
 * Local. */
void MPIR_Topo_count_call(MPIR_Comm * comm, MPI_Aint weight);
/* The coroutine running now (NULL outside one), and how it waits: it
 * switches back to the progress poll that resumed it. */
extern MPIR_Topo_nb_t *MPIR_Topo_nb_current;
void MPIR_Topo_nb_yield(void);

/* The algorithms that run without the engine; their MPIR entries
 * (MPIR_Allgather_intra_topo_ring, MPIR_Bcast_intra_topo_tree) are in
 * topo_entry.c. */
int MPIR_Topo_allgather_ring(const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                             MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);
int MPIR_Topo_bcast_tree(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                         MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);
/* topo_tree's pipeline on any tree of comm's processes (parent -1 at the
 * root; forwards[c]: child c has children of its own, read at the root),
 * in chunks of chunk bytes (0: whole); any datatype */
int MPIR_Topo_bcast_pipelined(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                              MPIR_Comm * comm_ptr, int parent, const int *children,
                              const int *forwards, int nchildren, MPI_Aint chunk,
                              MPIR_Errflag_t * errflag);

/* A reduction's buffers as packed elements of the datatype's one
 * predefined type (topo_basic.c): type is MPI_DATATYPE_NULL when the
 * datatype mixes several.  Views of the user's buffers where its bytes are
 * already packed, else one temporary (sendbuf MPI_IN_PLACE, recvbuf the
 * temporary when has_result; sendbuf the temporary otherwise). */
typedef struct {
    MPI_Datatype type;
    MPI_Aint count;
    const void *sendbuf;
    void *recvbuf;
    /* for MPIR_Topo_basic_finish */
    void *tmp;
    void *user_recvbuf;
    MPI_Aint user_count;
    MPI_Datatype user_type;
    int has_result;
    /* the temporary could not be allocated (MPIR_Topo_staging_alloc):
     * sendbuf and recvbuf are NULL, and the call must still take part */
    int staging_failed;
} MPIR_Topo_basic_t;

/* The predefined type a datatype is made of, pair types (MPI_DOUBLE_INT,
 * ...) included; MPI_DATATYPE_NULL when it mixes several. */
MPI_Datatype MPIR_Topo_element_type(MPI_Datatype dt);
int MPIR_Topo_basic_start(const void *sendbuf, void *recvbuf, MPI_Aint count,
                          MPI_Datatype datatype, int has_result, MPIR_Topo_basic_t * b);
/* Copies the result back (unless mpi_errno says the call failed) and frees;
 * returns the first error. */
int MPIR_Topo_basic_finish(MPIR_Topo_basic_t * b, int mpi_errno);

/* MPIR_Reduce_local, in vectors (topo_op.c) for the predefined operations
 * and types that have them (MPIR_CVAR_TOPO_VECTOR_OPS) */
int MPIR_Topo_reduce_local(const void *inbuf, void *inoutbuf, MPI_Aint count,
                           MPI_Datatype datatype, MPI_Op op);

typedef int (*MPIR_Topo_reduce_fn) (const void *sendbuf, void *recvbuf, MPI_Aint count,
                                    MPI_Datatype datatype, MPI_Op op, int root,
                                    MPIR_Comm * comm, MPIR_Errflag_t * errflag);
typedef int (*MPIR_Topo_allreduce_fn) (const void *sendbuf, void *recvbuf, MPI_Aint count,
                                       MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                       MPIR_Errflag_t * errflag);
/* Run fn on the packed elements of a derived datatype (for MPICH's POSIX
 * release_gather, patch 0012). */
int MPIR_Topo_reduce_as_basic(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                              MPIR_Errflag_t * errflag, MPIR_Topo_reduce_fn fn);
int MPIR_Topo_allreduce_as_basic(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                 MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                 MPIR_Errflag_t * errflag, MPIR_Topo_allreduce_fn fn);

#endif /* TOPO_H_INCLUDED */
