/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"
#include "coll_trace.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD
      category    : TOPO
      type        : int
      default     : -1
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Message size in bytes from which bcast topo_pipeline lets local
        processes read the data with one kernel-assisted copy (Linux CMA)
        from the leader's buffer instead of through the node segment. -1
        (default): by measurement where the built-in tuning chose
        topo_pipeline within one node, from 64 KiB
        (MPIR_CVAR_TOPO_BCAST_TRIALS), else never (which is faster depends
        on the machine's state: on one 2-core VM CMA led at 64-512 KiB and
        the segment, whose copy-in and copy-out overlap, from 1 MiB,
        bench/results/osu-2core-bcast-learn).

    - name        : MPIR_CVAR_TOPO_BCAST_TRIALS
      category    : TOPO
      type        : int
      default     : 3
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Where the built-in tuning gives a bcast of 64 KiB or more within one
        node to topo_pipeline, and CMA works there (MPIR_CVAR_TOPO_CMA),
        the communicator's first calls of each size class (a power of two
        of bytes) time the node segment and CMA's single copy this many
        times each, after a few untimed calls of each (its first touch of
        new pages); the processes agree, by one small allreduce, on the
        way whose fastest trial was fastest on the slowest process and
        keep it for that size class (MPIR_CVAR_COLL_TRACE says which). 0:
        no learning (the segment, or CMA from
        MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD). A topo_pipeline that the user
        chose, MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD set, and nonblocking or
        persistent calls never learn.

    - name        : MPIR_CVAR_TOPO_BCAST_NODE_TREE
      category    : TOPO
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        The tree of the nodes that bcast topo_pipeline moves chunks down.
        auto     - the faster by the cost model in
                   topo_bcast_pipeline.c, from the node count, the size
                   and MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES: the chain,
                   in chunks sized to keep it full, from 3 nodes once
                   the message is large enough (with one process per
                   node, MPICH's scatter-ring-allgather is a third
                   choice).
        binomial - a binomial tree rooted at the root's node: log2(N)
                   steps, but the root's node sends every chunk log2(N)
                   times.
        chain    - the nodes in a line from the root's node: every node
                   sends and receives each chunk once, the lower bound on
                   each NIC, after N - 1 steps to fill the line.
        scatter  - with one leader per node (else as auto), in segment
                   mode: the leaders bcast the whole message by MPICH's
                   scatter + allgather (recursive doubling on a power
                   of two of nodes, else a ring), 2 log2(N) latencies
                   and each NIC twice the bytes, then each node copies
                   it out of its leader's buffer; auto takes it where
                   the model puts it first (many nodes, from tens of
                   KiB).

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithm: leader-based pipelined bcast (MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline)
 *
 * The message is cut into chunks of at most the slot size (smaller on a
 * chain of nodes, to keep it full: node_plan).  Chunk i travels between
 * nodes on leader communicator i % k, down a tree of nodes rooted at the
 * root's node (node_tree: binomial, or a chain once there are enough
 * chunks), so the k leaders of a node share its network traffic (the
 * large-message scatter to leaders) and every node receives each byte
 * once, the lower bound.  With one leader per node, a leader posts the
 * receive of the next chunk before it forwards the current one, so that
 * a node of the chain receives and sends at once.  Inside a node, the other processes copy chunk i
 * out while the leaders already move chunk i+1:
 *  - segment mode: the root (on its node) or the chunk's leader (elsewhere)
 *    puts the chunk in a slot of the node segment and raises a counter; the
 *    others copy it out.  Two slots let filling and emptying overlap.
 *  - direct mode (CMA, messages >= MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD): leaders
 *    receive straight into their user buffer and the others read each
 *    chunk from there (or from the root's buffer) with one
 *    process_vm_readv: one copy instead of two.
 * Both modes send the same messages between nodes.
 *  - levels within a node (segment mode, MPIR_CVAR_TOPO_NODE_LEVELS:
 *    packages, NUMA groups, L3 domains, as MPIR_Topo_node_units finds
 *    them): a chunk takes at most a (U+1)-th of a slot, U the innermost
 *    units used (MPIDI_Topo_areas_t).  A unit that does not hold the
 *    process the chunk arrived at (the root on its node, the chunk's
 *    leader elsewhere) gets its own copy: its first member copies the
 *    chunk from its parent unit's area (area 0 where the parent holds
 *    that process) into the unit's area and raises its copied counter,
 *    and the unit's members and child units read from there, each
 *    waiting on that one member; a first child shares its parent's copy.
 *    So a chunk crosses to each package once, to each NUMA group of a
 *    package once, to each L3 domain of a group once (MPIR_Topo_copy_path).
 *
 * Cost, n bytes in chunks of c, N nodes of L processes, k leaders per
 * node, q = n/(k.c) chunks per leader, d = ceil(log2 N): binomial
 * (d + q - 1).(alpha + f.c.beta) on the network for a node with f children
 * (the root's node: f = d, so about q.d chunk times; with q <= d a leader
 * sends to one child after the other, about (d + q - 1).(alpha + c.beta)
 * to its first child); chain
 * (N + q - 2).(alpha + c.beta); every node receives n bytes once, split
 * over its k leaders; each local process copies n once
 * (segment mode: twice on the root's node), overlapped with the network
 * chunks.  Levels add one copy of n into each innermost unit other than
 * the chunk's ((U-1).n per node, one memcpy by a first member each), and
 * at each level d of u_d units the reads of n that cross a level-d domain
 * fall from (u_d-1)/u_d.L.n (every process, flat) to (u_d-1).n per node;
 * the latency of a chunk grows by one copy per level below the arrival's
 * (waits on one flag each), and chunks are U+1 times smaller.
 *
 * Timeline, segment mode, a non-root node, k = 2 leaders (l0, l1) and a
 * local process q; chunk i lies in slot i % 2:
 *   round 1: l0 receives chunk 0, puts it in slot 0      q waits
 *   round 2: l1 receives chunk 1, puts it in slot 1      q copies chunk 0 out
 *   round 3: l0 receives chunk 2 into slot 0 once every  q copies chunk 1 out
 *            local process is done with chunk 0
 * and each leader forwards its chunk to its children in the tree of nodes
 * as soon as it has it. */

/* The trees of nodes are chosen by the cost model (topo_model.c,
 * MPIR_Topo_model_bcast_nodes: binomial, chain, and MPICH's scatter +
 * allgather, MPIR_Topo_model_bcast_scatter: among the leaders in one step
 * on the whole message, bcast_scatter).  The chain's chunk shrinks with
 * the message, down to MPIDI_TOPO_BCAST_MIN_CHUNK, to keep the line full:
 * on 4 nodes, 64 KiB goes in one chunk where B is 16 KiB (a binomial tree
 * then costs less), in 8 where B is 2 KiB (the emulated cluster's 250
 * Mbit/s NICs). */

/* The tree of nodes (returns 1 for the chain) and the chunk for m bytes on
 * nn nodes, in chunks of at most slot, where the binomial tree would send
 * b messages per leader; *cost is the model's for that choice
 * (MPIR_Topo_model_bcast_nodes).  Every process computes the same from
 * the same inputs. */
static int node_plan(const MPIR_Topo_model_t * md, int nn, MPI_Aint m, MPI_Aint slot,
                     MPI_Aint b, MPI_Aint * chunk, double *cost)
{
    /* (scatter: the tree it is weighed against, or that runs where it
     * cannot, is auto's) */
    int tree = MPIR_CVAR_TOPO_BCAST_NODE_TREE == MPIR_CVAR_TOPO_BCAST_NODE_TREE_chain ?
        MPIR_TOPO_TREE_CHAIN : MPIR_CVAR_TOPO_BCAST_NODE_TREE ==
        MPIR_CVAR_TOPO_BCAST_NODE_TREE_binomial ? MPIR_TOPO_TREE_BINOMIAL : MPIR_TOPO_TREE_AUTO;
    long long c;
    int chain = MPIR_Topo_model_bcast_nodes(md, nn, m, slot, b, tree,
                                            MPIDI_TOPO_BCAST_MIN_CHUNK, &c, cost);
    *chunk = (MPI_Aint) c;
    return chain;
}

/* node_plan for the engine's leaders: the binomial tree sends each
 * leader's share of the slots.  Chunk i goes to leader i % k, so the
 * chunks are made a multiple of k in number where they stay at least
 * MPIDI_TOPO_BCAST_MIN_CHUNK: otherwise one leader's NIC carries a chunk
 * more than the others (1 MiB in 11 chunks put 55% of a node's bytes on
 * one of its 2 NICs). */
static int leader_plan(MPIDI_Topo_engine_t * e, MPI_Aint m, MPI_Aint slot, MPI_Aint * chunk)
{
    MPI_Aint nslots = (m + slot - 1) / slot, n, c;
    double cost;
    int chain = node_plan(&e->model, e->nnodes, m, slot, (nslots + e->k - 1) / e->k, chunk,
                          &cost);

    n = (m + *chunk - 1) / *chunk;
    if (e->k > 1 && n % e->k) {
        n += e->k - n % e->k;
        c = ((m + n - 1) / n + 63) & ~(MPI_Aint) 63;
        if (c >= MPIDI_TOPO_BCAST_MIN_CHUNK)
            *chunk = MPL_MIN(c, *chunk);
    }
    return chain;
}

/* Within one node a chunk is a slot, but a message of under two slots
 * goes in two chunks (of at least MPIDI_TOPO_NET_SLOT), so that the
 * others copy the first out while the second is copied in: on 2
 * processes with 1 MiB slots, 256 KiB took 8.7 us in two chunks against
 * 12.1 in one, 1 MiB 39 against 47 (bench/results/dev-2core-slots). */
static MPI_Aint node_chunk(MPI_Aint m, MPI_Aint slot)
{
    MPI_Aint half = ((m + 1) / 2 + 63) & ~(MPI_Aint) 63;

    return MPL_MIN(slot, MPL_MAX(half, (MPI_Aint) MPIDI_TOPO_NET_SLOT));
}

static void node_tree(int nn, int node, int root_node, int chain, int *parent, int *children,
                      int *nchildren)
{
    int vr = (node - root_node + nn) % nn, mask = 1;

    *parent = -1;
    *nchildren = 0;
    if (chain) {
        if (vr > 0)
            *parent = (node - 1 + nn) % nn;
        if (vr < nn - 1)
            children[(*nchildren)++] = (node + 1) % nn;
        return;
    }
    while (mask < nn) {
        if (vr & mask) {
            *parent = (vr - mask + root_node) % nn;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < nn)
            children[(*nchildren)++] = (vr + mask + root_node) % nn;
}

/* Where a leader has at most as many chunks as the tree of nodes has
 * levels, every leader sends each chunk to one child after the other, the
 * largest subtree first, so that the first child forwards after one chunk
 * time rather than after nchildren of them (concurrent sends share the
 * NIC).  With more chunks the pipeline keeps every child busy either way,
 * and waiting between the sends costs a latency each.  The rule is the
 * tree's, not each leader's: leaders that chose apart were up to 15%
 * slower than either way.  SimGrid, 4-1,024 nodes in chunks of 128 KiB
 * (bench/results/cluster-bcast-children): 1.07-4.5x faster at one chunk,
 * 1.0-1.66x at 6-8 (on fabrics 4 times slower to answer, 0.96-1.18x);
 * 8 emulated nodes x 2 at 100 Mbit/s: 1.14-1.39x at 1-2 chunks. */
static int one_child_at_a_time(MPIDI_Topo_engine_t * e, MPI_Aint my_chunks, int nchildren)
{
    int levels = 0;

    while ((1 << levels) < e->nnodes)
        levels++;
    return nchildren > 1 && my_chunks <= levels;
}

static int bcast_segment(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * tb, MPI_Aint m,
                         int root, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    int am_root = (comm->rank == root);
    int root_node = e->layout->node[root];
    int root_local = MPIDI_Topo_local_index(e, root);
    int parent = -1, nchildren = 0, children[32];
    int nlocal = e->local_size, k = e->k;
    MPI_Aint chunk, nchunks;
    const MPIDI_Topo_areas_t *lv = &e->bcast_areas;
    int chain;
    uint64_t base;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    MPIR_Request *reqs[32] = { NULL }, *rreq = NULL;
    /* with one leader per node, a leader off the root's node receives
     * chunk i + 1 (in the other slot) while it forwards chunk i; with more,
     * the round of a leader's next chunk shares a slot with a round not
     * yet done, and the node's leaders overlap each other instead */
    int receives = e->leader_comm && e->node != root_node;
    int prepost = receives && k == 1;
    int one_by_one = 0;

    chain = leader_plan(e, m, lv->area ? lv->area : (MPI_Aint) e->slot_size, &chunk);
    if (e->nnodes == 1)
        chunk = node_chunk(m, chunk);
    nchunks = (m + chunk - 1) / chunk;
    mpi_errno = MPIDI_Topo_rounds(e, nchunks, &base, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (e->leader_comm) {
        node_tree(e->nnodes, e->node, root_node, chain, &parent, children, &nchildren);
        one_by_one = one_child_at_a_time(e, (nchunks - e->group + k - 1) / k, nchildren);
    }

    for (MPI_Aint i = 0; i < nchunks; i++) {
        uint64_t r = base + 1 + i;
        MPI_Aint off = i * chunk, len = MPL_MIN(chunk, m - off);
        char *slot = MPIDI_TOPO_SLOT(e, r);
        int g = (int) (i % k);
        int owner = e->leader_local[g];
        int am_owner = e->leader_comm && e->group == g;
        int nreq = 0;

        if (am_root) {
            if (r > MPIDI_TOPO_NSLOTS)
                MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
            mpi_errno = MPIDI_Topo_tbuf_pack(tb, off, slot, len);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            MPIDI_TOPO_SHARED_DEFINED(slot, len);
            MPL_atomic_release_store_uint64(&me->arrive, r);
            MPIDI_TOPO_EVENT(e, "in", i, 0);
        }
        if (am_owner) {
            if (receives) {
                if (rreq == NULL) {
                    if (r > MPIDI_TOPO_NSLOTS)
                        MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
                    mpi_errno = MPIC_Irecv(slot, len, MPI_BYTE, parent, MPIR_BCAST_TAG,
                                           e->leader_comm, &rreq);
                    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
                }
                mpi_errno = MPIDI_Topo_waitall(e, 1, &rreq, errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                MPIDI_TOPO_EVENT(e, "recv", i, 0);
            } else if (!am_root) {
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, root_local)->arrive, r);
            }
            MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
            MPIDI_Topo_node_errflag(e, errflag);
            /* (one_by_one: the other children after the local copy-out) */
            for (int c = 0; c < (one_by_one ? 1 : nchildren); c++) {
                reqs[nreq] = NULL;
                mpi_errno = MPIC_Isend(slot, len, MPI_BYTE, children[c], MPIR_BCAST_TAG,
                                       e->leader_comm, &reqs[nreq], errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                if (reqs[nreq])
                    nreq++;
            }
            if (one_by_one)
                MPIDI_TOPO_EVENT(e, "child", i, 0);
            /* (after the sends, so that forwarding never waits for the
             * local copies of the chunk before) */
            if (prepost && i + 1 < nchunks) {
                MPI_Aint o = off + chunk;
                if (r + 1 > MPIDI_TOPO_NSLOTS)
                    MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r + 1 - MPIDI_TOPO_NSLOTS);
                mpi_errno = MPIC_Irecv(MPIDI_TOPO_SLOT(e, r + 1), MPL_MIN(chunk, m - o),
                                       MPI_BYTE, parent, MPIR_BCAST_TAG, e->leader_comm, &rreq);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            }
        }
        if (!am_root) {
            /* levels: a unit that does not hold the process the chunk
             * arrived at reads it from its own area, which its first
             * member copies from its parent unit's (MPIR_Topo_copy_path) */
            int a = e->node == root_node ? root_local : owner;
            int at, maker, src, src_maker, me_copies;
            char *from;

            MPIR_Topo_copy_path(lv->depth, e->lv_lo, e->lv_hi, lv->area_of, a, &at, &maker, &src,
                                &src_maker);
            from = slot + at * lv->area;
            me_copies = at && maker == e->local_rank;
            if (at && !me_copies)
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, maker)->copied, r);
            else if (me_copies && src)
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, src_maker)->copied, r);
            else if (e->node == root_node)
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, root_local)->arrive, r);
            else
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, owner)->avail, MPIDI_TOPO_PROG(r, 1));
            if (me_copies) {
                memcpy(from, slot + src * lv->area, len);
                MPIDI_TOPO_SHARED_DEFINED(from, len);
                MPL_atomic_release_store_uint64(&me->copied, r);
                MPIDI_TOPO_EVENT(e, "staged", i, 0);
            }
            mpi_errno = MPIDI_Topo_tbuf_unpack(tb, off, from, len);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            MPIDI_TOPO_EVENT(e, "out", i, 0);
        }
        for (int c = 1; am_owner && one_by_one && c < nchildren; c++) {
            mpi_errno = MPIDI_Topo_waitall(e, nreq, reqs, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            MPIDI_Topo_node_errflag(e, errflag);
            reqs[0] = NULL;
            mpi_errno = MPIC_Isend(slot, len, MPI_BYTE, children[c], MPIR_BCAST_TAG,
                                   e->leader_comm, &reqs[0], errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            nreq = reqs[0] != NULL;
            MPIDI_TOPO_EVENT(e, "child", i, c);
        }
        if (nreq) {
            mpi_errno = MPIDI_Topo_waitall(e, nreq, reqs, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            MPIDI_TOPO_EVENT(e, "sent", i, 0);
        }
        MPL_atomic_release_store_uint64(&me->done, r);
    }

  fn_exit:
    /* a receive posted ahead, or sends, are left only after an error */
    if (rreq) {
        int err;
        MPIR_Cancel_impl(rreq);
        err = MPIDI_Topo_waitall(e, 1, &rreq, errflag);
        if (err)
            MPIR_ERR_ADD(mpi_errno_ret, err);
    }
    {
        int err = MPIDI_Topo_waitall(e, 32, reqs, errflag);
        if (err)
            MPIR_ERR_ADD(mpi_errno_ret, err);
    }
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

/* MPICH's scatter + allgather bcast of m bytes on comm (the leaders'):
 * recursive doubling (doubling) or a ring */
static int bcast_scatter_net(void *buf, MPI_Aint count, MPI_Datatype datatype, int root,
                             int doubling, MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    if (doubling)
        return MPIR_Bcast_intra_scatter_recursive_doubling_allgather(buf, count, datatype, root,
                                                                     comm, errflag);
    return MPIR_Bcast_intra_scatter_ring_allgather(buf, count, datatype, root, comm, errflag);
}

/* Whether the leaders, one per node, take the whole message in one step
 * of MPICH's scatter + allgather (bcast_scatter) instead of chunks down
 * the tree of nodes: by MPIR_CVAR_TOPO_BCAST_NODE_TREE, else where the
 * cost model puts it first (MPIR_Topo_model_bcast_leaders_scatter, against
 * the tree bcast_segment would take).  Every process computes the same
 * from the same inputs. */
static int leaders_scatter(MPIDI_Topo_engine_t * e, MPI_Aint m, int root, int *doubling)
{
    MPI_Aint slot = e->bcast_areas.area ? e->bcast_areas.area : (MPI_Aint) e->slot_size, chunk;
    int root_leads = e->layout->leader[e->layout->node[root] * e->k] == root;
    double tree, cost;

    if (e->k > 1)
        return 0;
    if (MPIR_CVAR_TOPO_BCAST_NODE_TREE == MPIR_CVAR_TOPO_BCAST_NODE_TREE_scatter) {
        MPIR_Topo_model_bcast_scatter(&e->model, e->nnodes, m, doubling);
        return 1;
    }
    if (MPIR_CVAR_TOPO_BCAST_NODE_TREE != MPIR_CVAR_TOPO_BCAST_NODE_TREE_auto)
        return 0;
    node_plan(&e->model, e->nnodes, m, slot, (m + slot - 1) / slot, &chunk, &tree);
    return MPIR_Topo_model_bcast_leaders_scatter(&e->model, e->nnodes, m, tree, chunk,
                                                 root_leads, doubling, &cost);
}

/* MPIR_CVAR_TOPO_PRINT, with the segment (topo_engine_segment.c): the
 * sizes, powers of two, at which the leaders take the whole message by
 * scatter + allgather, for a root that leads its node */
void MPIDI_Topo_print_bcast(MPIDI_Topo_engine_t * e)
{
    MPIR_Topo_line_t line = { .len = 0 };
    MPI_Aint lo = 0, hi = 0;
    int doubling = 0;

    for (MPI_Aint m = 1024; m <= ((MPI_Aint) 1 << 30); m *= 2)
        if (leaders_scatter(e, m, e->layout->leader[0], &doubling)) {
            lo = lo ? lo : m;
            hi = m;
        }
    MPIR_Topo_line_add(&line, "mpich-topo:   bcast topo_pipeline, %d nodes, latency %.0f B: ",
                       e->nnodes, e->model.net_latency);
    if (lo)
        MPIR_Topo_line_add(&line, "the leaders' scatter + %s allgather from %ld to %ld B%s, "
                           "the tree of nodes elsewhere", doubling ? "recursive-doubling" : "ring",
                           (long) lo, (long) hi,
                           MPIR_CVAR_TOPO_BCAST_NODE_TREE == MPIR_CVAR_TOPO_BCAST_NODE_TREE_scatter
                           ? " (MPIR_CVAR_TOPO_BCAST_NODE_TREE)" : "");
    else
        MPIR_Topo_line_add(&line, "the tree of nodes at every size%s",
                           e->k > 1 ? " (several leaders per node)" : "");
    MPIR_Topo_line_print(&line);
}

/* Local process src shares m bytes with its node through the slots, as a
 * bcast within one node does: it packs each chunk from tb, the others
 * unpack it into theirs.  In MPIDI_TOPO_SHARE_PIECES chunks or more (of
 * MPIDI_TOPO_SHARE_CHUNK at least, a slot at most), so that the others'
 * copy out overlaps all but the first chunk's copy in: the network step
 * before it overlaps nothing, and the call ends a chunk's copy after the
 * message's (SimGrid, 16 nodes of 16 at 200 Gbit/s, 256 KiB: 1.09x
 * MPICH's release_gather, whose cells are 8 KiB, in quarters). */
#define MPIDI_TOPO_SHARE_CHUNK (16 * 1024)
#define MPIDI_TOPO_SHARE_PIECES 16
static int node_share(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * tb, MPI_Aint m, int src,
                      MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    MPI_Aint piece = ((m + MPIDI_TOPO_SHARE_PIECES - 1) / MPIDI_TOPO_SHARE_PIECES + 63) &
        ~(MPI_Aint) 63;
    MPI_Aint chunk = MPL_MIN((MPI_Aint) e->slot_size, MPL_MAX(piece, MPIDI_TOPO_SHARE_CHUNK));
    MPI_Aint nchunks = (m + chunk - 1) / chunk;
    uint64_t base;

    mpi_errno = MPIDI_Topo_rounds(e, (uint64_t) nchunks, &base, errflag);
    if (mpi_errno)
        return mpi_errno;
    for (MPI_Aint i = 0; i < nchunks; i++) {
        uint64_t r = base + 1 + i;
        MPI_Aint off = i * chunk, len = MPL_MIN(chunk, m - off);
        char *slot = MPIDI_TOPO_SLOT(e, r);

        if (e->local_rank == src) {
            if (r > MPIDI_TOPO_NSLOTS)
                MPIDI_TOPO_WAIT_ALL(e, done, 0, e->local_size, r - MPIDI_TOPO_NSLOTS);
            mpi_errno = MPIDI_Topo_tbuf_pack(tb, off, slot, len);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            MPIDI_TOPO_SHARED_DEFINED(slot, len);
            MPL_atomic_release_store_uint64(&me->arrive, r);
            MPIDI_TOPO_EVENT(e, "in", i, 0);
        } else {
            MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, src)->arrive, r);
            mpi_errno = MPIDI_Topo_tbuf_unpack(tb, off, slot, len);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            MPIDI_TOPO_EVENT(e, "out", i, 0);
        }
        MPL_atomic_release_store_uint64(&me->done, r);
    }
    return mpi_errno_ret;
}

