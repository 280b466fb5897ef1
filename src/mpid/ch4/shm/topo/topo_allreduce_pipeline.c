/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "topo_engine.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_TOPO_NODE_LEVELS
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Levels within a node of the topo_pipeline algorithms. In
        allreduce and reduce, 1: one level, each process reduces its slice of a
        round across the inputs of all the node's processes. 2: each group
        of the node (a NUMA domain or package, the groups of
        MPIR_CVAR_TOPO_LEADERS_PER_NODE) first reduces its own members'
        inputs, then the groups' partial results are reduced, and each
        group copies the result into its own area before its members copy
        it out, so that most reads stay within a domain and the
        reduction's waits poll the group's flags and the group leaders'
        instead of every process'. 3 and 4 add, where the node has them,
        the shared caches within each group (L3 domains of a NUMA domain,
        reduced first) and then the packages of several groups (reduced
        between the groups and the node), each level polling only its own
        unit's flags, and the result goes out through the packages' first
        groups: the later groups of a package copy it from there, so that
        it crosses to each package once; a level the node lacks is left
        out (MPIR_CVAR_TOPO_PRINT shows each node's). bcast topo_pipeline
        (segment mode) and allgather topo_pipeline (segment mode, within
        one node) copy through the same levels: a unit that does not hold
        the process where the data arrived gets one copy, which its first
        member makes from its parent unit's copy into the unit's own area
        of the slot, and its members and inner units read from there, so
        that each chunk or block crosses to each package, group and cache
        domain once. A slot is cut into one area per innermost unit (of
        the node that has most) plus one; where areas would be under
        4 KiB (bcast) or 1 KiB per process (allgather), the innermost level
        is left out, alike on every node so that all nodes cut a message
        alike (larger slots: MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE).
        0 (default): on
        nodes of at least 16 processes, every level they have (caches where
        they hold 4 processes or more on average), one level on smaller
        nodes; values above 4 count as 4, below 0 as 0.

    - name        : MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP
      category    : TOPO
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        allreduce topo_pipeline across nodes, calls of more than one
        round (a round: the node's slot shared by its processes): where
        the leaders' network step runs.
        auto    - the cost model (topo_model.c) decides from the nodes,
                  the leaders per node, the bytes and the round's bytes
                  (MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES): per round where
                  rounds are large against the step's latencies, once
                  where it predicts that at least twice as fast (many
                  processes per node, many nodes); MPIR_CVAR_TOPO_PRINT
                  prints where it switches
        rounds  - each round's step while the node fills the next round
        once    - the node reduces the whole call within the node, each
                  group's leader keeping its group's share of each round
                  (MPIR_CVAR_TOPO_LEADERS_PER_NODE), one step per leader
                  on its shares of the whole call, then the node copies
                  the result out

    - name        : MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP
      category    : TOPO
      type        : enum
      default     : auto
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : |-
        reduce topo_pipeline across nodes, calls of more than one round:
        where the leaders' network step (a reduce to the root's node)
        runs, as MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP for allreduce.
        auto    - the cost model decides, as for allreduce
        rounds  - each round's step while the node fills the next round
        once    - each node reduces the whole call into its first
                  leader's buffer (the root's receive buffer where the
                  root is that leader, memory of the call's size
                  elsewhere), the leaders reduce it to the root's node in
                  one step, and that leader hands it to the root through
                  the node segment

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* Algorithm: parallel shared-memory allreduce with leaders
 * (MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline, Mamidala ch. 9)
 *
 * Rounds of c elements, c chosen so that the inputs of the largest node's
 * processes fit in a slot.  In round r each local process copies its
 * input into its own area of the slot; then process q reduces slice q (1/L of the round)
 * across all areas into area 0, starting with the area after its own so
 * that the processes do not all read the same area at once.  Leader g then
 * allreduces the g-th k-th of the round across nodes over its
 * leader communicator, in place in area 0, so each leader carries 1/k of
 * the node's traffic; everyone copies the result out.  With several
 * rounds the leaders' step is nonblocking: round r crosses the network
 * while the node drains round r-1 and fills and reduces round r+1 (two
 * slots); a call of one round has nothing to overlap and runs it blocking
 * (allreduce_net, reduce_net).  Predefined ops
 * only: the local reduction order is not rank order, and the elements are
 * packed (MPIR_Topo_basic_t) while MPI calls a user-defined op with the
 * call's datatype.
 *
 * Allreduce across nodes in several rounds pays each round's leaders'
 * step its latencies (log2 N, twice for reduce-scatter + allgather): a
 * 128 KiB slot of 16 processes makes rounds of 8 KiB, and then the rounds
 * cost several times the call's bytes (SimGrid, 16 nodes x 16, 1 MiB:
 * 11x MPICH's flat reduce-scatter + allgather).  Where the cost model
 * says so (MPIDI_Topo_leaders_once), the leaders' step runs once: the
 * rounds reduce the call within the node (no network step; only the
 * leaders copy out, leader g its group's share of the round, the element
 * range it carries in the rounds' steps), leader g allreduces its shares
 * of the whole call among the nodes' group-g leaders, and the node copies
 * the result out of the slots a round at a time once every leader has
 * copied its shares in (once_out).  With k leaders each copies and sends
 * c/k of a call of c bytes: with one, a node of 16 processes waited on one
 * process' two copies of the whole call (SimGrid, 16 nodes x 16: 1.3x
 * MPICH's flat reduce-scatter + allgather from 256 KiB).
 *
 * Reduce (MPIR_CVAR_REDUCE_INTRA_ALGORITHM=topo_pipeline) runs the same
 * rounds: the leaders' step is a reduce to the leaders of the root's node,
 * and only the root copies the result out; the others mark a round done as
 * soon as their slice is reduced (leaders: once their network step is).
 * Its rounds pay the same latencies, and it takes the step once where the
 * same model says so: each node's first leader collects the call (in the
 * root's buffer where the root is that leader, in memory of the call's
 * size elsewhere), reduces it to the root's node's first leader, which
 * hands it to the root through the slots (once_out).
 *
 * Cost, per round of c bytes, N nodes of L processes, k leaders per node:
 * each process copies c in and reduces c/L across L areas ((L-1).c/L
 * reductions); the leaders allreduce (reduce) c/k bytes each over the
 * network, recursive doubling or reduce-scatter/allgather on N nodes
 * (log N alpha + 2.c/k beta at least; reduce: log N alpha + c/k beta);
 * everyone (reduce: the root) copies c out.  Rounds overlap the network
 * step of one with the local work of the next.
 *
 * Timeline, as allreduce_elements runs it (iteration i = round_in of round
 * i, then round_out of round i-1):
 *   iteration 0: copy in 0, reduce slice of 0, leaders start net(0)
 *   iteration 1: copy in 1, reduce slice of 1, leaders start net(1);
 *                leaders finish net(0), everyone copies 0 out
 *   iteration 2: copy in 2 (slot of round 0, free once everyone copied it
 *                out), ...; leaders finish net(1), copy 1 out
 * so net(i) crosses the network while round i+1 is copied in and reduced.
 *
 * Two levels (MPIR_CVAR_TOPO_NODE_LEVELS), for nodes of several domains
 * (groups of G = L/k processes): in round r member j of group g reduces
 * the j-th G-th of the round across its group's areas into the group's
 * first area (polling its group's arrivals); once the group's first
 * member has seen its members done it says so (grouped); then member j
 * reduces the j-th G-th of its group's share (the g-th k-th of the round,
 * the share its leader carries across nodes) across the k group partials
 * into area 0, and the leader waits for its own group only before its
 * network step.
 *
 * More levels (MPIR_Topo_node_units: caches within the groups, packages
 * of several groups) nest the same way: at each level, innermost first,
 * the j-th member of a unit of U processes reduces the j-th U-th of the
 * round across its children's partials (a child's partial is in its
 * first member's area, the first child's is the unit's) once each child's
 * first member has said it is whole, and waits only on its unit's
 * children; the node's level splits by groups' shares as above.  Cost per
 * round of c bytes, with u_d the children of a process' unit at level d
 * (0: the node) and U_d its processes: sum over d of (u_d - 1).c/U_d
 * reductions and one wait on u_d flags, instead of (L-1).c/L and L; reads
 * across a level's domains, per node: (u_d - 1).c per unit of level d, in
 * place of (L-1)/L.c per process for one level.
 * On the way out (allreduce) member j of group g > 0 copies the j-th G-th
 * of the result into its group's first area, and the group copies out
 * from there.  Per process: (G-1)/G.c + (k-1)/L.c reductions instead of
 * (L-1)/L.c, c/G more copied, four to six waits instead of two; reads
 * that cross domains, per node: (k-1).c in the reduction instead of
 * (k-1)/k.L.c, and (k-1).c on the way out instead of (k-1)/k.L.c.  Where
 * packages of several groups are a level, the later groups of a package
 * copy the result from its first group's area instead of area 0 (one more
 * wait, on that group's G flags): the result crosses packages P - 1
 * times instead of once per group outside group 0's package. */

