/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* Topology predicates for collective selection trees: node_count, ppn,
 * ppn_uniform, numa_per_node, is_bound, topo_engine (see csel_topo.h and
 * README, "Tuning files").
 *
 * Every process of a communicator must choose the same algorithm, so a
 * predicate must have the same value on all of them and must not need
 * communication at selection time (a selection can happen inside a
 * nonblocking collective, or on a communicator while it is created).
 * - node_count, ppn and ppn_uniform come from MPICH's node map, which every
 *   process holds for all processes of its MPI_COMM_WORLD.
 * - numa_per_node and is_bound depend on each process's binding. If a loaded
 *   tuning file uses them, MPI_Init allgathers one int per process (its
 *   memory domain, or "unbound") over MPI_COMM_WORLD right after creating it;
 *   from then on they are known locally for any communicator. Processes of
 *   another MPI_COMM_WORLD (spawned or connected) count as unbound.
 * - topo_engine changes once, when the engine is set up on the
 *   communicator: by a collective call, so at the same point of the call
 *   sequence on every member; never decided when pruning.
 * Values are computed the first time a communicator's selection needs them
 * and kept in comm->topo. On intercommunicators the predicates describe
 * nothing: a comparison does not hold, "=yes" does not hold, "=no" holds. */

#include "mpiimpl.h"
#include "topo.h"
#include "csel_topo.h"

/* set when a loaded tree uses numa_per_node or is_bound */
static int csel_topo_uses_hw = 0;
/* [world size]: memory domain of each MPI_COMM_WORLD process, DOMAIN_UNBOUND
 * if it is not bound; NULL until MPIR_Csel_topo_world_init ran */
static int *world_domain = NULL;
static int world_size = 0;

#define DOMAIN_UNBOUND       (-1)
#define DOMAIN_PACKAGE_BASE  (1 << 24)  /* bound across NUMA nodes: its package */
#define DOMAIN_SPANNING      (2 << 24)  /* bound across packages */

static const struct {
    const char *prefix;
    int pred;
} topo_keys[] = {
    /* "<=" before "<": the first matching prefix wins */
    {"node_count<=", MPIR_CSEL_TOPO__NODE_COUNT_LE},
    {"node_count<", MPIR_CSEL_TOPO__NODE_COUNT_LT},
    {"ppn<=", MPIR_CSEL_TOPO__PPN_LE},
    {"ppn<", MPIR_CSEL_TOPO__PPN_LT},
    {"ppn_uniform=", MPIR_CSEL_TOPO__PPN_UNIFORM},
    {"numa_per_node<=", MPIR_CSEL_TOPO__NUMA_PER_NODE_LE},
    {"numa_per_node<", MPIR_CSEL_TOPO__NUMA_PER_NODE_LT},
    {"is_bound=", MPIR_CSEL_TOPO__IS_BOUND},
    {"topo_engine=", MPIR_CSEL_TOPO__ENGINE},
};

int MPIR_Csel_topo_pred_is_boolean(int pred)
{
    return pred == MPIR_CSEL_TOPO__PPN_UNIFORM || pred == MPIR_CSEL_TOPO__IS_BOUND ||
        pred == MPIR_CSEL_TOPO__ENGINE;
}

int MPIR_Csel_topo_pred_changes(int pred)
{
    return pred == MPIR_CSEL_TOPO__ENGINE;
}

static int pred_is_hw(int pred)
{
    return pred == MPIR_CSEL_TOPO__NUMA_PER_NODE_LE || pred == MPIR_CSEL_TOPO__NUMA_PER_NODE_LT ||
        pred == MPIR_CSEL_TOPO__IS_BOUND;
}

