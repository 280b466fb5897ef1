/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Learning a call's way at run time, for the ways that no model can order
 * (the kernel's CMA copy against the node segment's two copies, MPICH's
 * ring against both): a one-node communicator's first calls of each size
 * class run each way in turn, first WARM untimed calls (the caller says
 * how many each way needs before it runs as it will for ever: its first
 * touch of new pages, the shared cells' first pass for MPICH's ring), then
 * TRIALS timed ones; each process keeps each way's fastest trial, and
 * after the last one allreduce (MAX) gives every process the same times:
 * the way whose fastest trial was fastest on the slowest process is kept
 * for the class, as STAR-MPI (Faraj, Yuan and Lowenthal, ICS 2006) delays
 * the choice to the application's own calls.  Every member makes the same
 * calls with the same bytes (MPI's type signature rule), sees the same
 * CVARs and the same CMA probe (agreed at setup), so all take the same
 * way at the same call.  Used by allgather (topo_allgather_learn.c), bcast
 * (topo_bcast_pipeline.c), allreduce and reduce (topo_allreduce_cma.c)
 * topo_pipeline. */

#include "topo_engine.h"
#include "coll_trace.h"

/* the size class of m bytes: log2 */
MPIDI_Topo_learn_t *MPIDI_Topo_learn_class(MPIDI_Topo_learn_t * classes, MPI_Aint m)
{
    int c = 0;

    while (c < MPIDI_TOPO_LEARN_CLASSES - 1 && (m >> (c + 1)) > 0)
        c++;
    return &classes[c];
}

/* the agreement after the last trial: *l chosen, also after an error */
static int learn_agree(MPIDI_Topo_learn_t * l, const MPIDI_Topo_learn_info_t * li, MPI_Aint m,
                       MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno;
    double mine[MPIDI_TOPO_LEARN_MAX_WAYS], all[MPIDI_TOPO_LEARN_MAX_WAYS];
    int way = 0;

    /* a way never timed (TRIALS lowered through MPI_T while learning) is
     * not chosen */
    for (int w = 0; w < li->nways; w++)
        mine[w] = l->best[w] > 0 ? l->best[w] : 1e30;
    mpi_errno = MPIR_Allreduce_intra_recursive_doubling(mine, all, li->nways, MPI_DOUBLE,
                                                        MPI_MAX, comm, errflag);
    if (mpi_errno) {
        /* the communicator is failing anyway */
        l->chosen = 1 + li->fallback;
        return mpi_errno;
    }
    for (int w = 1; w < li->nways; w++)
        if (all[w] < all[way])
            way = w;
    l->chosen = 1 + way;
    if (MPIR_CVAR_COLL_TRACE && comm->rank == 0) {
        MPIR_Topo_line_t line = { .len = 0 };
        MPIR_Topo_line_add(&line, "mpich-topo: %s learned on a one-node communicator of %d, %ld B%s: "
                           "%s (fastest trials, slowest process:", li->coll, comm->local_size,
                           (long) m, li->per_process ? " per process" : "", li->names[way]);
        for (int w = 0; w < li->nways; w++)
            if (all[w] < 1e30)
                MPIR_Topo_line_add(&line, "%s %s %.1f us", w ? "," : "", li->names[w],
                                   all[w] * 1e6);
            else
                MPIR_Topo_line_add(&line, "%s %s untimed", w ? "," : "", li->names[w]);
        MPIR_Topo_line_add(&line, ")");
        MPIR_Topo_line_print(&line);
    }
    return MPI_SUCCESS;
}

/* where call number calls falls: its way, and *pos, its place among that
 * way's calls (0..warm-1 untimed, then the trials); nways if learning is
 * over.  Each way's calls are consecutive: a warm-up helps only the trials
 * that follow it. */
static int learn_slot(int calls, const MPIDI_Topo_learn_info_t * li, int *pos)
{
    for (int w = 0; w < li->nways; w++) {
        /* (long long: TRIALS may be as large as an int holds) */
        long long n = (long long) li->warm[w] + li->trials;

        if (calls < n) {
            *pos = calls;
            return w;
        }
        calls -= (int) n;
    }
    *pos = 0;
    return li->nways;
}

int MPIDI_Topo_learn_way(const MPIDI_Topo_learn_t * l, const MPIDI_Topo_learn_info_t * li)
{
    int pos, way;

    if (l->chosen)
        return l->chosen - 1;
    way = learn_slot(l->calls, li, &pos);
    /* (past the end only where TRIALS was lowered through MPI_T since the
     * last call: the next call agrees) */
    return way < li->nways ? way : li->nways - 1;
}

int MPIDI_Topo_learn_trial(MPIDI_Topo_learn_t * l, const MPIDI_Topo_learn_info_t * li, int way,
                           double dt, MPI_Aint m, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int pos;

    /* dt 0: the call failed, and its time says nothing of its way (one
     * that fails at once would look fastest); untimed on one process, a
     * way is never chosen (learn_agree) */
    if (dt > 0 && learn_slot(l->calls, li, &pos) == way && pos >= li->warm[way] &&
        (l->best[way] <= 0 || dt < l->best[way]))
        l->best[way] = dt;
    /* even after an error, so that every process stays at the same call;
     * past the end too: TRIALS may have been lowered through MPI_T since
     * (ALL_EQ, so on every process alike) */
    if (learn_slot(++l->calls, li, &pos) == li->nways)
        return learn_agree(l, li, m, comm, errflag);
    return MPI_SUCCESS;
}
