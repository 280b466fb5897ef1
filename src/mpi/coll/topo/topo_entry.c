/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo.h"
#include "csel_topo.h"
#include "topo_engine_api.h"
#include "gentran_types.h"

/* The MPIR entry of every topology-aware algorithm, the functions that
 * MPICH's selection (CVARs, csel tuning files) calls.  Each algorithm is
 * one row of one table, topo_algos[] (an MPIR_Topo_algo_t each): what
 * runs the algorithm, the stock algorithm that stands in where it cannot
 * run, and the one for intercommunicators.
 * topo_entry applies them in the same order for all:
 *  1. an intercommunicator: MPIR_CVAR_COLLECTIVE_FALLBACK decides, then the
 *     stock intercommunicator algorithm;
 *  2. engine algorithms step aside for the stock one on the engine's own
 *     communicators and where MPIR_TOPO_STEP_ASIDE says;
 *  3. the algorithm runs; where it says why it cannot (the same on every
 *     member), MPIR_CVAR_COLLECTIVE_FALLBACK decides, then the stock one.
 * The algorithms themselves live in one file each: the engine's in
 * src/mpid/ch4/shm/topo (topo_<coll>_<algo>.c), the others here
 * (<coll>_intra_<algo>.c). */

typedef struct MPIR_Topo_args {
    const void *sendbuf;
    void *recvbuf;              /* bcast: the buffer */
    MPI_Aint count;             /* allgather: recvcount; barrier: 0 */
    MPI_Datatype datatype;      /* allgather: recvtype */
    MPI_Aint sendcount;         /* allgather only */
    MPI_Datatype sendtype;      /* allgather only */
    MPI_Op op;
    int root;
    MPIR_Comm *comm;
} MPIR_Topo_args_t;

typedef int (*MPIR_Topo_run_fn) (const MPIR_Topo_args_t * a, const char **why_not,
                                 MPIR_Errflag_t * errflag);
typedef int (*MPIR_Topo_stock_fn) (const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag);

typedef struct MPIR_Topo_algo {
    const char *coll;           /* "bcast": for the trace */
    const char *name;           /* "topo_pipeline": the CVAR value */
    const char *fn;             /* the MPIR function, for errors */
    int engine;                 /* runs on the shared-memory engine */
    MPIR_Topo_run_fn run;       /* NULL: not built (no CH4 shared memory) */
    const char *(*stock_name) (const MPIR_Topo_args_t * a);
    MPIR_Topo_stock_fn stock;   /* stands in on intracommunicators */
    const char *inter_name;
    MPIR_Topo_stock_fn inter;   /* runs on intercommunicators */
} MPIR_Topo_algo_t;

enum {
    TOPO_ALLGATHER_PIPELINE,
    TOPO_ALLGATHER_MULTILEADER,
    TOPO_ALLGATHER_RING,
    TOPO_BCAST_PIPELINE,
    TOPO_BCAST_TREE,
    TOPO_ALLREDUCE_PIPELINE,
    TOPO_REDUCE_PIPELINE,
    TOPO_BARRIER_FLAGS,
};

void MPIR_Topo_count_call(MPIR_Comm * comm, MPI_Aint weight)
{
    comm->topo_calls = (int) MPL_MIN((MPI_Aint) comm->topo_calls + weight, (MPI_Aint) INT_MAX);
}

/* Whether this call of an engine algorithm on comm runs it (and sets the
 * engine up if that is not done yet), see MPIR_CVAR_TOPO_SETUP_CALLS.  Every
 * member counts the same calls and sees the same sizes, CVARs (ALL_EQ) and
 * tuning files, so all take the same decision. */
static int engine_due(const MPIR_Topo_algo_t * algo, const MPIR_Topo_args_t * a)
{
    MPIR_Comm *comm = a->comm;
    MPI_Aint tsize = 0, bytes;

    if (comm->topo && comm->topo->engine)
        return 1;
    /* what the user chose runs from its first call (as FALLBACK says
     * where it cannot); so do the nonblocking calls they chose, which
     * need a blocking call to set the engine up (a tuning file for them
     * may choose ours: which, only its tree says) */
    if (MPIR_Topo_user_chose(algo->fn) ||
        MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM == MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM_topo_pipeline
        || MPIR_CVAR_IBCAST_INTRA_ALGORITHM == MPIR_CVAR_IBCAST_INTRA_ALGORITHM_topo_pipeline ||
        MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM == MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM_topo_pipeline
        || MPIR_Csel_user_chose(MPIR_CSEL_LEVEL__MPIR, "iallgather") ||
        MPIR_Csel_user_chose(MPIR_CSEL_LEVEL__MPIR, "ibcast") ||
        MPIR_Csel_user_chose(MPIR_CSEL_LEVEL__MPIR, "iallreduce"))
        return 1;
    if (a->datatype != MPI_DATATYPE_NULL)
        MPIR_Datatype_get_size_macro(a->datatype, tsize);
    /* (allgather's count is one process's) */
    bytes = a->count * tsize * (strcmp(algo->coll, "allgather") ? 1 : comm->local_size);
    if (bytes >= MPIR_CVAR_TOPO_SETUP_BYTES)
        return 1;
    /* a call of b bytes counts as 1 + SETUP_CALLS x b / SETUP_BYTES small
     * ones (SETUP_BYTES > b here): what a call gains from the engine
     * grows with its size */
    MPIR_Topo_count_call(comm, 1 + bytes * MPL_MAX(MPIR_CVAR_TOPO_SETUP_CALLS, 0) /
                         MPIR_CVAR_TOPO_SETUP_BYTES);
    return comm->topo_calls >= MPIR_CVAR_TOPO_SETUP_CALLS;
}