/* Within one node, below this many bytes of reduction work per process
 * ((local processes - 1) x message), every process reduces all inputs
 * itself: one synchronisation (inputs arrived) instead of two (arrived,
 * slices reduced), which is what small messages pay for.  Measured on 2
 * ranks: whole 0.26 us vs sliced 0.30 us at 1 KiB, 0.41 vs 0.38 at 2 KiB,
 * 1.27 vs 0.75 at 8 KiB.  Through cells in two stages (whole_cells, from
 * 16 processes), a process reduces about 2 sqrt(p) inputs of at most
 * MPIDI_TOPO_CELL_BYTES, where the sliced path waits twice on all p
 * processes: the cells take every size they hold (not timed apart). */
#define MPIDI_TOPO_ALLREDUCE_WHOLE_WORK 2048

/* The leaders' network step of a call that is one round (and of one
 * process per node), which nothing overlaps: recursive doubling (the
 * binomial tree for reduce) or reduce-scatter then allgather (gather),
 * whichever the cost model puts first for the node count and the bytes
 * (topo_model.c, MPIR_Topo_model_reduce_leaders: with B =
 * MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES, the split from about B on many
 * nodes, 2.2 B on 4, 6 B on 2, where doubling sends no more bytes and
 * only the split's halved reduction pays for its second latency).  Up to
 * MPICH's short-message size (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE,
 * MPIR_CVAR_REDUCE_SHORT_MSG_SIZE) always doubling, as MPICH does.  (The
 * rounds of longer calls overlap their latencies and go through MPICH's
 * nonblocking selection.) */
int MPIDI_Topo_reduce_split(const MPIR_Topo_model_t * md, int nn, MPI_Aint count, MPI_Aint c,
                            MPI_Aint short_bytes)
{
    double doubling, split;

    return c > short_bytes &&
        MPIR_Topo_model_reduce_leaders(md, nn, c, count, &doubling, &split) ==
        MPIR_TOPO_MODEL_SPLIT;
}

static int allreduce_net(const MPIDI_Topo_engine_t * e, const void *sendbuf, void *recvbuf,
                         MPI_Aint count, MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                         MPIR_Errflag_t * errflag)
{
    MPI_Aint tsize;

    MPIR_Datatype_get_size_macro(datatype, tsize);
    if (MPIDI_Topo_reduce_split(&e->model, comm->local_size, count, count * tsize,
                                MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE))
        return MPIR_Allreduce_intra_reduce_scatter_allgather(sendbuf, recvbuf, count, datatype,
                                                             op, comm, errflag);
    return MPIR_Allreduce_intra_recursive_doubling(sendbuf, recvbuf, count, datatype, op, comm,
                                                   errflag);
}

static int reduce_net(const MPIDI_Topo_engine_t * e, const void *sendbuf, void *recvbuf,
                      MPI_Aint count, MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                      MPIR_Errflag_t * errflag)
{
    MPI_Aint tsize;

    MPIR_Datatype_get_size_macro(datatype, tsize);
    if (MPIDI_Topo_reduce_split(&e->model, comm->local_size, count, count * tsize,
                                MPIR_CVAR_REDUCE_SHORT_MSG_SIZE))
        return MPIR_Reduce_intra_reduce_scatter_gather(sendbuf, recvbuf, count, datatype, op,
                                                       root, comm, errflag);
    return MPIR_Reduce_intra_binomial(sendbuf, recvbuf, count, datatype, op, root, comm,
                                      errflag);
}