/* Scatter mode (leaders_scatter), one leader per node: on the root's node
 * the message first goes through the slots, its leader keeping it whole,
 * unless the root leads the node; the leaders then bcast it whole with
 * MPICH's scatter + allgather, each into its own buffer; then every other
 * node's leader (and a root that leads its node) shares it through the
 * slots.  Where a tree of nodes pays log2 N chunk times (or N - 2 on the
 * chain), this pays 2 log2 N latencies and each NIC carries the message
 * twice; the node's copy out of its leader's buffer overlaps nothing.
 * buf: this process' contiguous buffer (tb's), NULL where it could not
 * stage one. */
static int bcast_scatter(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * tb, char *buf,
                         MPI_Aint m, int root, int doubling, MPIR_Comm * comm,
                         MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    int root_node = e->layout->node[root];
    int root_local = MPIDI_Topo_local_index(e, root);
    int root_leads = e->layout->leader[root_node * e->k] == root;   /* (k is 1 here) */
    char *sink = NULL;

    if (e->node == root_node && !root_leads) {
        mpi_errno = node_share(e, tb, m, root_local, errflag);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
    }
    if (e->leader_comm) {
        /* (without a buffer of its own, the leader takes the messages in
         * whole and drops them) */
        if (buf == NULL)
            buf = sink = MPIR_Topo_sink_alloc(comm, m);
        MPIDI_Topo_node_errflag(e, errflag);
        mpi_errno = bcast_scatter_net(buf, m, MPI_BYTE, root_node, doubling, e->leader_comm,
                                      errflag);
        MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
        /* (before the slots: the node's processes fail the call too) */
        if (*errflag != MPIR_ERR_NONE)
            MPL_atomic_release_store_uint64(e->node_failed, 1);
        MPIDI_TOPO_EVENT(e, "net", 0, 0);
    }
    if (e->node != root_node || root_leads) {
        mpi_errno = node_share(e, tb, m, e->leader_local[0], errflag);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
    }
    MPL_free(sink);
    return MPIDI_Topo_check_node(e, mpi_errno_ret, errflag);
}