static int topo_entry(const MPIR_Topo_algo_t * algo, const MPIR_Topo_args_t * a,
                      MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL, *how = "step_aside";
    MPIR_Comm *comm = a->comm;

    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM) {
        mpi_errno = MPIR_Topo_cannot_run(comm, algo->fn,
                                         "the communicator is an intercommunicator");
        MPIR_ERR_CHECK(mpi_errno);
        MPIR_COLL_TRACE_REDIRECT(comm, algo->coll, algo->name, algo->inter_name, "fallback",
                                 a->count, a->datatype);
        return algo->inter(a, errflag);
    }
    /* the engine's own communicators, and this one while the engine sets
     * itself up on it, use the stock algorithm (why_not stays NULL) */
    if (algo->engine && MPIR_TOPO_STEP_ASIDE(comm))
        goto stock;
    if (algo->engine && algo->run && !engine_due(algo, a)) {
        how = "deferred";
        goto stock;
    }

    if (algo->run) {
        mpi_errno = algo->run(a, &why_not, errflag);
        if (mpi_errno || why_not == NULL)
            goto fn_exit;
    } else {
        why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
    }
    mpi_errno = MPIR_Topo_cannot_run(comm, algo->fn, why_not);
    MPIR_ERR_CHECK(mpi_errno);

  stock:
    MPIR_COLL_TRACE_REDIRECT(comm, algo->coll, algo->name, algo->stock_name(a),
                             why_not ? "fallback" : how, a->count, a->datatype);
    mpi_errno = algo->stock(a, errflag);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

#ifdef MPIR_TOPO_HAVE_ENGINE
#define MPIR_TOPO_ENGINE_RUN(fn) fn
#else
#define MPIR_TOPO_ENGINE_RUN(fn) NULL
#endif

/* ---- allgather: topo_pipeline, topo_multileader, topo_ring ------------- */

static const char *allgather_stock_name(const MPIR_Topo_args_t * a)
{
    MPI_Aint tsize;

    MPIR_Datatype_get_size_macro(a->datatype, tsize);
    return a->count * tsize * a->comm->local_size < MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE ?
        "brucks" : "ring";
}

static int allgather_stock(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    if (allgather_stock_name(a)[0] == 'b')
        return MPIR_Allgather_intra_brucks(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                                           a->count, a->datatype, a->comm, errflag);
    return MPIR_Allgather_intra_ring(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                                     a->count, a->datatype, a->comm, errflag);
}

static int allgather_inter(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Allgather_inter_local_gather_remote_bcast(a->sendbuf, a->sendcount, a->sendtype,
                                                          a->recvbuf, a->count, a->datatype,
                                                          a->comm, errflag);
}

#ifdef MPIR_TOPO_HAVE_ENGINE
/* GPU memory never reaches the engine's memcpy or CMA reads: it is staged
 * through host memory (NULL for host memory), so that every process runs
 * the engine whatever its buffers */
static int allgather_engine(const MPIR_Topo_args_t * a, MPIDI_Topo_leader_step_t leader_step,
                            const char **why_not, MPIR_Errflag_t * errflag)
{
    int mpi_errno;
    MPI_Aint rcount = a->count * a->comm->local_size;
    void *hsend = a->sendbuf == MPI_IN_PLACE ? NULL :
        MPIR_gpu_host_swap(a->sendbuf, a->sendcount, a->sendtype);
    void *hrecv = a->sendbuf == MPI_IN_PLACE ? MPIR_gpu_host_swap(a->recvbuf, rcount, a->datatype)
        : MPIR_gpu_host_alloc(a->recvbuf, rcount, a->datatype);

    mpi_errno = MPIDI_Topo_allgather(hsend ? hsend : a->sendbuf, a->sendcount, a->sendtype,
                                     hrecv ? hrecv : a->recvbuf, a->count, a->datatype, a->comm,
                                     leader_step, why_not, errflag);
    if (hsend)
        MPIR_gpu_host_free(hsend, a->sendcount, a->sendtype);
    if (hrecv && mpi_errno == MPI_SUCCESS && *why_not == NULL)
        MPIR_gpu_swap_back(hrecv, a->recvbuf, rcount, a->datatype);
    else if (hrecv)
        MPIR_gpu_host_free(hrecv, rcount, a->datatype);
    return mpi_errno;
}

static int allgather_pipeline_run(const MPIR_Topo_args_t * a, const char **why_not,
                                  MPIR_Errflag_t * errflag)
{
    return allgather_engine(a, MPIDI_TOPO_LEADERS_RING, why_not, errflag);
}

static int allgather_multileader_run(const MPIR_Topo_args_t * a, const char **why_not,
                                     MPIR_Errflag_t * errflag)
{
    return allgather_engine(a, MPIDI_TOPO_LEADERS_ALLGATHERV, why_not, errflag);
}
#endif

static int allgather_ring_run(const MPIR_Topo_args_t * a, const char **why_not,
                              MPIR_Errflag_t * errflag)
{
    return MPIR_Topo_allgather_ring(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf,
                                    a->count, a->datatype, a->comm, errflag);
}

/* ---- bcast: topo_pipeline, topo_tree ----------------------------------- */

static const char *bcast_stock_name(const MPIR_Topo_args_t * a)
{
    return "binomial";
}

static int bcast_stock(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Bcast_intra_binomial(a->recvbuf, a->count, a->datatype, a->root, a->comm,
                                     errflag);
}