/* One call's rounds: what its phases share */
typedef struct {
    MPIDI_Topo_engine_t *e;
    const char *sbuf;
    char *rbuf;
    MPI_Aint count;
    MPI_Datatype datatype;
    MPI_Op op;
    int root;                   /* < 0: allreduce */
    int root_node;
    int wants;                  /* this process gets the result */
    int has_holes;              /* bytes in the span outside the type map (padding) */
    MPI_Aint extent, true_lb, true_extent;
    MPI_Aint c;                 /* elements per round */
    MPI_Aint stride;            /* bytes between areas */
    uint64_t base;              /* the round before the call's first */
    MPIR_Request *nreq[2];      /* leaders: network steps in flight */
    int net_blocking;           /* one round: nothing to overlap its network step with */
    int once;                   /* the leaders' step once on the whole call, after the
                                 * rounds (which then reduce within the node only) */
    int once_k;                 /* once: the leaders that take part (allreduce: every
                                 * group's, each with its share of each round; reduce:
                                 * the first) */
    char *pack;                 /* once, such a leader: its shares of the rounds, one
                                 * after the other (one leader: the whole call) */
    MPI_Aint pack_n;            /* elements in pack so far */
    int user_wants;             /* allreduce, or reduce's root: the call's result is
                                 * this process' (wants: the rounds' result) */
    /* several rounds: MPICH's nonblocking schedules carry no error bit, so
     * the leaders agree on failures with their last round (failed_req) */
    MPI_Aint nrounds;
    MPIR_Request *failed_req;
    int failed_in, failed_out;
    /* this process could not stage its data: it takes part with stale
     * inputs and keeps no result (the call fails everywhere) */
    int discard;
    MPIR_Errflag_t *errflag;
} reduction_t;

/* Where group g's share of n elements starts, k groups: share g is
 * [share_at(n, g, k), share_at(n, g + 1, k)), the same element range on
 * every node whatever its size (what leader g carries across nodes) */
static MPI_Aint share_at(MPI_Aint n, int g, int k)
{
    return n * g / k;
}

/* area a of a slot holds the span of local process a's elements; element
 * 0's base is the area minus true_lb */
static char *area(const reduction_t * x, char *slot, int a)
{
    return slot + a * x->stride - x->true_lb;
}

/* A one-round call within one node (below MPIDI_TOPO_ALLREDUCE_WHOLE_WORK):
 * every process that gets the result reduces all inputs itself. */
static int whole_round(reduction_t * x)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    int nlocal = e->local_size;
    uint64_t r = x->base + 1;
    char *slot = MPIDI_TOPO_SLOT(e, r);
    MPI_Aint span = (x->count - 1) * x->extent + x->true_extent;

    /* a process arrives at the first round of a call only once it is
     * done with every earlier round: if this process saw them all
     * arrive at round r - 1 in such a call (this path), they are done
     * with round r - 2, whose slot this is */
    if (r > MPIDI_TOPO_NSLOTS && e->all_arrived + 1 < r)
        MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
    if (!x->discard)
        memcpy(slot + e->local_rank * x->stride, x->sbuf + x->true_lb, span);
    MPIDI_TOPO_SHARED_DEFINED(slot + e->local_rank * x->stride, span);
    MPL_atomic_release_store_uint64(&me->arrive, r);
    if (!x->wants || x->discard) {
        /* reduce: nothing to read (the root's done guards this slot) */
        MPL_atomic_release_store_uint64(&me->done, r);
        return MPI_SUCCESS;
    }
    MPIDI_TOPO_WAIT_ALL(e, arrive, 0, nlocal, r);
    e->all_arrived = r;
    /* the same order everywhere, so that every process gets the same
     * bits (floating point): area 0 op (area 1 op (... op area L-1)) */
    mpi_errno = MPIR_Localcopy(area(x, slot, nlocal - 1), x->count, x->datatype, x->rbuf,
                               x->count, x->datatype);
    MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, x->errflag);
    for (int a = nlocal - 2; a >= 0; a--) {
        mpi_errno = MPIR_Topo_reduce_local(area(x, slot, a), x->rbuf, x->count, x->datatype,
                                           x->op);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, x->errflag);
    }
    MPL_atomic_release_store_uint64(&me->done, r);
    return mpi_errno_ret;
}

/* Input i of a stage of whole_cells: local process i's cell, or (partials)
 * group i's partial cell, which for a group of one is its member's cell */
static inline char *cell_in(MPIDI_Topo_engine_t * e, int partials, int i, uint64_t s)
{
    if (partials && e->cell_lo[i + 1] - e->cell_lo[i] > 1)
        return MPIDI_TOPO_PCELL(e, i, s);
    return MPIDI_TOPO_CELL(e, partials ? e->cell_lo[i] : i, s);
}

/* Waits for inputs [lo, hi) of call s, then res = in[lo] op (in[lo+1] op
 * (... op in[hi-1])): every process the same order, as whole_round.  res
 * is element 0's base of a buffer of the call's span. */
static int reduce_cells(reduction_t * x, int partials, int lo, int hi, uint64_t s, char *res)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    MPI_Aint span = (x->count - 1) * x->extent + x->true_extent;

    for (int i = lo; i < hi; i++)
        MPIDI_TOPO_WAIT_GE(e, MPIDI_TOPO_CELL_SEQ(cell_in(e, partials, i, s)), s);
    if (res == x->rbuf && x->has_holes) {
        /* the user's buffer: leave its holes (a pair type's padding) alone */
        mpi_errno = MPIR_Localcopy(cell_in(e, partials, hi - 1, s) + MPIDI_TOPO_CELL_DATA -
                                   x->true_lb, x->count, x->datatype, res, x->count, x->datatype);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, x->errflag);
    } else
        memcpy(res + x->true_lb, cell_in(e, partials, hi - 1, s) + MPIDI_TOPO_CELL_DATA, span);
    for (int i = hi - 2; i >= lo; i--) {
        mpi_errno = MPIR_Topo_reduce_local(cell_in(e, partials, i, s) + MPIDI_TOPO_CELL_DATA -
                                           x->true_lb, res, x->count, x->datatype, x->op);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, x->errflag);
    }
    return mpi_errno_ret;
}

/* The same within one node up to MPIDI_TOPO_CELL_BYTES, through each
 * process' cells (MPIDI_TOPO_CELL): a reader's wait on a cell's sequence
 * word brings the first bytes of its data with it, and no round is used.
 * On 2 processes, 16 bytes, each call timed alone (bench/run.sh --quick):
 * 0.88 us with the slot, 0.71-0.76 us with cells.
 *
 * With several cell groups (MPIR_CVAR_TOPO_CELL_FANIN, large nodes) in two
 * stages: the first member of each group reduces its group's cells into
 * the group's partial cell, and every process that wants the result
 * reduces the partials (a group of one: its member's cell).  A process
 * then reads about 2 sqrt(p) cells instead of p, and each cell has one
 * reader in stage 1 instead of p.  Cost, p processes in G groups of at
 * most f, m bytes, l the latency of a cache line moving between cores:
 * flat l + p m/B_line reads per process, each line shared by p readers;
 * two stages 2 l + (f + G) m/B_line reads. */
