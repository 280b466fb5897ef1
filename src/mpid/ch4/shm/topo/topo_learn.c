/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Learning a call's way at run time, for the ways that no model can order
 * (the kernel's CMA copy against the node segment's two copies, MPICH's
 * ring against both): a one-node communicator's first calls of each size
 * class try each way TRIALS times, each process keeps each way's fastest
 * trial (the first also pays page faults on a new buffer), and after the
 * last trial one allreduce (MAX) gives every process the same times: the
 * way whose fastest trial was fastest on the slowest process is kept for
 * the class, as STAR-MPI (Faraj, Yuan and Lowenthal, ICS 2006) delays the
 * choice to the application's own calls.  Every member makes the same
 * calls with the same bytes (MPI's type signature rule), sees the same
 * CVARs and the same CMA probe (agreed at setup), so all take the same
 * way at the same call.  Used by allgather (topo_allgather_learn.c) and
 * bcast (topo_bcast_pipeline.c) topo_pipeline. */

#include "topo_engine.h"

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
    double all[MPIDI_TOPO_LEARN_MAX_WAYS];
    int way = 0;

    mpi_errno = MPIR_Allreduce_intra_recursive_doubling(l->best, all, li->nways, MPI_DOUBLE,
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
        fprintf(stderr, "mpich-topo: %s learned on a one-node communicator of %d, %ld B%s: %s "
                "(fastest trials, slowest process:", li->coll, comm->local_size, (long) m,
                li->per_process ? " per process" : "", li->names[way]);
        for (int w = 0; w < li->nways; w++)
            fprintf(stderr, "%s %s %.1f us", w ? "," : "", li->names[w], all[w] * 1e6);
        fprintf(stderr, ")\n");
        fflush(stderr);
    }
    return MPI_SUCCESS;
}

int MPIDI_Topo_learn_trial(MPIDI_Topo_learn_t * l, const MPIDI_Topo_learn_info_t * li, int way,
                           double dt, MPI_Aint m, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    if (l->calls < li->nways || dt < l->best[way])
        l->best[way] = dt;
    /* even after an error, so that every process stays at the same call;
     * ">=": TRIALS may have been lowered through MPI_T since (ALL_EQ) */
    if (++l->calls >= li->nways * li->trials)
        return learn_agree(l, li, m, comm, errflag);
    return MPI_SUCCESS;
}