/* A small bcast within one node (at most MPIDI_TOPO_CELL_BYTES): the root
 * writes the data into its cell of the call and then the cell's sequence
 * word; the others wait on that word and copy out.  One cache-line
 * transfer brings a reader the word with the first bytes, where a slot
 * takes two (the root's arrive counter, then the slot), and the root reads
 * the others' cell_done only when its ring runs out of cells it knows are
 * free (MPIDI_Topo_cell_claim), not on every call.  Cost: one copy in,
 * L - 1 copies out, about 2 cache-line transfers of latency. */
static int bcast_cell(MPIDI_Topo_engine_t * e, const MPIDI_Topo_tbuf_t * tb, MPI_Aint m,
                      int root_local, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    uint64_t s;
    char *cell;

    MPIDI_Topo_cell_claim(e, e->local_rank == root_local, &s);
    cell = MPIDI_TOPO_CELL(e, root_local, s);
    if (e->local_rank == root_local) {
        mpi_errno = MPIDI_Topo_tbuf_pack(tb, 0, cell + MPIDI_TOPO_CELL_DATA, m);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        MPIDI_TOPO_CELL_PUBLISH(e, cell, m, s);
    } else {
        MPIDI_TOPO_WAIT_GE(e, MPIDI_TOPO_CELL_SEQ(cell), s);
        mpi_errno = MPIDI_Topo_tbuf_unpack(tb, 0, cell + MPIDI_TOPO_CELL_DATA, m);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
        MPIDI_TOPO_EVENT(e, "out", 0, 0);
    }
    MPIDI_Topo_cell_done(e, s);
    return MPIDI_Topo_check_node(e, mpi_errno_ret, errflag);
}

