/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_HOOKS_H_INCLUDED
#define TOPO_HOOKS_H_INCLUDED

/* Hooks MPICH's collective setup/teardown (coll_impl.c) calls. Kept out of the
 * globally included headers so that changing them rebuilds one file. */
void MPIR_Topo_comm_free(MPIR_Comm * comm);     /* topo.c */
void MPIR_Coll_trace_init(void);        /* coll_trace.c */
void MPIR_Coll_trace_finalize(void);    /* coll_trace.c */

#endif /* TOPO_HOOKS_H_INCLUDED */
