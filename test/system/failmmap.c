/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* LD_PRELOAD shim for faults.sh: on the process whose PMI_RANK is
 * FAILMMAP_RANK, private anonymous mappings made without reserve
 * (MAP_NORESERVE: the coroutine stacks of nonblocking and persistent
 * collectives) of at least FAILMMAP_BYTES (default 65536) fail with
 * ENOMEM, as they would where the address space or vm.max_map_count ran
 * out.  Every other mapping goes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int failing(void)
{
    static int decided = -1;

    if (decided < 0) {
        const char *r = getenv("PMI_RANK"), *f = getenv("FAILMMAP_RANK");
        decided = r && f && strcmp(r, f) == 0;
    }
    return decided;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static void *(*real) (void *, size_t, int, int, int, off_t);
    const char *b = getenv("FAILMMAP_BYTES");

    if (real == NULL)
        real = (void *(*)(void *, size_t, int, int, int, off_t)) dlsym(RTLD_NEXT, "mmap");
    if ((flags & MAP_NORESERVE) && (flags & MAP_ANONYMOUS) && !(flags & MAP_SHARED) &&
        len >= (size_t) (b ? atol(b) : 65536) && failing()) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return real(addr, len, prot, flags, fd, off);
}