int MPIR_Csel_topo_parse(const char *key, int *pred, int *val)
{
    for (size_t i = 0; i < sizeof(topo_keys) / sizeof(topo_keys[0]); i++) {
        size_t len = strlen(topo_keys[i].prefix);
        const char *rest = key + len;

        if (strncmp(key, topo_keys[i].prefix, len))
            continue;
        if (MPIR_Csel_topo_pred_is_boolean(topo_keys[i].pred)) {
            if (!strcmp(rest, "yes"))
                *val = 1;
            else if (!strcmp(rest, "no"))
                *val = 0;
            else
                return 0;
        } else {
            *val = atoi(rest);
        }
        *pred = topo_keys[i].pred;
        if (pred_is_hw(*pred))
            csel_topo_uses_hw = 1;
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- values */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *) a, y = *(const int *) b;
    return x < y ? -1 : x > y;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* node_count, ppn, ppn_uniform from the node map: sort the members' node
 * ids and measure the runs */
static int compute_node_facts(MPIR_Comm * comm, MPIR_Csel_topo_facts_t * f)
{
    int mpi_errno = MPI_SUCCESS;
    int p = comm->local_size;
    int *ids = NULL;
    int nnodes = 0, min_run = p, max_run = 0;

    ids = MPL_malloc(p * sizeof(int), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(ids == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < p; i++) {
        mpi_errno = MPID_Get_node_id(comm, i, &ids[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    qsort(ids, p, sizeof(int), cmp_int);
    for (int i = 0, run = 1; i < p; i++, run++) {
        if (i == p - 1 || ids[i + 1] != ids[i]) {
            nnodes++;
            min_run = MPL_MIN(min_run, run);
            max_run = MPL_MAX(max_run, run);
            run = 0;
        }
    }
    f->node_count = nnodes;
    f->ppn = max_run;
    f->ppn_uniform = (min_run == max_run);
    f->node_known = 1;

  fn_exit:
    MPL_free(ids);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* is_bound, numa_per_node from the world table: sort (node, domain) pairs
 * and count the distinct domains of each node */
static int compute_hw_facts(MPIR_Comm * comm, MPIR_Csel_topo_facts_t * f)
{
    int mpi_errno = MPI_SUCCESS;
    int p = comm->local_size;
    int *pairs = NULL;
    int all_bound = 1, most = 0;

    pairs = MPL_malloc(2 * p * sizeof(int), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(pairs == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    for (int i = 0; i < p; i++) {
        uint64_t gpid = 0;
        int domain = DOMAIN_UNBOUND;

        mpi_errno = MPID_Get_node_id(comm, i, &pairs[2 * i]);
        MPIR_ERR_CHECK(mpi_errno);
        mpi_errno = MPID_Comm_get_lpid(comm, i, &gpid, false);
        MPIR_ERR_CHECK(mpi_errno);
        /* processes of our MPI_COMM_WORLD have gpid == world rank */
        if (gpid < (uint64_t) world_size)
            domain = world_domain[gpid];
        if (domain == DOMAIN_UNBOUND)
            all_bound = 0;
        pairs[2 * i + 1] = domain;
    }
    qsort(pairs, p, 2 * sizeof(int), cmp_pair);
    for (int i = 0, ndom = 0; i < p; i++) {
        if (i == 0 || pairs[2 * i] != pairs[2 * i - 2])
            ndom = 1;   /* a new node */
        else if (pairs[2 * i + 1] != pairs[2 * i - 1])
            ndom++;     /* another domain on the same node */
        most = MPL_MAX(most, ndom);
    }
    f->is_bound = all_bound;
    f->numa_per_node = most;
    f->hw_known = 1;

  fn_exit:
    MPL_free(pairs);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Facts that this process alone could not compute (no memory for a sort
 * of the members): the members would choose different algorithms for the
 * same call and wait for each other forever, and a selection may not
 * communicate to agree (a nonblocking call's), so the job ends instead. */
static void facts_failed(MPIR_Comm * comm)
{
    MPID_Abort(comm, MPI_ERR_NO_MEM, 1, "mpich-topo: no memory to compute a communicator's "
               "node and hardware facts for the collective selection: its members would "
               "choose different algorithms; ending the job rather than hang");
}

int MPIR_Csel_topo_eval(MPIR_Comm * comm, int pred, int val, MPIR_Csel_topo_when_t when)
{
    MPIR_Topo_comm_t *topo;
    MPIR_Csel_topo_facts_t *f;
    int at_prune = (when == MPIR_CSEL_TOPO_AT_PRUNE);

    if (comm->comm_kind != MPIR_COMM_KIND__INTRACOMM)
        goto unknown;
    if (pred == MPIR_CSEL_TOPO__ENGINE) {
        if (at_prune)
            return -1;
        int ready = MPIR_Topo_engine_ready(comm, when == MPIR_CSEL_TOPO_AT_PERSISTENT_INIT);
        /* a nonblocking call that would run the engine brings its setup
         * nearer (MPIR_CVAR_TOPO_SETUP_CALLS) */
        if (!ready)
            MPIR_Topo_count_call(comm, 1);
        return ready == val;
    }
    topo = MPIR_Topo_comm_struct(comm);
    if (topo == NULL)
        goto unknown;
    f = &topo->csel;

    if (pred_is_hw(pred)) {
        if (!f->hw_known) {
            /* before MPI_COMM_WORLD exists (the world communicator and its
             * node communicators are pruned while being created) */
            if (world_domain == NULL && at_prune)
                return -1;
            if (world_domain == NULL)
                goto unknown;
            if (compute_hw_facts(comm, f) != MPI_SUCCESS) {
                facts_failed(comm);
                goto unknown;   /* (not reached) */
            }
        }
    } else if (!f->node_known && compute_node_facts(comm, f) != MPI_SUCCESS) {
        facts_failed(comm);
        goto unknown;
    }

    switch (pred) {
        case MPIR_CSEL_TOPO__NODE_COUNT_LE:
            return f->node_count <= val;
        case MPIR_CSEL_TOPO__NODE_COUNT_LT:
            return f->node_count < val;
        case MPIR_CSEL_TOPO__PPN_LE:
            return f->ppn <= val;
        case MPIR_CSEL_TOPO__PPN_LT:
            return f->ppn < val;
        case MPIR_CSEL_TOPO__PPN_UNIFORM:
            return f->ppn_uniform == val;
        case MPIR_CSEL_TOPO__NUMA_PER_NODE_LE:
            return f->numa_per_node <= val;
        case MPIR_CSEL_TOPO__NUMA_PER_NODE_LT:
            return f->numa_per_node < val;
        case MPIR_CSEL_TOPO__IS_BOUND:
            return f->is_bound == val;
        default:
            MPIR_Assert(0);
    }

  unknown:
    /* nothing is known: comparisons and "=yes" fail, "=no" holds */
    return MPIR_Csel_topo_pred_is_boolean(pred) && val == 0;
}

/* ---------------------------------------------------------------- world table */

int MPIR_Csel_topo_world_init(MPIR_Comm * comm_world)
{
    int mpi_errno = MPI_SUCCESS;
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    MPIR_Topo_loc_t loc;
    int mine, p = comm_world->local_size;
    int *table = NULL;

    if (!csel_topo_uses_hw || world_domain)
        goto fn_exit;

    MPIR_Topo_get_my_loc(comm_world, &loc);
    if (loc.package < 0 && loc.numa < 0 && loc.cache < 0 && loc.core < 0)
        mine = DOMAIN_UNBOUND;  /* hwloc cannot place the binding below the node */
    else if (loc.numa >= 0)
        mine = loc.numa;
    else if (loc.package >= 0)
        mine = DOMAIN_PACKAGE_BASE + loc.package;
    else
        mine = DOMAIN_SPANNING;

    table = MPL_malloc(p * sizeof(int), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(table == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    /* a concrete algorithm: no selection (and no tuning file) involved */
    mpi_errno = MPIR_Allgather_intra_brucks(&mine, 1, MPI_INT, table, 1, MPI_INT, comm_world,
                                            &errflag);
    MPIR_ERR_CHECK(mpi_errno);
    world_domain = table;
    world_size = p;
    table = NULL;

  fn_exit:
    MPL_free(table);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

void MPIR_Csel_topo_finalize(void)
{
    MPL_free(world_domain);
    world_domain = NULL;
    world_size = 0;
    csel_topo_uses_hw = 0;
}
