/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Counts the process's epoll_wait calls, what libfabric's tcp provider
 * makes each time the netmod is polled (loaded with LD_PRELOAD by
 * waits.sh); waits_poll.c reads the count through epoll_count(). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/epoll.h>

static unsigned long count;

unsigned long epoll_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_RELAXED);
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
    static int (*next) (int, struct epoll_event *, int, int);
    if (!next)
        next = (int (*)(int, struct epoll_event *, int, int)) dlsym(RTLD_NEXT, "epoll_wait");
    __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    return next ? next(epfd, events, maxevents, timeout) : 0;
}
