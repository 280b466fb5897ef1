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
                            const char *how, MPI_Aint count, MPI_Datatype dtype);

/* count and dtype: one process' data (message size ranges in the report) */
#define MPIR_COLL_TRACE(comm, coll, algo, how, count, dtype)            \
    do {                                                                \
        if (unlikely(MPIR_CVAR_COLL_TRACE))                             \
            MPIR_Coll_trace_record(comm, coll, algo, how, count, dtype); \
    } while (0)

/* A topology-aware algorithm `from` ran stock algorithm `algo` instead
 * (how: "fallback" or "step_aside"): counts the call for algo, not from. */
void MPIR_Coll_trace_redirect(MPIR_Comm * comm, const char *coll, const char *from,
                              const char *algo, const char *how, MPI_Aint count,
                              MPI_Datatype dtype);
#define MPIR_COLL_TRACE_REDIRECT(comm, coll, from, algo, how, count, dtype)       \
    do {                                                                        \
        if (unlikely(MPIR_CVAR_COLL_TRACE))                                     \
            MPIR_Coll_trace_redirect(comm, coll, from, algo, how, count, dtype); \
    } while (0)

/* A diagnostic line (trace, MPIR_CVAR_TOPO_PRINT) composed whole, then
 * written to stderr with one call: lines that several processes print at
 * once would otherwise interleave mid-line in mpiexec's output.  A line
 * longer than the buffer ends with "...". */
typedef struct {
    char text[2048];
    size_t len;
} MPIR_Topo_line_t;
void MPIR_Topo_line_add(MPIR_Topo_line_t * line, const char *fmt, ...)
    __attribute__ ((format(printf, 2, 3)));
/* adds the newline, writes the line and empties it */
void MPIR_Topo_line_print(MPIR_Topo_line_t * line);

#endif /* COLL_TRACE_H_INCLUDED */
