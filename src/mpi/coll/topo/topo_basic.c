/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"
#include <limits.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_VECTOR_OPS
      category    : TOPO
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        The shared-memory engine's local reductions (allreduce and reduce
        topo_pipeline) of MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND,
        MPI_BOR and MPI_BXOR on 8-, 16-, 32- and 64-bit integers, float and double
        run in vector loops (AVX2 where the CPU has it), which give each
        element what MPICH's scalar loops give it. false: MPICH's loops
        (MPIR_Reduce_local).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Reductions through shared memory work on packed elements of one
 * predefined type.
 *
 * MPI requires only the type signatures of the processes to match: one
 * process may pass n contiguous elements, another one element of a strided
 * vector of n.  Algorithms that stage data in shared memory and size their
 * chunks, or call the operation, with each process' own datatype then
 * disagree about what the shared bytes are (a wrong answer), or divide by
 * zero where one element is larger than a cell (pmodels/mpich#6555).  So
 * they work on the signature instead: count x size bytes as elements of the
 * datatype's one predefined type, and call the (predefined) operation with
 * that type and an element count.  Everything decided here depends on the
 * signature only, so every process decides alike.  User-defined operations
 * stay with algorithms that call them with the call's datatype, as MPI
 * requires. */

MPI_Datatype MPIR_Topo_element_type(MPI_Datatype dt)
{
    MPIR_Datatype *p;

    if (MPIR_DATATYPE_IS_PREDEFINED(dt))
        return dt;
    MPIR_Datatype_get_ptr(dt, p);
    if (p == NULL || p->basic_type == MPI_DATATYPE_NULL)
        return MPI_DATATYPE_NULL;
    return (MPI_Datatype) p->basic_type;
}

int MPIR_Topo_basic_start(const void *sendbuf, void *recvbuf, MPI_Aint count,
                          MPI_Datatype datatype, int has_result, MPIR_Topo_basic_t * b)
{
    int mpi_errno = MPI_SUCCESS, contig;
    MPI_Aint size, extent, true_lb, true_extent, esize, eextent;
    MPI_Datatype et = MPIR_Topo_element_type(datatype);

    b->tmp = NULL;
    b->staging_failed = 0;
    b->user_recvbuf = recvbuf;
    b->user_count = count;
    b->user_type = datatype;
    b->has_result = has_result;
    b->sendbuf = sendbuf;
    b->recvbuf = recvbuf;
    b->count = count;
    b->type = et;
    if (et == MPI_DATATYPE_NULL || et == datatype)
        goto fn_exit;

    MPIR_Datatype_get_size_macro(datatype, size);
    MPIR_Datatype_get_size_macro(et, esize);
    MPIR_Datatype_get_extent_macro(et, eextent);
    b->count = esize > 0 ? count * (size / esize) : 0;
    if (b->count == 0)
        goto fn_exit;

    MPIR_Datatype_is_contig(datatype, &contig);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
    if (contig && (count == 1 || extent == size) && esize == eextent) {
        /* the user's bytes already are the packed elements */
        if (sendbuf != MPI_IN_PLACE)
            b->sendbuf = (const char *) sendbuf + true_lb;
        if (recvbuf)
            b->recvbuf = (char *) recvbuf + true_lb;
        goto fn_exit;
    }

    /* one temporary holds this process' contribution and, in place, the
     * result; eextent-strided, so pair types keep their layout */
    b->tmp = MPIR_Topo_staging_alloc(MPL_MAX(b->count * eextent, 1));
    if (b->tmp == NULL) {
        /* the caller decides how to take part without it */
        b->staging_failed = 1;
        b->sendbuf = b->recvbuf = NULL;
        goto fn_exit;
    }
    mpi_errno = MPIR_Localcopy(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, datatype,
                              b->tmp, b->count, et);
    MPIR_ERR_CHECK(mpi_errno);
    if (has_result) {
        b->sendbuf = MPI_IN_PLACE;
        b->recvbuf = b->tmp;
    } else {
        b->sendbuf = b->tmp;
        b->recvbuf = NULL;
    }

  fn_exit:
    return mpi_errno;
  fn_fail:
    MPL_free(b->tmp);
    b->tmp = NULL;
    goto fn_exit;
}

int MPIR_Topo_basic_finish(MPIR_Topo_basic_t * b, int mpi_errno_in)
{
    int mpi_errno = MPI_SUCCESS;

    if (b->tmp && b->has_result && mpi_errno_in == MPI_SUCCESS)
        mpi_errno = MPIR_Localcopy(b->tmp, b->count, b->type, b->user_recvbuf, b->user_count,
                                   b->user_type);
    MPL_free(b->tmp);
    b->tmp = NULL;
    return mpi_errno_in ? mpi_errno_in : mpi_errno;
}

/* the kinds of topo_op.c for the predefined types it covers, by size (1,
 * 2, 4 and 8 bytes: MPI_LONG, MPI_AINT, ... differ between machines);
 * MPI_CHAR is signed or not as the C compiler's char */
#if CHAR_MIN < 0
#define TOPO_CHAR_KIND MPIR_TOPO_ELEM_I8
#else
#define TOPO_CHAR_KIND MPIR_TOPO_ELEM_U8
#endif
static const struct {
    MPI_Datatype type;
    int kind[4];
} vector_types[] = {
    {MPI_INT, {-1, MPIR_TOPO_ELEM_I16, MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_I64}},
    {MPI_DOUBLE, {-1, -1, -1, MPIR_TOPO_ELEM_F64}},
    {MPI_FLOAT, {-1, -1, MPIR_TOPO_ELEM_F32, -1}},
    {MPI_LONG, {-1, -1, MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_I64}},
    {MPI_LONG_LONG_INT, {-1, -1, MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_I64}},
    {MPI_UNSIGNED, {-1, MPIR_TOPO_ELEM_U16, MPIR_TOPO_ELEM_U32, MPIR_TOPO_ELEM_U64}},
    {MPI_UNSIGNED_LONG, {-1, -1, MPIR_TOPO_ELEM_U32, MPIR_TOPO_ELEM_U64}},
    {MPI_UNSIGNED_LONG_LONG, {-1, -1, MPIR_TOPO_ELEM_U32, MPIR_TOPO_ELEM_U64}},
    {MPI_CHAR, {TOPO_CHAR_KIND, -1, -1, -1}},
    {MPI_SIGNED_CHAR, {MPIR_TOPO_ELEM_I8, -1, -1, -1}},
    {MPI_UNSIGNED_CHAR, {MPIR_TOPO_ELEM_U8, -1, -1, -1}},
    {MPI_SHORT, {-1, MPIR_TOPO_ELEM_I16, MPIR_TOPO_ELEM_I32, -1}},
    {MPI_UNSIGNED_SHORT, {-1, MPIR_TOPO_ELEM_U16, MPIR_TOPO_ELEM_U32, -1}},
    {MPI_INT8_T, {MPIR_TOPO_ELEM_I8, -1, -1, -1}},
    {MPI_UINT8_T, {MPIR_TOPO_ELEM_U8, -1, -1, -1}},
    {MPI_INT16_T, {-1, MPIR_TOPO_ELEM_I16, -1, -1}},
    {MPI_UINT16_T, {-1, MPIR_TOPO_ELEM_U16, -1, -1}},
    {MPI_INT32_T, {-1, -1, MPIR_TOPO_ELEM_I32, -1}},
    {MPI_INT64_T, {-1, -1, -1, MPIR_TOPO_ELEM_I64}},
    {MPI_UINT32_T, {-1, -1, MPIR_TOPO_ELEM_U32, -1}},
    {MPI_UINT64_T, {-1, -1, -1, MPIR_TOPO_ELEM_U64}},
    {MPI_AINT, {-1, -1, MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_I64}},
    {MPI_OFFSET, {-1, -1, MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_I64}},
    {MPI_COUNT, {-1, -1, MPIR_TOPO_ELEM_I32, MPIR_TOPO_ELEM_I64}},
};

static const MPI_Op vector_ops[MPIR_TOPO_OP_COUNT] = {
    [MPIR_TOPO_OP_SUM] = MPI_SUM,[MPIR_TOPO_OP_PROD] = MPI_PROD,
    [MPIR_TOPO_OP_MIN] = MPI_MIN,[MPIR_TOPO_OP_MAX] = MPI_MAX,
    [MPIR_TOPO_OP_BAND] = MPI_BAND,[MPIR_TOPO_OP_BOR] = MPI_BOR,
    [MPIR_TOPO_OP_BXOR] = MPI_BXOR
};

int MPIR_Topo_reduce_local(const void *inbuf, void *inoutbuf, MPI_Aint count,
                           MPI_Datatype datatype, MPI_Op op)
{
    if (MPIR_CVAR_TOPO_VECTOR_OPS && count > 0) {
        int kind = -1, k = -1;
        MPI_Aint size;

        for (int i = 0; i < MPIR_TOPO_OP_COUNT; i++)
            if (vector_ops[i] == op)
                k = i;
        for (size_t i = 0; k >= 0 && i < sizeof(vector_types) / sizeof(vector_types[0]); i++)
            if (vector_types[i].type == datatype) {
                MPIR_Datatype_get_size_macro(datatype, size);
                kind = size == 1 ? vector_types[i].kind[0] : size == 2 ? vector_types[i].kind[1] :
                    size == 4 ? vector_types[i].kind[2] : size == 8 ? vector_types[i].kind[3] : -1;
                break;
            }
        if (kind >= 0 && MPIR_Topo_op_apply(kind, k, inbuf, inoutbuf, (size_t) count))
            return MPI_SUCCESS;
    }
    return MPIR_Reduce_local(inbuf, inoutbuf, count, datatype, op);
}

/* MPICH's release_gather reduce and allreduce (CH4 POSIX) run on
 * predefined types and operations only: derived types are staged as above.
 * User-defined operations, which MPI calls with the call's datatype, and
 * types without a single predefined type go to MPICH's network algorithms,
 * which call the operation on each process' own layout; the choice depends
 * on the operation and the signature only, so every process makes it.  A
 * process that cannot allocate its staging buffer ends the job (MPICH's
 * shared-memory reduction has no error path between processes). */
static int as_basic(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                    MPI_Op op, int root, MPIR_Comm * comm, MPIR_Errflag_t * errflag,
                    MPIR_Topo_reduce_fn reduce_fn, MPIR_Topo_allreduce_fn allreduce_fn)
{
    int mpi_errno;
    MPIR_Topo_basic_t b;

    /* MPICH's CH4 reduce compositions pass MPI_IN_PLACE, meaning "in
     * recvbuf", also at processes that are not the root of this reduce
     * (the user's root when it is not the node's first process); the network
     * algorithms accept it at the root only */
    if (!allreduce_fn && sendbuf == MPI_IN_PLACE && comm->rank != root)
        sendbuf = recvbuf;

    b.type = MPI_DATATYPE_NULL;
    if (HANDLE_IS_BUILTIN(op)) {
        mpi_errno = MPIR_Topo_basic_start(sendbuf, recvbuf, count, datatype,
                                          allreduce_fn || comm->rank == root, &b);
        if (mpi_errno)
            return mpi_errno;
        if (b.staging_failed) {
            /* MPICH's shared-memory reduction has no way to tell the
             * others that this process has no data: they would wait, or
             * take a wrong result as good */
            char msg[200];
            snprintf(msg, sizeof(msg), "mpich-topo: cannot allocate %lld bytes to stage a "
                     "derived datatype for MPICH's shared-memory reduction, which cannot tell "
                     "the other processes: ending the job rather than leave them waiting",
                     (long long) b.count);
            MPID_Abort(comm, MPI_ERR_NO_MEM, 1, msg);
        }
    }
    if (b.type == MPI_DATATYPE_NULL)
        return allreduce_fn ?
            MPIR_Allreduce_impl(sendbuf, recvbuf, count, datatype, op, comm, errflag) :
            MPIR_Reduce_impl(sendbuf, recvbuf, count, datatype, op, root, comm, errflag);
    if (allreduce_fn)
        mpi_errno = allreduce_fn(b.sendbuf, b.recvbuf, b.count, b.type, op, comm, errflag);
    else
        mpi_errno = reduce_fn(b.sendbuf, b.recvbuf, b.count, b.type, op, root, comm, errflag);
    return MPIR_Topo_basic_finish(&b, mpi_errno);
}

int MPIR_Topo_reduce_as_basic(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                              MPIR_Errflag_t * errflag, MPIR_Topo_reduce_fn fn)
{
    return as_basic(sendbuf, recvbuf, count, datatype, op, root, comm, errflag, fn, NULL);
}

int MPIR_Topo_allreduce_as_basic(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                 MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                 MPIR_Errflag_t * errflag, MPIR_Topo_allreduce_fn fn)
{
    return as_basic(sendbuf, recvbuf, count, datatype, op, -1, comm, errflag, NULL, fn);
}