static int whole_cells(reduction_t * x)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    int ng = e->ncell_groups, lo = e->cell_lo[e->cell_group], hi = e->cell_lo[e->cell_group + 1];
    MPI_Aint span = (x->count - 1) * x->extent + x->true_extent;
    uint64_t s;
    char *cell;

    MPIDI_Topo_cell_claim(e, 1, &s);
    cell = MPIDI_TOPO_CELL(e, e->local_rank, s);
    if (!x->discard)
        memcpy(cell + MPIDI_TOPO_CELL_DATA, x->sbuf + x->true_lb, span);
    MPIDI_TOPO_CELL_PUBLISH(e, cell, span, s);
    if (ng > 1 && e->local_rank == lo && hi - lo > 1) {
        /* stage 1: my group's partial, published also after an error, so
         * that nobody waits for it */
        char *part = MPIDI_TOPO_PCELL(e, e->cell_group, s);
        mpi_errno = reduce_cells(x, 0, lo, hi, s, part + MPIDI_TOPO_CELL_DATA - x->true_lb);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        MPIDI_TOPO_CELL_PUBLISH(e, part, span, s);
        MPIDI_TOPO_EVENT(e, "grouped", 0, 0);
    }
    if (x->wants && !x->discard) {
        /* flat: every process' cell; two stages: the groups' partials */
        mpi_errno = reduce_cells(x, ng > 1, 0, ng > 1 ? ng : e->local_size, s, x->rbuf);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        MPIDI_TOPO_EVENT(e, "out", 0, 0);
    }
    MPIDI_Topo_cell_done(e, s);
    return mpi_errno_ret;
}

/* Reduces elements [lo, hi) of the partials of children c[0..nc) (local
 * indices whose areas hold them) into c[0]'s area, starting with the
 * child after mine (mine: my child's index) so that a unit's members do
 * not all read the same area at once */
static int reduce_children(reduction_t * x, char *slot, const int *c, int nc, int mine,
                           MPI_Aint lo, MPI_Aint hi)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;

    for (int t = 1; t <= nc && hi > lo; t++) {
        int h = (mine + t) % nc;
        if (h == 0)
            continue;
        mpi_errno = MPIR_Topo_reduce_local(area(x, slot, c[h]) + lo * x->extent,
                                           area(x, slot, c[0]) + lo * x->extent, hi - lo,
                                           x->datatype, x->op);
        MPIDI_TOPO_LOCAL_ERR(x->e, mpi_errno, mpi_errno_ret, x->errflag);
    }
    return mpi_errno_ret;
}

/* Round r's reduction within the node, level by level (see the
 * algorithm's comment), then my part of area 0 */
static int reduce_levels(reduction_t * x, char *slot, uint64_t r, MPI_Aint n)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    int i = e->local_rank, depth = e->nlevels;
    MPI_Aint lo, hi;

    for (int d = depth - 1; d >= 0; d--) {
        const int *c = e->lv_child[d];
        int nc = e->lv_nchild[d], stage = depth - d;
        int j = i - e->lv_lo[d], size = e->lv_hi[d] - e->lv_lo[d];

        /* the children's partials: their processes' inputs (the last
         * level), else whole once each child's first member says so */
        if (d == depth - 1)
            MPIDI_TOPO_WAIT_ALL(e, arrive, e->lv_lo[d], e->lv_hi[d], r);
        else
            for (int h = 0; h < nc; h++)
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, c[h])->grouped,
                                   MPIDI_TOPO_PROG(r, stage - 1));
        if (d == 0 && e->group_level) {
            /* my part of my group's share, the elements its leader
             * carries across nodes */
            MPIR_Topo_stages_t st;
            int glo = e->group_lo[e->group];
            MPIR_Topo_reduce_stages(n, e->k, e->group, e->group_lo[e->group + 1] - glo, i - glo,
                                    &st);
            lo = st.sub_lo;
            hi = st.sub_hi;
        } else {
            lo = n * j / size;
            hi = n * (j + 1) / size;
        }
        mpi_errno = reduce_children(x, slot, c, nc, e->lv_mine[d], lo, hi);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        if (d == 0)
            break;
        MPL_atomic_release_store_uint64(&me->partial, MPIDI_TOPO_PROG(r, stage));
        if (i == e->lv_lo[d]) {
            MPIDI_TOPO_WAIT_ALL(e, partial, e->lv_lo[d], e->lv_hi[d], MPIDI_TOPO_PROG(r, stage));
            MPL_atomic_release_store_uint64(&me->grouped, MPIDI_TOPO_PROG(r, stage));
        }
        MPIDI_TOPO_EVENT(e, "grouped", r - x->base - 1, stage);
    }
    MPL_atomic_release_store_uint64(&me->reduced, r);
    return mpi_errno_ret;
}

/* Round i's local part: copy in, reduce my slice across the areas into
 * area 0, and (leaders) start the network step on the group's share. */