static int bcast_inter(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Bcast_inter_remote_send_local_bcast(a->recvbuf, a->count, a->datatype, a->root,
                                                    a->comm, errflag);
}

#ifdef MPIR_TOPO_HAVE_ENGINE
/* GPU memory is staged through host memory, as in allgather_engine */
static int bcast_pipeline_run(const MPIR_Topo_args_t * a, const char **why_not,
                              MPIR_Errflag_t * errflag)
{
    int mpi_errno;
    void *host = MPIR_gpu_host_swap(a->recvbuf, a->count, a->datatype);

    mpi_errno = MPIDI_Topo_bcast_pipeline(host ? host : a->recvbuf, a->count, a->datatype,
                                          a->root, a->comm, why_not, errflag);
    if (host && mpi_errno == MPI_SUCCESS && *why_not == NULL)
        MPIR_gpu_swap_back(host, a->recvbuf, a->count, a->datatype);
    else if (host)
        MPIR_gpu_host_free(host, a->count, a->datatype);
    return mpi_errno;
}
#endif

static int bcast_tree_run(const MPIR_Topo_args_t * a, const char **why_not,
                          MPIR_Errflag_t * errflag)
{
    return MPIR_Topo_bcast_tree(a->recvbuf, a->count, a->datatype, a->root, a->comm, errflag);
}

/* ---- allreduce and reduce: topo_pipeline -------------------------------- */

/* MPICH's own flat choice (its built-in tuning without node awareness):
 * reduce-scatter + allgather for calls of predefined ops above
 * MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE whose count reaches the power of two,
 * recursive doubling for the others.  (The first calls of 16-64 KiB on a
 * fresh communicator of many nodes wait for the engine here: recursive
 * doubling over every process is 3-6x slower there in SimGrid.) */
static int allreduce_stock_split(const MPIR_Topo_args_t * a)
{
    MPI_Aint tsize;

    MPIR_Datatype_get_size_macro(a->datatype, tsize);
    return a->count * tsize > MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE &&
        a->count >= a->comm->coll.pof2 && HANDLE_IS_BUILTIN(a->op);
}

static const char *allreduce_stock_name(const MPIR_Topo_args_t * a)
{
    return allreduce_stock_split(a) ? "reduce_scatter_allgather" : "recursive_doubling";
}

static int allreduce_stock(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    if (allreduce_stock_split(a))
        return MPIR_Allreduce_intra_reduce_scatter_allgather(a->sendbuf, a->recvbuf, a->count,
                                                             a->datatype, a->op, a->comm,
                                                             errflag);
    return MPIR_Allreduce_intra_recursive_doubling(a->sendbuf, a->recvbuf, a->count,
                                                   a->datatype, a->op, a->comm, errflag);
}

static int allreduce_inter(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Allreduce_inter_reduce_exchange_bcast(a->sendbuf, a->recvbuf, a->count,
                                                      a->datatype, a->op, a->comm, errflag);
}

static const char *reduce_stock_name(const MPIR_Topo_args_t * a)
{
    return "binomial";
}

static int reduce_stock(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Reduce_intra_binomial(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op,
                                      a->root, a->comm, errflag);
}

static int reduce_inter(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Reduce_inter_local_reduce_remote_send(a->sendbuf, a->recvbuf, a->count,
                                                      a->datatype, a->op, a->root, a->comm,
                                                      errflag);
}

#ifdef MPIR_TOPO_HAVE_ENGINE
static int allreduce_pipeline_run(const MPIR_Topo_args_t * a, const char **why_not,
                                  MPIR_Errflag_t * errflag)
{
    return MPIDI_Topo_allreduce_pipeline(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op,
                                         a->comm, why_not, errflag);
}

static int reduce_pipeline_run(const MPIR_Topo_args_t * a, const char **why_not,
                               MPIR_Errflag_t * errflag)
{
    return MPIDI_Topo_reduce_pipeline(a->sendbuf, a->recvbuf, a->count, a->datatype, a->op,
                                      a->root, a->comm, why_not, errflag);
}
#endif

/* ---- barrier: topo_flags ------------------------------------------------ */

static const char *barrier_stock_name(const MPIR_Topo_args_t * a)
{
    return "dissemination";
}

static int barrier_stock(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Barrier_intra_dissemination(a->comm, errflag);
}

static int barrier_inter(const MPIR_Topo_args_t * a, MPIR_Errflag_t * errflag)
{
    return MPIR_Barrier_inter_bcast(a->comm, errflag);
}

#ifdef MPIR_TOPO_HAVE_ENGINE
static int barrier_flags_run(const MPIR_Topo_args_t * a, const char **why_not,
                             MPIR_Errflag_t * errflag)
{
    return MPIDI_Topo_barrier_flags(a->comm, why_not, errflag);
}
#endif

/* ---- the table ------------------------------------------------------- */

/* coll, name, MPIR function, engine?, run, stock name, stock, inter name,
 * inter */
