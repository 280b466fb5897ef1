/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef TOPO_ENGINE_H_INCLUDED
#define TOPO_ENGINE_H_INCLUDED

#include "mpiimpl.h"
#include "topo.h"
#include "topo_engine_api.h"

/* Shared-memory + network pipeline engine.
 *
 * Per communicator (set up on first use, cached in comm->topo->engine):
 *  - node_comm: this node's members, ranked in node-major order (see
 *    MPIR_Topo_layout_t), so local index = position - node_start;
 *  - leader_comm: for each of the k groups of a node, its leader joins the
 *    leaders of the same group on the other nodes (ranked by node index);
 *  - a node segment: one control block per local process, then nslots data
 *    slots that successive pipeline rounds use in turn.
 *
 * Synchronisation is by monotonic counters in the control blocks, each
 * written by its owner only.  Rounds are numbered per communicator; every
 * call consumes the same number of rounds on all members, so counters from
 * earlier calls are always below the current round.  A slot is reused by
 * round r once every local process has set done >= r - nslots.
 *
 * Words, one idea each, in all of the engine's files:
 *  - round: one step of a call's pipeline, numbered per communicator;
 *  - slot: the part of the node segment a round uses (round r: slot r % 2);
 *  - chunk: the piece of the message a round moves (at most a slot);
 *  - segment mode: data staged through the slots; direct mode: local copies
 *    read straight from a peer's buffer with CMA (process_vm_readv);
 *  - one_per_node: every node has one member, so no segment at all;
 *  - step aside: a stock algorithm runs instead, on the engine's own
 *    communicators and while the engine sets up (MPIR_TOPO_STEP_ASIDE).
 * In every function e is the engine and l its layout (e->layout).
 * Variables named as in the cost comments: N (e->nnodes, nn) nodes, L
 * (e->local_size, nlocal) processes on this node, k leaders (groups) per
 * node, g this process's group, m bytes per process, p processes. */

/* Other processes write the segment where valgrind cannot see it, so a
 * process' own record of it goes stale: after it copies in bytes it
 * thinks undefined (an element's padding, say), it would later flag the
 * other processes' data at those addresses.  What a process copies in is
 * therefore declared defined (a no-op outside valgrind). */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define MPIDI_TOPO_SHARED_DEFINED(p, n) ((void) VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef MPIDI_TOPO_SHARED_DEFINED
#define MPIDI_TOPO_SHARED_DEFINED(p, n) ((void) 0)
#endif

#define MPIDI_TOPO_CTRL_SIZE 128        /* two cache lines per process */
/* Small calls within a node (bcast, allreduce and reduce up to
 * MPIDI_TOPO_CELL_BYTES) go through cells instead of slots: a sequence
 * word and then the data (from byte 16, aligned for any type), so that a
 * reader's one wait brings the first bytes with it.  Each local process
 * writes its own ring of MPIDI_TOPO_NCELLS cells, deep enough that it
 * rarely waits for readers to be done (see MPIDI_Topo_cell_claim). */
#define MPIDI_TOPO_NCELLS 8
#define MPIDI_TOPO_CELL_BYTES 1024
#define MPIDI_TOPO_CELL_DATA 16
#define MPIDI_TOPO_CELL_STRIDE (MPIDI_TOPO_CELL_BYTES + 64)
#define MPIDI_TOPO_CELL(e, local, s) ((e)->cells + ((size_t) (local) * MPIDI_TOPO_NCELLS + \
                                      (s) % MPIDI_TOPO_NCELLS) * MPIDI_TOPO_CELL_STRIDE)
#define MPIDI_TOPO_CELL_SEQ(cell) ((MPL_atomic_uint64_t *) (cell))
#define MPIDI_TOPO_PCELL(e, g, s) ((e)->pcells + ((size_t) (g) * MPIDI_TOPO_NCELLS + \
                                       (s) % MPIDI_TOPO_NCELLS) * MPIDI_TOPO_CELL_STRIDE)
#define MPIDI_TOPO_NSLOTS 2
/* slot sizes by default (MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE): across
 * nodes, the network chunk; within one node, two slots larger than a
 * core's L2 cache, so that a slot's lines have left its readers' caches
 * by the time it is filled again */