static int round_in(reduction_t * x, MPI_Aint i)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    int nlocal = e->local_size, mine = e->local_rank;
    uint64_t r = x->base + 1 + i;
    MPI_Aint off = i * x->c, n = MPL_MIN(x->c, x->count - off);
    char *slot = MPIDI_TOPO_SLOT(e, r);
    MPI_Aint span = (n - 1) * x->extent + x->true_extent;

    if (r > MPIDI_TOPO_NSLOTS)
        MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
    if (!x->discard)
        memcpy(slot + mine * x->stride, x->sbuf + off * x->extent + x->true_lb, span);
    MPIDI_TOPO_SHARED_DEFINED(slot + mine * x->stride, span);
    MPL_atomic_release_store_uint64(&me->arrive, r);
    MPIDI_TOPO_EVENT(e, "in", i, 0);

    /* (no all_arrived here: within these rounds a process arrives at
     * round r before it copies round r - 1 out) */
    mpi_errno_ret = reduce_levels(x, slot, r, n);
    MPIDI_TOPO_EVENT(e, "reduced", i, 0);

    if (e->is_leader && e->group_level && (e->nnodes == 1 || x->once)) {
        /* the node's processes wait for the k leaders, not for all L */
        MPIDI_TOPO_WAIT_ALL(e, reduced, e->group_lo[e->group], e->group_lo[e->group + 1], r);
        MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
    } else if (e->is_leader && e->nnodes > 1 && !x->once) {
        /* leader g's share of the round is the same element range on
         * every node, whatever the node sizes; in two levels its own
         * group reduced it */
        MPI_Aint share_lo = share_at(n, e->group, e->k), share_hi = share_at(n, e->group + 1, e->k);
        if (e->group_level)
            MPIDI_TOPO_WAIT_ALL(e, reduced, e->group_lo[e->group], e->group_lo[e->group + 1], r);
        else
            MPIDI_TOPO_WAIT_ALL(e, reduced, 0, nlocal, r);
        if (e->leader_comm && share_hi > share_lo) {
            char *share = area(x, slot, 0) + share_lo * x->extent;
            MPI_Aint n_share = share_hi - share_lo;
            const void *in = x->root < 0 || e->node == x->root_node ? MPI_IN_PLACE : share;

            /* a node whose process failed sends what it has, marked
             * failed (MPICH's error bit), so that no node takes it as good */
            MPIDI_Topo_node_errflag(e, x->errflag);
            /* one round: MPICH's nonblocking schedules cost a small call
             * 10-15 us of its 40 on 2 emulated nodes, and the blocking
             * algorithms run the same messages */
            if (x->net_blocking && x->root < 0)
                mpi_errno = allreduce_net(e, in, share, n_share, x->datatype, x->op, e->leader_comm,
                                          x->errflag);
            else if (x->net_blocking)
                mpi_errno = reduce_net(e, in, share, n_share, x->datatype, x->op, x->root_node,
                                       e->leader_comm, x->errflag);
            else if (x->root < 0)
                mpi_errno = MPIR_Iallreduce_impl(in, share, n_share, x->datatype, x->op,
                                                 e->leader_comm, &x->nreq[r % 2]);
            else
                mpi_errno = MPIR_Ireduce_impl(in, share, n_share, x->datatype, x->op,
                                              x->root_node, e->leader_comm, &x->nreq[r % 2]);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *x->errflag);
            if (!x->net_blocking && i == x->nrounds - 1) {
                /* the schedules above carry no error bit: with the last
                 * round the leaders learn whether any node failed in any
                 * (a node's failure word stays set) */
                x->failed_in = *x->errflag != MPIR_ERR_NONE ||
                    MPL_atomic_acquire_load_uint64(e->node_failed);
                mpi_errno = MPIR_Iallreduce_impl(&x->failed_in, &x->failed_out, 1, MPI_INT,
                                                 MPI_MAX, e->leader_comm, &x->failed_req);
                MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *x->errflag);
            }
            MPIDI_TOPO_EVENT(e, "net_start", i, 0);
        }
    }
    return mpi_errno_ret;
}

/* Round i's way out: (leaders) finish the network step, then everyone that
 * gets the result copies it out once every leader has. */
static int round_out(reduction_t * x, MPI_Aint i)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    uint64_t r = x->base + 1 + i;
    MPI_Aint off = i * x->c, n = MPL_MIN(x->c, x->count - off);
    char *slot = MPIDI_TOPO_SLOT(e, r);
    char *res = area(x, slot, 0);       /* where this process reads the result */

    if (e->nnodes > 1 && e->is_leader && !x->once) {
        mpi_errno = MPIDI_Topo_waitall(e, 1, &x->nreq[r % 2], x->errflag);
        MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *x->errflag);
        if (x->failed_req && i == x->nrounds - 1) {
            mpi_errno = MPIDI_Topo_waitall(e, 1, &x->failed_req, x->errflag);
            MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *x->errflag);
            /* (before avail: the node's processes read the word after it) */
            if (x->failed_out && *x->errflag == MPIR_ERR_NONE) {
                *x->errflag = MPIR_ERR_OTHER;
                MPL_atomic_release_store_uint64(e->node_failed, 1);
            }
        }
        MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
        MPIDI_TOPO_EVENT(e, "net", i, 0);
    }
    if (!x->wants) {
        /* reduce: done with the round once my slice (and, for a leader,
         * its network step) is; the root's done guards the slot until it
         * has copied the result out (a process that discards its result
         * still copies into its group's area, which others read) */
        MPL_atomic_release_store_uint64(&me->done, r);
        return mpi_errno_ret;
    }
    if ((e->nnodes == 1 || x->once) && !e->group_level) {
        /* nothing crosses the network: the slices themselves say when the
         * round is reduced (one hop, not two via leaders) */
        MPIDI_TOPO_WAIT_ALL(e, reduced, 0, e->local_size, r);
    } else {
        for (int g = 0; g < e->k; g++)
            MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, e->leader_local[g])->avail,
                               MPIDI_TOPO_PROG(r, 1));
    }
    if (e->group_level && x->root < 0 && e->group > 0 && !x->once) {
        /* the way out in two levels too: my group copies the result into
         * its first area (nobody reads the partials any more: every
         * leader has seen its group's stage 2 done), each in its part,
         * and its members read it there, within their domain.  Where
         * packages are a level, a package's later groups copy from its
         * first group's area (once that group has its copy), so that the
         * result crosses to each package once */
        int lo = e->group_lo[e->group], gsize = e->group_lo[e->group + 1] - lo;
        int via = e->pkg_first[e->group];
        char *from = area(x, slot, 0);
        MPIR_Topo_stages_t st;

        if (via > 0 && via != e->group) {       /* (group 0's package reads area 0) */
            MPIDI_TOPO_WAIT_ALL(e, copied, e->group_lo[via], e->group_lo[via + 1], r);
            from = area(x, slot, e->group_lo[via]);
        }
        MPIR_Topo_reduce_stages(n, e->k, e->group, gsize, e->local_rank - lo, &st);
        res = area(x, slot, lo);
        if (st.part_hi > st.part_lo) {
            MPI_Aint at = st.part_lo * x->extent + x->true_lb;
            MPI_Aint len = (st.part_hi - st.part_lo - 1) * x->extent + x->true_extent;
            memcpy(res + at, from + at, len);
            MPIDI_TOPO_SHARED_DEFINED(res + at, len);
        }
        /* (not partial: round r + 1's stage 1 has set that already) */
        MPL_atomic_release_store_uint64(&me->copied, r);
        MPIDI_TOPO_WAIT_ALL(e, copied, lo, lo + gsize, r);
    }
    if (x->once && x->once_k > 1) {
        /* a leader of the step keeps its share of the round, after its
         * shares of the rounds before (one leader keeps the whole round
         * where it belongs in its buffer, below) */
        MPI_Aint lo = share_at(n, e->group, x->once_k), hi = share_at(n, e->group + 1, x->once_k);
        if (hi > lo && !x->discard) {
            MPI_Aint len = (hi - lo - 1) * x->extent + x->true_extent;
            memcpy(x->pack + x->pack_n * x->extent + x->true_lb,
                   res + lo * x->extent + x->true_lb, len);
        }
        x->pack_n += hi - lo;
    } else if (x->discard)
        ;
    else if (!x->has_holes)
        memcpy(x->rbuf + off * x->extent + x->true_lb, res + x->true_lb, n * x->extent);
    else {
        /* leave the user's holes alone */
        mpi_errno = MPIR_Localcopy(res, n, x->datatype, x->rbuf + off * x->extent,
                                   n, x->datatype);
        MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, x->errflag);
    }
    MPL_atomic_release_store_uint64(&me->done, r);
    MPIDI_TOPO_EVENT(e, "out", i, 0);
    return mpi_errno_ret;
}