static const MPIR_Topo_algo_t topo_algos[] = {
    [TOPO_ALLGATHER_PIPELINE] = {
        "allgather", "topo_pipeline", "MPIR_Allgather_intra_topo_pipeline", 1,
        MPIR_TOPO_ENGINE_RUN(allgather_pipeline_run), allgather_stock_name, allgather_stock,
        "local_gather_remote_bcast", allgather_inter
    },
    [TOPO_ALLGATHER_MULTILEADER] = {
        "allgather", "topo_multileader", "MPIR_Allgather_intra_topo_multileader", 1,
        MPIR_TOPO_ENGINE_RUN(allgather_multileader_run), allgather_stock_name, allgather_stock,
        "local_gather_remote_bcast", allgather_inter
    },
    [TOPO_ALLGATHER_RING] = {
        "allgather", "topo_ring", "MPIR_Allgather_intra_topo_ring", 0,
        allgather_ring_run, allgather_stock_name, allgather_stock,
        "local_gather_remote_bcast", allgather_inter
    },
    [TOPO_BCAST_PIPELINE] = {
        "bcast", "topo_pipeline", "MPIR_Bcast_intra_topo_pipeline", 1,
        MPIR_TOPO_ENGINE_RUN(bcast_pipeline_run), bcast_stock_name, bcast_stock,
        "remote_send_local_bcast", bcast_inter
    },
    [TOPO_BCAST_TREE] = {
        "bcast", "topo_tree", "MPIR_Bcast_intra_topo_tree", 0,
        bcast_tree_run, bcast_stock_name, bcast_stock,
        "remote_send_local_bcast", bcast_inter
    },
    [TOPO_ALLREDUCE_PIPELINE] = {
        "allreduce", "topo_pipeline", "MPIR_Allreduce_intra_topo_pipeline", 1,
        MPIR_TOPO_ENGINE_RUN(allreduce_pipeline_run), allreduce_stock_name, allreduce_stock,
        "reduce_exchange_bcast", allreduce_inter
    },
    [TOPO_REDUCE_PIPELINE] = {
        "reduce", "topo_pipeline", "MPIR_Reduce_intra_topo_pipeline", 1,
        MPIR_TOPO_ENGINE_RUN(reduce_pipeline_run), reduce_stock_name, reduce_stock,
        "local_reduce_remote_send", reduce_inter
    },
    [TOPO_BARRIER_FLAGS] = {
        "barrier", "topo_flags", "MPIR_Barrier_intra_topo_flags", 1,
        MPIR_TOPO_ENGINE_RUN(barrier_flags_run), barrier_stock_name, barrier_stock,
        "bcast", barrier_inter
    },
};

/* ---- the MPIR entries -------------------------------------------------- */

static int allgather_entry(const MPIR_Topo_algo_t * algo, const void *sendbuf,
                           MPI_Aint sendcount, MPI_Datatype sendtype, void *recvbuf,
                           MPI_Aint recvcount, MPI_Datatype recvtype, MPIR_Comm * comm,
                           MPIR_Errflag_t * errflag)
{
    MPIR_Topo_args_t a = {
        .sendbuf = sendbuf,.recvbuf = recvbuf,.count = recvcount,.datatype = recvtype,
        .sendcount = sendcount,.sendtype = sendtype,.comm = comm
    };
    return topo_entry(algo, &a, errflag);
}

int MPIR_Allgather_intra_topo_pipeline(const void *sendbuf, MPI_Aint sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                       MPI_Datatype recvtype, MPIR_Comm * comm_ptr,
                                       MPIR_Errflag_t * errflag)
{
    return allgather_entry(&topo_algos[TOPO_ALLGATHER_PIPELINE], sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, recvtype, comm_ptr, errflag);
}

int MPIR_Allgather_intra_topo_multileader(const void *sendbuf, MPI_Aint sendcount,
                                          MPI_Datatype sendtype, void *recvbuf,
                                          MPI_Aint recvcount, MPI_Datatype recvtype,
                                          MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    return allgather_entry(&topo_algos[TOPO_ALLGATHER_MULTILEADER], sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, recvtype, comm_ptr, errflag);
}

int MPIR_Allgather_intra_topo_ring(const void *sendbuf, MPI_Aint sendcount,
                                   MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                   MPI_Datatype recvtype, MPIR_Comm * comm_ptr,
                                   MPIR_Errflag_t * errflag)
{
    return allgather_entry(&topo_algos[TOPO_ALLGATHER_RING], sendbuf, sendcount, sendtype,
                           recvbuf, recvcount, recvtype, comm_ptr, errflag);
}

int MPIR_Bcast_intra_topo_pipeline(void *buffer, MPI_Aint count, MPI_Datatype datatype,
                                   int root, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    MPIR_Topo_args_t a = {.recvbuf = buffer,.count = count,.datatype = datatype,.root = root,
        .comm = comm_ptr
    };
    return topo_entry(&topo_algos[TOPO_BCAST_PIPELINE], &a, errflag);
}

int MPIR_Bcast_intra_topo_tree(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                               MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    MPIR_Topo_args_t a = {.recvbuf = buffer,.count = count,.datatype = datatype,.root = root,
        .comm = comm_ptr
    };
    return topo_entry(&topo_algos[TOPO_BCAST_TREE], &a, errflag);
}

int MPIR_Allreduce_intra_topo_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                       MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                       MPIR_Errflag_t * errflag)
{
    MPIR_Topo_args_t a = {.sendbuf = sendbuf,.recvbuf = recvbuf,.count = count,
        .datatype = datatype,.op = op,.comm = comm_ptr
    };
    return topo_entry(&topo_algos[TOPO_ALLREDUCE_PIPELINE], &a, errflag);
}

int MPIR_Reduce_intra_topo_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                    MPI_Datatype datatype, MPI_Op op, int root,
                                    MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    MPIR_Topo_args_t a = {.sendbuf = sendbuf,.recvbuf = recvbuf,.count = count,
        .datatype = datatype,.op = op,.root = root,.comm = comm_ptr
    };
    /* CH4's reduce compositions pass MPI_IN_PLACE, meaning "in recvbuf",
     * also at processes other than the root (see topo_basic.c): the engine
     * and the binomial reduce take it at the root only */
    if (sendbuf == MPI_IN_PLACE && comm_ptr->comm_kind == MPIR_COMM_KIND__INTRACOMM &&
        comm_ptr->rank != root)
        a.sendbuf = recvbuf;
    return topo_entry(&topo_algos[TOPO_REDUCE_PIPELINE], &a, errflag);
}

