/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"
#include "gentran_types.h"
#include <ucontext.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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
 * use it then (MPIR_Topo_nb_usable), on any member of the communicator:
 * MPI lets each process ask its own thread level, and the engine's setup
 * agrees on it. */

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
        its own (mapped on first use, below a 64 KiB guard that stops an
        overflow).  User-defined reduction operations run on it too.
        65536 to 1073741824; another value is replaced by the default, with
        a warning.

    - name        : MPIR_CVAR_TOPO_DEBUG_SHADOW_STACK
      category    : TOPO
      type        : boolean
      default     : false
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For testing only: the process acts as if it ran with CET shadow
        stacks, on which the coroutines of nonblocking and persistent
        topo_pipeline calls would fault: those calls get MPICH's
        algorithms, as where shadow stacks are found enabled.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Switching stacks.  glibc's swapcontext saves and restores the signal
 * mask, two system calls per switch, and a call waiting on its peers
 * switches twice per progress poll: on x86-64 a switch saves just what the
 * ABI says a call preserves (callee-saved registers, the SSE and x87
 * control words) and swaps the stack pointer; elsewhere ucontext. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__)
#define MPIR_TOPO_NB_FAST_SWITCH 1
/* saves the registers on this stack, stores its pointer in *save, and
 * resumes the stack at `to`, where an earlier nb_switch (or nb_frame) left
 * them */
void MPIR_Topo_nb_switch(void **save, void *to);
__asm__(".text\n"
        ".globl MPIR_Topo_nb_switch\n"
        ".hidden MPIR_Topo_nb_switch\n"
        ".type MPIR_Topo_nb_switch, @function\n"
        "MPIR_Topo_nb_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size MPIR_Topo_nb_switch, .-MPIR_Topo_nb_switch\n");

/* A new stack whose first nb_switch "returns" into entry, with the stack
 * aligned as at a function's entry and this thread's control words */
static void *nb_frame(char *top, void (*entry) (void))
{
    uint64_t *sp = (uint64_t *) ((uintptr_t) top & ~(uintptr_t) 15) - 9;
    uint32_t mxcsr;
    uint16_t fpcw;

    __asm__ volatile ("stmxcsr %0":"=m" (mxcsr));
    __asm__ volatile ("fnstcw %0":"=m" (fpcw));
    memset(sp, 0, 9 * sizeof(uint64_t));
    memcpy(sp, &mxcsr, 4);
    memcpy((char *) sp + 4, &fpcw, 2);
    sp[7] = (uint64_t) (uintptr_t) entry;       /* after 6 registers */
    return sp;
}
#else
#define MPIR_TOPO_NB_FAST_SWITCH 0
#endif

typedef enum {
    NB_IDLE,                    /* built, or finished and not started again */
    NB_QUEUED,                  /* started: waits for the calls before it */
    NB_RUNNING,                 /* its coroutine has begun */
    NB_DONE                     /* its coroutine has returned */
} nb_state_t;

struct MPIR_Topo_nb {
    struct MPIR_Topo_nb *next;  /* in the communicator's queue */
    MPIR_Comm *comm;            /* a reference, dropped at free */
    MPII_Genutil_sched_t *sched;        /* the schedule it is a vertex of */
    MPIR_Topo_nb_body_fn body;
    void *arg;                  /* owned: freed with the call (arg_free) */
    void (*arg_free) (void *arg);
    nb_state_t state;
    int mpi_errno;              /* the body's last return */
#if MPIR_TOPO_NB_FAST_SWITCH
    void *sp, *caller_sp;       /* saved stack pointers (nb_switch) */
#else
    ucontext_t ctx, caller;
#endif
    char *stack;                /* guard (guard_size), then stack_size bytes */
    size_t stack_size;
    int stack_on_start;         /* a nonblocking call's: taken when it starts
                                 * running, given back when it returns */
    int stack_borrowed;         /* the stack is its communicator's (nb_stack) */
    unsigned valgrind_id;
};

/* The coroutine running now, NULL outside one */
MPIR_Topo_nb_t *MPIR_Topo_nb_current;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t) p : 4096;
}

/* The guard below each stack: an overflow faults there rather than write
 * over other memory, as long as no frame is larger than the guard (a
 * frame that skips a smaller guard lands beyond it).  The largest frames
 * on a call's stack are MPICH's and ours, a few KiB (gcc -fstack-usage):
 * 64 KiB covers them with room to spare, and costs address space only. */
