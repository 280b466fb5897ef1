/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* How fast data written by one core reaches another: the quantity that a
 * shared segment's copies pay for on every call, and that varies on a
 * shared virtual machine from one period to the next (its "modes": the
 * host places the vCPUs and the memory behind them).  No MPI.
 *
 *   cc -O2 -o xcore bench/xcore.c && ./xcore [BYTES] [ITERS]
 *
 * Two processes pinned to CPUs 0 and 1 share a mapping of BYTES (512 KiB):
 *  - copy: the first writes the whole buffer, raises a flag; the second
 *    copies it out and answers; time per round trip and GB/s;
 *  - line: the two pass a counter back and forth in one cache line; half
 *    a round trip is one line's move between the cores.
 * Prints one line: "BYTES B write+remote copy: T us (R GB/s); line
 * one-way N ns".  bench/results/osu-2core-reduce-root quotes it. */

#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_ROUNDS 200000

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof(s), &s) != 0) {
        perror("xcore: sched_setaffinity");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    size_t m = argc > 1 ? strtoul(argv[1], NULL, 0) : 512 * 1024;
    long iters = argc > 2 ? atol(argv[2]) : 2000;
    /* the data, then the two flags on lines of their own */
    char *sh = mmap(NULL, m + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || m == 0 || iters <= 0) {
        fprintf(stderr, "xcore: usage: xcore [BYTES > 0] [ITERS > 0]\n");
        return 2;
    }
    _Atomic long *flag = (_Atomic long *) (sh + m), *ack = (_Atomic long *) (sh + m + 128);
    double copy = 0, line;
    pid_t p;

    atomic_store(flag, 0);
    atomic_store(ack, 0);
    p = fork();
    pin(p == 0 ? 1 : 0);
    if (p == 0) {
        char *out = malloc(m);
        long sum = 0;
        for (long i = 1; i <= iters; i++) {
            while (atomic_load(flag) < i);
            memcpy(out, sh, m);
            sum += out[i % m];  /* (keeps the copy) */
            atomic_store(ack, i);
        }
        _exit(sum == -1);
    }
    for (long i = 1; i <= iters; i++) {
        double t0 = now();
        memset(sh, (int) i, m);
        atomic_store(flag, i);
        while (atomic_load(ack) < i);
        copy += now() - t0;
    }
    waitpid(p, NULL, 0);

    atomic_store(flag, 0);
    atomic_store(ack, 0);
    p = fork();
    pin(p == 0 ? 1 : 0);
    if (p == 0) {
        for (long i = 1; i <= LINE_ROUNDS; i++) {
            while (atomic_load(flag) < i);
            atomic_store(ack, i);
        }
        _exit(0);
    }
    line = now();
    for (long i = 1; i <= LINE_ROUNDS; i++) {
        atomic_store(flag, i);
        while (atomic_load(ack) < i);
    }
    line = (now() - line) / LINE_ROUNDS / 2;
    waitpid(p, NULL, 0);
    printf("%zu B write+remote copy: %.1f us (%.1f GB/s); line one-way %.0f ns\n", m,
           copy / iters * 1e6, m / (copy / iters) / 1e9, line * 1e9);
    return 0;
}
