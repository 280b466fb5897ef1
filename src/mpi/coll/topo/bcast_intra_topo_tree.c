/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "topo.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE
      category    : TOPO
      alt-env     : MPIR_CVAR_BCAST_TOPO_TREE_CHUNK_SIZE
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Pipeline chunk size in bytes for MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree.
        Messages larger than this are cut into chunks that move down the
        distance-aware tree one after the other, so every level of the tree
        works at once. 0 disables pipelining (the whole message is one chunk).
        (Until the next release also read from
        MPIR_CVAR_BCAST_TOPO_TREE_CHUNK_SIZE, its old name.)

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithm: distance-aware pipelined tree (Ma et al., Algorithm 1)
 *
 * The tree is Kruskal's minimum spanning tree over the hwloc/node distance
 * with root-first ties: a star around a leader inside each cache/NUMA/
 * package/node cluster and one edge per slower link, so every slow link
 * (socket interconnect, network) carries the message exactly once. Children
 * are served farthest first, as their subtrees are the deepest.
 *
 * Messages larger than MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE move in chunks:
 * a process forwards chunk i to its children while it receives chunk i+1, so
 * all levels of the tree are busy at once. Non-contiguous datatypes are
 * packed into a contiguous buffer first.
 *
 * Cost, n bytes in chunks of c, a tree of depth d whose busiest process
 * has f children: (d + n/c - 1).(alpha + f.c.beta), each beta that of the
 * link used; every slow link carries n bytes once.
 *
 * Its MPIR entry, MPIR_Bcast_intra_topo_tree, is in topo_entry.c.
 */

/* how many chunks' sends may be in flight per process */
#define TOPO_BCAST_SEND_DEPTH 4
/* send requests kept on the stack up to this many (depth x children) */
#define TOPO_BCAST_STACK_REQS 64

/* Completes and frees one chunk's sends, one by one as MPIC_Recv does
 * (MPIC_Waitall with MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow);
 * returns the first error. */
static int wait_sends(MPIR_Request ** sent, int n, MPIR_Errflag_t * errflag)
{
    int ret = MPI_SUCCESS;
    for (int c = 0; c < n; c++) {
        if (sent[c] == NULL)
            continue;
        int err = MPIC_Wait(sent[c], errflag);
        MPIR_Request_free(sent[c]);
        if (err && ret == MPI_SUCCESS)
            ret = err;
    }
    return ret;
}

