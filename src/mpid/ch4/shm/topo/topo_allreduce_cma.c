/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"
#include "coll_trace.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Message size in bytes from which allreduce and reduce topo_pipeline
        within one node read every process's input where it is, with Linux
        CMA (single-copy: each process reduces its slice of the elements
        straight from the others' buffers, then allreduce's processes, or
        reduce's root, read the reduced slices), instead of copying the
        inputs into the node segment and the result out of it. Only for
        types without holes (not MPI_DOUBLE_INT and the like) and where CMA
        works (MPIR_CVAR_TOPO_CMA). -1 (default): by measurement where the
        built-in tuning chose topo_pipeline, from 64 KiB
        (MPIR_CVAR_TOPO_ALLREDUCE_TRIALS), else never.

    - name        : MPIR_CVAR_TOPO_ALLREDUCE_TRIALS
      category    : TOPO
      type        : int
      default     : 3
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Where the built-in tuning gives an allreduce or a reduce of 64 KiB
        or more within one node to topo_pipeline, and CMA works there
        (MPIR_CVAR_TOPO_CMA), the communicator's first calls of each size
        class (a power of two of bytes; allreduce and reduce apart) time
        the node segment and the single copy (CMA; reduce also its root
        reading every input, MPIR_CVAR_TOPO_REDUCE_CMA_READER) this many
        times each, after a few untimed calls of each; the processes agree, by one
        small allreduce, on the way whose fastest trial was fastest on the
        slowest process and keep it for that size class
        (MPIR_CVAR_COLL_TRACE says which). 0: no learning (the segment, or
        CMA from MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD). A topo_pipeline
        that the user chose, MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD set, and
        nonblocking or persistent calls never learn.

    - name        : MPIR_CVAR_TOPO_REDUCE_CMA_READER
      category    : TOPO
      type        : enum
      default     : slices
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        Who reads the inputs in reduce's single copy where
        MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD chooses it (where the
        threshold is -1, reduce learns among the segment and both).
        slices - every process reduces its slice of the elements from
                 the others' buffers, then the root reads the reduced
                 slices: the reduction is shared
        root   - the root alone reads every other process's input and
                 reduces it; the others wait until it is done: nothing
                 is written for another process to read, so an input
                 that has not changed since the last call may still be
                 in the root's cache

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithm: single-copy reduction within one node (allreduce and reduce
 * topo_pipeline, direct mode)
 *
 * Local process q owns slice q of the elements ([count q / L, count (q+1) / L)).
 *  1. Reduce-scatter: q reads slice q of every other process's input
 *     straight from that process's buffer (process_vm_readv) and reduces
 *     it into its result: its receive buffer's slice (allreduce, reduce's
 *     root), or a temporary of the slice (reduce's other processes).  The
 *     first input is read whole, straight into the result; the others
 *     into q's area of the call's slot, in pieces of at most
 *     MPIDI_TOPO_CMA_PIECE bytes, so that a piece and its result stay in
 *     cache.
 *  2. Allgather (allreduce; reduce: the root only): once process j says
 *     its slice is reduced, the process reads it from j's result into its
 *     receive buffer.
 * Every process leaves once every local process is done: the others read
 * its buffers.  Reduce may instead let its root own every element (root
 * reads, MPIDI_TOPO_REDUCE_ROOT_READS): step 1 is then the root's alone,
 * and there is no step 2.  Reads only: a process that fails mid-call can
 * make the others read stale bytes (the call fails on every process),
 * never write into its memory.
 *
 * In place, process i's input is its receive buffer, whose slice j
 * process j reads in step 1; i writes its slice j only in step 2, after j
 * said that its slice is reduced, that is after j's last read of it.
 *
 * Cost, m bytes on L processes: each process reads (L-1)/L.m with CMA and
 * reduces them into m/L, then reads (L-1)/L.m more (allreduce; reduce: the
 * root), in (L-1) (1 + m/(L P)) system calls for P-byte pieces; the
 * segment copies m in, reduces across (L-1)/L.m and copies m out, with two
 * synchronisations per round of the slot.  Root reads: the root reads and
 * reduces (L-1).m; the other processes' inputs cross to its core once, and
 * none of them again while they stay unchanged and in its cache, where the
 * slices' results cross on every call.  Which is faster depends on the
 * kernel's per-call and per-page costs and on how fast written data moves
 * between the cores (bench/results/osu-2core-reduce-root), so a one-node
 * communicator learns (topo_learn.c) among them from 64 KiB unless the
 * user set MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD. */

/* the largest piece read into the slot: a piece and its result (twice
 * this) stay in a core's L2 cache while the next input is reduced in.
 * OSU allreduce, 2 processes of one 2-core VM (1 MiB of L2 a core), CMA
 * forced: 113 us at 1 MiB and 439 at 4 MiB in pieces of 256 KiB, 120 and
 * 548 in pieces of 64 KiB (fewer system calls, each pinning more pages).
 * The first input is read whole, where it can go: each system call costs
 * a few microseconds on such a VM, more than a result that left the cache
 * does (reduce, the root reading, 2 processes: 74-92 us at 1 MiB and
 * 252-300 at 4 MiB whole, 80-104 and 312-442 in pieces of 256 KiB) */
#define MPIDI_TOPO_CMA_PIECE (256 * 1024)

/* Below this, the system call of each read costs more than a copy through
 * the segment saves: no learning (as bcast, MPIDI_TOPO_BCAST_LEARN_MIN) */
#define MPIDI_TOPO_REDUCE_LEARN_MIN (64 * 1024)

static const char *const reduce_way_name[] = { "segment", "cma", "cma-root" };

/* the first element of local process q's slice; root >= 0 (root reads):
 * the root's slice is every element, the others' are empty */
static MPI_Aint slice_lo(MPI_Aint count, int nlocal, int root, int q)
{
    if (root >= 0)
        return q > root ? count : 0;
    return (MPI_Aint) ((double) count * q / nlocal);
}

/* Waits for local process j to reach round r on counter c; false where the
 * wait ended because a local process failed (then j's addresses may be
 * those of an earlier call, and nothing may be read there) */
static int peer_at(MPIDI_Topo_engine_t * e, MPL_atomic_uint64_t * c, uint64_t r)
{
    MPIDI_TOPO_WAIT_GE(e, c, r);
    return MPL_atomic_acquire_load_uint64(c) >= r;
}

int MPIDI_Topo_reduce_direct(MPIDI_Topo_engine_t * e, const char *sbuf, char *rbuf,
                             MPI_Aint count, MPI_Datatype datatype, MPI_Op op, int root_local,
                             int way, int discard, MPI_Aint stride, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    int nlocal = e->local_size, mine = e->local_rank;
    int wants = root_local < 0 || mine == root_local;
    int in_place = wants && sbuf == rbuf;
    int owner = way == MPIDI_TOPO_REDUCE_ROOT_READS ? root_local : -1;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, mine);
    MPI_Aint extent, piece, lo = slice_lo(count, nlocal, owner, mine);
    MPI_Aint hi = slice_lo(count, nlocal, owner, mine + 1);
    char *res = rbuf, *own = NULL, *tmp;
    uint64_t base, r;

    MPIR_Datatype_get_extent_macro(datatype, extent);
    /* (stride holds one element at least: see allreduce_elements) */
    piece = MPL_MAX(MPL_MIN(stride, MPIDI_TOPO_CMA_PIECE) / extent, 1);
    mpi_errno = MPIDI_Topo_rounds(e, 1, &base, errflag);
    if (mpi_errno)
        return mpi_errno;
    r = base + 1;
    /* this process's area of the slot, which earlier calls' rounds may
     * still read */
    tmp = MPIDI_TOPO_SLOT(e, r) + mine * stride;
    if (r > MPIDI_TOPO_NSLOTS)
        MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
    if (!wants && !discard && hi > lo) {
        /* (per call: kept between calls it saved nothing measurable at
         * 64 KiB-4 MiB, bench/results/osu-2core-reductions-cma) */
        own = MPIR_Topo_staging_alloc((hi - lo) * extent);
        if (own == NULL) {
            /* take part without data: the call fails on every process */
            mpi_errno = MPIDI_Topo_staging_failed(e, (hi - lo) * extent, errflag);
            MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
            discard = 1;
        } else
            res = own - lo * extent;
    }
    me->addr = discard ? 0 : (uint64_t) (uintptr_t) sbuf;
    me->addr2 = discard ? 0 : (uint64_t) (uintptr_t) res;
    MPL_atomic_release_store_uint64(&me->arrive, r);

    /* 1. my slice: the next process's input whole, straight into the
     * result, and mine reduced into it (in place, the result holds mine
     * already); then every other input piece by piece through the slot */
    if (!in_place && lo < hi && !discard) {
        int j = (mine + 1) % nlocal;
        MPIDI_Topo_ctrl_t *jc = MPIDI_TOPO_CTRL(e, j);

        /* (else the call fails: node_failed) */
        if (peer_at(e, &jc->arrive, r) && jc->addr != 0) {
            mpi_errno = MPIDI_Topo_cma_read(e, j, res + lo * extent, jc->addr + lo * extent,
                                            (hi - lo) * extent);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            mpi_errno = MPIR_Topo_reduce_local(sbuf + lo * extent, res + lo * extent, hi - lo,
                                               datatype, op);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        }
    }
    for (MPI_Aint a = lo; a < hi && !discard; a += piece) {
        MPI_Aint n = MPL_MIN(piece, hi - a);
        char *acc = res + a * extent;

        for (int s = in_place ? 1 : 2; s < nlocal; s++) {
            int j = (mine + s) % nlocal;
            MPIDI_Topo_ctrl_t *jc = MPIDI_TOPO_CTRL(e, j);

            if (!peer_at(e, &jc->arrive, r) || jc->addr == 0)
                continue;       /* the call fails (node_failed) */
            mpi_errno = MPIDI_Topo_cma_read(e, j, tmp, jc->addr + a * extent, n * extent);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            mpi_errno = MPIR_Topo_reduce_local(tmp, acc, n, datatype, op);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        }
    }
    MPL_atomic_release_store_uint64(&me->reduced, r);
    MPIDI_TOPO_EVENT(e, "reduced", 0, 0);

    /* 2. the others' slices */
    for (int s = 1; s < nlocal && wants && !discard; s++) {
        int j = (mine + s) % nlocal;
        MPIDI_Topo_ctrl_t *jc = MPIDI_TOPO_CTRL(e, j);
        MPI_Aint jlo = slice_lo(count, nlocal, owner, j);
        MPI_Aint jhi = slice_lo(count, nlocal, owner, j + 1);

        if (jhi == jlo || !peer_at(e, &jc->reduced, r) || jc->addr2 == 0)
            continue;
        mpi_errno = MPIDI_Topo_cma_read(e, j, rbuf + jlo * extent, jc->addr2 + jlo * extent,
                                        (jhi - jlo) * extent);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        MPIDI_TOPO_EVENT(e, "out", j, 0);
    }

    /* the others read my buffers until they are done */
    MPL_atomic_release_store_uint64(&me->done, r);
    MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r);
    MPL_free(own);
    return MPIDI_Topo_check_node(e, mpi_errno_ret, errflag);
}