/* Chunks a leader has in flight in direct mode: receives posted ahead, and
 * sends not yet completed, per child.  Bounded so that a large message in
 * small chunks does not post thousands of requests at once. */
#define MPIDI_TOPO_BCAST_WINDOW 16

/* buf NULL: this process could not stage its data (MPIDI_Topo_staging_failed);
 * it reads nothing, and as a leader takes its chunks into a chunk of
 * scratch and passes on empty ones, marked failed */
static int bcast_direct(MPIDI_Topo_engine_t * e, char *buf, MPI_Aint m, int root,
                        MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    int am_root = (comm->rank == root);
    int root_node = e->layout->node[root];
    int root_local = MPIDI_Topo_local_index(e, root);
    int parent = -1, nchildren = 0, children[32];
    int nlocal = e->local_size, k = e->k;
    MPI_Aint chunk, nchunks, nmine = 0, nposted = 0, nrounds;
    int chain = leader_plan(e, m, e->slot_size, &chunk);
    uint64_t base, first, last;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    MPIR_Request *rreqs[MPIDI_TOPO_BCAST_WINDOW] = { NULL };
    MPIR_Request *sreqs[MPIDI_TOPO_BCAST_WINDOW * 32] = { NULL };
    int recv_from_parent, sink = buf == NULL, one_by_one;
    char *sink_buf = NULL;

    /* chunk i is announced in round base + 1 + i / k, one step each, so
     * that no counter ever carries more than one step per round */
    nchunks = (m + chunk - 1) / chunk;
    nrounds = (nchunks + k - 1) / k;
    mpi_errno = MPIDI_Topo_rounds(e, nrounds, &base, errflag);
    if (mpi_errno)
        return mpi_errno;
    first = base + 1;
    last = base + nrounds;
    if (e->leader_comm) {
        node_tree(e->nnodes, e->node, root_node, chain, &parent, children, &nchildren);
        nmine = (nchunks - e->group + k - 1) / k;
    }
    one_by_one = one_child_at_a_time(e, nmine, nchildren);
    recv_from_parent = nmine && e->node != root_node;
    if (sink && recv_from_parent)
        sink_buf = MPIR_Topo_sink_alloc(comm, chunk);

    me->addr = (uint64_t) (uintptr_t) buf;
    MPL_atomic_release_store_uint64(&me->arrive, first);

    for (MPI_Aint i = 0; i < nchunks; i++) {
        MPI_Aint off = i * chunk, len = MPL_MIN(chunk, m - off), j = i / k;
        int g = (int) (i % k);
        int owner = e->leader_local[g];
        int mine = nmine && e->group == g;

        if (mine) {
            MPIR_Request **sw = &sreqs[(j % MPIDI_TOPO_BCAST_WINDOW) * nchildren];
            if (recv_from_parent) {
                /* keep the window of receives full, then take chunk j */
                for (; nposted < nmine && nposted < j + MPIDI_TOPO_BCAST_WINDOW; nposted++) {
                    MPI_Aint o = (e->group + nposted * k) * chunk;
                    mpi_errno = MPIC_Irecv(sink ? sink_buf : buf + o, MPL_MIN(chunk, m - o),
                                           MPI_BYTE, parent,
                                           MPIR_BCAST_TAG, e->leader_comm,
                                           &rreqs[nposted % MPIDI_TOPO_BCAST_WINDOW]);
                    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
                }
                mpi_errno = MPIDI_Topo_waitall(e, 1, &rreqs[j % MPIDI_TOPO_BCAST_WINDOW],
                                               errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(first + j, 1));
                MPIDI_TOPO_EVENT(e, "recv", i, 0);
            } else if (!am_root && !sink) {
                MPIDI_Topo_ctrl_t *rc = MPIDI_TOPO_CTRL(e, root_local);
                MPIDI_TOPO_WAIT_GE(e, &rc->arrive, first);
                mpi_errno = MPIDI_Topo_cma_read(e, root_local, buf + off, rc->addr + off, len);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
                MPIDI_TOPO_EVENT(e, "out", i, 0);
            }
            /* this window entry's sends, chunk j - WINDOW's, are done first */
            mpi_errno = MPIDI_Topo_waitall(e, nchildren, sw, errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
            MPIDI_Topo_node_errflag(e, errflag);
            for (int c = 0; c < nchildren; c++) {
                if (one_by_one && c > 0) {
                    mpi_errno = MPIDI_Topo_waitall(e, 1, &sw[c - 1], errflag);
                    MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                    MPIDI_Topo_node_errflag(e, errflag);
                }
                mpi_errno = MPIC_Isend(sink ? NULL : buf + off, sink ? 0 : len, MPI_BYTE,
                                       children[c], MPIR_BCAST_TAG,
                                       e->leader_comm, &sw[c], errflag);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *errflag);
                if (one_by_one)
                    MPIDI_TOPO_EVENT(e, "child", i, c);
            }
        } else if (!am_root && !sink) {
            int src = e->node == root_node ? root_local : owner;
            MPIDI_Topo_ctrl_t *sc = MPIDI_TOPO_CTRL(e, src);
            if (e->node == root_node)
                MPIDI_TOPO_WAIT_GE(e, &sc->arrive, first);
            else
                MPIDI_TOPO_WAIT_GE(e, &sc->avail, MPIDI_TOPO_PROG(first + j, 1));
            mpi_errno = MPIDI_Topo_cma_read(e, src, buf + off, sc->addr + off, len);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag);
            MPIDI_TOPO_EVENT(e, "out", i, 0);
        }
    }

  fn_exit:
    /* pending requests are completed on every path (after an error too:
     * receives posted ahead are cancelled first) */
    for (int w = 0; w < MPIDI_TOPO_BCAST_WINDOW; w++)
        if (rreqs[w] && mpi_errno)
            MPIR_Cancel_impl(rreqs[w]);
    {
        /* (the waits record their errors in errflag) */
        int err = MPIDI_Topo_waitall(e, MPIDI_TOPO_BCAST_WINDOW, rreqs, errflag);
        if (err)
            MPIR_ERR_ADD(mpi_errno_ret, err);
        err = MPIDI_Topo_waitall(e, MPIDI_TOPO_BCAST_WINDOW * nchildren, sreqs, errflag);
        if (err)
            MPIR_ERR_ADD(mpi_errno_ret, err);
    }
    /* others read from our buffers: leave only when all local copies ended */
    MPL_atomic_release_store_uint64(&me->done, last);
    MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, last);
    MPL_free(sink_buf);
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