#define MPIDI_TOPO_NET_SLOT (128 * 1024)
#define MPIDI_TOPO_NODE_SLOT (1024 * 1024)

/* the network chunk of the algorithms with one process per node, which
 * have no segment */
static inline MPI_Aint MPIDI_Topo_net_chunk(void)
{
    return MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE > 0 ?
        MPL_MAX(MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE, 64) : MPIDI_TOPO_NET_SLOT;
}
/* progress counters carry (round, step) as round << 20 | step: a round has
 * fewer than 2^20 steps (a step per node at most: the engine runs on fewer
 * than 2^20 nodes), and rounds start again from 0 before they reach 2^43
 * (MPIDI_Topo_rounds) */
#define MPIDI_TOPO_STEP_BITS 20
#define MPIDI_TOPO_MAX_STEPS ((1 << MPIDI_TOPO_STEP_BITS) - 1)
#define MPIDI_TOPO_MAX_ROUND ((uint64_t) 1 << (63 - MPIDI_TOPO_STEP_BITS))
#define MPIDI_TOPO_PROG(r, s) (((uint64_t) (r) << MPIDI_TOPO_STEP_BITS) | (uint64_t) (s))

typedef struct {
    MPL_atomic_uint64_t arrive; /* round whose input this process has made visible */
    MPL_atomic_uint64_t done;   /* round this process has finished reading */
    MPL_atomic_uint64_t avail;  /* leaders: network progress, MPIDI_TOPO_PROG */
    MPL_atomic_uint64_t reduced;        /* allreduce: round whose slice is reduced */
    MPL_atomic_uint64_t cell_done;      /* small bcast: last cell this process read */
    uint64_t pid;               /* for process_vm_readv */
    uint64_t addr;              /* direct mode: address of this process' buffer */
    uint64_t addr2;             /* direct mode: address of its contribution */
    /* reduction in levels (MPIR_CVAR_TOPO_NODE_LEVELS), on the second line:
     * MPIDI_TOPO_PROG(round, stage), stage 1 the innermost level's */
    MPL_atomic_uint64_t partial;        /* its part of its unit's partial reduced */
    MPL_atomic_uint64_t grouped;        /* a unit's first member: the unit's partial whole */
    MPL_atomic_uint64_t copied; /* round whose part of the result it copied into its
                                 * group's area */
    MPL_atomic_uint64_t filled; /* allgather on one node: MPIDI_TOPO_PROG(round, pieces
                                 * of its block copied in) */
} MPIDI_Topo_ctrl_t;

/* How allgather topo_pipeline moves data within one node */
typedef enum {
    MPIDI_TOPO_AG_BY_CVAR = -1, /* direct from MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD */
    MPIDI_TOPO_AG_RING, /* MPICH's ring (point to point); only when learning */
    MPIDI_TOPO_AG_SEGMENT,      /* through the node segment */
    MPIDI_TOPO_AG_DIRECT,       /* CMA reads from the other processes' buffers */
    MPIDI_TOPO_AG_WAYS
} MPIDI_Topo_ag_way_t;

/* What a one-node communicator learned about the calls of one size class
 * of a collective (topo_learn.c) */
#define MPIDI_TOPO_LEARN_MAX_WAYS 3
typedef struct {
    int calls;                  /* calls made while learning */
    int chosen;                 /* 0 while trying, then 1 + the way agreed on */
    double best[MPIDI_TOPO_LEARN_MAX_WAYS];     /* fastest trial of each way, seconds */
} MPIDI_Topo_learn_t;
#define MPIDI_TOPO_LEARN_CLASSES 64     /* log2 of the bytes (per process) */

/* what a collective learns between */
typedef struct {
    const char *coll;           /* for the trace */
    const char *const *names;   /* of the ways */
    int nways;
    int trials;                 /* timed calls of each way */
    int fallback;               /* the way kept where the agreement fails */
    int per_process;            /* the bytes are per process (the trace says so) */
    int warm[MPIDI_TOPO_LEARN_MAX_WAYS];        /* untimed calls of each way first */
} MPIDI_Topo_learn_info_t;

