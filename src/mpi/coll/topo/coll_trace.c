/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#include "mpiimpl.h"
#include "coll_trace.h"
#include "topo_hooks.h"
#include <stdarg.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_COLL_TRACE
      category    : TOPO
      type        : int
      default     : 0
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Report which MPIR-level collective algorithms ran. 0: off. 1: at
        MPI_Finalize, rank 0 of MPI_COMM_WORLD prints one line per
        (collective, algorithm, how it was chosen, communicator kind and
        size) with the number of calls, followed by the message size ranges
        (bytes per process, powers of two) of those calls. 2: every process
        prints its own table. 3: as 1, and every process also prints each of
        its first MPIR_CVAR_COLL_TRACE_CALLS calls as it happens. "how" is
        "cvar" (an _INTRA/_INTER_ALGORITHM CVAR forced it), "selection" (the
        JSON-driven selection picked it), "fallback" (a topology-aware
        algorithm could not run and this stock one ran instead) or
        "step_aside" (a topology-aware algorithm stepped aside for this
        stock one: on the engine's own or MPICH's node sub-communicators,
        or during MPI_Init) or "deferred" (a call before the engine's setup,
        MPIR_CVAR_TOPO_SETUP_CALLS); the
        communicator kind shows whether it ran on the user's communicator
        ("parent" or "flat") or on a node ("node") or node-roots
        ("node_roots") sub-communicator of a CH4 composition. While it is
        not 0, the MPI_T performance variables coll_algorithm_calls_allgather,
        _bcast, _allreduce, _reduce, _iallgather, _ibcast and _iallreduce
        count the calls of each algorithm (an array indexed by the
        enumeration of the same name; nonblocking and persistent calls are
        counted when built: each MPI_I<coll>, each MPI_<Coll>_init).

    - name        : MPIR_CVAR_COLL_TRACE_CALLS
      category    : TOPO
      type        : int
      default     : 20
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        With MPIR_CVAR_COLL_TRACE=3, how many calls each process prints as
        they happen.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define TRACE_MAX_ENTRIES 256
#define TRACE_NBUCKETS 40       /* bucket b: [2^(b-1), 2^b) bytes; 0: empty */

typedef struct {
    const char *coll, *algo, *how;      /* string literals */
    int kind;                   /* hierarchy kind, or -1 for intercommunicators */
    int size;
    long calls;
    long bucket[TRACE_NBUCKETS];
} trace_entry_t;

static trace_entry_t trace_table[TRACE_MAX_ENTRIES];
static int trace_count;
static long trace_dropped, trace_printed;

/* MPI_T: calls per algorithm of the collectives we add algorithms to,
 * indexed like the enumerations registered below (last: other) */
static const char *const ag_algos[] = { "brucks", "recursive_doubling", "ring", "topo_ring",
    "topo_pipeline", "topo_multileader", "local_gather_remote_bcast", "other"
};
static const char *const bc_algos[] = { "binomial", "scatter_recursive_doubling_allgather",
    "scatter_ring_allgather", "smp", "topo_tree", "topo_pipeline", "remote_send_local_bcast",
    "other"
};
static const char *const ar_algos[] = { "smp", "recursive_doubling", "reduce_scatter_allgather",
    "topo_pipeline", "reduce_exchange_bcast", "other"
};
static const char *const rd_algos[] = { "smp", "binomial", "reduce_scatter_gather",
    "topo_pipeline", "local_reduce_remote_send", "other"
};
/* nonblocking and persistent (counted when a call is built: at
 * MPI_I<coll>, and once at MPI_<Coll>_init) */
static const char *const iag_algos[] = { "sched_ring", "sched_brucks", "sched_recursive_doubling",
    "tsp_ring", "tsp_brucks", "tsp_recexch_doubling", "tsp_recexch_halving", "topo_pipeline",
    "other"
};
static const char *const ibc_algos[] = { "sched_binomial", "sched_smp",
    "sched_scatter_recursive_doubling_allgather", "sched_scatter_ring_allgather", "tsp_tree",
    "tsp_scatterv_recexch_allgatherv", "tsp_ring", "topo_pipeline", "other"
};
static const char *const iar_algos[] = { "sched_naive", "sched_smp", "sched_recursive_doubling",
    "sched_reduce_scatter_allgather", "tsp_recexch_single_buffer", "tsp_recexch_multiple_buffer",
    "tsp_tree", "tsp_ring", "tsp_recexch_reduce_scatter_recexch_allgatherv", "topo_pipeline",
    "other"
};
#define NALGOS(a) ((int) (sizeof(a) / sizeof((a)[0])))
static unsigned long long ag_calls[NALGOS(ag_algos)], bc_calls[NALGOS(bc_algos)],
    ar_calls[NALGOS(ar_algos)], rd_calls[NALGOS(rd_algos)], iag_calls[NALGOS(iag_algos)],
    ibc_calls[NALGOS(ibc_algos)], iar_calls[NALGOS(iar_algos)];