/* One process per node: the network step alone, on comm: the chain of
 * nodes, MPICH's binomial tree (sent whole: nch = 1) or, from
 * MPIR_CVAR_BCAST_SHORT_MSG_SIZE, MPICH's scatter then allgather,
 * whichever the cost model above puts first.  On 4 emulated nodes at
 * 250 Mbit/s (bench/cluster.sh) chain, binomial and scatter took 13.0,
 * 15.9 and 11.7 ms at 256 KiB, 44, 69 and 62 ms at 1 MiB, 156, 281 and
 * 231 ms at 4 MiB. */
static int bcast_one_per_node(MPIDI_Topo_engine_t * e, void *buffer, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Aint m, int root, MPIR_Comm * comm,
                              MPIR_Errflag_t * errflag)
{
    int p = comm->local_size, vr = (comm->rank - root + p) % p;
    MPI_Aint chunk;
    double cost;
    /* (MPICH's binomial tree sends the message whole) */
    int chain = node_plan(&e->model, p, m, MPIDI_Topo_net_chunk(), 1, &chunk, &cost);

    if (MPIR_CVAR_TOPO_BCAST_NODE_TREE == MPIR_CVAR_TOPO_BCAST_NODE_TREE_scatter ||
        (MPIR_CVAR_TOPO_BCAST_NODE_TREE == MPIR_CVAR_TOPO_BCAST_NODE_TREE_auto &&
         m >= MPIR_CVAR_BCAST_SHORT_MSG_SIZE)) {
        int doubling;
        double scatter = MPIR_Topo_model_bcast_scatter(&e->model, p, m, &doubling);
        if (scatter < cost ||
            MPIR_CVAR_TOPO_BCAST_NODE_TREE == MPIR_CVAR_TOPO_BCAST_NODE_TREE_scatter)
            return bcast_scatter_net(buffer, count, datatype, root, doubling, comm, errflag);
    }
    if (chain) {
        int next = (comm->rank + 1) % p, forwards = vr + 2 < p;
        return MPIR_Topo_bcast_pipelined(buffer, count, datatype, root, comm,
                                         vr ? (comm->rank - 1 + p) % p : -1, &next, &forwards,
                                         vr + 1 < p, chunk, errflag);
    }
    return MPIR_Bcast_intra_binomial(buffer, count, datatype, root, comm, errflag);
}