/* Whether an allreduce (reduce: is_reduce) of count elements of extent
 * bytes in rounds of c elements takes the leaders' step once on the whole
 * call (x.once), by MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP
 * (MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP) and the cost model.  Reduce's once
 * copies less than allreduce's (the result goes to one process, not all),
 * so allreduce's cost is an upper bound of it.  Every process computes
 * the same from the same inputs. */
int MPIDI_Topo_leaders_once(const MPIDI_Topo_engine_t * e, int is_reduce, MPI_Aint count,
                            MPI_Aint c, MPI_Aint extent)
{
    double rounds, once;

    if (is_reduce && MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP != MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP_auto)
        return MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP == MPIR_CVAR_TOPO_REDUCE_LEADERS_STEP_once;
    if (!is_reduce &&
        MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP != MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP_auto)
        return MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP == MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP_once;
    return MPIR_Topo_model_allreduce_steps(&e->model, e->nnodes, e->k, is_reduce ? 1 : e->k,
                                           (long long) (count * extent),
                                           (long long) (c * extent), (long long) count, &rounds,
                                           &once) == MPIR_TOPO_MODEL_ONCE;
}

/* x.once, after the rounds.  One leader (reduce; allreduce on nodes of
 * one group): the node's first leader holds the node's reduction in its
 * buffer; it allreduces it among the nodes' first leaders (reduce: to the
 * root's node's), then copies the result into the slots a round at a time
 * and the node's other processes copy it out (reduce: the root alone,
 * where it is not that leader; nodes without the root are done).
 * Allreduce on nodes of k groups: leader g holds its share of each round
 * (pack) and allreduces it among the nodes' group-g leaders, so that each
 * leader's copies and step carry 1/k of the call; then each copies its
 * shares into the slots and everyone copies each round out once all k
 * leaders have.  A failed step fails the call on every local process that
 * waits for it (node_failed, set before the first slot is published). */
static int once_out(reduction_t * x)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS;
    MPIDI_Topo_engine_t *e = x->e;
    MPIDI_Topo_ctrl_t *me = MPIDI_TOPO_CTRL(e, e->local_rank);
    int lead = e->leader_local[0], nlocal = e->local_size, k = x->once_k;
    int steps = e->is_leader && e->group < k;   /* (x->wants) */
    uint64_t base;

    if (steps && e->leader_comm && x->pack_n > 0) {
        MPIDI_Topo_node_errflag(e, x->errflag);
        if (x->root < 0)
            mpi_errno = allreduce_net(e, MPI_IN_PLACE, x->pack, x->pack_n, x->datatype, x->op,
                                      e->leader_comm, x->errflag);
        else    /* (a node without the root sends its own buffer: MPICH's way) */
            mpi_errno = reduce_net(e, e->node == x->root_node ? MPI_IN_PLACE : x->rbuf, x->rbuf,
                                   x->count, x->datatype, x->op, x->root_node, e->leader_comm,
                                   x->errflag);
        MPIR_ERR_COLL_CHECKANDCONT(mpi_errno, *x->errflag);
        if (*x->errflag != MPIR_ERR_NONE)
            MPL_atomic_release_store_uint64(e->node_failed, 1);
        MPIDI_TOPO_EVENT(e, "net", 0, 0);
    }
    if (x->root >= 0 && (e->node != x->root_node ||
                         MPIDI_Topo_local_index(e, x->root) == lead))
        return mpi_errno_ret;   /* (the root, if here, holds the result already) */
    mpi_errno = MPIDI_Topo_rounds(e, (uint64_t) x->nrounds, &base, x->errflag);
    if (mpi_errno)
        return mpi_errno;
    for (MPI_Aint j = 0; j < x->nrounds; j++) {
        /* (several leaders: from the last round, see allreduce_elements) */
        MPI_Aint i = k > 1 ? x->nrounds - 1 - j : j;
        uint64_t r = base + 1 + j;
        MPI_Aint off = i * x->c, n = MPL_MIN(x->c, x->count - off);
        MPI_Aint span = (n - 1) * x->extent + x->true_extent;
        MPI_Aint lo = share_at(n, e->group, k), hi = share_at(n, e->group + 1, k);
        /* (every round before round i is whole: their shares are alike) */
        MPI_Aint packed = i * (share_at(x->c, e->group + 1, k) - share_at(x->c, e->group, k));
        char *slot = MPIDI_TOPO_SLOT(e, r), *mine = x->rbuf + off * x->extent + x->true_lb;

        if (steps) {
            if (r > MPIDI_TOPO_NSLOTS)
                MPIDI_TOPO_WAIT_ALL(e, done, 0, nlocal, r - MPIDI_TOPO_NSLOTS);
            /* (area 0: element 0's data at the slot) */
            if (k == 1) {
                memcpy(slot, mine, span);
                MPIDI_TOPO_SHARED_DEFINED(slot, span);
            } else if (hi > lo) {
                MPI_Aint len = (hi - lo - 1) * x->extent + x->true_extent;
                memcpy(slot + lo * x->extent, x->pack + packed * x->extent + x->true_lb, len);
                MPIDI_TOPO_SHARED_DEFINED(slot + lo * x->extent, len);
            }
            MPL_atomic_release_store_uint64(&me->avail, MPIDI_TOPO_PROG(r, 1));
        }
        if (x->user_wants && !(steps && k == 1)) {
            for (int g = 0; g < k; g++)
                MPIDI_TOPO_WAIT_GE(e, &MPIDI_TOPO_CTRL(e, e->leader_local[g])->avail,
                                   MPIDI_TOPO_PROG(r, 1));
            if (x->discard)
                ;
            else if (!x->has_holes)
                memcpy(mine, slot, span);
            else {
                mpi_errno = MPIR_Localcopy(slot - x->true_lb, n, x->datatype,
                                           x->rbuf + off * x->extent, n, x->datatype);
                MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, x->errflag);
            }
        }
        MPL_atomic_release_store_uint64(&me->done, r);
        MPIDI_TOPO_EVENT(e, "out", j, 0);
    }
    return mpi_errno_ret;
}