static size_t guard_size(void)
{
    return MPL_MAX(page_size(), (size_t) 65536);
}

static void nb_trampoline(void)
{
    MPIR_Topo_nb_t *op = MPIR_Topo_nb_current;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    int mpi_errno_ret = op->body(op->arg, &errflag);

    /* (errflag read only once the body has run) */
    op->mpi_errno = MPIR_Topo_coll_result(MPI_SUCCESS, mpi_errno_ret, errflag);
    op->state = NB_DONE;
#if MPIR_TOPO_NB_FAST_SWITCH
    /* for good: a finished call is started again on a fresh frame */
    MPIR_Topo_nb_current = NULL;
    MPIR_Topo_nb_switch(&op->sp, op->caller_sp);
#endif
    /* (ucontext: returning switches to op->caller, uc_link) */
}

/* Stacks of finished nonblocking calls, kept for the next ones: mapping,
 * guarding and faulting in a fresh stack costs tens of microseconds, more
 * than a small call.  (A stack's first word links it here.) */
#define NB_STACK_CACHE 16
static void *stack_cache;
static int stack_cache_n;
static size_t stack_cache_size;

/* A persistent call's stack is taken when the call is built, so that a
 * start cannot fail on one process alone (its peers would wait for it).
 * A nonblocking call, built and started at once, takes it when it begins
 * to run, at the head of its communicator's queue: the calls queued behind
 * it hold none (40000 outstanding calls held 40000 mappings before, past
 * Linux's default vm.max_map_count), and it gives the stack back, to the
 * cache, as it returns. */