/* The segment way of a contiguous buffer (NULL: this process takes part
 * without data) */
static int bcast_by_segment(MPIDI_Topo_engine_t * e, char *buf, MPI_Aint m, int root,
                            MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    MPIDI_Topo_tbuf_t cb;
    int doubling;

    MPIDI_Topo_tbuf_init(&cb, buf, m, MPI_BYTE);
    if (buf == NULL)
        MPIDI_Topo_tbuf_discard(&cb);
    if (e->nnodes > 1 && leaders_scatter(e, m, root, &doubling))
        return bcast_scatter(e, &cb, buf, m, root, doubling, comm, errflag);
    return bcast_segment(e, &cb, m, root, comm, errflag);
}

/* Bcasts within one node from 64 KiB learn between the segment and CMA
 * (topo_learn.c): the kernel's single copy pins pages per call, and
 * whether it beats two overlapped copies through the segment depends on
 * the processor, the kernel and the size (OSU on 2 processes of one 2-core
 * VM: CMA 6.1-42 us at 64-512 KiB against the segment's 8.8-48; the
 * segment from 1 MiB, 39 against 77 us in dev-2core-slots).  Below 64
 * KiB CMA's fixed cost per call (2.5-12 us there) loses. */
#define MPIDI_TOPO_BCAST_LEARN_MIN (64 * 1024)

