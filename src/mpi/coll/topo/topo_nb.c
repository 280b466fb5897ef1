/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"
#include <ucontext.h>
#include <sys/mman.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define MPIR_TOPO_HAVE_VALGRIND_H 1
#endif
#endif

/* Nonblocking and persistent collectives that run a blocking algorithm as
 * a coroutine.
 *
 * The engine's algorithms are written as straight code that waits on
 * counters and requests.  Rather than rewrite each as a state machine, a
 * nonblocking call runs that same code on a stack of its own: where the
 * code would wait (MPIDI_Topo_pause, and MPID_Progress_wait under MPICH's
 * blocking point-to-point calls, through MPIDI_IDLE_YIELD) it switches back
 * to whoever resumed it, and it is resumed from MPICH's progress engine,
 * as one vertex of a gentran schedule (MPIR_TSP_sched_generic): MPI_Test,
 * MPI_Wait and every other call that polls progress move it on.
 *
 * Order: the calls queued on one communicator run one after the other, in
 * the order they were started, which MPI makes the same on every member;
 * the engine's blocking calls on that communicator first finish the queue
 * (MPIR_Topo_nb_drain).  So the engine's rounds are taken in the same
 * order everywhere, as they are for blocking calls.
 *
 * A coroutine only ever runs inside MPICH's gentran progress (never
 * nested: a coroutine's own progress polls skip gentran's hook), under the
 * calling thread's hold on MPICH; with MPI_THREAD_MULTIPLE it could be
 * resumed by another thread than the one it started on, so callers do not
 * use it then (MPIR_Topo_nb_usable). */

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_NB_STACK_SIZE
      category    : TOPO
      type        : int
      default     : 262144
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Bytes of stack for each outstanding nonblocking or persistent
        topology-aware collective (topo_pipeline), which runs on a stack of
        its own (mapped on first use, below a guard page that stops an
        overflow).  User-defined reduction operations run on it too.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

typedef enum {
    NB_IDLE,                    /* built, or finished and not started again */
    NB_QUEUED,                  /* started: waits for the calls before it */
    NB_RUNNING,                 /* its coroutine has begun */
    NB_DONE                     /* its coroutine has returned */
} nb_state_t;

struct MPIR_Topo_nb {
    struct MPIR_Topo_nb *next;  /* in the communicator's queue */
    MPIR_Comm *comm;            /* a reference, dropped at free */
    MPIR_Topo_nb_body_fn body;
    void *arg;                  /* owned: freed with the call (arg_free) */
    void (*arg_free) (void *arg);
    nb_state_t state;
    int mpi_errno;              /* the body's last return */
    ucontext_t ctx, caller;
    char *stack;                /* guard page, then stack_size bytes */
    size_t stack_size;
    unsigned valgrind_id;
};

/* The coroutine running now, NULL outside one */
MPIR_Topo_nb_t *MPIR_Topo_nb_current;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t) p : 4096;
}

static void nb_trampoline(void)
{
    MPIR_Topo_nb_t *op = MPIR_Topo_nb_current;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;

    op->mpi_errno = op->body(op->arg, &errflag);
    if (op->mpi_errno == MPI_SUCCESS && errflag != MPIR_ERR_NONE)
        MPIR_ERR_SET(op->mpi_errno, errflag, "**coll_fail");
    op->state = NB_DONE;
    /* returning switches to op->caller (uc_link) */
}

/* The stack is mapped when the call is built, so that a start cannot fail
 * on one process alone (its peers would wait for it) */
