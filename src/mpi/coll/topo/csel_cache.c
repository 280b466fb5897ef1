/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "csel_topo.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_COLL_SELECTION_CACHE
      category    : COLLECTIVE
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Each communicator remembers, per blocking allgather, allreduce,
        barrier, bcast and reduce, the last decision of each collective
        selection tree (MPIR, CH4, POSIX) with the arguments the tree
        can look at (counts, predefined datatypes and operation, whether
        the send buffer is MPI_IN_PLACE), and gives it again to a call
        with the same ones instead of walking the tree: the walks are a
        tenth of a small call. Not used for derived datatypes or
        user-defined operations (a freed handle can come back as another
        one), nor where the tree asks something that changes during the
        run (topo_engine). false: walk the tree on every call.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* The key of a call for its pruned selection tree (csel.c): everything the
 * tree's predicates read that is not fixed for the communicator.  0 where
 * the call is not cached: another collective, a derived datatype or a
 * user-defined operation, whose handle may name something else after a
 * free. */
int MPIR_Csel_cache_key(const MPIR_Csel_coll_sig_s * s, intptr_t key[MPIR_CSEL_CACHE_KEY_LEN])
{
    if (!MPIR_CVAR_COLL_SELECTION_CACHE || s->is_persistent)
        return 0;
    memset(key, 0, sizeof(intptr_t) * MPIR_CSEL_CACHE_KEY_LEN);
    switch (s->coll_type) {
        case MPIR_CSEL_COLL_TYPE__BARRIER:
            return 1;
        case MPIR_CSEL_COLL_TYPE__BCAST:
            key[0] = (intptr_t) s->u.bcast.count;
            key[1] = (intptr_t) s->u.bcast.datatype;
            return HANDLE_IS_BUILTIN(s->u.bcast.datatype);
        case MPIR_CSEL_COLL_TYPE__ALLREDUCE:
            key[0] = (intptr_t) s->u.allreduce.count;
            key[1] = (intptr_t) s->u.allreduce.datatype;
            key[2] = (intptr_t) s->u.allreduce.op;
            key[3] = s->u.allreduce.sendbuf == MPI_IN_PLACE;
            return HANDLE_IS_BUILTIN(s->u.allreduce.datatype) &&
                HANDLE_IS_BUILTIN(s->u.allreduce.op);
        case MPIR_CSEL_COLL_TYPE__REDUCE:
            key[0] = (intptr_t) s->u.reduce.count;
            key[1] = (intptr_t) s->u.reduce.datatype;
            key[2] = (intptr_t) s->u.reduce.op;
            key[3] = s->u.reduce.sendbuf == MPI_IN_PLACE;
            return HANDLE_IS_BUILTIN(s->u.reduce.datatype) && HANDLE_IS_BUILTIN(s->u.reduce.op);
        case MPIR_CSEL_COLL_TYPE__ALLGATHER:
            key[0] = (intptr_t) s->u.allgather.sendcount;
            key[1] = (intptr_t) s->u.allgather.sendtype;
            key[2] = (intptr_t) s->u.allgather.recvcount;
            key[3] = (intptr_t) s->u.allgather.recvtype;
            key[4] = s->u.allgather.sendbuf == MPI_IN_PLACE;
            return HANDLE_IS_BUILTIN(s->u.allgather.recvtype) &&
                (s->u.allgather.sendbuf == MPI_IN_PLACE ||
                 HANDLE_IS_BUILTIN(s->u.allgather.sendtype));
        default:
            return 0;
    }
}