MPIDI_Topo_learn_t *MPIDI_Topo_learn_class(MPIDI_Topo_learn_t * classes, MPI_Aint m);
/* the way this call takes: the one agreed on, or the next trial's */
int MPIDI_Topo_learn_way(const MPIDI_Topo_learn_t * l, const MPIDI_Topo_learn_info_t * li);
/* counts a call of way that took dt seconds (0: it failed); after the
 * last, agrees on comm (one allreduce) on the way to keep */
int MPIDI_Topo_learn_trial(MPIDI_Topo_learn_t * l, const MPIDI_Topo_learn_info_t * li, int way,
                           double dt, MPI_Aint m, MPIR_Comm * comm, MPIR_Errflag_t * errflag);

/* The levels within the node (MPIR_CVAR_TOPO_NODE_LEVELS, e->lv_lo) that
 * bcast and allgather copy through in segment mode: a slot is cut into
 * 1 + U areas of whole pages, U the most units any node has at the
 * innermost level used.  Data meet in area 0; a unit that needs its own
 * copy keeps it in the area of its first innermost unit, always the same,
 * so that the first touch of its first member puts those pages in its
 * domain, and a unit that is the first child of a unit with a copy shares
 * its parent's (no copy).  The innermost level is the deepest whose areas
 * hold min bytes, the same on every node (from the most units any node
 * has at each level, agreed at setup), so that every node cuts messages
 * alike: 4 KiB for bcast (MPIDI_TOPO_BCAST_MIN_CHUNK), 1 KiB per process
 * for allgather (one node only). */
typedef struct {
    MPI_Aint area;              /* bytes of an area; 0: one level, whole slots */
    int depth;                  /* this node's innermost level used (0: none) */
    /* d = 0..depth: the area of the innermost unit that starts where this
     * process' level-d unit starts (1 + its index among them) */
    int area_of[MPIR_TOPO_MAX_NODE_LEVELS];
} MPIDI_Topo_areas_t;
/* the smallest chunk of bcast topo_pipeline (see its cost model) */
#define MPIDI_TOPO_BCAST_MIN_CHUNK 4096

