/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The waiting policy of CH4's blocking waits (MPID_Progress_wait, under
 * MPI_Wait and every blocking call built on it, and the POSIX
 * release_gather flag waits): poll only, or give the processor away after
 * each poll that found nothing to do.  A process that only polls keeps
 * its core for a whole time slice; when a node runs more processes than
 * it has processors, the process it waits for cannot run meanwhile and
 * each wait lasts scheduler quanta (milliseconds) instead of microseconds.
 * The engine's waits (src/mpid/ch4/shm/topo) follow the same policy, so
 * that MPICH's algorithms and ours are compared under one. */

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_YIELD_WHEN_IDLE
      category    : CH4
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : |-
        Whether blocking waits give the processor away (sched_yield) after
        each poll that found nothing to do, as Open MPI's
        mpi_yield_when_idle does. Polling only is the fastest when every
        process has a core of its own; yielding lets the process being
        waited for run when processes share cores.
        auto - yield when this node runs more processes than the machine
               has online processors, or when cliques emulate nodes
               (MPIR_CVAR_NUM_CLIQUES > 1) and the job has more processes
               than processors; poll only otherwise.
        on   - always yield: for sharing that a process cannot see, such as
               emulated nodes in network namespaces of one machine.
        off  - never yield (MPICH's own behaviour).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#include "mpidimpl.h"
#include <unistd.h>

/* -1: not decided yet; 0: poll only; 1: yield when idle */
int MPIDI_yield_when_idle = -1;

/* Decides the policy once; returns it.  Called from idle polls only, so
 * its cost never delays a wait that has work to do. */
int MPIDI_yield_when_idle_resolve(void)
{
    long ncpus;
    int yes;

    switch (MPIR_CVAR_CH4_YIELD_WHEN_IDLE) {
        case MPIR_CVAR_CH4_YIELD_WHEN_IDLE_on:
            yes = 1;
            break;
        case MPIR_CVAR_CH4_YIELD_WHEN_IDLE_off:
            yes = 0;
            break;
        default:
            /* before the process manager told us the node, decide later */
            if (MPIR_Process.local_size <= 0)
                return 0;
            ncpus = sysconf(_SC_NPROCESSORS_ONLN);
            yes = ncpus > 0 && (MPIR_Process.local_size > ncpus ||
                                (MPIR_CVAR_NUM_CLIQUES > 1 && MPIR_Process.size > ncpus));
            break;
    }
    MPIDI_yield_when_idle = yes;
    return yes;
}
