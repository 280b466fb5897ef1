/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* One call's timeline (MPIR_CVAR_TOPO_TIMELINE): each process records
 * what it waited for and when, in memory during the call, and writes it
 * to a file of its own after, so that recording costs a clock read per
 * event and no I/O inside the call. */

#include "topo_engine.h"
#include <stdio.h>
#include <unistd.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_TIMELINE
      category    : TOPO
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        A file name prefix: each process appends to PREFIX.<rank in
        MPI_COMM_WORLD> the timeline of one call of the topo_pipeline and
        topo_multileader engine on each communicator (when each chunk or
        round was copied in, received, sent, reduced and copied out, in
        microseconds of the node's clock), for bench/timeline.py. Empty
        (default): no timeline. Only that call is slowed down.

    - name        : MPIR_CVAR_TOPO_TIMELINE_CALL
      category    : TOPO
      type        : int
      default     : 2
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Which call of each collective (bcast, allgather, allreduce with
        reduce) on each communicator MPIR_CVAR_TOPO_TIMELINE records, among
        those the topo_pipeline and topo_multileader engine runs, counting
        from 1 (default 2: the first after the one that first touched the
        buffers).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* ---- timeline of one call --------------------------------------------- */

#define MPIDI_TOPO_TIMELINE_MAX 16384

struct MPIDI_Topo_timeline {
    const char *coll;
    int context_id;
    uint64_t first;             /* rank 0's process: disjoint communicators
                                 * (node communicators) share context ids */
    MPI_Aint bytes;
    int n, lost;
    struct {
        double t;
        const char *what;
        MPI_Aint a, b;
    } ev[MPIDI_TOPO_TIMELINE_MAX];
};

void MPIDI_Topo_timeline_begin(MPIDI_Topo_engine_t * e, MPIR_Comm * comm, const char *coll,
                               MPI_Aint bytes)
{
    int which;

    /* (every engine call comes here: nothing more than this test when off) */
    if (MPIR_CVAR_TOPO_TIMELINE == NULL || MPIR_CVAR_TOPO_TIMELINE[0] == '\0')
        return;
    /* counted per collective: a bcast's timeline is not lost to the
     * allgathers an application makes first */
    which = strcmp(coll, "bcast") == 0 ? 0 : strncmp(coll, "allgather", 9) == 0 ? 1 : 2;
    if (++e->calls[which] != (uint64_t) MPIR_CVAR_TOPO_TIMELINE_CALL || e->tl)
        return;
    /* a diagnostic: without memory, no timeline rather than a failed call */
    e->tl = MPL_malloc(sizeof(*e->tl), MPL_MEM_OTHER);
    if (e->tl == NULL)
        return;
    e->tl->coll = coll;
    e->tl->context_id = comm->context_id;
    if (MPID_Comm_get_lpid(comm, 0, &e->tl->first, FALSE) != MPI_SUCCESS)
        e->tl->first = 0;
    e->tl->bytes = bytes;
    e->tl->n = e->tl->lost = 0;
    MPIDI_Topo_timeline_event(e, "begin", 0, 0);
}

void MPIDI_Topo_timeline_event(MPIDI_Topo_engine_t * e, const char *what, MPI_Aint a,
                               MPI_Aint b)
{
    struct MPIDI_Topo_timeline *tl = e->tl;
    MPL_time_t now;

    if (tl->n == MPIDI_TOPO_TIMELINE_MAX) {
        tl->lost++;
        return;
    }
    MPL_wtime(&now);
    MPL_wtime_todouble(&now, &tl->ev[tl->n].t);
    tl->ev[tl->n].what = what;
    tl->ev[tl->n].a = a;
    tl->ev[tl->n].b = b;
    tl->n++;
}

void MPIDI_Topo_timeline_end(MPIDI_Topo_engine_t * e)
{
    struct MPIDI_Topo_timeline *tl = e->tl;
    char path[4096];
    FILE *f;

    if (tl == NULL)
        return;
    MPIDI_Topo_timeline_event(e, "end", tl->lost, 0);
    snprintf(path, sizeof(path), "%s.%d", MPIR_CVAR_TOPO_TIMELINE,
             MPIR_Process.comm_world->rank);
    f = fopen(path, "a");
    if (f == NULL) {
        fprintf(stderr, "mpich-topo: cannot write the timeline to %s: %s\n", path,
                strerror(errno));
    } else {
        /* context,first,collective,bytes,rank,node,local,leader,t_us,event,a,b */
        for (int i = 0; i < tl->n; i++)
            fprintf(f, "%d,%llu,%s,%lld,%d,%d,%d,%d,%.3f,%s,%lld,%lld\n", tl->context_id,
                    (unsigned long long) tl->first, tl->coll, (long long) tl->bytes, MPIR_Process.comm_world->rank, e->node, e->local_rank,
                    e->is_leader, tl->ev[i].t * 1e6, tl->ev[i].what, (long long) tl->ev[i].a,
                    (long long) tl->ev[i].b);
        fclose(f);
    }
    MPL_free(tl);
    e->tl = NULL;
}