typedef struct MPIDI_Topo_engine {
    const char *why_not;        /* non-NULL: the engine cannot run on this comm */
    MPIR_Topo_layout_t *layout; /* owned by comm->topo */
    MPIR_Comm *node_comm;
    MPIR_Comm *leader_comm;     /* NULL unless this process leads a group */
    int nnodes, node;           /* node count, this process' node index */
    int k, group;               /* groups per node, this process' group */
    int local_size, local_rank;
    int max_local_size;         /* largest node of the communicator */
    int link_mbps, link_kind;   /* the network of its nodes' slowest port */
    MPIR_Topo_model_t model;    /* the cost model's constants for it (topo_engine.c, set_model) */
    int is_leader;
    int one_per_node;           /* one process per node on every node: only the
                                 * network step runs, on comm itself */
    const char *nb_why_not;     /* non-NULL: no nonblocking calls in the engine on
                                 * any member (MPIR_Topo_nb_usable somewhere) */
    int *leader_local;          /* k entries: local index of each group's leader */
    int *group_lo;              /* k+1 entries: local index range of each group */

    void *seg;
    size_t seg_size;
    size_t budget;              /* bytes reserved in the node budget (local rank 0) */
    char *ctrl_base;
    char *data;
    char *cells;                /* MPIDI_TOPO_NCELLS cells per local process */
    /* small reductions in two stages (MPIR_CVAR_TOPO_CELL_FANIN): local
     * processes [cell_lo[g], cell_lo[g + 1]) form group g, whose first
     * member reduces their cells into the group's partial cells (pcells,
     * MPIDI_TOPO_NCELLS per group, when there is more than one group) */
    int ncell_groups, cell_group;
    int *cell_lo;
    /* the leaders' scratch, allocated (and agreed) at setup, so that no
     * allocation can fail a leader alone mid-call: 2 x nnodes counts and
     * displacements, 2 x max_local_size requests */
    MPI_Aint *net_aint;
    MPIR_Request **net_reqs;
    char *pcells;
    /* the levels of the reduction within this node (MPIR_Topo_node_units,
     * MPIR_CVAR_TOPO_NODE_LEVELS): at level d (0: the node) this process'
     * unit is [lv_lo[d], lv_hi[d]), made of lv_nchild[d] children (units of
     * level d + 1, processes below the last level) that start at local
     * indices lv_child[d][0..); group_level is the groups' level, 0 where
     * they are not one */
    int nlevels, group_level;
    int lv_lo[MPIR_TOPO_MAX_NODE_LEVELS], lv_hi[MPIR_TOPO_MAX_NODE_LEVELS];
    int lv_nchild[MPIR_TOPO_MAX_NODE_LEVELS];
    int lv_mine[MPIR_TOPO_MAX_NODE_LEVELS];     /* the child holding this process */
    int *lv_child[MPIR_TOPO_MAX_NODE_LEVELS];
    int *lv_units;              /* (2 MPIR_TOPO_MAX_NODE_LEVELS + 3) x local_size: each
                                 * level's units, packages, caches, lv_child's, then
                                 * pkg_first */
    /* the levels bcast and allgather copy through (set at setup) */
    MPIDI_Topo_areas_t bcast_areas, allgather_areas;
    /* k entries: the first group of each group's package where packages
     * are a level (group_level 2), else the group itself.  On allreduce's
     * way out a package's later groups copy the result from its first
     * group's area, not across packages */
    int *pkg_first;
    uint64_t cell_seq;          /* small calls made (their cells' sequence) */
    uint64_t cells_free;        /* own cells up to this sequence may be written */
    size_t slot_size;
    uint64_t round;
    uint64_t all_arrived;       /* allreduce: last one-round call whose inputs
                                 * this process saw all of (so all had finished
                                 * every earlier round) */

    /* Set by a local process whose part of a call failed (a CMA read, an
     * unpack, a staging copy it could not allocate), or whose leader got a
     * message marked failed: waits stop at once, so that no process waits
     * for it forever; every process then runs the rest of its steps,
     * sending with the error bit set, and returns an error.  Never
     * cleared: later calls on the communicator fail alike. */
    MPL_atomic_uint64_t *node_failed;
    int cma;                    /* process_vm_readv works between local processes */
    int ptracer_any;            /* this engine declared PR_SET_PTRACER_ANY */
    unsigned poll_mask, yield_mask;     /* see MPIDI_TOPO_WAIT_GE */
    unsigned poll_after;        /* spins of a wait before it polls the netmod */
    uint64_t calls[3];          /* bcast, allgather, allreduce calls made */
    MPIDI_Topo_learn_t ag_learn[MPIDI_TOPO_LEARN_CLASSES];
    MPIDI_Topo_learn_t bcast_learn[MPIDI_TOPO_LEARN_CLASSES];
    MPIDI_Topo_learn_t allreduce_learn[MPIDI_TOPO_LEARN_CLASSES];
    MPIDI_Topo_learn_t reduce_learn[MPIDI_TOPO_LEARN_CLASSES];
    struct MPIDI_Topo_timeline *tl;     /* the call being recorded, or NULL */
} MPIDI_Topo_engine_t;

#define MPIDI_TOPO_CTRL(e, i) ((MPIDI_Topo_ctrl_t *) ((e)->ctrl_base + (size_t) (i) * MPIDI_TOPO_CTRL_SIZE))
#define MPIDI_TOPO_SLOT(e, r) ((e)->data + ((r) % MPIDI_TOPO_NSLOTS) * (e)->slot_size)

/* Collective on comm the first time.  On success *e is set and *why_not
 * is NULL, or why the engine cannot run there (the same on all members:
 * (*e)->why_not). */
int MPIDI_Topo_engine_get(MPIR_Comm * comm, MPIDI_Topo_engine_t ** e, const char **why_not,
                          MPIR_Errflag_t * errflag);
/* The start of an engine algorithm, in MPICH's style of jumps
 * (MPIR_ERR_CHECK): to fn_fail on an error, to fn_exit where the engine
 * cannot run (*why_not says why), on with e set otherwise. */