/* ---- choosing the way ----------------------------------------------- */

static void reduce_learn_info(MPIDI_Topo_learn_info_t * li, int is_reduce)
{
    li->coll = is_reduce ? "reduce" : "allreduce";
    li->names = reduce_way_name;
    li->nways = is_reduce ? 3 : 2;
    li->trials = MPIR_CVAR_TOPO_ALLREDUCE_TRIALS;
    li->fallback = 0;
    li->per_process = 0;
    /* untimed first: the segment's first calls touch both slots' pages,
     * CMA's first the others' buffers */
    li->warm[0] = MPIDI_TOPO_NSLOTS;
    li->warm[1] = li->warm[2] = 1;
}

int MPIDI_Topo_reduce_way(MPIDI_Topo_engine_t * e, int is_reduce, MPI_Aint m, int usable,
                          MPIDI_Topo_learn_t ** l)
{
    MPIDI_Topo_learn_info_t li;
    MPIDI_Topo_learn_t *c;

    *l = NULL;
    if (!usable || !e->cma || e->nnodes > 1)
        return MPIDI_TOPO_REDUCE_SEGMENT;
    if (MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD >= 0) {
        if (m < MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD)
            return MPIDI_TOPO_REDUCE_SEGMENT;
        return is_reduce && MPIR_CVAR_TOPO_REDUCE_CMA_READER ==
            MPIR_CVAR_TOPO_REDUCE_CMA_READER_root ? MPIDI_TOPO_REDUCE_ROOT_READS :
            MPIDI_TOPO_REDUCE_SLICES;
    }
    /* (not in a nonblocking or persistent call: the agreement is a
     * blocking allreduce on comm; not where the user chose the algorithm) */
    if (m < MPIDI_TOPO_REDUCE_LEARN_MIN || MPIR_Topo_nb_current ||
        MPIR_CVAR_TOPO_ALLREDUCE_TRIALS <= 0 ||
        MPIR_Topo_user_chose(is_reduce ? "MPIR_Reduce_intra_topo_pipeline" :
                             "MPIR_Allreduce_intra_topo_pipeline"))
        return MPIDI_TOPO_REDUCE_SEGMENT;
    reduce_learn_info(&li, is_reduce);
    c = MPIDI_Topo_learn_class(is_reduce ? e->reduce_learn : e->allreduce_learn, m);
    if (!c->chosen)
        *l = c; /* a trial */
    return MPIDI_Topo_learn_way(c, &li);
}

int MPIDI_Topo_reduce_trial(MPIDI_Topo_learn_t * l, int is_reduce, int way, double dt,
                            MPI_Aint m, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_Topo_learn_info_t li;

    reduce_learn_info(&li, is_reduce);
    return MPIDI_Topo_learn_trial(l, &li, way, dt, m, comm, errflag);
}
