/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Fault injection for the engine (test/system/faults.sh).
 *
 *   fault cma BYTES [reduce|rootreduce]  a CMA-sized allgather (reduce: an
 *                     allreduce of BYTES of ints, MPI_BOR; rootreduce: a reduce of
 *                     them to rank 0) works; then every process
 *                     drops CAP_SYS_PTRACE (so that root is refused like
 *                     anyone else) and rank 1 turns non-dumpable, so reads
 *                     of its memory fail (EPERM); the next allgather must
 *                     end with an error on every process (MPI_ERRORS_RETURN),
 *                     not hang.  Prints "fault: rank R: error" or
 *                     "fault: rank R: success", and "fault: cma refused" on
 *                     the ranks whose reads the kernel refused, if known;
 *                     "fault: rank R: MPI_Error_string wrote past its
 *                     buffer" where the error's string (a stack longer
 *                     than MPI_MAX_ERROR_STRING) did not stay in it.
 *   fault kill BYTES  allgathers in a loop; rank 1 kills itself (SIGKILL)
 *                     on its third call: the job must end.
 *   fault nomem BYTES run with MPIR_CVAR_TOPO_DEBUG_SETUP_NOMEM=1: rank 1
 *                     cannot allocate while the engine sets itself up: the
 *                     first allgather must return an error on every process
 *                     ("fault: rank R: call 0: error class K"), the second
 *                     fall back alike, and a stock collective still work.
 *   fault staging BYTES  run with MPIR_CVAR_TOPO_DEBUG_STAGING_NOMEM=R: rank R
 *                     cannot allocate the contiguous copy of a derived
 *                     type; an allgather and a bcast (root 0) of strided
 *                     ints, each on its own duplicate of the world, must
 *                     end on every process, with an error on R ("fault:
 *                     rank R: allgather: error class K") and on every
 *                     process that depends on R's data, never with wrong
 *                     data reported as success ("success with wrong
 *                     data"); then, on the same communicator, allreduces,
 *                     reduces (to the last rank) of 4 and 2n ints and a
 *                     barrier, which must end alike ("fault: rank R: then
 *                     allreduce 4: ..."); a stock collective still works
 *                     afterwards.
 *                     "fault staging BYTES nb": the same as MPI_Iallgather
 *                     and MPI_Ibcast then MPI_Wait, after a persistent
 *                     init that sets the engine up on each duplicate.
 *   fault nodefail BYTES  run with MPIR_CVAR_TOPO_DEBUG_NODE_FAILED=R: the
 *                     reductions of then_reductions on a duplicate of the
 *                     world, R failing its part of each: every process of
 *                     every node must return an error.
 *   fault learnfail BYTES  run with MPIR_CVAR_TOPO_DEBUG_NODE_FAILED=R on
 *                     one node, the built-in tuning: 30 allgathers of
 *                     BYTES per process on a duplicate of the world, the
 *                     learner's trials among them; the engine's ways fail
 *                     (fast), MPICH's ring works.  Prints per call
 *                     "fault: rank R: learn N: success|error", "wrong
 *                     data" where a success brought wrong bytes.
 *   fault nbstack BYTES  run with test/system/failmmap.so preloaded
 *                     (FAILMMAP_RANK=R): R cannot map a coroutine stack.
 *                     A persistent allreduce on a duplicate of the world,
 *                     then a blocking and a nonblocking one on another:
 *                     each ends on every process, with an error or the
 *                     right data ("fault: rank R: nonblocking: success
 *                     class 0").
 *   fault ptracer BYTES  the application declares its parent its tracer
 *                     (PR_SET_PTRACER) before MPI_Init; an allgather on a
 *                     duplicate of the world, freed afterwards; prints
 *                     "fault: rank R: the application declared PID"
 *                     (faults.sh checks the prctl calls with strace).
 *   fault shmkill win|engine  rank 1 kills itself (SIGKILL) as it opens a
 *                     shared memory segment that rank 0 has created and
 *                     waits for it to attach: in MPI_Win_allocate_shared
 *                     (win) or in the engine's setup at the first allgather
 *                     (engine): the job must end, leaving nothing in
 *                     /dev/shm. */

#define _GNU_SOURCE     /* O_TMPFILE */
#include "mpi.h"
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* shmkill: this process dies as it opens a segment of MPICH's to attach
 * it: a named one, or a nameless one through its creator's /proc/PID/fd
 * (an O_TMPFILE file in /dev/shm; UCX's own segments are not).  The
 * program's own open() comes before the C library's for MPICH's calls. */
static int die_attaching;

int open(const char *path, int flags, ...)
{
    int mode = 0;

    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    if (die_attaching) {
        char target[256] = "";
        if (strncmp(path, "/proc/", 6) == 0 && strstr(path, "/fd/"))
            (void) readlink(path, target, sizeof(target) - 1);
        if (strstr(path, "mpich_shar_tmp") || strncmp(target, "/dev/shm/#", 10) == 0) {
            fprintf(stderr, "fault: rank 1 dies opening %s\n", path);
            raise(SIGKILL);
        }
    }
    return (int) syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

static void drop_ptrace_capability(void)
{
    struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct d[2];

    if (syscall(SYS_capget, &h, d) != 0)
        return;
    d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
    syscall(SYS_capset, &h, d);
}

/* After a failed call: allreduces and reduces (to the last rank) of 4
 * and 2n ints and a barrier on the same communicator, one round and
 * several: a node whose process failed must not send what it has as
 * good.  Prints "fault: rank R: then allreduce 4: error class K" and the
 * like. */
static void then_reductions(MPI_Comm comm, int n)
{
    int rank, size, *a = malloc(2 * sizeof(int) * n), *b = malloc(2 * sizeof(int) * n);

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int k = 0; k < 5; k++) {
        int cnt = k % 2 ? 2 * n : 4, err, cls, bad = 0;
        int wants = k < 2 || (k < 4 && rank == size - 1);
        const char *what = k < 2 ? "allreduce" : k < 4 ? "reduce" : "barrier";
        for (int i = 0; i < cnt; i++) {
            a[i] = rank + i;
            b[i] = -1;
        }
        if (k < 2)
            err = MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, comm);
        else if (k < 4)
            err = MPI_Reduce(a, b, cnt, MPI_INT, MPI_SUM, size - 1, comm);
        else
            err = MPI_Barrier(comm);
        for (int i = 0; i < cnt && err == MPI_SUCCESS && wants; i++)
            bad |= b[i] != size * (size - 1) / 2 + size * i;
        MPI_Error_class(err, &cls);
        printf("fault: rank %d: then %s %d: %s class %d\n", rank, what, cnt,
               err != MPI_SUCCESS ? "error" : bad ? "success with wrong data" : "success", cls);
    }
    free(a);
    free(b);
}

/* cma's call: an allgather of m bytes per process, or (red 1) an
 * allreduce of m bytes of ints by MPI_BOR, (red 2) a reduce of them to
 * rank 0; every byte of a process's input is its rank + 1 */
static int cma_call(int red, char *send, char *recv, long m)
{
    if (red == 2)
        return MPI_Reduce(send, recv, (int) (m / sizeof(int)), MPI_INT, MPI_BOR, 0,
                          MPI_COMM_WORLD);
    if (red)
        return MPI_Allreduce(send, recv, (int) (m / sizeof(int)), MPI_INT, MPI_BOR,
                             MPI_COMM_WORLD);
    return MPI_Allgather(send, (int) m, MPI_BYTE, recv, (int) m, MPI_BYTE, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;
    long m = argc > 2 ? atol(argv[2]) : 1 << 20;
    char *send, *recv;

    /* the application's own tracer, declared before MPI_Init */
    if (argc > 1 && strcmp(argv[1], "ptracer") == 0)
        prctl(PR_SET_PTRACER, (unsigned long) getppid(), 0, 0, 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    send = malloc(m);
    recv = malloc(m * size);
    memset(send, rank + 1, m);

    if (argc > 3 && strcmp(argv[1], "shmkill") == 0) {
        die_attaching = rank == 1;
        if (strcmp(argv[3], "win") == 0) {
            MPI_Win win;
            char *base;
            MPI_Win_allocate_shared(m, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
            MPI_Win_free(&win);
        } else
            MPI_Allgather(send, (int) m, MPI_BYTE, recv, (int) m, MPI_BYTE, MPI_COMM_WORLD);
        printf("fault: rank %d: attached a segment without rank 1\n", rank);
    } else if (argc > 1 && strcmp(argv[1], "kill") == 0) {
        for (int i = 0; i < 1000; i++) {
            if (rank == 1 && i == 2)
                raise(SIGKILL);
            MPI_Allgather(send, (int) m, MPI_BYTE, recv, (int) m, MPI_BYTE, MPI_COMM_WORLD);
        }
        printf("fault: rank %d: finished the loop\n", rank);
    } else if (argc > 1 && strcmp(argv[1], "staging") == 0) {
        /* every other int of 2n: the engine stages it through a copy */
        int n = (int) (m / sizeof(int)), *ag = malloc(2 * sizeof(int) * n * size);
        int *bc = malloc(2 * sizeof(int) * n);
        long sum = 0;
        int nb = argc > 3 && strcmp(argv[3], "nb") == 0;
        MPI_Datatype vec, strided;
        MPI_Comm c1, c2;
        MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
        /* extent 2n ints: process q's block starts at int 2n.q */
        MPI_Type_create_resized(vec, 0, 2 * n * (MPI_Aint) sizeof(int), &strided);
        MPI_Type_commit(&strided);
        MPI_Type_free(&vec);
        MPI_Comm_dup(MPI_COMM_WORLD, &c1);
        MPI_Comm_dup(MPI_COMM_WORLD, &c2);
        for (int c = 0; c < 2; c++) {
            MPI_Comm comm = c == 0 ? c1 : c2;
            int err, cls = MPI_SUCCESS, bad = 0;
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            for (int i = 0; i < 2 * n * size; i++)
                ag[i] = -1;
            for (int i = 0; i < 2 * n; i++)
                bc[i] = rank == 0 ? i : -1;
            if (nb) {
                MPI_Request req;
                if (c == 0)
                    MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, strided, comm,
                                       MPI_INFO_NULL, &req);
                else
                    MPI_Bcast_init(bc, 1, strided, 0, comm, MPI_INFO_NULL, &req);
                MPI_Request_free(&req);
            }
            if (c == 0) {
                /* my block: ints 2n.rank, 2n.rank + 2, ...; IN_PLACE */
                for (int i = 0; i < n; i++)
                    ag[2 * n * rank + 2 * i] = rank * n + i;
                if (nb) {
                    MPI_Request req;
                    err = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, strided, comm,
                                         &req);
                    if (err == MPI_SUCCESS)
                        err = MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else
                    err = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, strided, comm);
                for (int q = 0; q < size && err == MPI_SUCCESS; q++)
                    for (int i = 0; i < n; i++)
                        bad |= ag[2 * n * q + 2 * i] != q * n + i;
            } else if (nb) {
                MPI_Request req;
                err = MPI_Ibcast(bc, 1, strided, 0, comm, &req);
                if (err == MPI_SUCCESS)
                    err = MPI_Wait(&req, MPI_STATUS_IGNORE);
                for (int i = 0; i < n && err == MPI_SUCCESS; i++)
                    bad |= bc[2 * i] != 2 * i;
            } else {
                err = MPI_Bcast(bc, 1, strided, 0, comm);
                for (int i = 0; i < n && err == MPI_SUCCESS; i++)
                    bad |= bc[2 * i] != 2 * i;
            }
            MPI_Error_class(err, &cls);
            printf("fault: rank %d: %s: %s class %d\n", rank, c == 0 ? "allgather" : "bcast",
                   err != MPI_SUCCESS ? "error" : bad ? "success with wrong data" : "success",
                   cls);
            then_reductions(comm, n);
        }
        MPI_Reduce(&m, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("fault: afterwards a reduce %s\n", sum == m * size ? "works" : "is wrong");
        fflush(stdout);
        MPI_Comm_free(&c1);
        MPI_Comm_free(&c2);
        MPI_Type_free(&strided);
        free(ag);
        free(bc);
    } else if (argc > 1 && strcmp(argv[1], "nodefail") == 0) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        then_reductions(comm, (int) (m / sizeof(int)));
        fflush(stdout);
        MPI_Comm_free(&comm);
    } else if (argc > 1 && strcmp(argv[1], "learnfail") == 0) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        for (int call = 0; call < 30; call++) {
            int err, bad = 0;
            memset(recv, 0, m * size);
            err = MPI_Allgather(send, (int) m, MPI_BYTE, recv, (int) m, MPI_BYTE, comm);
            for (int r = 0; r < size && err == MPI_SUCCESS; r++)
                bad |= recv[(long) r * m] != r + 1 || recv[(long) r * m + m - 1] != r + 1;
            printf("fault: rank %d: learn %d: %s%s\n", rank, call,
                   err == MPI_SUCCESS ? "success" : "error", bad ? " wrong data" : "");
        }
        fflush(stdout);
        MPI_Comm_free(&comm);
    } else if (argc > 1 && strcmp(argv[1], "nbstack") == 0) {
        /* on each of two duplicates: a persistent allreduce (its stack
         * taken at init), then on the second a blocking allreduce (which
         * sets the engine up) and a nonblocking one */
        int n = (int) (m / sizeof(int)), *a = malloc(sizeof(int) * n), *b = malloc(sizeof(int) * n);
        for (int c = 0; c < 3; c++) {
            MPI_Comm comm;
            MPI_Request req;
            int err, cls, bad = 0;
            const char *what = c == 0 ? "persistent" : c == 1 ? "blocking" : "nonblocking";
            if (c < 2) {
                MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            }
            for (int i = 0; i < n; i++) {
                a[i] = rank + i;
                b[i] = -1;
            }
            if (c == 0) {
                err = MPI_Allreduce_init(a, b, n, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req);
                if (err == MPI_SUCCESS) {
                    err = MPI_Start(&req);
                    if (err == MPI_SUCCESS)
                        err = MPI_Wait(&req, MPI_STATUS_IGNORE);
                    MPI_Request_free(&req);
                }
            } else if (c == 1) {
                err = MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, comm);
            } else {
                err = MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, comm, &req);
                if (err == MPI_SUCCESS)
                    err = MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            for (int i = 0; i < n && err == MPI_SUCCESS; i++)
                bad |= b[i] != size * (size - 1) / 2 + size * i;
            MPI_Error_class(err, &cls);
            printf("fault: rank %d: %s: %s class %d\n", rank, what,
                   err != MPI_SUCCESS ? "error" : bad ? "success with wrong data" : "success",
                   cls);
            if (c != 1)
                MPI_Comm_free(&comm);
        }
        fflush(stdout);
        free(a);
        free(b);
    } else if (argc > 1 && strcmp(argv[1], "ptracer") == 0) {
        /* an engine with CMA on a duplicate, freed: the application's
         * declaration must be back (faults.sh reads the prctl calls) */
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Allgather(send, (int) m, MPI_BYTE, recv, (int) m, MPI_BYTE, comm);
        MPI_Comm_free(&comm);
        printf("fault: rank %d: the application declared %ld\n", rank, (long) getppid());
        fflush(stdout);
    } else if (argc > 1 && strcmp(argv[1], "nomem") == 0) {
        long sum = 0;
        for (int c = 0; c < 2; c++) {
            int err = MPI_Allgather(send, (int) m, MPI_BYTE, recv, (int) m, MPI_BYTE,
                                    MPI_COMM_WORLD);
            int cls = MPI_SUCCESS;
            MPI_Error_class(err, &cls);
            printf("fault: rank %d: call %d: %s class %d\n", rank, c,
                   err == MPI_SUCCESS ? "success" : "error", cls);
        }
        MPI_Reduce(&m, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("fault: afterwards a reduce %s\n", sum == m * size ? "works" : "is wrong");
        fflush(stdout);
    } else {
        int red = argc > 3 && strcmp(argv[3], "reduce") == 0 ? 1 :
            argc > 3 && strcmp(argv[3], "rootreduce") == 0 ? 2 : 0;
        int err = cma_call(red, send, recv, m);
        if (err != MPI_SUCCESS) {
            printf("fault: rank %d: the first %s failed\n", rank,
                   red == 2 ? "reduce" : red ? "allreduce" : "allgather");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        drop_ptrace_capability();
        if (rank == 1)
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        err = cma_call(red, send, recv, m);
        if (err != MPI_SUCCESS) {
            /* the error's stack is longer than MPI_MAX_ERROR_STRING: the
             * string must end inside its buffer, and nothing after it may
             * change (a guard of 'g's with a NUL inside, so that a printer
             * that reads past the buffer then writes further on) */
            struct {
                char msg[MPI_MAX_ERROR_STRING];
                char guard[256];
            } b;
            int len, damaged = 0;
            memset(b.guard, 'g', sizeof(b.guard));
            b.guard[64] = '\0';
            MPI_Error_string(err, b.msg, &len);
            for (int i = 0; i < (int) sizeof(b.guard); i++)
                damaged |= b.guard[i] != (i == 64 ? '\0' : 'g');
            if (damaged || strnlen(b.msg, sizeof(b.msg)) == sizeof(b.msg))
                printf("fault: rank %d: MPI_Error_string wrote past its buffer\n", rank);
            printf("fault: rank %d: error: %s\n", rank, b.msg);
        } else {
            int bad = 0, all = 0;
            for (int q = 0; q < size; q++)
                all |= q + 1;
            for (int q = 0; q < size && !red; q++)
                for (long i = 0; i < m; i++)
                    bad |= recv[(long) q * m + i] != (char) (q + 1);
            for (long i = 0; i < (long) (m / sizeof(int)) * (long) sizeof(int) &&
                 (red == 1 || (red == 2 && rank == 0)); i++)
                bad |= recv[i] != (char) all;
            printf("fault: rank %d: success%s\n", rank, bad ? " with wrong data" : "");
        }
        then_reductions(MPI_COMM_WORLD, (int) (m / sizeof(int)));
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