#define MPIDI_TOPO_ENGINE_GET(comm, e, why_not, errflag) \
    do { \
        mpi_errno = MPIDI_Topo_engine_get(comm, &(e), why_not, errflag); \
        MPIR_ERR_CHECK(mpi_errno); \
        if (*(why_not)) \
            goto fn_exit; \
    } while (0)

/* allgather topo_pipeline in one way (topo_allgather_pipeline.c), on an
 * engine that runs (MPIDI_TOPO_ENGINE_GET); MPIDI_TOPO_AG_RING is not one */
int MPIDI_Topo_allgather_way(MPIDI_Topo_engine_t * e, const void *sendbuf, MPI_Aint sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                             MPI_Datatype recvtype, MPIR_Comm * comm,
                             MPIDI_Topo_leader_step_t leader_step, MPIDI_Topo_ag_way_t way,
                             MPIR_Errflag_t * errflag);
/* Reserves n rounds for a call and returns the one before the first.
 * Every local process reserves the same rounds for the same call.  Before
 * the counters would run past MPIDI_TOPO_MAX_ROUND, all local processes
 * (each done with every earlier round, after a node barrier) zero their
 * counters and count from 0 again. */
int MPIDI_Topo_rounds(MPIDI_Topo_engine_t * e, uint64_t n, uint64_t * base,
                      MPIR_Errflag_t * errflag);

/* Waiting loops spin on a flag; every poll_mask + 1 spins they let the
 * netmod progress (other operations of this process may need it, and
 * leaders' own network steps do) and other threads into MPICH, and every
 * yield_mask + 1 spins they give the processor away, so oversubscribed
 * runs (both masks 0) do not starve the process being waited for.
 * Polling the netmod costs a system call on some providers (tcp:
 * epoll_wait), which is why flag waits poll it rarely, and those of
 * processes with no network step only after poll_after spins. */
int MPIDI_Topo_pause(MPIDI_Topo_engine_t * e, unsigned spins, int poll);
/* setup (topo_engine_wait.c): how often this process's flag waits yield
 * and poll the netmod */
void MPIDI_Topo_setup_waiting(MPIDI_Topo_engine_t * e);
/* setup (topo_engine_segment.c): the node segment charged to the node's
 * budget (local rank 0; nonzero: over it), then created, with the CMA
 * probe and the levels' areas agreed on comm */
int MPIDI_Topo_setup_budget(MPIR_Comm * comm, MPIDI_Topo_engine_t * e);
int MPIDI_Topo_setup_segment(MPIR_Comm * comm, MPIDI_Topo_engine_t * e, MPIR_Errflag_t * errflag);

/* Waits of processes with no network step (poll_after > 0) pause the core
 * at every spin: leaving a tight loop of loads when the flag's line changes
 * costs a pipeline flush (memory-order machine clear) that the pause
 * avoids.  2 processes back to back: allreduce 1.16-1.32x, allgather
 * 1.03-1.23x faster up to 1 KiB.  A paused spin takes about as long as
 * MPIDI_TOPO_PAUSE_SPINS tight ones (20 ns here) and counts as that many,
 * so that the masks keep their meaning in time.  Leaders with network
 * steps and oversubscribed runs spin as before: they poll the netmod. */
#if defined(__x86_64__) || defined(__i386__)
#define MPIDI_TOPO_CPU_PAUSE() __builtin_ia32_pause()
#define MPIDI_TOPO_PAUSE_SPINS 64
#elif defined(__aarch64__)
#define MPIDI_TOPO_CPU_PAUSE() __asm__ __volatile__("yield" ::: "memory")
#define MPIDI_TOPO_PAUSE_SPINS 64
#else
#define MPIDI_TOPO_CPU_PAUSE() do { } while (0)
#define MPIDI_TOPO_PAUSE_SPINS 1
#endif

/* (stops early, returning nonzero from the pause, once a local process has
 * failed: see node_failed) */