/* The rounds, on count elements of a predefined type (MPIR_Topo_basic_t);
 * root < 0: allreduce, every process gets the result */
static int allreduce_elements(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                              int discard, const char **why_not, MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, mpi_errno_ret = MPI_SUCCESS, contig, way;
    void *sink = NULL;
    MPIDI_Topo_engine_t *e = NULL;
    MPIDI_Topo_learn_t *lrn = NULL;
    MPL_time_t t0;
    MPI_Aint nrounds;
    reduction_t x;

    /* (all_arrived relies on two slots) */
    MPL_COMPILE_TIME_ASSERT(MPIDI_TOPO_NSLOTS == 2);
    MPL_COMPILE_TIME_ASSERT(sizeof(MPIDI_Topo_ctrl_t) <= MPIDI_TOPO_CTRL_SIZE);
    /* field by field: zeroing the whole struct first (rep stos) cost a
     * small call about 5% of its time */
    x.e = NULL;
    x.sbuf = x.rbuf = NULL;
    x.count = count;
    x.datatype = datatype;
    x.op = op;
    x.root = root;
    x.root_node = -1;
    x.wants = x.user_wants = 0;
    x.c = x.stride = 0;
    x.base = 0;
    x.nreq[0] = x.nreq[1] = NULL;
    x.net_blocking = 0;
    x.once = 0;
    x.once_k = 1;
    x.pack = NULL;
    x.pack_n = 0;
    x.nrounds = 0;
    x.failed_req = NULL;
    x.failed_in = x.failed_out = 0;
    x.discard = discard;
    x.errflag = errflag;
    MPIR_Datatype_is_contig(datatype, &contig);
    MPIR_Datatype_get_extent_macro(datatype, x.extent);
    if (HANDLE_IS_BUILTIN(datatype)) {
        x.true_lb = 0;
        x.true_extent = x.extent;
    } else
        MPIR_Type_get_true_extent_impl(datatype, &x.true_lb, &x.true_extent);
    x.has_holes = !contig || x.extent != x.true_extent;

    MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag);
    if (discard) {
        /* (stops the node's waits, marks what its leaders send) */
        mpi_errno_ret = MPIDI_Topo_staging_failed(e, count * x.extent, errflag);
        if (e->one_per_node) {
            /* MPICH's algorithms need buffers: what they move is dropped */
            sink = MPIR_Topo_sink_alloc(comm, count * x.extent);
            /* (MPICH's reduce takes MPI_IN_PLACE at the root only) */
            sendbuf = root < 0 || comm->rank == root ? MPI_IN_PLACE : (char *) sink - x.true_lb;
            recvbuf = (char *) sink - x.true_lb;
        }
    }
    if (e->one_per_node) {
        mpi_errno = root < 0 ?
            allreduce_net(e, sendbuf, recvbuf, count, datatype, op, comm, errflag) :
            reduce_net(e, sendbuf, recvbuf, count, datatype, op, root, comm, errflag);
        goto fn_exit;
    }
    x.e = e;
    /* the same on all of a node's processes; nodes may differ, their
     * leaders' steps do not */
    x.wants = x.user_wants = root < 0 || comm->rank == root;
    if (root >= 0)
        x.root_node = e->layout->node[root];
    x.rbuf = (char *) recvbuf;
    x.sbuf = sendbuf == MPI_IN_PLACE ? x.rbuf : (const char *) sendbuf;
    if (e->nnodes == 1 && (count - 1) * x.extent + x.true_extent <= MPIDI_TOPO_CELL_BYTES &&
        (e->ncell_groups > 1 ||
         (e->local_size - 1) * (count * x.extent) < MPIDI_TOPO_ALLREDUCE_WHOLE_WORK)) {
        MPIDI_Topo_timeline_begin(e, comm, root < 0 ? "allreduce" : "reduce", count * x.extent);
        mpi_errno_ret = whole_cells(&x);
        MPIDI_Topo_timeline_end(e);
        goto fn_exit;
    }
    /* the same round size on every node: sized for the largest node (after
     * the cells, which do without its two divisions) */
    x.c = (MPI_Aint) (e->slot_size / e->max_local_size) / x.extent;
    if (x.c == 0) {
        *why_not = "one element is larger than a slot (MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE)";
        goto fn_exit;
    }
    x.stride = x.c * x.extent;
    /* within one node, large calls may read the inputs where they are
     * (topo_allreduce_cma.c): by MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD,
     * or learned (lrn) */
    way = MPIDI_Topo_reduce_way(e, root >= 0, count * x.extent, !x.has_holes, &lrn);
    if (lrn)
        MPL_wtime(&t0);
    if (way != MPIDI_TOPO_REDUCE_SEGMENT) {
        MPIDI_Topo_timeline_begin(e, comm, root < 0 ? "allreduce" : "reduce", count * x.extent);
        mpi_errno = MPIDI_Topo_reduce_direct(e, x.sbuf, x.rbuf, count, datatype, op,
                                             root < 0 ? -1 : MPIDI_Topo_local_index(e, root),
                                             way, discard, x.stride, errflag);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        MPIDI_Topo_timeline_end(e);
        goto learned;
    }
    nrounds = (count + x.c - 1) / x.c;
    x.nrounds = nrounds;
    x.net_blocking = nrounds == 1;
    mpi_errno = MPIDI_Topo_rounds(e, nrounds, &x.base, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    if (e->nnodes > 1 && nrounds > 1 &&
        MPIDI_Topo_leaders_once(e, root >= 0, count, x.c, x.extent)) {
        x.once = 1;
        x.once_k = root < 0 ? e->k : 1;
        x.wants = e->is_leader && e->group < x.once_k;
        if (x.once_k > 1 && x.wants && !discard && !x.has_holes) {
            /* allreduce: each group's leader keeps its share of every
             * round (the element range its group carries in the rounds'
             * steps, the same on every node) at the start of its receive
             * buffer: share j lies below round j + 1's input (in place
             * too: an input is in the slot before it is overwritten),
             * and once_out copies the rounds out from the last, so that
             * no round's result lands on a share not yet sent back */
            x.pack = x.rbuf;
        } else if (x.once_k > 1 && x.wants) {
            /* (a buffer of the shares' size: a staging failure's
             * result is dropped; the user's holes stay untouched) */
            MPI_Aint last = count - (nrounds - 1) * x.c, g = e->group, k = x.once_k;
            MPI_Aint n_pack = (nrounds - 1) * (share_at(x.c, g + 1, k) - share_at(x.c, g, k)) +
                share_at(last, g + 1, k) - share_at(last, g, k);
            sink = MPIR_Topo_sink_alloc(comm, n_pack * x.extent);
            x.pack = (char *) sink - x.true_lb;
        } else if (x.wants) {
            /* the rounds reduce into the first leader's buffer alone: its
             * receive buffer, where it has one for the call's result */
            if (discard || !x.user_wants) {
                sink = MPIR_Topo_sink_alloc(comm, count * x.extent);
                x.rbuf = (char *) sink - x.true_lb;
            }
            x.pack = x.rbuf;
            x.pack_n = count;
        }
    }

    MPIDI_Topo_timeline_begin(e, comm, root < 0 ? "allreduce" : "reduce", count * x.extent);
    if (e->nnodes == 1 && nrounds == 1 &&
        (e->local_size - 1) * (count * x.extent) < MPIDI_TOPO_ALLREDUCE_WHOLE_WORK) {
        mpi_errno_ret = whole_round(&x);
        MPIDI_Topo_timeline_end(e);
        goto fn_exit;
    }
    /* Round i's network step runs (nonblocking, progressed by our waits)
     * while the node copies round i-1 out and fills round i+1 */
    for (MPI_Aint i = 0; i <= nrounds; i++) {
        /* (every round runs, also after an error: a macro argument that
         * MPIR_ERR_ADD might not evaluate would skip one) */
        if (i < nrounds) {
            mpi_errno = round_in(&x, i);
            MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        }
        if (i > 0) {
            mpi_errno = round_out(&x, i - 1);
            MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
        }
    }
    if (x.once) {
        mpi_errno = once_out(&x);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
    }
    MPIDI_Topo_timeline_end(e);
  learned:
    if (lrn) {
        /* (a failed call's time says nothing of its way: 0) */
        int failed = mpi_errno_ret != MPI_SUCCESS ||
            MPL_atomic_acquire_load_uint64(e->node_failed);
        double dt;
        MPL_time_t t1;
        MPL_wtime(&t1);
        MPL_wtime_diff(&t0, &t1, &dt);
        mpi_errno = MPIDI_Topo_reduce_trial(lrn, root >= 0, way, failed ? 0.0 : dt,
                                            count * x.extent, comm, errflag);
        MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);
    }
    mpi_errno = MPI_SUCCESS;

  fn_exit:
    /* only after an error can a network step still be pending */
    for (int j = 0; j < 2; j++)
        if (x.nreq[j]) {
            MPIDI_Topo_waitall(e, 1, &x.nreq[j], errflag);
        }
    if (x.failed_req)
        MPIDI_Topo_waitall(e, 1, &x.failed_req, errflag);
    MPL_free(sink);
    return MPIDI_Topo_check_node(e, mpi_errno_ret ? mpi_errno_ret : mpi_errno, errflag);
  fn_fail:
    goto fn_exit;
}