static int nb_stack_alloc(MPIR_Topo_nb_t * op)
{
    int mpi_errno = MPI_SUCCESS;
    size_t guard = guard_size(), pg = page_size();
    /* (MPIR_Topo_cvars_check keeps the CVAR within 64 KiB..1 GiB) */
    size_t size = MPL_MAX((size_t) MPIR_CVAR_TOPO_NB_STACK_SIZE, 16 * pg);
    char *p;

    size = (size + pg - 1) / pg * pg;
    if (stack_cache && stack_cache_size == size) {
        p = stack_cache;
        memcpy(&stack_cache, p + guard, sizeof(void *));
        stack_cache_n--;
    } else {
        p = mmap(NULL, size + guard, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        MPIR_ERR_CHKANDJUMP(p == MAP_FAILED, mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        /* the stack grows down towards the guard; a stack without one
         * could overflow silently into other memory: none rather */
        if (mprotect(p, guard, PROT_NONE) != 0) {
            munmap(p, size + guard);
            MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_NO_MEM, "**nomem");
        }
    }
    op->stack = p;
    op->stack_size = size;
#ifdef MPIR_TOPO_HAVE_VALGRIND_H
    op->valgrind_id = VALGRIND_STACK_REGISTER(p + guard, p + guard + size);
#endif
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

static void nb_stack_free(MPIR_Topo_nb_t * op)
{
    size_t guard = guard_size();

#ifdef MPIR_TOPO_HAVE_VALGRIND_H
    VALGRIND_STACK_DEREGISTER(op->valgrind_id);
#endif
    if (stack_cache_n < NB_STACK_CACHE &&
        (stack_cache == NULL || stack_cache_size == op->stack_size)) {
        memcpy(op->stack + guard, &stack_cache, sizeof(void *));
        stack_cache = op->stack;
        stack_cache_size = op->stack_size;
        stack_cache_n++;
    } else {
        munmap(op->stack, op->stack_size + guard);
    }
    op->stack = NULL;
}

/* A communicator's stack for its nonblocking calls, mapped when the engine
 * is set up there (the members agree on a failed mapping then): they run
 * one at a time, at the head of its queue, so one stack serves them all,
 * and a call never meets a mapping that fails on its process alone once
 * its peers have started. */
struct MPIR_Topo_nb_stack {
    MPIR_Topo_nb_t holder;      /* (only its stack fields are used) */
    int busy;
};

int MPIR_Topo_nb_stack_reserve(MPIR_Topo_comm_t * topo)
{
    struct MPIR_Topo_nb_stack *st;

    if (topo->nb_stack)
        return 0;
    st = MPL_calloc(1, sizeof(*st), MPL_MEM_COLL);
    if (st == NULL)
        return 1;
    if (nb_stack_alloc(&st->holder) != MPI_SUCCESS) {
        MPL_free(st);
        return 1;
    }
    topo->nb_stack = st;
    return 0;
}

void MPIR_Topo_nb_stack_release(MPIR_Topo_comm_t * topo)
{
    struct MPIR_Topo_nb_stack *st = topo->nb_stack;

    if (st == NULL)
        return;
    MPIR_Assert(!st->busy);
    nb_stack_free(&st->holder);
    MPL_free(st);
    topo->nb_stack = NULL;
}

/* A nonblocking call's stack as it starts to run: its communicator's where
 * the engine reserved one, else one of its own (the cache, a mapping) */
static int nb_stack_take(MPIR_Topo_nb_t * op)
{
    struct MPIR_Topo_nb_stack *st = op->comm->topo ? op->comm->topo->nb_stack : NULL;

    if (st && !st->busy) {
        st->busy = 1;
        op->stack = st->holder.stack;
        op->stack_size = st->holder.stack_size;
        op->stack_borrowed = 1;
        return MPI_SUCCESS;
    }
    return nb_stack_alloc(op);
}

static void nb_stack_give(MPIR_Topo_nb_t * op)
{
    if (op->stack_borrowed) {
        op->comm->topo->nb_stack->busy = 0;
        op->stack = NULL;
        op->stack_borrowed = 0;
    } else {
        nb_stack_free(op);
    }
}

static void nb_start(MPIR_Topo_nb_t * op)
{
#if MPIR_TOPO_NB_FAST_SWITCH
    op->sp = nb_frame(op->stack + guard_size() + op->stack_size, nb_trampoline);
#else
    getcontext(&op->ctx);
    op->ctx.uc_stack.ss_sp = op->stack + guard_size();
    op->ctx.uc_stack.ss_size = op->stack_size;
    op->ctx.uc_link = &op->caller;
    makecontext(&op->ctx, nb_trampoline, 0);
#endif
    op->state = NB_RUNNING;
}

void MPIR_Topo_nb_yield(void)
{
    MPIR_Topo_nb_t *op = MPIR_Topo_nb_current;

    MPIR_Assert(op != NULL);
    MPIR_Topo_nb_current = NULL;
#if MPIR_TOPO_NB_FAST_SWITCH
    MPIR_Topo_nb_switch(&op->sp, op->caller_sp);
#else
    swapcontext(&op->ctx, &op->caller);
#endif
    MPIR_Topo_nb_current = op;
}

/* Runs op until it waits or returns (op heads its communicator's queue) */
static void nb_resume(MPIR_Topo_nb_t * op)
{
    if (op->state == NB_QUEUED) {
        if (op->stack == NULL && nb_stack_take(op) != MPI_SUCCESS) {
            /* (no memory for a stack: this call fails here, as any call
             * whose process runs out of memory) */
            op->mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__,
                                                 __LINE__, MPI_ERR_NO_MEM, "**nomem", NULL);
            op->state = NB_DONE;
            return;
        }
        nb_start(op);
    }
    MPIR_Topo_nb_current = op;
#if MPIR_TOPO_NB_FAST_SWITCH
    MPIR_Topo_nb_switch(&op->caller_sp, op->sp);
#else
    swapcontext(&op->caller, &op->ctx);
#endif
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
    if (op->stack_on_start && op->stack)
        nb_stack_give(op);
    topo->nb_queue = op->next;
    if (topo->nb_queue == NULL)
        topo->nb_last = NULL;
    op->state = NB_IDLE;
    return 1;
}

static int nb_issue(void *data, int *done)
{
    MPIR_Topo_nb_t *op = data;
    MPIR_Topo_comm_t *topo = MPIR_Topo_comm_struct(op->comm);

    MPIR_Assert(topo != NULL && op->state == NB_IDLE);
    op->state = NB_QUEUED;
    op->mpi_errno = MPI_SUCCESS;
    op->next = NULL;
    /* (appended at the last: thousands may be outstanding) */
    if (topo->nb_last)
        topo->nb_last->next = op;
    else
        topo->nb_queue = op;
    topo->nb_last = op;
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
    if (MPIR_Topo_nb_current == NULL && op->comm->topo->nb_queue == op) {
        *is_completed = nb_step(op);
#ifdef MPIDI_IDLE_YIELD
        /* still waiting for its peers: on an oversubscribed node give the
         * processor away (MPIR_CVAR_CH4_YIELD_WHEN_IDLE), as MPICH's
         * blocking waits do, or a caller polling with MPI_Test (or
         * MPI_Waitany, which polls too) keeps the peers from running for a
         * time slice per step of the call */
        if (!*is_completed)
            MPIDI_IDLE_YIELD();
#endif
    }
    return MPI_SUCCESS;
}

static int nb_free(void *data)
{
    MPIR_Topo_nb_t *op = data;

    if (op->stack)
        nb_stack_give(op);
    op->arg_free(op->arg);
    MPIR_Comm_release(op->comm);
    MPL_free(op);
    return MPI_SUCCESS;
}

/* after the vertex: the body's error becomes the request's, whole (a
 * callback's error would reach it only as "**comm", MPI_ERR_OTHER) */
static int nb_result(MPIR_Comm * comm, int tag, void *data)
{
    MPIR_Topo_nb_t *op = data;

    if (op->mpi_errno)
        op->sched->req->status.MPI_ERROR = op->mpi_errno;
    return MPI_SUCCESS;
}

MPIR_Topo_nb_t *MPIR_Topo_nb_new(int persistent)
{
    MPIR_Topo_nb_t *op = MPL_calloc(1, sizeof(*op), MPL_MEM_COLL);

    if (op == NULL)
        return NULL;
    op->state = NB_IDLE;
    op->stack_on_start = !persistent;
    if (persistent && nb_stack_alloc(op) != MPI_SUCCESS) {
        MPL_free(op);
        return NULL;
    }
    return op;
}

void MPIR_Topo_nb_discard(MPIR_Topo_nb_t * op)
{
    if (op->stack)
        nb_stack_free(op);
    MPL_free(op);
}

int MPIR_Topo_nb_sched(MPIR_Topo_nb_t * op, MPIR_Comm * comm, MPIR_Topo_nb_body_fn body,
                       void *arg, void (*arg_free) (void *arg), MPIR_TSP_sched_t sched)
{
    int mpi_errno = MPI_SUCCESS, type_id, vtx;

    MPIR_Assert(op->stack_on_start == !((MPII_Genutil_sched_t *) sched)->is_persistent);
    /* (the queue lives in the communicator's topo struct) */
    if (MPIR_Topo_comm_struct(comm) == NULL) {
        arg_free(arg);
        MPIR_Topo_nb_discard(op);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    op->comm = comm;
    op->sched = sched;
    MPIR_Comm_add_ref(comm);
    op->body = body;
    op->arg = arg;
    op->arg_free = arg_free;

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
#ifdef MPIDI_IDLE_YIELD
        /* the calls' own waits hand the processor back here: on an
         * oversubscribed node give it away as MPICH's blocking waits do
         * (MPIR_CVAR_CH4_YIELD_WHEN_IDLE), or the peers they wait for
         * may not run for a time slice */
        MPIDI_IDLE_YIELD();
#endif
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Whether the process runs with CET shadow stacks (x86-64 Linux 6.6 and
 * later, glibc 2.39 and later, a binary built with -fcf-protection and the
 * tunable on): a return on a stack the shadow stack did not see faults
 * (#CP), which is what MPIR_Topo_nb_switch does, so the coroutines are
 * not used there (MPIR_CVAR_TOPO_DEBUG_SHADOW_STACK acts it out). */
#define MPIR_TOPO_ARCH_SHSTK_STATUS 0x5005
static int shadow_stack_enabled(void)
{
    static int enabled = -1;

    if (enabled < 0) {
        enabled = MPIR_CVAR_TOPO_DEBUG_SHADOW_STACK;
#if defined(__x86_64__) && defined(__linux__) && defined(SYS_arch_prctl)
        {
            unsigned long features = 0;
            if (!enabled &&
                syscall(SYS_arch_prctl, MPIR_TOPO_ARCH_SHSTK_STATUS, &features) == 0 &&
                (features & 1))
                enabled = 1;
        }
#endif
    }
    return enabled;
}

const char *MPIR_Topo_nb_usable(void)
{
    if (MPIR_ThreadInfo.thread_provided == MPI_THREAD_MULTIPLE)
        return "MPI_THREAD_MULTIPLE (a call's coroutine could be resumed by another thread)";
    if (shadow_stack_enabled())
        return "CET shadow stacks are enabled (switching to a call's coroutine stack would "
            "fault)";
    return NULL;
}

const char *MPIR_Topo_nb_why_not_some(void)
{
    return MPIR_Topo_nb_usable() ? MPIR_Topo_nb_usable() :
        "another member cannot switch to a call's coroutine (MPI_THREAD_MULTIPLE or CET "
        "shadow stacks there)";
}