#define MPIDI_TOPO_WAIT_GE(e, counter, value) do {                              \
        unsigned spins_ = 0, step_ = (e)->poll_after ? MPIDI_TOPO_PAUSE_SPINS : 1; \
        while (MPL_atomic_acquire_load_uint64(counter) < (uint64_t) (value)) {  \
            if (step_ > 1)                                                      \
                MPIDI_TOPO_CPU_PAUSE();                                         \
            if (((spins_ += step_) & (e)->poll_mask) == 0 &&                    \
                MPIDI_Topo_pause(e, spins_, spins_ >= (e)->poll_after))         \
                break;                                                          \
        }                                                                       \
    } while (0)

/* A failure of this process' own part of a call: tell the node (waits end),
 * mark the call failed (sends carry the error bit) and go on. */
#define MPIDI_TOPO_LOCAL_ERR(e, mpi_errno, mpi_errno_ret, errflag) do {          \
        if (mpi_errno) {                                                        \
            MPL_atomic_release_store_uint64((e)->node_failed, 1);               \
            *(errflag) = MPIR_ERR_OTHER;                                        \
            MPIR_ERR_ADD(mpi_errno_ret, mpi_errno);                             \
            mpi_errno = MPI_SUCCESS;                                            \
        }                                                                       \
    } while (0)

/* At the end of a call: the error to return when another local process
 * failed (mpi_errno_ret already holds this one's own). */
int MPIDI_Topo_check_node(MPIDI_Topo_engine_t * e, int mpi_errno_ret, MPIR_Errflag_t * errflag);

/* Wait until every local process in [lo, hi) has field >= value. */
void MPIDI_Topo_wait_all(MPIDI_Topo_engine_t * e, size_t field_offset, int lo, int hi,
                         uint64_t value);
#define MPIDI_TOPO_WAIT_ALL(e, field, lo, hi, value) \
    MPIDI_Topo_wait_all(e, offsetof(MPIDI_Topo_ctrl_t, field), lo, hi, value)

/* Complete requests with the same waiting loop; frees them, records errors
 * in errflag as MPIC_Waitall does.  Once errflag is set (also by a message
 * marked failed), the node's processes fail the call (node_failed). */
int MPIDI_Topo_waitall(MPIDI_Topo_engine_t * e, int n, MPIR_Request ** reqs,
                       MPIR_Errflag_t * errflag);

/* Read len bytes at raddr in local process `local` into buf (CMA). */
int MPIDI_Topo_cma_read(MPIDI_Topo_engine_t * e, int local, void *buf, uint64_t raddr,
                        size_t len);

/* A typed buffer as a stream of bytes: pack/unpack a byte range. */
typedef struct {
    char *buf;
    MPI_Aint count;
    MPI_Datatype dt;
    int contig;                 /* bytes are at buf + lb, in order */
    MPI_Aint lb;
    int discard;                /* see MPIDI_Topo_tbuf_discard */
} MPIDI_Topo_tbuf_t;

void MPIDI_Topo_tbuf_init(MPIDI_Topo_tbuf_t * t, const void *buf, MPI_Aint count,
                          MPI_Datatype dt);
int MPIDI_Topo_tbuf_pack(const MPIDI_Topo_tbuf_t * t, MPI_Aint off, void *out, MPI_Aint len);
int MPIDI_Topo_tbuf_unpack(const MPIDI_Topo_tbuf_t * t, MPI_Aint off, const void *in,
                           MPI_Aint len);

/* A process without memory for the staging copy of a call (a derived type)
 * still takes part in it, so that no process waits for it forever: its
 * buffer packs as zeros and drops what is unpacked into it, and the call
 * fails on every process its data reaches (MPIDI_Topo_staging_failed). */
void MPIDI_Topo_tbuf_discard(MPIDI_Topo_tbuf_t * t);

/* This process could not allocate its staging copy: tell the node (its
 * waits end, its leaders' sends carry the error bit) and return the error
 * this process reports. */
int MPIDI_Topo_staging_failed(MPIDI_Topo_engine_t * e, MPI_Aint n, MPIR_Errflag_t * errflag);