static const char *const bcast_way_name[] = { "segment", "cma" };

static int bcast_learns(MPIDI_Topo_engine_t * e, MPI_Aint m)
{
    /* (not in a nonblocking or persistent call: the agreement is a
     * blocking allreduce on comm; the user's choice last, as allgather) */
    return m >= MPIDI_TOPO_BCAST_LEARN_MIN && e->nnodes == 1 && e->cma &&
        !MPIR_Topo_nb_current && MPIR_CVAR_TOPO_BCAST_TRIALS > 0 &&
        MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD < 0 &&
        !MPIR_Topo_user_chose("MPIR_Bcast_intra_topo_pipeline");
}

static int bcast_learned(MPIDI_Topo_engine_t * e, char *buf, MPI_Aint m, int root,
                         MPIR_Comm * comm, MPIR_Errflag_t * errflag)
{
    /* untimed first: the segment's first calls touch its slots' pages,
     * CMA's first call the root's buffer (topo_allgather_learn.c) */
    MPIDI_Topo_learn_info_t li = { "bcast", bcast_way_name, 2, MPIR_CVAR_TOPO_BCAST_TRIALS, 0, 0,
        {MPIDI_TOPO_NSLOTS, 1}
    };
    MPIDI_Topo_learn_t *l = MPIDI_Topo_learn_class(e->bcast_learn, m);
    int way = MPIDI_Topo_learn_way(l, &li), mpi_errno, agree_errno;
    MPL_time_t t0, t1;
    double dt;

    if (!l->chosen)
        MPL_wtime(&t0);
    if (way == 1)
        mpi_errno = bcast_direct(e, buf, m, root, comm, errflag);
    else
        mpi_errno = bcast_by_segment(e, buf, m, root, comm, errflag);
    if (l->chosen)
        return mpi_errno;
    MPL_wtime(&t1);
    MPL_wtime_diff(&t0, &t1, &dt);
    agree_errno = MPIDI_Topo_learn_trial(l, &li, way, mpi_errno ? 0.0 : dt, m, comm, errflag);
    return mpi_errno ? mpi_errno : agree_errno;
}