/* (MPI_T keeps a pvar's name by its pointer: literals) */
#define PVAR(coll, algos, calls) \
    {coll, "coll_algorithm_calls_" coll, algos, NALGOS(algos), calls}
static const struct {
    const char *coll, *pvar;
    const char *const *names;
    int n;
    unsigned long long *calls;
} pvars[] = {
    PVAR("allgather", ag_algos, ag_calls),
    PVAR("bcast", bc_algos, bc_calls),
    PVAR("allreduce", ar_algos, ar_calls),
    PVAR("reduce", rd_algos, rd_calls),
    PVAR("iallgather", iag_algos, iag_calls),
    PVAR("ibcast", ibc_algos, ibc_calls),
    PVAR("iallreduce", iar_algos, iar_calls),
};

static void count_pvar(const char *coll, const char *algo, int inc)
{
    for (int p = 0; p < NALGOS(pvars); p++) {
        if (strcmp(pvars[p].coll, coll))
            continue;
        for (int i = 0; i < pvars[p].n - 1; i++)
            if (!strcmp(pvars[p].names[i], algo)) {
                pvars[p].calls[i] += inc;
                return;
            }
        pvars[p].calls[pvars[p].n - 1] += inc;
        return;
    }
}

void MPIR_Coll_trace_init(void)
{
    for (int p = 0; p < NALGOS(pvars); p++) {
        char desc[192];
        MPI_T_enum e;

        snprintf(desc, sizeof(desc), "Calls of each %s algorithm (index: enumeration of the same "
                 "name), counted while MPIR_CVAR_COLL_TRACE is not 0", pvars[p].coll);
        MPIR_T_enum_create(pvars[p].pvar, &e);
        for (int i = 0; i < pvars[p].n; i++)
            MPIR_T_enum_add_item(e, pvars[p].names[i], i);
        MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, pvars[p].pvar,
                                  pvars[p].calls, pvars[p].n, e, MPI_T_VERBOSITY_USER_BASIC,
                                  MPI_T_BIND_NO_OBJECT,
                                  MPIR_T_PVAR_FLAG_READONLY | MPIR_T_PVAR_FLAG_CONTINUOUS, NULL,
                                  NULL, "TOPO", desc);
    }
}

static int size_bucket(MPI_Aint bytes)
{
    int b = 0;
    while (bytes > 0 && b < TRACE_NBUCKETS - 1) {
        bytes >>= 1;
        b++;
    }
    return b;
}

static const char *kind_name(int kind)
{
    switch (kind) {
        case -1:
            return "inter";
        case MPIR_COMM_HIERARCHY_KIND__FLAT:
            return "flat";
        case MPIR_COMM_HIERARCHY_KIND__PARENT:
            return "parent";
        case MPIR_COMM_HIERARCHY_KIND__NODE_ROOTS:
            return "node_roots";
        case MPIR_COMM_HIERARCHY_KIND__NODE:
            return "node";
        default:
            return "?";
    }
}

void MPIR_Coll_trace_record(MPIR_Comm * comm, const char *coll, const char *algo,
                            const char *how, MPI_Aint count, MPI_Datatype dtype)
{
    int kind = comm->comm_kind == MPIR_COMM_KIND__INTERCOMM ? -1 : (int) comm->hierarchy_kind;
    int size = comm->local_size, b;
    MPI_Aint tsize = 0;
    trace_entry_t *e = NULL;

    if (dtype != MPI_DATATYPE_NULL && count > 0)
        MPIR_Datatype_get_size_macro(dtype, tsize);
    b = size_bucket(count * tsize);
    count_pvar(coll, algo, 1);
    if (MPIR_CVAR_COLL_TRACE == 3 && trace_printed < MPIR_CVAR_COLL_TRACE_CALLS) {
        trace_printed++;
        fprintf(stderr, "mpich-topo: [rank %d] %s %s (%s) on a %s communicator of %d, "
                "%ld bytes per process\n", MPIR_Process.rank, coll, algo, how, kind_name(kind),
                size, (long) (count * tsize));
    }

    /* diagnostics only: counts may race under MPI_THREAD_MULTIPLE */
    for (int i = 0; i < trace_count && !e; i++) {
        trace_entry_t *t = &trace_table[i];
        if (t->coll == coll && t->algo == algo && t->how == how && t->kind == kind &&
            t->size == size)
            e = t;
    }
    if (e == NULL) {
        if (trace_count == TRACE_MAX_ENTRIES) {
            trace_dropped++;
            return;
        }
        e = &trace_table[trace_count++];
        *e = (trace_entry_t) {
        .coll = coll,.algo = algo,.how = how,.kind = kind,.size = size};
    }
    e->calls++;
    e->bucket[b]++;
}