int MPIR_Barrier_intra_topo_flags(MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    MPIR_Topo_args_t a = {.datatype = MPI_DATATYPE_NULL,.comm = comm_ptr };
    return topo_entry(&topo_algos[TOPO_BARRIER_FLAGS], &a, errflag);
}

/* ---- nonblocking and persistent: topo_pipeline --------------------------
 *
 * MPI_Iallgather, MPI_Ibcast and MPI_Iallreduce (and their _init) run the
 * blocking engine algorithm above, unchanged, as a coroutine in a gentran
 * schedule (topo_nb.c).  Everything that depends on the call's arguments
 * alone is decided when the schedule is built: whether the engine can run
 * (else the schedule gets MPICH's own nonblocking algorithm, as
 * MPIR_CVAR_COLLECTIVE_FALLBACK says), and for a persistent call, the
 * engine's setup (communicators, node segment), which its init may do
 * since it may communicate.  Each start then only runs the rounds. */

typedef int (*MPIR_Topo_stock_sched_fn) (const MPIR_Topo_args_t * a, MPIR_TSP_sched_t sched);

typedef struct MPIR_Topo_nb_algo {
    const char *coll;           /* "iallreduce": for the trace */
    const char *fn;             /* the MPIR name, for errors */
    int blocking;               /* the topo_algos[] entry it runs */
    /* NULL, or why the engine would not run these arguments (what the
     * algorithm checks before it communicates) */
    const char *(*why_not) (const MPIR_Topo_args_t * a);
    const char *stock_name;
    MPIR_Topo_stock_sched_fn stock;
} MPIR_Topo_nb_algo_t;

typedef struct {
    const MPIR_Topo_algo_t *algo;
    MPIR_Topo_args_t a;
    MPIR_Comm *own;             /* a persistent call's own communicator, or NULL */
    int own_shared;             /* own is shared by comm's persistent calls */
} topo_nb_call_t;

#ifdef MPIR_TOPO_HAVE_ENGINE
/* Persistent calls that hold a communicator of their own now, in this
 * process (MPIR_CVAR_TOPO_PERSIST_MAX) */
static int topo_own_comms;
static void topo_persist_release(MPIR_Comm * own, int shared);

/* the call holds its datatypes, as MPICH's schedules do: the user may free
 * them as soon as the call is started */
static void topo_nb_call_free(void *arg)
{
    topo_nb_call_t *call = arg;

    MPIR_Datatype_release_if_not_builtin(call->a.datatype);
    if (call->a.sendtype != MPI_DATATYPE_NULL)
        MPIR_Datatype_release_if_not_builtin(call->a.sendtype);
    /* (local: the request is inactive, so no message of it is left) */
    if (call->own)
        topo_persist_release(call->own, call->own_shared);
    MPL_free(call);
}