/* Every process stages and reduces the same elements whatever its own
 * layout of them: the datatype's predefined type, count x size bytes'
 * worth (see MPIR_Topo_basic_t).  A user-defined operation would have to
 * be called with each process' own datatype on whole units of it, which
 * neither the packed slots nor the slices keep: it goes elsewhere, decided
 * from the operation alone so that every process decides alike.
 * root < 0: allreduce. */
static int reduction(const void *sendbuf, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPIR_Comm * comm, const char **why_not,
                     MPIR_Errflag_t * errflag)
{
    int mpi_errno = MPI_SUCCESS, wants = root < 0 || comm->rank == root;
    MPIR_Topo_basic_t b;

    *why_not = NULL;
    if (count == 0)
        return MPI_SUCCESS;
    if (!HANDLE_IS_BUILTIN(op)) {
        *why_not = "the operation is user-defined (MPI calls it with the call's datatype, "
            "which the packed shared-memory slices do not keep)";
        return MPI_SUCCESS;
    }
    if (comm->local_size == 1) {
        if (sendbuf != MPI_IN_PLACE)
            mpi_errno = MPIR_Localcopy(sendbuf, count, datatype, recvbuf, count, datatype);
        return mpi_errno;
    }
    mpi_errno = MPIR_Topo_basic_start(sendbuf, wants ? recvbuf : NULL, count, datatype, wants,
                                      &b);
    if (mpi_errno)
        return mpi_errno;
    if (b.type == MPI_DATATYPE_NULL) {
        *why_not = "the datatype is not made of one predefined type";
        return MPI_SUCCESS;
    }
    /* (without its staging copy this process still takes part: no
     * process may wait for it) */
    if (b.count > 0)
        mpi_errno = allreduce_elements(b.sendbuf, b.recvbuf, b.count, b.type, op, root, comm,
                                       b.staging_failed, why_not, errflag);
    if (*why_not)
        b.has_result = 0;       /* nothing to copy back: the caller falls back */
    return MPIR_Topo_basic_finish(&b, mpi_errno);
}

int MPIDI_Topo_allreduce_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                                  MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                                  const char **why_not, MPIR_Errflag_t * errflag)
{
    return reduction(sendbuf, recvbuf, count, datatype, op, -1, comm, why_not, errflag);
}

int MPIDI_Topo_reduce_pipeline(const void *sendbuf, void *recvbuf, MPI_Aint count,
                               MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                               const char **why_not, MPIR_Errflag_t * errflag)
{
    return reduction(sendbuf, recvbuf, count, datatype, op, root, comm, why_not, errflag);
}