/* The end of a call that may have staged a derived type: the staged
 * result (staged, len bytes; NULL: none) unpacked into the user's buffer t
 * where the call went well, and the call's error, with a failed staging
 * copy's first (MPI_ERR_NO_MEM, the cause) and what followed from it after. */
static inline int MPIDI_Topo_staged_result(const MPIDI_Topo_tbuf_t * t, const void *staged,
                                           MPI_Aint len, int staging_errno, int mpi_errno)
{
    if (staged && mpi_errno == MPI_SUCCESS)
        mpi_errno = MPIDI_Topo_tbuf_unpack(t, 0, staged, len);
    if (staging_errno == MPI_SUCCESS)
        return mpi_errno;
    MPIR_ERR_ADD(staging_errno, mpi_errno);
    return staging_errno;
}

/* The local index of comm rank `rank` within its node (roots) */
static inline int MPIDI_Topo_local_index(const MPIDI_Topo_engine_t * e, int rank)
{
    return e->layout->pos[rank] - e->layout->node_start[e->layout->node[rank]];
}

/* Before a leader sends its node's data to other nodes: once a local process
 * has failed, the sends carry the error bit, so that the other nodes fail
 * the call rather than take what was sent as good. */
static inline void MPIDI_Topo_node_errflag(MPIDI_Topo_engine_t * e, MPIR_Errflag_t * errflag)
{
    if (*errflag == MPIR_ERR_NONE && MPL_atomic_acquire_load_uint64(e->node_failed))
        *errflag = MPIR_ERR_OTHER;
}

/* A small call's cells: *s is the call's sequence (the same on every
 * local process); where this process writes (writes), returns once it may
 * write its cell s, that is once every local process is done with call
 * s - MPIDI_TOPO_NCELLS.
 * Writers publish with a release store of s to the cell's sequence word;
 * every process ends a call with MPIDI_Topo_cell_done. */
void MPIDI_Topo_cell_claim(MPIDI_Topo_engine_t * e, int writes, uint64_t * s);
/* After this process wrote len bytes into its cell of call s: make them
 * visible (the data before the sequence word) */
#define MPIDI_TOPO_CELL_PUBLISH(e, cell, len, s) do {                           \
        MPIDI_TOPO_SHARED_DEFINED((cell) + MPIDI_TOPO_CELL_DATA, len);          \
        MPL_atomic_release_store_uint64(MPIDI_TOPO_CELL_SEQ(cell), s);          \
        MPIDI_TOPO_EVENT(e, "in", 0, 0);                                        \
    } while (0)
#define MPIDI_Topo_cell_done(e, s) \
    MPL_atomic_release_store_uint64(&MPIDI_TOPO_CTRL(e, (e)->local_rank)->cell_done, s)

/* The timeline of one call (MPIR_CVAR_TOPO_TIMELINE; bench/timeline.py
 * reads it): each step of the MPIR_CVAR_TOPO_TIMELINE_CALL-th engine call
 * of a collective on a communicator, with its time, written to a file per process
 * when the call ends.  An event names the step and its chunk or round (a)
 * and ring step (b).  Only the call recorded pays more than a test. */
void MPIDI_Topo_timeline_begin(MPIDI_Topo_engine_t * e, MPIR_Comm * comm, const char *coll,
                               MPI_Aint bytes);
void MPIDI_Topo_timeline_event(MPIDI_Topo_engine_t * e, const char *what, MPI_Aint a,
                               MPI_Aint b);
void MPIDI_Topo_timeline_end(MPIDI_Topo_engine_t * e);
#define MPIDI_TOPO_EVENT(e, what, a, b) do {                  \
        if ((e)->tl)                                          \
            MPIDI_Topo_timeline_event(e, what, a, b);         \
    } while (0)

/* topo_multileader's leader step of one round (topo_allgather_multileader.c) */
int MPIDI_Topo_multileader_step(MPIDI_Topo_engine_t * e, char *slot, MPI_Aint len,
                                MPI_Aint * counts, MPI_Aint * displs, int logstep,
                                MPIR_Errflag_t * errflag);

/* whether the leaders' step of a one-round reduction of c bytes (count
 * elements) among nn leaders is reduce-scatter then allgather/gather
 * (topo_allreduce_pipeline.c) */
