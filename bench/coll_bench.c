/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* coll_bench: OSU-style latency benchmark for allgather, bcast, allreduce and reduce
 * that times several algorithms against each other in one run.
 *
 *   coll_bench [-c COLL[,COLL...]|all] [-a ALG[,ALG...]] [-m MIN] [-M MAX] [-s STEP]
 *              [-i ITERS] [-w WARMUP] [-T SECONDS] [-R ROUNDS] [-p block|cyclic|shuffle|reverse]
 *              [-o POOL_BYTES] [-n NETCALLS] [-I IFACE] [-v] [-l LABEL] [-H] [-P]
 *
 * Sizes are bytes per process (allgather: each contribution; bcast and
 * the reductions: the message; reduce and bcast roots rotate over the ranks), from MIN to MAX multiplied by STEP (2).  Iterations
 * shrink with size: ITERS up to 8 KiB, halved for every doubling above, at
 * least 10 (or ITERS if smaller; -i 0 -w 0 makes no calls at all).  -T caps
 * the time per size and algorithm (estimated from the warm-up, at least 3
 * timed calls).  Each call is timed alone after a barrier.  Each size
 * starts with 5 ms of untimed calls (see prime()).  -R ROUNDS measures every
 * size ROUNDS times, the algorithms interleaved, each round starting with
 * the next one, and keeps each algorithm's best round (by median), so that
 * a burst of load from elsewhere spoils one round rather than one algorithm.
 *
 * Algorithms (-a) are switched inside the run through the MPI_T control
 * variable interface: MPIR_<Coll>_impl in MPICH reads
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM on every call.
 *   default  MPICH's own selection (algorithm auto, device collectives on)
 *   NAME     MPIR_CVAR_<COLL>_INTRA_ALGORITHM=NAME with
 *            MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=0, so the forced algorithm
 *            runs on this communicator, and MPIR_CVAR_COLLECTIVE_FALLBACK=error,
 *            so a silent fallback cannot pass as NAME.  Where NAME cannot run
 *            here the line says n/a and the reason.
 *   env=LBL  touch nothing (whatever the environment selected), label LBL.
 * The settings are written just before each timed call and the defaults
 * restored right after, so barriers and bookkeeping always run MPICH's
 * default algorithms.  With an MPI other than MPICH only default/env apply.
 *
 * Data: buffers change every call (the contents depend on the call number)
 * and -v checks every result.  -o POOL_BYTES is the off-cache mode: the
 * buffers rotate through a pool of at least POOL_BYTES (make it a few times
 * the last-level cache), each call's data written long enough before the
 * call that it has left the cache; without -o the data are written just
 * before each call (cache-hot, like an application that just computed them).
 *
 * -n K counts the bytes each call puts on the network: the transmit counter
 * of IFACE (lo) in /proc/net/dev around K back-to-back calls, minus the same
 * without calls, the smallest of 3 tries each (other traffic can only add).
 * The lower bound for the layout is printed beside it: allgather
 * m * sum over nodes of (p - p_node), bcast and reduce (N-1) m, allreduce
 * 2 (N-1) m.
 * With an IFACE other than lo (bench/cluster.sh: each node's own eth0), the
 * first process of each node reads its node's counter: net_bytes is the
 * sum over nodes, node_net_bytes what the busiest node sent, against
 * node_net_bound, the least the busiest node must send.
 *
 * -p: block and cyclic only name what the launcher did (the node of each
 * rank is detected with MPI_COMM_TYPE_SHARED and a mismatch is reported);
 * shuffle splits the communicator with seeded random keys, reverse with
 * reversed ones; without -p the placement column says how the launcher
 * laid the ranks out (block, cyclic or other).  -H prints the CSV header,
 * -P progress (and the node of each rank) on stderr.
 *
 * CSV columns:
 *   label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,
 *   errors,algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,
 *   node_net_bytes,node_net_bound,status
 * min/avg/max_us are over processes of each one's mean time per call (as
 * OSU); med_us is the median over calls of the slowest process' time, which a
 * stray TCP retransmission or preemption moves little; tcp_retrans counts the
 * TCP segments retransmitted meanwhile (/proc/net/snmp, -1 if unknown).
 * status is ok, n/a:REASON (the algorithm cannot run here) or fail:REASON. */

#define _POSIX_C_SOURCE 200809L  /* strdup, strtok_r, getopt */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ALGS 16
#define MAX_CVAR_DESC 8192

enum { AG, BC, AR, RD, NCOLL };
static const char *coll_name[NCOLL] = { "allgather", "bcast", "allreduce", "reduce" };
static const char *coll_upper[NCOLL] = { "ALLGATHER", "BCAST", "ALLREDUCE", "REDUCE" };
/* the reductions work on ints (MPI_SUM) */
#define IS_REDUCTION(coll) ((coll) == AR || (coll) == RD)

