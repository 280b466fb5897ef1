/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Counts the process's sched_yield calls (loaded with LD_PRELOAD by
 * yield.sh); yield_wait.c reads the count through yield_count(). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

static unsigned long count;

unsigned long yield_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_RELAXED);
}

int sched_yield(void)
{
    static int (*next) (void);
    if (!next)
        next = (int (*)(void)) dlsym(RTLD_NEXT, "sched_yield");
    __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    return next ? next() : 0;
}
