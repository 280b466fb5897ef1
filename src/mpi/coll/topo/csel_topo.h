/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

#ifndef CSEL_TOPO_H_INCLUDED
#define CSEL_TOPO_H_INCLUDED

/* Collective selection (csel) support: loading and checking tuning files
 * (csel_check.c) and the topology predicates of the JSON grammar
 * (csel_topo.c). */

struct json_object;

/* ---------------------------------------------------------------- loading */

/* The three selection levels and the CVAR that names each one's file. */
typedef enum {
    MPIR_CSEL_LEVEL__MPIR,      /* MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE */
    MPIR_CSEL_LEVEL__CH4,       /* MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE */
    MPIR_CSEL_LEVEL__POSIX      /* MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE */
} MPIR_Csel_level_t;

/* Builds a selection tree from the user's file when one is named (file is
 * not empty), else from the built-in JSON. The file is checked completely
 * first: a file that cannot be read, is not JSON, or has a key, name or
 * number the selection code does not know returns an MPI error naming the
 * CVAR, the file, the offending key and the valid choices; with
 * MPIR_CVAR_COLL_SELECTION_TUNING_ERROR=warn the error is printed instead
 * and the built-in JSON is used. */
int MPIR_Csel_load(MPIR_Csel_level_t level, const char *file, const char *builtin_json,
                   void *(*create_container) (struct json_object *), void **csel);

/* Nonzero when that level's tree came from the user's file (set by
 * MPIR_Csel_load): an algorithm the built-in tuning picked is never the
 * user's choice, so it falls back silently where it cannot run. */
extern int MPIR_Csel_user_file[3];
/* Nonzero when that level's user file selects coll ("allgather", ...):
 * collectives a partial file leaves out keep the built-in tuning's choice. */
int MPIR_Csel_user_chose(MPIR_Csel_level_t level, const char *coll);

/* Checks a parsed tree against what the selection code of that level
 * accepts (used by MPIR_Csel_load); returns an MPI error code whose chain
 * describes the first problem and lists the valid choices. */
int MPIR_Csel_check_tree(MPIR_Csel_level_t level, struct json_object *tree);

/* ---------------------------------------------------------------- predicates */

/* Topology predicates (csel.c node type CSEL_NODE_TYPE__OPERATOR__TOPO):
 *   node_count<=N, node_count<N    nodes the communicator spans
 *   ppn<=N, ppn<N                  most processes of the communicator on one node
 *   ppn_uniform=yes|no             every node holds as many of them
 *   numa_per_node<=N, <N           most memory domains (NUMA nodes, or packages
 *                                  where a NUMA node spans several) its
 *                                  processes are bound within on one node
 *   is_bound=yes|no                every process is bound below its node
 *   topo_engine=yes|no             the topology-aware engine is set up on the
 *                                  communicator and can run its nonblocking
 *                                  calls (a persistent init sets it up)
 * val is N, or 1 for yes and 0 for no. */
typedef enum {
    MPIR_CSEL_TOPO__NODE_COUNT_LE,
    MPIR_CSEL_TOPO__NODE_COUNT_LT,
    MPIR_CSEL_TOPO__PPN_LE,
    MPIR_CSEL_TOPO__PPN_LT,
    MPIR_CSEL_TOPO__PPN_UNIFORM,
    MPIR_CSEL_TOPO__NUMA_PER_NODE_LE,
    MPIR_CSEL_TOPO__NUMA_PER_NODE_LT,
    MPIR_CSEL_TOPO__IS_BOUND,
    MPIR_CSEL_TOPO__ENGINE
} MPIR_Csel_topo_pred_t;

/* When a predicate is evaluated: pruning the tree for a new communicator
 * (only what cannot change may be decided then), selecting for a call, or
 * selecting for a persistent collective's init (which may communicate). */
typedef enum {
    MPIR_CSEL_TOPO_AT_CALL,
    MPIR_CSEL_TOPO_AT_PRUNE,
    MPIR_CSEL_TOPO_AT_PERSISTENT_INIT
} MPIR_Csel_topo_when_t;

/* Per-communicator values of the predicates, computed on first use (kept in
 * comm->topo, see topo.h). */
typedef struct MPIR_Csel_topo_facts {
    int node_known;             /* node_count, ppn, ppn_uniform are set */
    int hw_known;               /* numa_per_node, is_bound are set */
    int node_count;
    int ppn;
    int ppn_uniform;
    int numa_per_node;
    int is_bound;
} MPIR_Csel_topo_facts_t;

/* Parses a normalized key ("ppn<=4", "is_bound=yes"); returns 1 and sets
 * *pred and *val if it is a topology predicate, 0 otherwise. Malformed
 * numbers are caught earlier by MPIR_Csel_check_tree. */
int MPIR_Csel_topo_parse(const char *key, int *pred, int *val);
int MPIR_Csel_topo_pred_is_boolean(int pred);
/* 1 for a predicate whose value can change during the run (topo_engine):
 * a tree that asks it is walked on every call */
int MPIR_Csel_topo_pred_changes(int pred);
/* 1: holds, 0: does not. At MPIR_CSEL_TOPO_AT_PRUNE (communicator
 * creation) it may return -1: not known yet, the node stays in the pruned
 * tree. */
int MPIR_Csel_topo_eval(MPIR_Comm * comm, int pred, int val, MPIR_Csel_topo_when_t when);

/* MPIR_init_comm_world calls this once MPI_COMM_WORLD exists: if a loaded
 * tuning file uses numa_per_node or is_bound, every process's binding is
 * allgathered over MPI_COMM_WORLD (one int each), so that the predicates are
 * then known for every communicator without communication. */
int MPIR_Csel_topo_world_init(MPIR_Comm * comm_world);
void MPIR_Csel_topo_finalize(void);

/* ---------------------------------------------------------------- cache */

/* A pruned tree's last decision for one collective (csel.c,
 * csel_cache.c): usable when the tree has no predicate that changes
 * during the run; key: MPIR_Csel_cache_key's of that call */
#define MPIR_CSEL_CACHE_KEY_LEN 5
typedef struct {
    int usable;
    int valid;
    intptr_t key[MPIR_CSEL_CACHE_KEY_LEN];
    void *container;
} MPIR_Csel_cache_t;

/* 1 and the key of a call that may be cached, 0 otherwise
 * (MPIR_CVAR_COLL_SELECTION_CACHE) */
int MPIR_Csel_cache_key(const MPIR_Csel_coll_sig_s * s, intptr_t key[MPIR_CSEL_CACHE_KEY_LEN]);

#endif /* CSEL_TOPO_H_INCLUDED */