/* "1K-2K" style bounds of bucket b into buf */
static void bucket_range(int b, char *buf, size_t len)
{
    static const char *unit[] = { "", "K", "M", "G", "T" };
    unsigned long long lo = b ? 1ULL << (b - 1) : 0, hi = b ? (1ULL << b) - 1 : 0;
    int ul = 0, uh = 0;

    while (lo >= 1024 && lo % 1024 == 0 && ul < 4)
        lo /= 1024, ul++;
    while (hi + 1 >= 1024 && (hi + 1) % 1024 == 0 && uh < 4)
        hi = (hi + 1) / 1024, uh++;
    if (b == 0)
        snprintf(buf, len, "0");
    else if (b == 1)
        snprintf(buf, len, "1");
    else if (uh > 0)
        snprintf(buf, len, "%llu%s-<%llu%s", lo, unit[ul], hi, unit[uh]);
    else
        snprintf(buf, len, "%llu-%llu", lo, hi);
}

void MPIR_Coll_trace_finalize(void)
{
    if (MPIR_CVAR_COLL_TRACE <= 0 || (MPIR_CVAR_COLL_TRACE != 2 && MPIR_Process.rank != 0))
        return;
    fprintf(stderr, "mpich-topo: collective algorithms run by rank %d "
            "(collective algorithm how-chosen communicator size: calls; then the calls per "
            "range of bytes per process)\n", MPIR_Process.rank);
    for (int i = 0; i < trace_count; i++) {
        trace_entry_t *e = &trace_table[i];
        char line[1024], range[48];
        size_t used = 0;

        fprintf(stderr, "mpich-topo:   %-10s %-40s %-9s %-10s %5d: %ld\n", e->coll, e->algo,
                e->how, kind_name(e->kind), e->size, e->calls);
        line[0] = 0;
        for (int b = 0; b < TRACE_NBUCKETS && used < sizeof(line) - 64; b++) {
            if (!e->bucket[b])
                continue;
            bucket_range(b, range, sizeof(range));
            used += snprintf(line + used, sizeof(line) - used, "%s%s B: %ld", used ? ", " : "",
                             range, e->bucket[b]);
        }
        fprintf(stderr, "mpich-topo:       sizes %s\n", line);
    }
    if (trace_dropped)
        fprintf(stderr, "mpich-topo:   (%ld calls not recorded: table full)\n", trace_dropped);
    fflush(stderr);
    trace_count = 0;
    trace_dropped = 0;
}

void MPIR_Coll_trace_redirect(MPIR_Comm * comm, const char *coll, const char *from,
                              const char *algo, const char *how, MPI_Aint count,
                              MPI_Datatype dtype)
{
    int kind = comm->comm_kind == MPIR_COMM_KIND__INTERCOMM ? -1 : (int) comm->hierarchy_kind;
    MPI_Aint tsize = 0;
    int b;

    if (dtype != MPI_DATATYPE_NULL && count > 0)
        MPIR_Datatype_get_size_macro(dtype, tsize);
    b = size_bucket(count * tsize);
    /* the dispatcher recorded `from` for this call just before: take it back
     * (absent when the algorithm was called directly, e.g. by CH4) */
    for (int i = trace_count - 1; i >= 0; i--) {
        trace_entry_t *t = &trace_table[i];
        if (t->kind == kind && t->size == comm->local_size && t->bucket[b] > 0 &&
            !strcmp(t->coll, coll) && !strcmp(t->algo, from) && strcmp(t->how, "fallback") &&
            strcmp(t->how, "step_aside") && strcmp(t->how, "deferred")) {
            t->calls--;
            t->bucket[b]--;
            count_pvar(coll, from, -1);
            break;
        }
    }
    MPIR_Coll_trace_record(comm, coll, algo, how, count, dtype);
}

void MPIR_Topo_line_add(MPIR_Topo_line_t * line, const char *fmt, ...)
{
    size_t room = sizeof(line->text) - line->len;
    va_list ap;
    int n;

    if (room <= 1)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line->text + line->len, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t) n < room)
        line->len += n;
    else {
        /* full: keep what fits, marked as cut */
        line->len = sizeof(line->text) - 1;
        memcpy(line->text + line->len - 3, "...", 3);
    }
}

void MPIR_Topo_line_print(MPIR_Topo_line_t * line)
{
    /* stderr is unbuffered: one fprintf is one write of the whole line */
    fprintf(stderr, "%.*s\n", (int) line->len, line->text);
    fflush(stderr);
    line->len = 0;
}