int MPIDI_Topo_bcast_pipeline(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                              MPIR_Comm * comm, const char **why_not, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, staging_errno = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e;
    MPIDI_Topo_tbuf_t tb;
    MPI_Aint tsize, m;
    char *tmp = NULL, *buf;

    MPIR_Datatype_get_size_macro(datatype, tsize);
    m = count * tsize;
    *why_not = NULL;
    if (m == 0 || comm->local_size == 1)
        return MPI_SUCCESS;

    MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag);
    if (e->one_per_node) {
        mpi_errno = bcast_one_per_node(e, buffer, count, datatype, m, root, comm, errflag);
        goto fn_exit;
    }
    MPIDI_Topo_tbuf_init(&tb, buffer, count, datatype);
    if (e->nnodes == 1 && m <= MPIDI_TOPO_CELL_BYTES) {
        MPIDI_Topo_timeline_begin(e, comm, "bcast", m);
        mpi_errno = bcast_cell(e, &tb, m, MPIDI_Topo_local_index(e, root), errflag);
        MPIDI_Topo_timeline_end(e);
        goto fn_exit;
    }
    /* non-contiguous types through a contiguous copy, packed/unpacked once
     * (see MPIDI_Topo_allgather) */
    buf = tb.buf + tb.lb;
    if (!tb.contig) {
        buf = tmp = MPIR_Topo_staging_alloc(m);
        /* without it, take part without data rather than leave the others
         * waiting (buf NULL) */
        if (tmp == NULL)
            staging_errno = MPIDI_Topo_staging_failed(e, m, errflag);
        else if (comm->rank == root) {
            /* a failed pack also takes part (the node fails the call):
             * leaving would put this process a call behind the others */
            mpi_errno = MPIDI_Topo_tbuf_pack(&tb, 0, tmp, m);
            MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, staging_errno, errflag);
        }
    }
    MPIDI_Topo_timeline_begin(e, comm, "bcast", m);
    if (bcast_learns(e, m))
        mpi_errno = bcast_learned(e, buf, m, root, comm, errflag);
    else if (e->cma && MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD >= 0 &&
             m >= MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD)
        mpi_errno = bcast_direct(e, buf, m, root, comm, errflag);
    else
        mpi_errno = bcast_by_segment(e, buf, m, root, comm, errflag);
    MPIDI_Topo_timeline_end(e);
    /* (the root's buffer holds the data already) */
    mpi_errno = MPIDI_Topo_staged_result(&tb, comm->rank != root ? tmp : NULL, m, staging_errno,
                                         mpi_errno);
    MPIR_ERR_CHECK(mpi_errno);

  fn_exit:
    MPL_free(tmp);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}