/* One MPI_T control variable we may write. */
typedef struct {
    int found;
    MPI_T_cvar_handle handle;
    int initial;
    char desc[MAX_CVAR_DESC];
} cvar_t;

typedef struct {
    char name[64];
    int env;                    /* env=LABEL: no writes */
    int value;                  /* enum value of NAME, -1 if unknown */
} alg_t;

static MPI_Comm comm;
static int rank, size, nnodes, ppn, validate, progress;
static size_t pool_min;         /* off-cache pool, 0: hot */
static int *node_of;            /* node index of each rank of comm */
static int *node_size;
static int node_first;          /* this process is the first of its node */
static int own_nic;             /* -I names a NIC of each node's own (not lo) */
static cvar_t cv_alg[NCOLL], cv_dev[NCOLL], cv_fallback;
static int fallback_error = -1;
static const char *iface = "lo";

static void die(const char *msg)
{
    fprintf(stderr, "coll_bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void cvar_open(cvar_t * c, const char *name)
{
    int idx, count, nl = 0, dl = MAX_CVAR_DESC, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;

    memset(c, 0, sizeof(*c));
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS)
        return;
    if (MPI_T_cvar_get_info(idx, NULL, &nl, &verb, &dt, &en, c->desc, &dl, &bind, &scope)
        != MPI_SUCCESS || dt != MPI_INT)
        return;
    if (MPI_T_cvar_handle_alloc(idx, NULL, &c->handle, &count) != MPI_SUCCESS)
        return;
    MPI_T_cvar_read(c->handle, &c->initial);
    c->found = 1;
}

static void cvar_set(cvar_t * c, int v)
{
    if (c->found && MPI_T_cvar_write(c->handle, &v) != MPI_SUCCESS)
        die("MPI_T_cvar_write failed");
}

/* MPICH 4.0.2 exports its algorithm CVARs as plain ints; the description
 * lists the values in enum order as "NAME<spaces>- text", each NAME glued to
 * the previous value's text.  So the enum value of NAME is the index of the
 * " - " separator whose preceding text ends in NAME (not in "_NAME"). */
static int enum_value(const char *desc, const char *name)
{
    size_t nlen = strlen(name);
    int k = 0;
    for (const char *p = desc; (p = strstr(p, " - ")) != NULL; p += 3, k++) {
        const char *e = p;
        while (e > desc && e[-1] == ' ')
            e--;
        if ((size_t) (e - desc) >= nlen && !strncmp(e - nlen, name, nlen) &&
            (e - nlen == desc || e[-(long) nlen - 1] != '_'))
            return k;
    }
    return -1;
}

/* The settings of one algorithm; a == NULL restores those the run started
 * with (MPICH's defaults unless the environment set others). */
static void select_alg(int coll, const alg_t * a)
{
    if (a && a->env)
        return;
    if (!a) {
        cvar_set(&cv_alg[coll], cv_alg[coll].initial);
        cvar_set(&cv_dev[coll], cv_dev[coll].initial);
        cvar_set(&cv_fallback, cv_fallback.initial);
    } else if (a->value == 0) {        /* default: auto */
        cvar_set(&cv_alg[coll], 0);
        cvar_set(&cv_dev[coll], cv_dev[coll].initial);
        cvar_set(&cv_fallback, cv_fallback.initial);
    } else {
        cvar_set(&cv_alg[coll], a->value);
        cvar_set(&cv_dev[coll], 0);
        cvar_set(&cv_fallback, fallback_error);
    }
}

static unsigned char pattern(int r, size_t i, long seq)
{
    return (unsigned char) (r * 29 + i * 7 + seq * 13 + (i >> 9) + (seq >> 8));
}

static int root_of(long seq)
{
    return (int) (seq % size);
}

/* Buffers of one call: a set inside the pool. */
typedef struct {
    unsigned char *pool;
    size_t pool_bytes, stride, sbytes, rbytes;
    long nsets;
} pool_t;

static unsigned char *sbuf_of(pool_t * P, long seq)
{
    return P->pool + (size_t) (seq % P->nsets) * P->stride;
}

static unsigned char *rbuf_of(pool_t * P, long seq)
{
    return sbuf_of(P, seq) + ((P->sbytes + 4095) & ~(size_t) 4095);
}

/* Write the data of call seq into its set (and, when validating, make the
 * receive side wrong so that a call that does nothing is caught). */
static void fill(int coll, pool_t * P, size_t n, long seq)
{
    unsigned char *s = sbuf_of(P, seq), *r = rbuf_of(P, seq);
    if (IS_REDUCTION(coll)) {
        int *si = (int *) s, *ri = (int *) r;
        for (size_t i = 0; i < n; i++)
            si[i] = pattern(rank, i, seq);
        if (validate)
            for (size_t i = 0; i < n; i++)
                ri[i] = -1;
    } else if (coll == BC) {
        int root = root_of(seq);
        if (rank == root)
            for (size_t i = 0; i < n; i++)
                s[i] = pattern(root, i, seq);
        else if (validate)
            for (size_t i = 0; i < n; i++)
                s[i] = (unsigned char) ~pattern(root, i, seq);
    } else {
        for (size_t i = 0; i < n; i++)
            s[i] = pattern(rank, i, seq);
        if (validate)
            for (int q = 0; q < size; q++)
                for (size_t i = 0; i < n; i++)
                    r[q * n + i] = (unsigned char) ~pattern(q, i, seq);
    }
}

static int check(int coll, pool_t * P, size_t n, long seq)
{
    unsigned char *s = sbuf_of(P, seq), *r = rbuf_of(P, seq);
    if (coll == RD && rank != root_of(seq))
        return 0;       /* (nothing to check off the root) */
    if (IS_REDUCTION(coll)) {
        int *ri = (int *) r;
        for (size_t i = 0; i < n; i++) {
            int exp = 0;
            for (int q = 0; q < size; q++)
                exp += pattern(q, i, seq);
            if (ri[i] != exp)
                return 1;
        }
    } else if (coll == BC) {
        int root = root_of(seq);
        for (size_t i = 0; i < n; i++)
            if (s[i] != pattern(root, i, seq))
                return 1;
    } else {
        int bad = 0;
        for (int q = 0; q < size; q++)
            for (size_t i = 0; i < n; i++)
                if (r[q * n + i] != pattern(q, i, seq)) {
                    bad++;
                    break;
                }
        return bad;
    }
    return 0;
}

static int call(int coll, pool_t * P, size_t n, long seq)
{
    void *s = sbuf_of(P, seq), *r = rbuf_of(P, seq);
    if (coll == AG)
        return MPI_Allgather(s, (int) n, MPI_BYTE, r, (int) n, MPI_BYTE, comm);
    if (coll == BC)
        return MPI_Bcast(s, (int) n, MPI_BYTE, root_of(seq), comm);
    if (coll == RD)
        return MPI_Reduce(s, r, (int) n, MPI_INT, MPI_SUM, root_of(seq), comm);
    return MPI_Allreduce(s, r, (int) n, MPI_INT, MPI_SUM, comm);
}

static long long net_counter(void)
{
    FILE *f = fopen("/proc/net/dev", "r");
    char line[512];
    long long v[16], tx = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':'), *p = line;
        if (!c)
            continue;
        *c = 0;
        while (*p == ' ')
            p++;
        if (strcmp(p, iface))
            continue;
        if (sscanf(c + 1, "%lld %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 9)
            tx = v[8];
    }
    fclose(f);
    return tx;
}

/* Bytes on the network per call: K calls back to back, minus no calls.
 * The first process of each node reads its node's counter (on an emulated
 * cluster each node has its own NIC; with cliques every reader sees the one
 * loopback, so only rank 0's counts); *busiest gets the most one node sent. */
static double net_bytes(int coll, const alg_t * a, pool_t * P, size_t n, long *seq, int K,
                        double *busiest)
{
    long long best[2][2] = { {-1, -1}, {-1, -1} };      /* [with][total, busiest] */
    int reader = rank == 0 || (own_nic && node_first);
    for (int rep = 0; rep < 3; rep++) {
        for (int with = 0; with < 2; with++) {
            long long c0 = 0, c1, d[2] = { 0, 0 }, sum[2];
            /* read before the barrier: nobody may send before the reading */
            if (reader)
                c0 = net_counter();
            MPI_Barrier(comm);
            if (with) {
                select_alg(coll, a);
                for (int k = 0; k < K; k++, (*seq)++)
                    if (call(coll, P, n, *seq) != MPI_SUCCESS)
                        die("collective failed while counting network bytes");
                select_alg(coll, NULL);
            }
            MPI_Barrier(comm);
            if (reader) {
                c1 = net_counter();
                d[0] = c0 < 0 || c1 < 0 ? -1 : c1 - c0;
                d[1] = d[0];
            }
            /* total: sum over readers (any -1 makes it negative); busiest: max */
            MPI_Reduce(&d[0], &sum[0], 1, MPI_LONG_LONG, MPI_SUM, 0, comm);
            MPI_Reduce(&d[1], &sum[1], 1, MPI_LONG_LONG, MPI_MAX, 0, comm);
            if (rank == 0)
                for (int j = 0; j < 2; j++)
                    if (sum[j] >= 0 && (best[with][j] < 0 || sum[j] < best[with][j]))
                        best[with][j] = sum[j];
        }
    }
    *busiest = -1;
    if (best[0][0] < 0 || best[1][0] < 0)
        return -1;
    double b = (double) (best[1][0] - best[0][0]) / K;
    if (own_nic) {
        double m = (double) (best[1][1] - best[0][1]) / K;
        *busiest = m < 0 ? 0 : m;
    }
    return b < 0 ? 0 : b;
}

static double net_bound(int coll, size_t m)
{
    if (coll == AG) {
        double s = 0;
        for (int k = 0; k < nnodes; k++)
            s += (double) (size - node_size[k]) * m;
        return s;
    }
    return (coll == AR ? 2.0 : 1.0) * (nnodes - 1) * m;
}

/* The least the busiest node must send per call, and never less than an
 * equal share of the total: allgather, its own processes' data once;
 * bcast (roots rotate over all ranks), the message once for each call
 * rooted on it; allreduce, 2 (N-1)/N m, as reduce-scatter then allgather
 * between nodes does. */
static double net_node_bound(int coll, size_t m)
{
    double share = net_bound(coll, m) / nnodes, own = 0;
    if (IS_REDUCTION(coll))
        return share;
    for (int k = 0; k < nnodes; k++)
        if (node_size[k] > own)
            own = node_size[k];
    own *= coll == AG ? (double) m : (double) m / size;
    return own > share ? own : share;
}

static int iters_for(size_t bytes, int base)
{
    int it = base, floor = base < 10 ? base : 10;
    for (size_t b = 8192; b < bytes && it > floor; b *= 2)
        it /= 2;
    return it < floor ? floor : it;
}

static int renumber(int *ids, int n);

/* The node of every rank of c, numbered 0.. in order of first appearance;
 * returns the number of nodes. */
static int node_ids(MPI_Comm c, int *ids)
{
    MPI_Comm local;
    int r, n, lead;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Allreduce(&r, &lead, 1, MPI_INT, MPI_MIN, local);
    MPI_Comm_free(&local);
    MPI_Allgather(&lead, 1, MPI_INT, ids, 1, MPI_INT, c);
    return renumber(ids, n);
}

static int renumber(int *ids, int n)
{
    int *map = malloc(n * sizeof(int)), nn = 0;
    for (int i = 0; i < n; i++)
        map[i] = -1;
    for (int i = 0; i < n; i++) {
        if (map[ids[i]] < 0)
            map[ids[i]] = nn++;
        ids[i] = map[ids[i]];
    }
    free(map);
    return nn;
}

/* How ranks lie over the nodes: block (each node's ranks consecutive),
 * cyclic (rank r on node r mod N) or other. */
static const char *classify(const int *ids, int n, int nn)
{
    int block = 1, cyclic = 1;
    for (int i = 1; i < n; i++) {
        if (ids[i] != ids[i - 1] && ids[i] != ids[i - 1] + 1)
            block = 0;
        if (ids[i] != i % nn)
            cyclic = 0;
    }
    return nn == 1 || block ? "block" : cyclic ? "cyclic" : "other";
}

/* A seeded random order of the ranks (the same on every process); where
 * the nodes allow it, one that is neither block nor cyclic, so that the
 * shuffled case differs from the other two. */
static int shuffle_key(int wrank, int wsize)
{
    int *wids = malloc(wsize * sizeof(int)), *perm = malloc(wsize * sizeof(int));
    int *seq = malloc(wsize * sizeof(int)), key = wrank;
    int nn = node_ids(MPI_COMM_WORLD, wids);
    for (unsigned long long seed = 2026; seed < 2026 + 200; seed++) {
        unsigned long long x = seed;
        for (int i = 0; i < wsize; i++)
            perm[i] = i;
        for (int i = wsize - 1; i > 0; i--) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            int j = (int) ((x >> 33) % (unsigned long long) (i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        key = perm[wrank];
        for (int w = 0; w < wsize; w++)
            seq[perm[w]] = wids[w];     /* new rank perm[w] is world rank w */
        if (!strcmp(classify(seq, wsize, renumber(seq, wsize)), "other") || nn == 1)
            break;
    }
    free(wids);
    free(perm);
    free(seq);
    return key;
}

/* Detect the node of every rank of comm and how ranks lie over them. */
static const char *detect_layout(void)
{
    node_of = malloc(size * sizeof(int));
    node_size = calloc(size, sizeof(int));
    nnodes = node_ids(comm, node_of);
    node_first = 1;
    for (int i = 0; i < rank; i++)
        if (node_of[i] == node_of[rank])
            node_first = 0;
    ppn = 0;
    for (int i = 0; i < size; i++)
        if (++node_size[node_of[i]] > ppn)
            ppn = node_size[node_of[i]];
    return classify(node_of, size, nnodes);
}

/* Whether NAME is an algorithm of another collective than coll. */
static int known_elsewhere(const char *name, int coll)
{
    for (int k = 0; k < NCOLL; k++)
        if (k != coll && cv_alg[k].found && enum_value(cv_alg[k].desc, name) >= 0)
            return 1;
    return 0;
}

static long long tcp_retrans(void)
{
    FILE *f = fopen("/proc/net/snmp", "r");
    char head[1024], vals[1024];
    long long r = -1;
    if (!f)
        return -1;
    while (fgets(head, sizeof head, f) && fgets(vals, sizeof vals, f)) {
        if (strncmp(head, "Tcp:", 4))
            continue;
        /* find the column named RetransSegs */
        char *hs = NULL, *vs = NULL, *h = strtok_r(head, " \n", &hs), *v = strtok_r(vals, " \n", &vs);
        while (h && v) {
            if (!strcmp(h, "RetransSegs"))
                r = atoll(v);
            h = strtok_r(NULL, " \n", &hs);
            v = strtok_r(NULL, " \n", &vs);
        }
    }
    fclose(f);
    return r;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* What one round of one algorithm at one size gave; the times and the
 * error count are valid on rank 0 (the status everywhere). */
typedef struct {
    char status[160];
    int done;
    long errors;
    double tmin, tavg, tmax, med;
    long long retrans;
} result_t;

static int base_iters = 200, warmup = 5, netcalls, rounds = 1;
static double budget;

/* Whether the call failed anywhere; if so, why (for the CSV). */
static int failed_anywhere(int rc, char *status, size_t len)
{
    int bad = rc != MPI_SUCCESS, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (!anybad)
        return 0;
    char msg[MPI_MAX_ERROR_STRING] = "failed on another process";
    int mlen;
    if (bad)
        MPI_Error_string(rc, msg, &mlen);
    /* the last line of MPICH's error stack says why */
    char *why = msg;
    for (char *c = msg; *c; c++)
        if (*c == '\n' && c[1])
            why = c + 1;
    for (char *c = why; *c; c++)
        if (*c == ',' || *c == '\n')
            *c = ';';
    snprintf(status, len, "n/a:%.150s", why);
    return 1;
}

static void measure(int coll, const alg_t * a, pool_t * P, size_t n, size_t bytes, long *seq,
                    result_t * r)
{
    int iters = iters_for(bytes, base_iters), warm = warmup;
    double t = 0;

    memset(r, 0, sizeof(*r));
    strcpy(r->status, "ok");
    r->retrans = -1;
    r->med = -1;
    if (warm > iters)
        warm = iters;
    if (warm < 1 && iters > 0)
        warm = 1;
    if (iters == 0)
        return;         /* zero calls: the baseline for counting bytes outside */

    /* the data of the calls to come; off-cache, the rest of the pool is
     * written too, after them, so that they have left the cache */
    long planned = warm + iters < P->nsets ? warm + iters : P->nsets;
    for (long s = 0; s < planned; s++)
        fill(coll, P, n, *seq + s);
    for (long s = planned; pool_min && s < P->nsets; s++)
        memset(sbuf_of(P, *seq + s), 0, P->stride);

    /* warm-up; the first call tells whether the algorithm can run here, the
     * mean of the others how many calls fit the budget */
    double tw = 0;
    for (int w = 0; w < warm; w++, (*seq)++) {
        MPI_Barrier(comm);
        select_alg(coll, a);
        double t0 = MPI_Wtime();
        int rc = call(coll, P, n, *seq);
        if (w > 0)
            tw += MPI_Wtime() - t0;
        select_alg(coll, NULL);
        if (w == 0 && failed_anywhere(rc, r->status, sizeof r->status))
            return;
        if (rc != MPI_SUCCESS)
            die("collective failed during warm-up");
        if (validate)
            r->errors += check(coll, P, n, *seq);
        fill(coll, P, n, *seq + P->nsets);
    }
    if (budget > 0 && warm > 1 && iters > 3) {
        double est = tw / (warm - 1), mx;
        MPI_Allreduce(&est, &mx, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (mx * iters > budget) {
            int fit = (int) (budget / mx);
            iters = fit < 3 ? 3 : fit;
        }
    }

    double *times = malloc(iters * sizeof(double));
    long long rt0 = rank == 0 ? tcp_retrans() : -1;
    for (int it = 0; it < iters; it++, (*seq)++) {
        MPI_Barrier(comm);
        select_alg(coll, a);
        double t0 = MPI_Wtime();
        if (call(coll, P, n, *seq) != MPI_SUCCESS)
            die("collective failed");
        times[it] = MPI_Wtime() - t0;
        t += times[it];
        select_alg(coll, NULL);
        if (validate)
            r->errors += check(coll, P, n, *seq);
        fill(coll, P, n, *seq + P->nsets);
        r->done++;
    }
    long long rt1 = rank == 0 ? tcp_retrans() : -1;
    if (rt0 >= 0 && rt1 >= 0)
        r->retrans = rt1 - rt0;

    /* median over calls of the slowest process: a stray TCP retransmission
     * (200 ms) or a preemption moves it little */
    double *tmaxs = rank == 0 ? malloc(iters * sizeof(double)) : NULL;
    MPI_Reduce(times, tmaxs, iters, MPI_DOUBLE, MPI_MAX, 0, comm);
    if (rank == 0) {
        qsort(tmaxs, iters, sizeof(double), cmp_double);
        r->med = (iters % 2 ? tmaxs[iters / 2] : (tmaxs[iters / 2 - 1] + tmaxs[iters / 2]) / 2) * 1e6;
        free(tmaxs);
    }
    free(times);

    /* OSU's numbers: min/avg/max over processes of each one's mean */
    double mean = t / iters * 1e6, sum;
    long errs = r->errors;
    MPI_Reduce(&mean, &r->tmin, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(&mean, &r->tmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(&errs, &r->errors, 1, MPI_LONG, MPI_SUM, 0, comm);
    r->tavg = sum / size;
}

/* Untimed calls of the default algorithm at a new size, for 5 ms and at
 * least 8 calls: the first few milliseconds of messages of a new size are
 * several times slower here (seen with CH4 shared memory at 4-64 KiB), and
 * would otherwise count against whichever algorithm comes first. */
static void prime(int coll, pool_t * P, size_t n)
{
    double t0 = MPI_Wtime();
    int more = base_iters > 0, calls = 0;
    long seq = 0;
    while (more) {
        for (int k = 0; k < 8; k++, calls++, seq++)
            if (call(coll, P, n, seq) != MPI_SUCCESS)
                die("collective failed while priming");
        more = MPI_Wtime() - t0 < 0.005 && calls < 1000;
        MPI_Bcast(&more, 1, MPI_INT, 0, comm);
    }
}

static void parse_algs(const char *list, alg_t * algs, int *nalgs)
{
    char *copy = strdup(list), *save = NULL;
    *nalgs = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*nalgs == MAX_ALGS)
            die("too many algorithms");
        alg_t *a = &algs[(*nalgs)++];
        memset(a, 0, sizeof(*a));
        if (!strncmp(t, "env=", 4)) {
            a->env = 1;
            snprintf(a->name, sizeof a->name, "%s", t + 4);
        } else if (!strcmp(t, "env")) {
            a->env = 1;
            snprintf(a->name, sizeof a->name, "env");
        } else {
            snprintf(a->name, sizeof a->name, "%s", t);
        }
    }
    free(copy);
}

int main(int argc, char **argv)
{
    const char *colls = "allgather", *placement = NULL, *label = "run", *alglist = "env";
    size_t min = 1, max = 1 << 20, step = 2;
    int header = 0, opt, provided, wrank, wsize;
    alg_t algs[MAX_ALGS];
    int nalgs;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    while ((opt = getopt(argc, argv, "c:a:m:M:s:i:w:T:R:p:o:n:I:vl:HP")) != -1) {
        switch (opt) {
            case 'c': colls = optarg; break;
            case 'a': alglist = optarg; break;
            case 'm': min = strtoull(optarg, NULL, 0); break;
            case 'M': max = strtoull(optarg, NULL, 0); break;
            case 's': step = strtoull(optarg, NULL, 0); break;
            case 'i': base_iters = atoi(optarg); break;
            case 'w': warmup = atoi(optarg); break;
            case 'T': budget = atof(optarg); break;
            case 'R': rounds = atoi(optarg) < 1 ? 1 : atoi(optarg); break;
            case 'p': placement = optarg; break;
            case 'o': pool_min = strtoull(optarg, NULL, 0); break;
            case 'n': netcalls = atoi(optarg); break;
            case 'I': iface = optarg; own_nic = strcmp(optarg, "lo") != 0; break;
            case 'v': validate = 1; break;
            case 'l': label = optarg; break;
            case 'H': header = 1; break;
            case 'P': progress = 1; break;
            default:
                if (wrank == 0)
                    fprintf(stderr, "usage: coll_bench [-c COLL[,COLL]|all] [-a ALG[,ALG]] "
                            "[-m MIN] [-M MAX] [-s STEP] [-i ITERS] [-w WARMUP] [-T SECONDS] [-R ROUNDS] "
                            "[-p block|cyclic|shuffle|reverse] [-o POOL_BYTES] [-n NETCALLS] "
                            "[-I IFACE] [-v] [-l LABEL] [-H] [-P]\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (min < 1)
        min = 1;
    if (step < 2)
        step = 2;
    parse_algs(alglist, algs, &nalgs);

    int do_coll[NCOLL] = { 0 };
    {
        char *copy = strdup(colls), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int k, all = !strcmp(t, "all"), known = all;
            for (k = 0; k < NCOLL; k++)
                if (all || !strcmp(t, coll_name[k]))
                    do_coll[k] = known = 1;
            if (!known) {
                if (wrank == 0)
                    fprintf(stderr, "coll_bench: unknown collective '%s'\n", t);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        free(copy);
    }

    /* the control variables (absent in other MPIs: only default/env then) */
    for (int k = 0; k < NCOLL; k++) {
        char name[128];
        snprintf(name, sizeof name, "MPIR_CVAR_%s_INTRA_ALGORITHM", coll_upper[k]);
        cvar_open(&cv_alg[k], name);
        snprintf(name, sizeof name, "MPIR_CVAR_%s_DEVICE_COLLECTIVE", coll_upper[k]);
        cvar_open(&cv_dev[k], name);
    }
    cvar_open(&cv_fallback, "MPIR_CVAR_COLLECTIVE_FALLBACK");
    if (cv_fallback.found)
        fallback_error = enum_value(cv_fallback.desc, "error");

    /* placement: block/cyclic as launched, or a seeded permutation of ranks */
    int key = wrank;
    if (!placement) {
        /* as launched: the CSV says how (below) */
    } else if (!strcmp(placement, "reverse")) {
        key = wsize - wrank;
    } else if (!strcmp(placement, "shuffle")) {
        key = shuffle_key(wrank, wsize);
    } else if (strcmp(placement, "block") && strcmp(placement, "cyclic")) {
        if (wrank == 0)
            fprintf(stderr, "coll_bench: unknown placement '%s'\n", placement);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_split(MPI_COMM_WORLD, 0, key, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const char *found = detect_layout();
    if (rank == 0 && progress) {
        fprintf(stderr, "coll_bench: %d ranks on %d node(s), %s; node of each rank:", size,
                nnodes, found);
        for (int i = 0; i < size && i < 64; i++)
            fprintf(stderr, " %d", node_of[i]);
        fprintf(stderr, "%s\n", size > 64 ? " ..." : "");
    }
    if (!placement)
        placement = found;
    else if (rank == 0 && nnodes > 1 && (!strcmp(placement, "block") || !strcmp(placement, "cyclic"))
             && strcmp(found, placement) && !(ppn == 1)) {
        fprintf(stderr, "coll_bench: asked for %s placement but ranks lie %s over %d nodes\n",
                placement, found, nnodes);
        placement = found;
    }
    if (header && rank == 0)
        printf("label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors,"
               "algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,node_net_bytes,"
               "node_net_bound,status\n");

    for (int coll = 0; coll < NCOLL; coll++) {
        if (!do_coll[coll])
            continue;
        /* enum values of the requested algorithms for this collective */
        for (int a = 0; a < nalgs; a++) {
            algs[a].value = -1;
            if (algs[a].env)
                continue;
            if (!strcmp(algs[a].name, "default"))
                algs[a].value = 0;      /* without the CVARs: no writes, same thing */
            else if (cv_alg[coll].found)
                algs[a].value = enum_value(cv_alg[coll].desc, algs[a].name);
        }
        if (cv_alg[coll].found && enum_value(cv_alg[coll].desc, "auto") != 0)
            die("cannot read the algorithm values from the MPI_T description");

        pool_t P;
        P.sbytes = max + 8;
        P.rbytes = coll == AG ? max * size : max + 8;
        size_t stride_max = ((P.sbytes + 4095) & ~(size_t) 4095) + ((P.rbytes + 4095) & ~(size_t) 4095);
        P.pool_bytes = pool_min > 2 * stride_max ? pool_min : pool_min ? 2 * stride_max : stride_max;
        P.pool = malloc(P.pool_bytes);
        if (!P.pool) {
            fprintf(stderr, "coll_bench: out of memory for %zu bytes\n", P.pool_bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(P.pool, 0, P.pool_bytes);        /* fault every page in before timing */

        size_t last_bytes = 0;
        for (size_t bytes = min; bytes <= max; bytes *= step) {
            /* reductions work on ints: round to whole ints, skip repeats */
            size_t n = IS_REDUCTION(coll) ? (bytes + sizeof(int) - 1) / sizeof(int) : bytes;
            size_t real = IS_REDUCTION(coll) ? n * sizeof(int) : bytes;
            if (real > max + (IS_REDUCTION(coll) ? 3 : 0) || real == last_bytes)
                continue;
            last_bytes = real;
            P.sbytes = IS_REDUCTION(coll) ? real : bytes;
            P.rbytes = coll == AG ? bytes * size : IS_REDUCTION(coll) ? real : 0;
            P.stride = ((P.sbytes + 4095) & ~(size_t) 4095) + ((P.rbytes + 4095) & ~(size_t) 4095);
            P.nsets = pool_min ? (long) (P.pool_bytes / P.stride) : 1;
            if (P.nsets > 65536)
                P.nsets = 65536;

            result_t best[MAX_ALGS];
            long seq[MAX_ALGS];
            int skip[MAX_ALGS];
            for (int ai = 0; ai < nalgs; ai++) {
                alg_t *a = &algs[ai];
                seq[ai] = 0;
                memset(&best[ai], 0, sizeof(best[ai]));
                strcpy(best[ai].status, "ok");
                best[ai].med = -1;
                /* e.g. brucks with -c all: an allgather algorithm, skip it */
                skip[ai] = !a->env && a->value < 0 && known_elsewhere(a->name, coll);
                if (!a->env && a->value < 0)
                    snprintf(best[ai].status, sizeof best[ai].status,
                             "n/a:no such algorithm for %s", coll_name[coll]);
                else if (!a->env && a->value > 0 && fallback_error < 0)
                    snprintf(best[ai].status, sizeof best[ai].status,
                             "n/a:no MPIR_CVAR_COLLECTIVE_FALLBACK");
            }
            prime(coll, &P, n);
            /* rounds interleave the algorithms, each round starting with the
             * next one; the best round counts, so a burst of load from
             * elsewhere hits one round, not one algorithm */
            for (int round = 0; round < rounds; round++) {
                for (int k = 0; k < nalgs; k++) {
                    int ai = (k + round) % nalgs;
                    if (skip[ai] || strcmp(best[ai].status, "ok"))
                        continue;
                    result_t r;
                    measure(coll, &algs[ai], &P, n, bytes, &seq[ai], &r);
                    long errs = best[ai].errors + r.errors;
                    if (strcmp(r.status, "ok") || best[ai].med < 0 || r.med < best[ai].med)
                        best[ai] = r;
                    best[ai].errors = errs;
                }
            }
            if (progress && rank == 0)
                fprintf(stderr, "  %-9s %9zu B:", coll_name[coll], real);
            for (int ai = 0; ai < nalgs; ai++) {
                alg_t *a = &algs[ai];
                result_t *r = &best[ai];
                double nb = -1, nbn = -1;
                if (skip[ai])
                    continue;
                if (netcalls > 0 && !strcmp(r->status, "ok") && r->done > 0) {
                    int K = netcalls;
                    if (coll == BC)     /* every process a root equally often */
                        K = ((K + size - 1) / size) * size;
                    nb = net_bytes(coll, a, &P, n, &seq[ai], K, &nbn);
                }
                if (rank != 0)
                    continue;
                char nbs[32] = "", bds[32] = "", rts[32] = "", nns[32] = "", nbd[32] = "";
                if (r->retrans >= 0 && r->done > 0)
                    snprintf(rts, sizeof rts, "%lld", r->retrans);
                if (nb >= 0) {
                    snprintf(nbs, sizeof nbs, "%.0f", nb);
                    snprintf(bds, sizeof bds, "%.0f", net_bound(coll, real));
                }
                if (nbn >= 0) {
                    snprintf(nns, sizeof nns, "%.0f", nbn);
                    snprintf(nbd, sizeof nbd, "%.0f", net_node_bound(coll, real));
                }
                if (r->errors && !strcmp(r->status, "ok"))
                    snprintf(r->status, sizeof r->status, "fail:%ld wrong results", r->errors);
                printf("%s,%s,%s,%d,%zu,%d,%.2f,%.2f,%.2f,%ld,%s,%d,%d,%s,%.2f,%s,%s,%s,%s,%s,%s\n",
                       label, coll_name[coll], placement, size, real, r->done, r->tmin, r->tavg,
                       r->tmax, r->errors, a->name, nnodes, ppn, pool_min ? "cold" : "hot",
                       r->med < 0 ? 0 : r->med, rts, nbs, bds, nns, nbd, r->status);
                fflush(stdout);
                if (progress) {
                    if (!strcmp(r->status, "ok"))
                        fprintf(stderr, " %s %.1fus", a->name, r->med);
                    else
                        fprintf(stderr, " %s %.20s", a->name, r->status);
                }
            }
            if (progress && rank == 0)
                fprintf(stderr, "\n");
        }
        free(P.pool);
    }

    free(node_of);
    free(node_size);
    MPI_Comm_free(&comm);
    for (int k = 0; k < NCOLL; k++) {
        if (cv_alg[k].found)
            MPI_T_cvar_handle_free(&cv_alg[k].handle);
        if (cv_dev[k].found)
            MPI_T_cvar_handle_free(&cv_dev[k].handle);
    }
    if (cv_fallback.found)
        MPI_T_cvar_handle_free(&cv_fallback.handle);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