int MPIR_Topo_bcast_tree(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                         MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint type_size;
    MPIR_Topo_comm_t *topo;

    MPIR_Datatype_get_size_macro(datatype, type_size);
    if (comm_ptr->local_size == 1 || type_size * count == 0)
        goto fn_exit;

    mpi_errno = MPIR_Topo_comm_get(comm_ptr, &topo, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Topo_comm_get_tree(comm_ptr, topo, root);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = MPIR_Topo_bcast_pipelined(buffer, count, datatype, root, comm_ptr,
                                          topo->tree_parent, topo->tree_children,
                                          topo->tree_child_forwards, topo->tree_nchildren,
                                          MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE, errflag);
  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIR_Topo_bcast_pipelined(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                              MPIR_Comm * comm_ptr, int parent, const int *children,
                              const int *forwards, int nchildren, MPI_Aint chunk,
                              MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS;
    int mpi_errno_ret = MPI_SUCCESS;
    int rank = comm_ptr->rank;
    int is_contig, sink = 0;
    MPI_Aint type_size, nbytes, nchunks, true_lb, true_extent;
    char *buf, *sink_buf = NULL;
    void *tmp_buf = NULL;
    MPIR_Request *rreqs[TOPO_BCAST_SEND_DEPTH] = { NULL }, **sreqs = NULL, **whole;
    MPIR_Request *stack_reqs[TOPO_BCAST_STACK_REQS];

    MPIR_Datatype_get_size_macro(datatype, type_size);
    nbytes = type_size * count;
    if (nbytes == 0)
        goto fn_exit;

    MPIR_Datatype_is_contig(datatype, &is_contig);
    if (is_contig) {
        MPIR_Type_get_true_extent_impl(datatype, &true_lb, &true_extent);
        buf = (char *) buffer + true_lb;
    } else {
        buf = tmp_buf = MPIR_Topo_staging_alloc(nbytes);
        if (tmp_buf == NULL) {
            /* take part without data rather than leave the subtree waiting:
             * take the messages in (sink_buf), pass on empty ones marked
             * failed */
            sink = 1;
            mpi_errno_ret = MPIR_Topo_staging_failed(nbytes, errflag);
        } else if (rank == root) {
            MPI_Aint actual;
            mpi_errno = MPIR_Typerep_pack(buffer, count, datatype, 0, tmp_buf, nbytes, &actual);
            /* send anyway, marked failed, rather than leave the tree waiting */
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            mpi_errno = MPI_SUCCESS;
        }
    }

    if (chunk <= 0)
        chunk = nbytes;
    /* Chunks pay off only where they are forwarded: an edge from the root
     * to a leaf carries the message whole (over TCP a chunk cost about
     * 10 us on top of its bytes, which halved a 2-process bcast's speed).
     * Both ends of an edge know: the root has forwards. */
    if (chunk > nbytes || (parent == root && nchildren == 0))
        chunk = nbytes;
    nchunks = (nbytes + chunk - 1) / chunk;
    if (sink)
        sink_buf = MPIR_Topo_sink_alloc(comm_ptr, chunk);

    /* TOPO_BCAST_SEND_DEPTH windows of chunk sends, then the root's whole ones */
    if ((TOPO_BCAST_SEND_DEPTH + 1) * nchildren <= TOPO_BCAST_STACK_REQS) {
        sreqs = stack_reqs;
    } else {
        sreqs = MPL_malloc((TOPO_BCAST_SEND_DEPTH + 1) * nchildren * sizeof(MPIR_Request *),
                           MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP(sreqs == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    whole = sreqs + TOPO_BCAST_SEND_DEPTH * nchildren;
    for (int child = 0; child < nchildren; child++) {
        whole[child] = NULL;
        if (rank == root && !forwards[child]) {
            mpi_errno = MPIC_Isend(buf, sink ? 0 : nbytes, MPI_BYTE, children[child],
                                   MPIR_BCAST_TAG,
                                   comm_ptr, &whole[child], errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }

    /* receives are posted as many chunks ahead as the parent may have
     * sends in flight: a chunk that arrives before its receive is posted
     * is buffered by the netmod and copied again (over TCP that halved
     * the bandwidth from 1 MiB on) */
    for (MPI_Aint i = 0; parent >= 0 && i < MPL_MIN(nchunks, TOPO_BCAST_SEND_DEPTH); i++) {
        mpi_errno = MPIC_Irecv(sink ? sink_buf : buf + i * chunk,
                               MPL_MIN(chunk, nbytes - i * chunk), MPI_BYTE,
                               parent, MPIR_BCAST_TAG, comm_ptr, &rreqs[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    for (MPI_Aint i = 0; i < nchunks; i++) {
        MPI_Aint off = i * chunk;
        MPI_Aint len = MPL_MIN(chunk, nbytes - off);
        MPIR_Request **sent = sreqs + (i % TOPO_BCAST_SEND_DEPTH) * nchildren;

        if (parent >= 0) {
            MPIR_Request **r = &rreqs[i % TOPO_BCAST_SEND_DEPTH];
            MPI_Aint next = i + TOPO_BCAST_SEND_DEPTH;
            mpi_errno = MPIC_Wait(*r, errflag);
            /* a message marked failed: libfabric says so in its status
             * (UCX in its tag, which MPIC_Wait has seen) */
            if (mpi_errno == MPI_SUCCESS)
                mpi_errno = (*r)->status.MPI_ERROR;
            MPIR_Request_free(*r);
            *r = NULL;
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            if (next < nchunks) {
                mpi_errno = MPIC_Irecv(sink ? sink_buf : buf + next * chunk,
                                       MPL_MIN(chunk, nbytes - next * chunk),
                                       MPI_BYTE, parent, MPIR_BCAST_TAG, comm_ptr, r);
                MPIR_ERR_CHECK(mpi_errno);
            }
        }
        if (nchildren == 0)
            continue;
        if (i >= TOPO_BCAST_SEND_DEPTH) {
            mpi_errno = wait_sends(sent, nchildren, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
        }
        for (int child = 0; child < nchildren; child++) {
            sent[child] = NULL;
            if (rank == root && !forwards[child])
                continue;
            mpi_errno = MPIC_Isend(sink ? NULL : buf + off, sink ? 0 : len, MPI_BYTE,
                                   children[child], MPIR_BCAST_TAG, comm_ptr, &sent[child],
                                   errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    if (nchildren > 0) {
        MPI_Aint first = nchunks > TOPO_BCAST_SEND_DEPTH ? nchunks - TOPO_BCAST_SEND_DEPTH : 0;
        for (MPI_Aint i = first; i < nchunks; i++) {
            MPIR_Request **sent = sreqs + (i % TOPO_BCAST_SEND_DEPTH) * nchildren;
            mpi_errno = wait_sends(sent, nchildren, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
        }
        mpi_errno = wait_sends(whole, nchildren, errflag);
        MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
    }

    if (!is_contig && rank != root && !sink) {
        MPI_Aint actual;
        mpi_errno = MPIR_Typerep_unpack(tmp_buf, nbytes, buffer, count, datatype, 0, &actual);
        MPIR_ERR_CHECK(mpi_errno);
    }

  fn_exit:
    if (sreqs != stack_reqs)
        MPL_free(sreqs);
    MPL_free(tmp_buf);
    MPL_free(sink_buf);
    return MPIR_Topo_coll_result(mpi_errno, mpi_errno_ret, *errflag);
  fn_fail:
    goto fn_exit;
}