int MPIDI_Topo_reduce_split(const MPIR_Topo_model_t * md, int nn, MPI_Aint count, MPI_Aint c,
                            MPI_Aint short_bytes);

/* whether an allreduce (reduce: is_reduce) of count elements of extent
 * bytes across nodes, in rounds of c elements, runs the leaders' step once
 * on the whole call rather than per round (topo_allreduce_pipeline.c) */
int MPIDI_Topo_leaders_once(const MPIDI_Topo_engine_t * e, int is_reduce, MPI_Aint count,
                            MPI_Aint c, MPI_Aint extent);
/* MPIR_CVAR_TOPO_PRINT: where MPIDI_Topo_leaders_once switches, in this
 * segment's rounds (topo_engine.c) */
void MPIDI_Topo_print_steps(MPIDI_Topo_engine_t * e);
/* MPIR_CVAR_TOPO_PRINT: where bcast's leaders take the whole message by
 * scatter + allgather (topo_bcast_pipeline.c) */
void MPIDI_Topo_print_bcast(MPIDI_Topo_engine_t * e);

/* topo_pipeline's exchange among the leaders of an allgather of m bytes
 * per process across nodes, by MPIR_CVAR_TOPO_ALLGATHER_LEADERS and the
 * cost model, with the model's predictions (topo_allgather_pipeline.c) */
MPIDI_Topo_leader_step_t MPIDI_Topo_allgather_leaders(MPIDI_Topo_engine_t * e, int p, MPI_Aint m,
                                                      double *ring, double *logstep);

/* How allreduce and reduce topo_pipeline reduce within one node */
typedef enum {
    MPIDI_TOPO_REDUCE_SEGMENT,  /* through the node segment, in rounds */
    MPIDI_TOPO_REDUCE_SLICES,   /* CMA: each process reduces its slice */
    MPIDI_TOPO_REDUCE_ROOT_READS        /* CMA, reduce only: the root reduces it all */
} MPIDI_Topo_reduce_way_t;

/* The single-copy reduction within one node (topo_allreduce_cma.c) of
 * count packed elements of a predefined type without holes: root_local <
 * 0: allreduce; sbuf the input (rbuf: in place), rbuf the result (where
 * this process gets one); way: MPIDI_TOPO_REDUCE_SLICES or (reduce)
 * _ROOT_READS; discard: this process takes part without data
 * (MPIDI_Topo_staging_failed); stride: the bytes of a process's area of a
 * slot, its scratch (one element at least). */
int MPIDI_Topo_reduce_direct(MPIDI_Topo_engine_t * e, const char *sbuf, char *rbuf,
                             MPI_Aint count, MPI_Datatype datatype, MPI_Op op, int root_local,
                             int way, int discard, MPI_Aint stride, MPIR_Errflag_t * errflag);
/* How an allreduce (reduce: is_reduce) of m bytes reduces within the node
 * (usable: its type has no holes), by MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD
 * or learned: then *l is the size class learning, and
 * MPIDI_Topo_reduce_trial counts the call (dt: its time, 0 where it
 * failed) */
int MPIDI_Topo_reduce_way(MPIDI_Topo_engine_t * e, int is_reduce, MPI_Aint m, int usable,
                          MPIDI_Topo_learn_t ** l);
int MPIDI_Topo_reduce_trial(MPIDI_Topo_learn_t * l, int is_reduce, int way, double dt,
                            MPI_Aint m, MPIR_Comm * comm, MPIR_Errflag_t * errflag);

/* CMA (topo_engine_cma.c): the setup's probe of whether this process may
 * read its neighbour's memory (*ok), and giving back the PR_SET_PTRACER
 * declaration that MPIR_CVAR_TOPO_CMA=on made for the engine */
int MPIDI_Topo_probe_cma(MPIDI_Topo_engine_t * e, int *ok, MPIR_Errflag_t * errflag);
void MPIDI_Topo_ptracer_release(MPIDI_Topo_engine_t * e);

#endif /* TOPO_ENGINE_H_INCLUDED */
