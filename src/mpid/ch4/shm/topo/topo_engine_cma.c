/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Kernel-assisted copies between local processes (Linux CMA,
 * process_vm_readv): whether the kernel lets this process read its
 * siblings (Yama), the PR_SET_PTRACER declaration that MPIR_CVAR_TOPO_CMA=on
 * makes and gives back (the application's own value kept through an
 * interposed prctl), the setup's probe, and the reads themselves.  Split
 * from topo_engine.c, which sets the engine up. */

#include "topo_engine.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <unistd.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_CMA
      category    : TOPO
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Whether the engine may copy between local processes with Linux CMA
        (process_vm_readv), for the sizes MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD
        and MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD give, and as one of the ways
        that large allgathers and bcasts within one node try
        (MPIR_CVAR_TOPO_ALLGATHER_TRIALS, MPIR_CVAR_TOPO_BCAST_TRIALS).
        auto - where the kernel allows it as is: no Yama, or Yama's
               kernel.yama.ptrace_scope 0. Under ptrace_scope 1 a process
               may only read a sibling's memory once the sibling declares
               every process a permitted tracer, which lets any process
               of the same user ptrace it: auto does not do that, and
               copies through shared memory instead.
        on   - also under ptrace_scope 1, by declaring any process of the
               user a permitted tracer (PR_SET_PTRACER_ANY) while the
               communicator lives: only where the other processes of the
               user on the node are trusted.
        off  - never; copies always go through shared memory.

    - name        : MPIR_CVAR_TOPO_DEBUG_PTRACE_SCOPE
      category    : TOPO
      type        : int
      default     : -2
      class       : none
      verbosity   : MPI_T_VERBOSITY_MPIDEV_DETAIL
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        For testing only: the engine acts as if Yama's
        kernel.yama.ptrace_scope were this (-1: no Yama), so that tests see
        what MPIR_CVAR_TOPO_CMA=on declares and restores on a kernel
        without Yama. -2 (default): read it.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Yama's kernel.yama.ptrace_scope, -1 without Yama (read once: a setup
 * per communicator need not open a file) */
static int yama_ptrace_scope(void)
{
    static int scope = -2;

    if (scope == -2 && MPIR_CVAR_TOPO_DEBUG_PTRACE_SCOPE > -2)
        scope = MPIR_CVAR_TOPO_DEBUG_PTRACE_SCOPE;
    if (scope == -2) {
        FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");

        scope = -1;
        if (f) {
            if (fscanf(f, "%d", &scope) != 1)
                scope = -1;
            fclose(f);
        }
    }
    return scope;
}

/* engines of this process that declared every process a permitted tracer:
 * the declaration is withdrawn with the last one */
static int ptracer_any_users;

#if defined(PR_SET_PTRACER)
/* The tracer the application declared (0: none), which the engine's
 * withdrawal restores: Linux has no PR_GET_PTRACER, so the application's
 * prctl calls pass through this one (libmpi comes before libc in its
 * lookup order).  While an engine needs any process as tracer, the
 * application's declaration is only recorded (any process includes it).
 * (A raw syscall of the application's is not seen.) */
static unsigned long app_ptracer;

static long ptracer_set(unsigned long pid)
{
    return syscall(SYS_prctl, PR_SET_PTRACER, pid, 0UL, 0UL, 0UL);
}

__attribute__ ((visibility("default")))
int prctl(int option, ...)
{
    va_list ap;
    unsigned long a2, a3, a4, a5;

    va_start(ap, option);
    a2 = va_arg(ap, unsigned long);
    a3 = va_arg(ap, unsigned long);
    a4 = va_arg(ap, unsigned long);
    a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_PTRACER) {
        if (ptracer_any_users > 0) {
            app_ptracer = a2;
            return 0;
        }
        if (ptracer_set(a2) != 0)
            return -1;
        app_ptracer = a2;
        return 0;
    }
    return (int) syscall(SYS_prctl, option, a2, a3, a4, a5);
}
#endif

/* (every path that set it: engine_free, a setup that found CMA unusable
 * or failed after it declared, engine_give_back) */
void MPIDI_Topo_ptracer_release(MPIDI_Topo_engine_t * e)
{
#if defined(PR_SET_PTRACER)
    if (e->ptracer_any && --ptracer_any_users == 0)
        (void) ptracer_set(app_ptracer);
#endif
    e->ptracer_any = 0;
}

/* Whether CMA may be tried here (MPIR_CVAR_TOPO_CMA), declaring every
 * process a permitted tracer where Yama needs that and the user allowed it */
static int cma_allowed(MPIDI_Topo_engine_t * e)
{
    int scope;

    if (MPIR_CVAR_TOPO_CMA == MPIR_CVAR_TOPO_CMA_off)
        return 0;
    scope = yama_ptrace_scope();
    if (scope <= 0)
        return 1;
    if (scope > 1 || MPIR_CVAR_TOPO_CMA != MPIR_CVAR_TOPO_CMA_on)
        return 0;       /* scope 2 and 3: only CAP_SYS_PTRACE, or nobody */
#if defined(PR_SET_PTRACER) && defined(PR_SET_PTRACER_ANY)
    if (ptracer_any_users == 0 && ptracer_set((unsigned long) PR_SET_PTRACER_ANY) != 0)
        return 0;
    e->ptracer_any = 1;
    ptracer_any_users++;
    return 1;
#else
    return 0;
#endif
}

/* what MPIDI_Topo_probe_cma reads from its neighbour, xor the neighbour's pid:
 * "topocma!" */
#define MPIDI_TOPO_CMA_MAGIC 0x746f706f636d6121ULL
/* static, so that it outlives every neighbour's read */
static volatile uint64_t cma_magic;

/* Can this process read its right neighbour's memory with CMA?  Collective
 * over the node (a barrier publishes the addresses). */
int MPIDI_Topo_probe_cma(MPIDI_Topo_engine_t * e, int *ok, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    uint64_t got = 0;
    int right = (e->local_rank + 1) % e->local_size;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);

    *ok = cma_allowed(e);
    cma_magic = MPIDI_TOPO_CMA_MAGIC ^ (uint64_t) getpid();
    me->addr = (uint64_t) (uintptr_t) & cma_magic;
    mpi_errno = MPIR_Barrier_impl(e->node_comm, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    {
        MPIDI_Topo_ctrl_t *rc = MPIDI_TOPO_CTRL(e, right);
        struct iovec l = { &got, sizeof(got) }, r = { (void *) (uintptr_t) rc->addr, sizeof(got) };
        if (!*ok || process_vm_readv((pid_t) rc->pid, &l, 1, &r, 1, 0) != (ssize_t) sizeof(got) ||
            got != (MPIDI_TOPO_CMA_MAGIC ^ rc->pid))
            *ok = 0;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    *ok = 0;
    goto fn_exit;
}

/* ---- kernel-assisted copies ------------------------------------------- */

int MPIDI_Topo_cma_read(MPIDI_Topo_engine_t * e, int local, void *buf, uint64_t raddr,
                        size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    pid_t pid = (pid_t) MPIDI_TOPO_CTRL(e, local)->pid;

    while (len > 0) {
        struct iovec l = { buf, len }, r = { (void *) (uintptr_t) raddr, len };
        ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            /* (a read of 0 bytes sets no errno) */
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**topo_cma", "**topo_cma %d %s",
                                 (int) pid, got < 0 ? strerror(errno) : "nothing was read");
        }
        buf = (char *) buf + got;
        raddr += got;
        len -= got;
    }
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