static int topo_nb_body(void *arg, MPIR_Errflag_t * errflag)
{
    topo_nb_call_t *call = arg;
    const char *why_not = NULL;
    int mpi_errno = call->algo->run(&call->a, &why_not, errflag);

    /* the schedule was built after the same checks: not expected */
    if (mpi_errno == MPI_SUCCESS && why_not)
        MPIR_ERR_SET2(mpi_errno, MPI_ERR_OTHER, "**topo_cannot_run", "**topo_cannot_run %s %s",
                      call->algo->fn, why_not);
    return mpi_errno;
}
#endif

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_EAGER_SETUP
      category    : TOPO
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Set the shared-memory engine up on every intracommunicator when it is
        created (MPI_COMM_WORLD at the end of MPI_Init), so that nonblocking
        topo_pipeline collectives run it from their first call.  Without it a
        nonblocking call runs the engine only once a blocking collective
        (MPIR_CVAR_TOPO_SETUP_CALLS) or a persistent init has set it up on the
        communicator (a nonblocking call may not wait for its peers, and the
        setup does), and MPICH's own nonblocking algorithm before.  It costs a node segment per
        communicator; not done for MPI_Comm_idup (its communicator is made
        inside progress).  Where some member runs MPI_THREAD_MULTIPLE, no
        member runs nonblocking calls in the engine.

    - name        : MPIR_CVAR_TOPO_SETUP_CALLS
      category    : TOPO
      type        : int
      default     : 128
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The shared-memory engine is set up on a communicator by the blocking
        collective that makes this many small calls of its algorithms there
        (the blocking ones, and the nonblocking ones that would run it if it
        were set up); a call of b bytes counts as 1 + SETUP_CALLS x b /
        MPIR_CVAR_TOPO_SETUP_BYTES small ones, since what a call gains from
        the engine grows with its size. The calls before run the stock
        algorithm that stands in (the trace says "deferred"). The setup
        costs some 70 us on one node (eight small collectives, the node
        segment); a small call gains about 0.5 us from it (2 processes), so
        the default waits about as long as the setup takes to pay off: a
        communicator of unknown lifetime then takes at most about twice the
        time of the better choice (bench/comm-life.sh --setup-calls). A call
        of MPIR_CVAR_TOPO_SETUP_BYTES or more, an algorithm the user chose
        (by its _INTRA_ALGORITHM CVAR or an MPIR tuning file that covers its
        collective, or such a choice for a nonblocking collective), a
        persistent collective's init and MPIR_CVAR_TOPO_EAGER_SETUP set it
        up at once.  1: the first call.

    - name        : MPIR_CVAR_TOPO_SETUP_BYTES
      category    : TOPO
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        A blocking collective of this many bytes or more (the whole result:
        an allgather's all blocks) sets the engine up on its communicator
        whatever MPIR_CVAR_TOPO_SETUP_CALLS says: such a call gains more than
        the setup costs. Smaller calls count toward
        MPIR_CVAR_TOPO_SETUP_CALLS in proportion to their size.

    - name        : MPIR_CVAR_TOPO_PERSIST_MAX
      category    : TOPO
      type        : int
      default     : 64
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        How many persistent topo_pipeline collectives (MPI_Bcast_init,
        MPI_Allreduce_init, MPI_Allgather_init) may run the engine at once
        in a process. MPI lets processes start persistent collectives in
        different orders, so each such request runs on a communicator and
        node segment of its own (made by its init, freed with it), sized to
        its call: two slots of at least 128 KiB and at most those of
        MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE (about 270 KiB of shared memory
        per node for calls of up to 128 KiB), and two or three context ids
        each. Inits past this many (on any
        member), and where that segment would exceed
        MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE, get MPICH's nonblocking algorithm
        as MPIR_CVAR_COLLECTIVE_FALLBACK says. A communicator whose info sets
        mpi_assert_strict_persistent_collective_ordering to true on every
        member needs none of this: its persistent requests share its engine
        as nonblocking calls do. 0: only those.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* The MPI-4.1 communicator hint mpi_assert_strict_persistent_collective_ordering,
 * registered with MPICH's hints when the first communicator is committed
 * (MPI_COMM_WORLD, before the user can set it); 0 until then */
static int topo_hint_strict_order;

/* > 0 while this thread sets an engine up (its own communicators must not
 * get one) or commits a communicator inside progress (MPI_Comm_idup, an
 * intercommunicator's local one: a setup there would wait for peers from
 * within a nonblocking call).  Per thread: under MPI_THREAD_MULTIPLE
 * another thread may commit a communicator meanwhile. */
MPL_TLS int MPIR_Topo_setup_hold;

void MPIR_Topo_comm_committed(MPIR_Comm * comm)
{
    /* (the first commit is MPI_COMM_WORLD's or MPI_COMM_SELF's, inside
     * MPI_Init, before the user can set a hint or use a collective) */
    if (topo_hint_strict_order == 0) {
        topo_hint_strict_order =
            MPIR_Comm_register_hint(0, "mpi_assert_strict_persistent_collective_ordering", NULL,
                                    MPIR_COMM_HINT_TYPE_BOOL, 0, 0);
        MPIR_Topo_cvars_check();
    }
    /* (a setup that fails is agreed by all members and recorded on the
     * engine: the calls then fall back, which is what a lazy setup does) */
    /* (nor on MPICH's own sub-communicators: MPI_Intercomm_merge commits a
     * temporary one to agree on the context id of the real one) */
    if (MPIR_CVAR_TOPO_EAGER_SETUP && MPIR_Topo_setup_hold == 0 &&
        MPIR_CONTEXT_READ_FIELD(SUBCOMM, comm->context_id) == 0)
        (void) MPIR_Topo_engine_ready(comm, 1);
}

int MPIR_Topo_engine_ready(MPIR_Comm * comm, int setup)
{
#ifdef MPIR_TOPO_HAVE_ENGINE
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    const char *why_not;

    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM || comm->local_size < 2 ||
        MPIR_TOPO_STEP_ASIDE(comm))
        return 0;
    why_not = MPIDI_Topo_engine_nb_why_not(comm, setup, &mpi_errno, &errflag);
    /* (a failed setup was agreed by all members: they all answer 0, and
     * the call gets MPICH's algorithm) */
    return why_not == NULL && mpi_errno == MPI_SUCCESS;
#else
    return 0;
#endif
}

#ifdef MPIR_TOPO_HAVE_ENGINE
/* A persistent call's own communicator, on which its engine keeps its own
 * rounds, cells, segment and network communicators from init to free.
 * MPI lets each process start persistent requests in its own order, and
 * make blocking or nonblocking collectives on comm between them in any
 * order too: requests that shared comm's engine would take its rounds in
 * different orders on different processes.  Where every member asserts
 * mpi_assert_strict_persistent_collective_ordering, the persistent
 * requests on comm share one such communicator (their starts are in the
 * same order everywhere, as nonblocking calls are): one segment and dup
 * for all of them instead of one each.
 * Collective over comm (an init may communicate): all members agree on
 * the hint, MPIR_CVAR_TOPO_PERSIST_MAX and what failed to be allocated
 * for the call (failed: MPICH's algorithm on all); *shared says whether
 * *own is comm's shared one, *why_not why the call cannot run. */
