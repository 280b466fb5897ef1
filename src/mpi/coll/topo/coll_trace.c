/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo_hooks.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_COLL_TRACE
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Report which MPIR-level collective algorithms ran. 0: off. 1: at
        MPI_Finalize, rank 0 of MPI_COMM_WORLD prints one line per
        (collective, algorithm, how it was chosen, communicator kind and
        size) with the number of calls. 2: every process prints its own
        table. "how" is "cvar" (an _INTRA/_INTER_ALGORITHM CVAR forced it) or
        "selection" (the JSON-driven selection picked it); the communicator
        kind shows whether it ran on the user's communicator ("parent" or
        "flat") or on a node ("node") or node-roots ("node_roots")
        sub-communicator of a CH4 composition.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define TRACE_MAX_ENTRIES 256

typedef struct {
    const char *coll, *algo, *how;      /* string literals from mpir_coll.c */
    int kind;                   /* hierarchy kind, or -1 for intercommunicators */
    int size;
    long calls;
} trace_entry_t;

static trace_entry_t trace_table[TRACE_MAX_ENTRIES];
static int trace_count;
static long trace_dropped;

void MPIR_Coll_trace_record(MPIR_Comm * comm, const char *coll, const char *algo,
                            const char *how)
{
    int kind = comm->comm_kind == MPIR_COMM_KIND__INTERCOMM ? -1 : (int) comm->hierarchy_kind;
    int size = comm->local_size;

    /* diagnostics only: counts may race under MPI_THREAD_MULTIPLE */
    for (int i = 0; i < trace_count; i++) {
        trace_entry_t *e = &trace_table[i];
        if (e->coll == coll && e->algo == algo && e->how == how && e->kind == kind &&
            e->size == size) {
            e->calls++;
            return;
        }
    }
    if (trace_count == TRACE_MAX_ENTRIES) {
        trace_dropped++;
        return;
    }
    trace_table[trace_count++] = (trace_entry_t) {
    coll, algo, how, kind, size, 1};
}

static const char *kind_name(int kind)
{
    switch (kind) {
        case -1:
            return "inter";
        case MPIR_COMM_HIERARCHY_KIND__FLAT:
            return "flat";
        case MPIR_COMM_HIERARCHY_KIND__PARENT:
            return "parent";
        case MPIR_COMM_HIERARCHY_KIND__NODE_ROOTS:
            return "node_roots";
        case MPIR_COMM_HIERARCHY_KIND__NODE:
            return "node";
        default:
            return "?";
    }
}

void MPIR_Coll_trace_finalize(void)
{
    if (MPIR_CVAR_COLL_TRACE <= 0 || (MPIR_CVAR_COLL_TRACE == 1 && MPIR_Process.rank != 0))
        return;
    fprintf(stderr, "mpich-topo: collective algorithms run by rank %d "
            "(collective algorithm how-chosen communicator size: calls)\n", MPIR_Process.rank);
    for (int i = 0; i < trace_count; i++) {
        trace_entry_t *e = &trace_table[i];
        fprintf(stderr, "mpich-topo:   %-10s %-40s %-9s %-10s %5d: %ld\n", e->coll, e->algo,
                e->how, kind_name(e->kind), e->size, e->calls);
    }
    if (trace_dropped)
        fprintf(stderr, "mpich-topo:   (%ld calls not recorded: table full)\n", trace_dropped);
    fflush(stderr);
    trace_count = 0;
    trace_dropped = 0;
}
