/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef CH4_YIELD_H_INCLUDED
#define CH4_YIELD_H_INCLUDED

#include <sched.h>

/* Gives the processor away after an idle poll when
 * MPIR_CVAR_CH4_YIELD_WHEN_IDLE says so (ch4_yield.c).  The policy is
 * decided on the first idle poll, when the node's size is known. */
extern int MPIDI_yield_when_idle;
int MPIDI_yield_when_idle_resolve(void);

/* Inside a nonblocking collective's coroutine (src/mpi/coll/topo/topo_nb.c),
 * an idle poll gives the processor back to the progress poll that resumed
 * it instead, so that MPICH's blocking calls there do not block the
 * process. */
struct MPIR_Topo_nb;
extern struct MPIR_Topo_nb *MPIR_Topo_nb_current;
void MPIR_Topo_nb_yield(void);

#define MPIDI_IDLE_YIELD()                                              \
    do {                                                                \
        if (unlikely(MPIR_Topo_nb_current != NULL))                     \
            MPIR_Topo_nb_yield();                                       \
        else if (unlikely(MPIDI_yield_when_idle != 0) &&                \
            (MPIDI_yield_when_idle > 0 || MPIDI_yield_when_idle_resolve())) \
            sched_yield();                                              \
    } while (0)

#endif /* CH4_YIELD_H_INCLUDED */
