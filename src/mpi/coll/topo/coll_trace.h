/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef COLL_TRACE_H_INCLUDED
#define COLL_TRACE_H_INCLUDED

/* Which collective algorithm ran: the generated MPIR_<Coll>_impl (CVAR path)
 * and MPIR_<Coll>_allcomm_auto (selection path) call MPIR_COLL_TRACE before
 * running an algorithm; with MPIR_CVAR_COLL_TRACE set, a table of what ran is
 * printed at MPI_Finalize. Costs one branch per call when off. */
void MPIR_Coll_trace_record(MPIR_Comm * comm, const char *coll, const char *algo,
                            const char *how);

#define MPIR_COLL_TRACE(comm, coll, algo, how)                          \
    do {                                                                \
        if (unlikely(MPIR_CVAR_COLL_TRACE))                             \
            MPIR_Coll_trace_record(comm, coll, algo, how);              \
    } while (0)

#endif /* COLL_TRACE_H_INCLUDED */