static int topo_persist_own(MPIR_Comm * comm, MPI_Aint need, int failed, MPIR_Comm ** own,
                            int *shared, const char **why_not)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_Topo_comm_t *topo = MPIR_Topo_comm_struct(comm);
    /* any member past the limit; any member without the hint; any member
     * without memory for the call (its stack); any member that cannot
     * switch stacks (no communicator made for nothing) */
    int v[4] = { topo_own_comms >= MPIR_CVAR_TOPO_PERSIST_MAX,
        !topo_hint_strict_order || !comm->hints[topo_hint_strict_order], failed,
        MPIR_Topo_nb_usable() != NULL
    };
    int copy_errno, bad;

    *own = NULL;
    *shared = 0;
    mpi_errno = MPIR_Topo_agree_max(comm, topo == NULL, v, 4, &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (v[2]) {
        *why_not = "a member could not allocate the call (its stack, "
            "MPIR_CVAR_TOPO_NB_STACK_SIZE)";
        goto fn_exit;
    }
    if (v[3]) {
        *why_not = MPIR_Topo_nb_why_not_some();
        goto fn_exit;
    }
    *shared = !v[1];
    if (*shared && topo->persist_comm) {
        /* (made by an earlier init: the same one on every member) */
        *own = topo->persist_comm;
        MPIR_Comm_add_ref(*own);
        goto fn_exit;
    }
    if (!*shared && v[0]) {
        *why_not = "MPIR_CVAR_TOPO_PERSIST_MAX persistent requests hold an engine of their "
            "own already (MPI lets processes start them in different orders)";
        goto fn_exit;
    }
    /* (no eager setup on it: the caller sets the engine up) */
    MPIR_Topo_setup_hold++;
    copy_errno = MPII_Comm_copy(comm, comm->local_size, NULL, own);
    MPIR_Topo_setup_hold--;
    /* a copy that failed on one process alone after the context id was
     * agreed (an allocation, its commit) is agreed on before anyone uses
     * the copy: all fall back */
    bad = copy_errno != MPI_SUCCESS || *own == NULL;
    if (!bad && !*shared) {
        /* (a segment per request: sized to its call, alike on every member) */
        MPIR_Topo_comm_t *own_topo = MPIR_Topo_comm_struct(*own);

        if (own_topo)
            own_topo->slot_need = MPL_MAX(need, 1);
        else
            bad = 1;
    }
    if (bad && copy_errno == MPI_SUCCESS && *own)
        MPIR_Comm_free_impl(*own);
    if (bad)
        *own = NULL;
    mpi_errno = MPIR_Topo_agree_max(comm, 0, &bad, 1, &errflag);
    if (mpi_errno || bad) {
        if (*own)
            MPIR_Comm_free_impl(*own);
        *own = NULL;
        MPIR_ERR_CHECK(mpi_errno);
        *why_not = "a member could not make the call's own communicator";
        goto fn_exit;
    }
    if (*shared) {
        /* (comm's reference, dropped when comm is freed) */
        topo->persist_comm = *own;
        MPIR_Comm_add_ref(*own);
    } else {
        topo_own_comms++;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    *own = NULL;
    goto fn_exit;
}

/* The bytes a call puts in a slot of the segment at once, at most: bcast
 * its message, allgather and allreduce every process' share. */
static MPI_Aint topo_slot_need(const MPIR_Topo_nb_algo_t * nb, const MPIR_Topo_args_t * a)
{
    MPI_Aint extent;

    MPIR_Datatype_get_extent_macro(a->datatype, extent);
    return a->count * MPL_MAX(extent, 1) * (nb->blocking == TOPO_BCAST_PIPELINE ? 1 :
                                            a->comm->local_size);
}

/* what topo_persist_own made or referenced for a call */
static void topo_persist_release(MPIR_Comm * own, int shared)
{
    MPIR_Comm_free_impl(own);
    if (!shared)
        topo_own_comms--;
}
#endif

static int topo_nb_sched(const MPIR_Topo_nb_algo_t * nb, const MPIR_Topo_args_t * a,
                         MPIR_TSP_sched_t sched)
{
    int mpi_errno = MPI_SUCCESS;
    const char *why_not = NULL;
    MPIR_Comm *comm = a->comm;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;

    if (MPIR_TOPO_STEP_ASIDE(comm))
        goto stock;
#ifdef MPIR_TOPO_HAVE_ENGINE
    {
        int persistent = ((MPII_Genutil_sched_t *) sched)->is_persistent;
        MPIR_Comm *own = NULL;
        int shared = 0;
        MPIR_Topo_nb_t *op = NULL;
        topo_nb_call_t *call = NULL;

        /* (what the arguments rule out, the same on every member, first:
         * nothing is allocated for a call that cannot run) */
        if (nb->why_not)
            why_not = nb->why_not(a);
        if (why_not == NULL) {
            op = MPIR_Topo_nb_new(persistent);
            call = MPL_malloc(sizeof(*call), MPL_MEM_COLL);
        }
        /* (a persistent init agrees on what it allocated) */
        if (why_not == NULL && comm->local_size > 1 && persistent)
            mpi_errno = topo_persist_own(comm, topo_slot_need(nb, a), op == NULL || call == NULL,
                                         &own, &shared, &why_not);
        /* (alone on its communicator, a call copies locally: no engine,
         * but still a coroutine) */
        if (why_not == NULL && mpi_errno == MPI_SUCCESS) {
            if (comm->local_size > 1)
                why_not = MPIDI_Topo_engine_nb_why_not(own ? own : comm, persistent, &mpi_errno,
                                                       &errflag);
            else
                why_not = MPIR_Topo_nb_usable();
        }
        if (why_not || mpi_errno || op == NULL || call == NULL) {
            if (own)
                topo_persist_release(own, shared);
            if (op)
                MPIR_Topo_nb_discard(op);
            MPL_free(call);
        }
        MPIR_ERR_CHECK(mpi_errno);
        if (why_not)
            goto cannot_run;
        MPIR_ERR_CHKANDJUMP(op == NULL || call == NULL, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        call->algo = &topo_algos[nb->blocking];
        call->a = *a;
        call->own = own;
        call->own_shared = shared;
        if (own)
            call->a.comm = own;
        /* (with MPI_IN_PLACE, sendtype is whatever the caller passed) */
        if (a->sendbuf == MPI_IN_PLACE)
            call->a.sendtype = MPI_DATATYPE_NULL;
        MPIR_Datatype_add_ref_if_not_builtin(a->datatype);
        if (call->a.sendtype != MPI_DATATYPE_NULL)
            MPIR_Datatype_add_ref_if_not_builtin(call->a.sendtype);
        return MPIR_Topo_nb_sched(op, call->a.comm, topo_nb_body, call, topo_nb_call_free,
                                  sched);
    }
#else
    why_not = "MPICH was built without CH4 shared memory (configure --with-ch4-shmmods=posix)";
#endif

  cannot_run:
    mpi_errno = MPIR_Topo_cannot_run(comm, nb->fn, why_not);
    MPIR_ERR_CHECK(mpi_errno);
  stock:
    MPIR_COLL_TRACE_REDIRECT(comm, nb->coll, "topo_pipeline", nb->stock_name,
                             why_not ? "fallback" : "step_aside", a->count, a->datatype);
    mpi_errno = nb->stock(a, sched);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static int iallgather_stock(const MPIR_Topo_args_t * a, MPIR_TSP_sched_t sched)
{
    return MPIR_TSP_Iallgather_sched_intra_brucks(a->sendbuf, a->sendcount, a->sendtype,
                                                  a->recvbuf, a->count, a->datatype, a->comm,
                                                  MPIR_CVAR_IALLGATHER_BRUCKS_KVAL, sched);
}

static int ibcast_stock(const MPIR_Topo_args_t * a, MPIR_TSP_sched_t sched)
{
    return MPIR_TSP_Ibcast_sched_intra_tree(a->recvbuf, a->count, a->datatype, a->root, a->comm,
                                            MPIR_Ibcast_tree_type, MPIR_CVAR_IBCAST_TREE_KVAL,
                                            MPIR_CVAR_IBCAST_TREE_PIPELINE_CHUNK_SIZE, sched);
}

static int iallreduce_stock(const MPIR_Topo_args_t * a, MPIR_TSP_sched_t sched)
{
    return MPIR_TSP_Iallreduce_sched_intra_recexch(a->sendbuf, a->recvbuf, a->count,
                                                   a->datatype, a->op, a->comm,
                                                   MPIR_IALLREDUCE_RECEXCH_TYPE_MULTIPLE_BUFFER,
                                                   MPIR_CVAR_IALLREDUCE_RECEXCH_KVAL, sched);
}

/* what MPIDI_Topo_allreduce_pipeline checks before it communicates */
static const char *iallreduce_why_not(const MPIR_Topo_args_t * a)
{
    if (a->count > 0 && !HANDLE_IS_BUILTIN(a->op))
        return "the operation is user-defined (MPI calls it with the call's datatype, "
            "which the packed shared-memory slices do not keep)";
    if (a->count > 0 && MPIR_Topo_element_type(a->datatype) == MPI_DATATYPE_NULL)
        return "the datatype is not made of one predefined type";
    return NULL;
}

static const MPIR_Topo_nb_algo_t topo_nb_algos[] = {
    {"iallgather", "MPIR_Iallgather_intra_topo_pipeline", TOPO_ALLGATHER_PIPELINE, NULL,
     "tsp_brucks", iallgather_stock},
    {"ibcast", "MPIR_Ibcast_intra_topo_pipeline", TOPO_BCAST_PIPELINE, NULL,
     "tsp_tree", ibcast_stock},
    {"iallreduce", "MPIR_Iallreduce_intra_topo_pipeline", TOPO_ALLREDUCE_PIPELINE,
     iallreduce_why_not, "tsp_recexch_multiple_buffer", iallreduce_stock},
};

int MPIR_TSP_Iallgather_sched_intra_topo_pipeline(const void *sendbuf, MPI_Aint sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  MPI_Aint recvcount, MPI_Datatype recvtype,
                                                  MPIR_Comm * comm_ptr, MPIR_TSP_sched_t sched)
{
    MPIR_Topo_args_t a = {
        .sendbuf = sendbuf,.recvbuf = recvbuf,.count = recvcount,.datatype = recvtype,
        .sendcount = sendcount,.sendtype = sendtype,.comm = comm_ptr
    };
    return topo_nb_sched(&topo_nb_algos[0], &a, sched);
}

int MPIR_TSP_Ibcast_sched_intra_topo_pipeline(void *buffer, MPI_Aint count,
                                              MPI_Datatype datatype, int root,
                                              MPIR_Comm * comm_ptr, MPIR_TSP_sched_t sched)
{
    MPIR_Topo_args_t a = {.recvbuf = buffer,.count = count,.datatype = datatype,.root = root,
        .sendtype = MPI_DATATYPE_NULL,.comm = comm_ptr
    };
    return topo_nb_sched(&topo_nb_algos[1], &a, sched);
}

int MPIR_TSP_Iallreduce_sched_intra_topo_pipeline(const void *sendbuf, void *recvbuf,
                                                  MPI_Aint count, MPI_Datatype datatype,
                                                  MPI_Op op, MPIR_Comm * comm_ptr,
                                                  MPIR_TSP_sched_t sched)
{
    MPIR_Topo_args_t a = {.sendbuf = sendbuf,.recvbuf = recvbuf,.count = count,
        .datatype = datatype,.op = op,.sendtype = MPI_DATATYPE_NULL,.comm = comm_ptr
    };
    return topo_nb_sched(&topo_nb_algos[2], &a, sched);
}