static int nb_stack_alloc(MPIR_Topo_nb_t * op)
{
    int mpi_errno = MPI_SUCCESS;
    size_t guard = page_size();
    size_t size = MPL_MAX((size_t) MPIR_CVAR_TOPO_NB_STACK_SIZE, 16 * guard);
    void *p;

    size = (size + guard - 1) / guard * guard;
    p = mmap(NULL, size + guard, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    MPIR_ERR_CHKANDJUMP(p == MAP_FAILED, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
    /* the stack grows down towards the guard page */
    (void) mprotect(p, guard, PROT_NONE);
    op->stack = p;
    op->stack_size = size;
#ifdef MPIR_TOPO_HAVE_VALGRIND_H
    op->valgrind_id = VALGRIND_STACK_REGISTER((char *) p + guard, (char *) p + guard + size);
#endif
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void nb_start(MPIR_Topo_nb_t * op)
{
    getcontext(&op->ctx);
    op->ctx.uc_stack.ss_sp = op->stack + page_size();
    op->ctx.uc_stack.ss_size = op->stack_size;
    op->ctx.uc_link = &op->caller;
    makecontext(&op->ctx, nb_trampoline, 0);
    op->state = NB_RUNNING;
}

void MPIR_Topo_nb_yield(void)
{
    MPIR_Topo_nb_t *op = MPIR_Topo_nb_current;

    MPIR_Assert(op != NULL);
    MPIR_Topo_nb_current = NULL;
    swapcontext(&op->ctx, &op->caller);
    MPIR_Topo_nb_current = op;
}

/* Runs op until it waits or returns (op heads its communicator's queue) */
static void nb_resume(MPIR_Topo_nb_t * op)
{
    if (op->state == NB_QUEUED)
        nb_start(op);
    MPIR_Topo_nb_current = op;
    swapcontext(&op->caller, &op->ctx);
    MPIR_Topo_nb_current = NULL;
}

/* ---- the gentran vertex ---------------------------------------------- */

/* Runs op, at the head of its communicator's queue, until it waits or
 * returns; 1 once it has returned (then it leaves the queue). */
static int nb_step(MPIR_Topo_nb_t * op)
{
    MPIR_Topo_comm_t *topo = op->comm->topo;

    if (op->state != NB_DONE)
        nb_resume(op);
    if (op->state != NB_DONE)
        return 0;
    topo->nb_queue = op->next;
    op->state = NB_IDLE;
    return 1;
}

static int nb_issue(void *data, int *done)
{
    MPIR_Topo_nb_t *op = data, **tail;
    MPIR_Topo_comm_t *topo = MPIR_Topo_comm_struct(op->comm);

    MPIR_Assert(topo != NULL && op->state == NB_IDLE);
    op->state = NB_QUEUED;
    op->mpi_errno = MPI_SUCCESS;
    op->next = NULL;
    for (tail = &topo->nb_queue; *tail; tail = &(*tail)->next);
    *tail = op;
    /* first steps at once (copy-in, the first sends): what the others
     * wait for is under way before the caller computes */
    *done = topo->nb_queue == op && MPIR_Topo_nb_current == NULL ? nb_step(op) : 0;
    return MPI_SUCCESS;
}

static int nb_complete(void *data, int *is_completed)
{
    MPIR_Topo_nb_t *op = data;

    /* a call waits for those started before it on its communicator; it
     * never runs inside another one */
    *is_completed = 0;
    if (MPIR_Topo_nb_current == NULL && op->comm->topo->nb_queue == op)
        *is_completed = nb_step(op);
    return MPI_SUCCESS;
}

static int nb_free(void *data)
{
    MPIR_Topo_nb_t *op = data;

    if (op->stack) {
#ifdef MPIR_TOPO_HAVE_VALGRIND_H
        VALGRIND_STACK_DEREGISTER(op->valgrind_id);
#endif
        munmap(op->stack, op->stack_size + page_size());
    }
    op->arg_free(op->arg);
    MPIR_Comm_release(op->comm);
    MPL_free(op);
    return MPI_SUCCESS;
}

/* after the vertex: the body's error becomes the request's (gentran marks
 * the request failed when a callback returns an error) */
static int nb_result(MPIR_Comm * comm, int tag, void *data)
{
    MPIR_Topo_nb_t *op = data;
    return op->mpi_errno;
}

int MPIR_Topo_nb_sched(MPIR_Comm * comm, MPIR_Topo_nb_body_fn body, void *arg,
                       void (*arg_free) (void *arg), MPIR_TSP_sched_t sched)
{
    int mpi_errno = MPI_SUCCESS, type_id, vtx;
    MPIR_Topo_nb_t *op;

    /* (the queue lives in the communicator's topo struct) */
    if (MPIR_Topo_comm_struct(comm) == NULL) {
        arg_free(arg);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    op = MPL_calloc(1, sizeof(*op), MPL_MEM_COLL);
    if (op == NULL) {
        arg_free(arg);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    op->comm = comm;
    MPIR_Comm_add_ref(comm);
    op->body = body;
    op->arg = arg;
    op->arg_free = arg_free;
    op->state = NB_IDLE;
    mpi_errno = nb_stack_alloc(op);
    if (mpi_errno) {
        nb_free(op);
        MPIR_ERR_CHECK(mpi_errno);
    }

    type_id = MPIR_TSP_sched_new_type(sched, nb_issue, nb_complete, nb_free);
    mpi_errno = MPIR_TSP_sched_generic(type_id, op, sched, 0, NULL, &vtx);
    if (mpi_errno) {
        nb_free(op);
        MPIR_ERR_CHECK(mpi_errno);
    }
    (void) MPIR_TSP_sched_cb(nb_result, op, sched, 1, &vtx);   /* (returns its vertex) */

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Topo_nb_drain(MPIR_Comm * comm)
{
    int mpi_errno = MPI_SUCCESS;

    /* (inside a coroutine, the queue's head is this very call) */
    while (comm->topo && comm->topo->nb_queue && MPIR_Topo_nb_current == NULL) {
        mpi_errno = MPID_Progress_test(NULL);
        MPIR_ERR_CHECK(mpi_errno);
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

const char *MPIR_Topo_nb_usable(void)
{
    if (MPIR_ThreadInfo.thread_provided == MPI_THREAD_MULTIPLE)
        return "MPI_THREAD_MULTIPLE (a call's coroutine could be resumed by another thread)";
    return NULL;
}
