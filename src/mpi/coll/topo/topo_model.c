/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The cost model of the engine's network steps among node leaders: the
 * one place where a choice by node count and size is computed.  Pure (no
 * MPI): the unit tests (test/unit/test_topo_model.c) call the same
 * functions the engine does.
 *
 * Unit: bytes of one NIC's time.  A message of c bytes between two nodes
 * costs B + c, B the bytes a NIC moves in one message's latency
 * (MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES).  A copy of c bytes within a node
 * costs c / R, R the bytes a process copies in the time the NIC moves one
 * (MPIR_Topo_model_default.mem_speedup), and a reduction of c bytes c / F
 * (red_speedup).  Every process of a communicator
 * computes the same choice from the same inputs, so no agreement is
 * needed. */

#include "topo_logic.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The constants where the network is not known (no port found under
 * sysfs, as on virtual and emulated links): real clusters' NICs are 4 to
 * 8 times slower than a node's memory copies, and 6 is the middle of that
 * range (this machine's emulated NICs are some 80 times slower, which
 * would say nothing about a cluster). */
const MPIR_Topo_model_t MPIR_Topo_model_default = {
    .net_latency = 16384.0,
    .mem_speedup = 6.0,
    /* a reduction reads two inputs and writes one: half a copy's rate */
    .red_speedup = 3.0,
    /* on 4 emulated nodes of 2 (bench/results/cluster-4x2-steps) these
     * constants put once 1.14x ahead where the rounds were 1.1-1.4x
     * faster (the rounds were measured ahead of MPICH where they ran,
     * 2 x 2 and 4 x 4: 1.5-2.2x) */
    .once_margin = 2.0,
};

/* Where the network is known, B and R come from its rate: one message's
 * latency by the kind of port (MPI over InfiniBand about 1.5 us, over
 * RoCE about 3, over TCP sockets about 10), and the bytes one process
 * copies per second.  A process copies at one core's rate (about 10 GB/s
 * on current servers), not the node's: each local process copies the
 * whole call out, so a 200 Gbit/s NIC (25 GB/s) outruns it (R = 0.4)
 * where 25 Gbit/s Ethernet does not (R = 3.2). */
static const double link_latency_s[] = {
    [MPIR_TOPO_LINK_ETHERNET] = 10e-6,
    [MPIR_TOPO_LINK_ROCE] = 3e-6,
    [MPIR_TOPO_LINK_INFINIBAND] = 1.5e-6,
};

#define MPIR_TOPO_MODEL_COPY_RATE 10e9

MPIR_Topo_model_t MPIR_Topo_model_for_link(long mbps, int kind)
{
    MPIR_Topo_model_t md = MPIR_Topo_model_default;
    double rate = mbps * 125000.0;      /* bytes per second */

    if (mbps <= 0)
        return md;
    if (kind > MPIR_TOPO_LINK_UNKNOWN && kind <= MPIR_TOPO_LINK_INFINIBAND)
        md.net_latency = link_latency_s[kind] * rate;
    md.mem_speedup = MPIR_TOPO_MODEL_COPY_RATE / rate;
    md.red_speedup = md.mem_speedup / 2.0;
    /* with these constants the model's ratio of the rounds' time to
     * once's was 0.55-1.0 of SimGrid's in every cell simulated (16-4,096
     * nodes of 16, both fabrics, reductions free or charged): it never
     * put once ahead where the rounds were faster, and a margin of 2 kept
     * rounds 3-5x slower on 16 InfiniBand nodes at 64-256 KiB */
    md.once_margin = 1.25;
    return md;
}

/* the first line of a small sysfs file, without its newline; nonzero
 * where it cannot be read */
static int read_attr(const char *dir, const char *name, char *buf, int size)
{
    char path[1000];
    FILE *f;
    int ok;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "r");
    if (f == NULL)
        return 1;
    ok = fgets(buf, size, f) != NULL;
    fclose(f);
    if (!ok)
        return 1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* the entries of dir other than . and .., one per call; NULL at the end */
static const char *next_entry(DIR * d)
{
    struct dirent *de;

    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            return de->d_name;
    return NULL;
}

long MPIR_Topo_net_speed(const char *sysfs, const char *ifname)
{
    char dir[600], buf[32], *end;
    long mbps;

    snprintf(dir, sizeof(dir), "%s/class/net/%s", sysfs, ifname);
    if (read_attr(dir, "speed", buf, sizeof(buf)))
        return -1;
    mbps = strtol(buf, &end, 10);
    return end == buf ? -1 : mbps;
}

static void take_link(long mbps, int kind, long *best, int *best_kind)
{
    /* (at the same rate the faster kind: an InfiniBand port's IPoIB
     * interface reports the port's rate) */
    if (mbps > *best || (mbps == *best && kind > *best_kind)) {
        *best = mbps;
        *best_kind = kind;
    }
}

/* RDMA ports (class/infiniband/DEV/ports/N: state "4: ACTIVE", rate
 * "200 Gb/sec (4X HDR)", link_layer) and network interfaces (class/net/IF:
 * operstate "up", speed in Mbit/s; virtual ones have none) */
int MPIR_Topo_link_probe(const char *sysfs, int *kind)
{
    char dir[300], port[900], buf[128];
    long best = 0;
    DIR *devs, *ports;
    const char *dev, *p;

    *kind = MPIR_TOPO_LINK_UNKNOWN;
    snprintf(dir, sizeof(dir), "%s/class/infiniband", sysfs);
    if ((devs = opendir(dir)) != NULL) {
        while ((dev = next_entry(devs)) != NULL) {
            char pdir[600];
            snprintf(pdir, sizeof(pdir), "%s/%s/ports", dir, dev);
            if ((ports = opendir(pdir)) == NULL)
                continue;
            while ((p = next_entry(ports)) != NULL) {
                double gbps;
                snprintf(port, sizeof(port), "%s/%s", pdir, p);
                if (read_attr(port, "state", buf, sizeof(buf)) || !strstr(buf, "ACTIVE") ||
                    read_attr(port, "rate", buf, sizeof(buf)) || (gbps = atof(buf)) <= 0)
                    continue;
                take_link((long) (gbps * 1000.0 + 0.5),
                          read_attr(port, "link_layer", buf, sizeof(buf)) == 0 &&
                          !strcmp(buf, "Ethernet") ? MPIR_TOPO_LINK_ROCE :
                          MPIR_TOPO_LINK_INFINIBAND, &best, kind);
            }
            closedir(ports);
        }
        closedir(devs);
    }
    snprintf(dir, sizeof(dir), "%s/class/net", sysfs);
    if ((devs = opendir(dir)) != NULL) {
        while ((dev = next_entry(devs)) != NULL) {
            long mbps;
            snprintf(port, sizeof(port), "%s/%s", dir, dev);
            if (read_attr(port, "operstate", buf, sizeof(buf)) || strcmp(buf, "up") ||
                (mbps = MPIR_Topo_net_speed(sysfs, dev)) <= 0)
                continue;
            take_link(mbps, MPIR_TOPO_LINK_ETHERNET, &best, kind);
        }
        closedir(devs);
    }
    return (int) (best < 1L << 30 ? best : 1L << 30);
}

static int ceil_log2(long long n)
{
    int d = 0;
    while ((1LL << d) < n)
        d++;
    return d;
}

/* the largest power of two not above n */
static long long pof2_below(long long n)
{
    long long q = 1;
    while (2 * q <= n)
        q *= 2;
    return q;
}

/* MPICH's built-in tuning (maint/tuning/coll/mpir/generic.json) runs
 * iallreduce and ireduce by recursive doubling and the binomial tree up
 * to this many bytes */
#define MPIR_TOPO_MODEL_NB_SHORT 2048

/* Allgather among the group-g leaders of nn nodes, m bytes per process,
 * ppl processes per leader group (the node's processes over its leaders),
 * ppn processes per node:
 *   ring      (nn-1) steps of one group portion G = ppl.m, one after the
 *             other; each portion is copied out by every local process
 *             while the next step runs, so the copy-out of the nn.ppn.m
 *             bytes overlaps the ring but for its last portion:
 *             max((nn-1).(B+G), nn.ppn.m/R) + ppn.m/R
 *   log-step  Bruck or recursive doubling: ceil(log2 nn) messages, the
 *             same (nn-1).G bytes, and the copy-out after it:
 *             ceil(log2 nn).B + (nn-1).G + nn.ppn.m/R
 * On 2 nodes both send one message and the ring wins (it overlaps); on
 * many nodes small calls pay (nn-1) latencies in the ring, ceil(log2 nn)
 * in the log-step exchange; large calls are bound by the same bytes and
 * the ring's overlap wins again.  Ties go to the ring (measured). */
int MPIR_Topo_model_allgather_leaders(const MPIR_Topo_model_t * md, int nn, int ppn, int ppl,
                                      long long m, double *ring, double *logstep)
{
    double B = md->net_latency, R = md->mem_speedup;
    double G = (double) ppl * m, out = (double) nn * ppn * m / R;
    double net_ring = (double) (nn - 1) * (B + G);

    *ring = (net_ring > out ? net_ring : out) + (double) ppn * m / R;
    *logstep = ceil_log2(nn) * B + (double) (nn - 1) * G + out;
    return nn > 2 && *logstep < *ring ? MPIR_TOPO_MODEL_LOGSTEP : MPIR_TOPO_MODEL_RING;
}

/* The leaders' step of an allreduce (or reduce) of c bytes among nn
 * leaders, q the largest power of two <= nn, L = log2 q, and, where nn is
 * not a power of two, the nn - q extra leaders folded in first and sent
 * the result after (MPICH's algorithms: E = 2.(B + c) + c/F, E = 0 else):
 *   doubling  recursive doubling (the binomial tree for reduce): L steps
 *             each of one message of c and a reduction of c:
 *             L.(B + c + c/F) + E
 *   split     reduce-scatter by recursive halving, then allgather
 *             (gather for reduce): 2L messages, (q-1)/q.c reduced and
 *             2 (q-1)/q.c sent: 2L.B + (q-1)/q.(2c + c/F) + E
 * Doubling sends L.c where split sends under 2c, at twice the latencies:
 * on many nodes the crossover nears c = B (L.B more latency against
 * (L-2).c more bytes), on few it is higher (4 nodes: c < 4 B, reductions
 * aside; 2 nodes: the same bytes, so only the halved reduction, c/(2F),
 * pays for the second latency).  The split needs count >= q. */
int MPIR_Topo_model_reduce_leaders(const MPIR_Topo_model_t * md, int nn, long long c,
                                   long long count, double *doubling, double *split)
{
    double B = md->net_latency, F = md->red_speedup;
    long long q = pof2_below(nn);
    int L = ceil_log2(q);
    double E;

    E = q < nn ? 2.0 * (B + c) + c / F : 0.0;
    *doubling = L * (B + c + c / F) + E;
    *split = 2.0 * L * B + (double) (q - 1) / q * (2.0 * c + c / F) + E;
    return count >= q && *split < *doubling ? MPIR_TOPO_MODEL_SPLIT : MPIR_TOPO_MODEL_DOUBLING;
}

/* An allreduce of c bytes across nn nodes, k leaders per node, where the
 * node's slot holds rounds of r bytes (c > r: the slot over the node's
 * processes):
 *   rounds  round i's leaders' step (each leader r/k of it, doubling or
 *           split as MPICH's nonblocking tuning picks) while the node
 *           copies round i+1 in, reduces it and copies round i-1 out:
 *           s(r) + ceil(c/r).max(net(r/k), s(r)) with s(r) = 2r/R + r/F
 *   once    the node reduces the whole call (rounds without a network
 *           step), each of ko leaders copying its share of each round
 *           out, one step per leader on its c/ko, then the leaders copy
 *           their shares into the slots while the node copies the rounds
 *           before out: c/R + c/F + c/(ko.R) + net(c/ko) + c/R
 *           (ko = k for allreduce; reduce's once has one leader)
 * Each round pays the step's latencies (log2 nn of them, twice for the
 * split): where r is small against them (many processes per node share
 * a slot, many nodes, a large B) the rounds cost several times the
 * call's bytes, where the whole call pays them once and overlaps
 * nothing.  count: the call's elements (the split needs enough of
 * them).  Once only where it is predicted md->once_margin times as
 * fast (see the constants). */
int MPIR_Topo_model_allreduce_steps(const MPIR_Topo_model_t * md, int nn, int k, int ko,
                                    long long c, long long r, long long count, double *rounds,
                                    double *once)
{
    double R = md->mem_speedup, F = md->red_speedup, d, sp, net_r, net_c, local_r;
    long long nr = (c + r - 1) / r, rk = (r + k - 1) / k, ck = (c + ko - 1) / ko;

    /* the rounds' steps are MPICH's nonblocking allreduce or reduce on
     * the leaders, whose built-in tuning takes the split above 2 KiB
     * where the count reaches the largest power of two up to nn, whatever the
     * latency (on 16 InfiniBand nodes it doubles the rounds' latencies:
     * taking the model's own choice there kept rounds SimGrid found 2x
     * slower than once) */
    MPIR_Topo_model_reduce_leaders(md, nn, rk, count / nr / k, &d, &sp);
    net_r = rk > MPIR_TOPO_MODEL_NB_SHORT && count / nr / k >= pof2_below(nn) ? sp : d;
    local_r = 2.0 * r / R + r / F;
    *rounds = local_r + nr * (net_r > local_r ? net_r : local_r);
    net_c = MPIR_Topo_model_reduce_leaders(md, nn, ck, count / ko, &d, &sp) ==
        MPIR_TOPO_MODEL_SPLIT ? sp : d;
    *once = 2.0 * c / R + c / F + (double) ck / R + net_c;
    return *once * md->once_margin < *rounds ? MPIR_TOPO_MODEL_ONCE :
        MPIR_TOPO_MODEL_ROUNDS;
}

/* The tree of nodes of a bcast of m bytes on nn nodes, in chunks of at
 * most slot, where the binomial tree sends b messages per leader:
 *   binomial  d.(b.B + m)             the root's node sends it d times;
 *   chain     (nn - 2 + n).(B + m/n)  n chunks; every node sends each once,
 *                                     after nn - 2 chunks fill the line;
 *                                     least at n = sqrt((nn - 2).m / B).
 * tree is MPIR_TOPO_TREE_AUTO, _BINOMIAL or _CHAIN (forced); min_chunk the
 * smallest chunk of the chain.  Returns 1 for the chain, with *chunk and
 * *cost; a tie goes to the chain (each NIC sends the message once). */
int MPIR_Topo_model_bcast_nodes(const MPIR_Topo_model_t * md, int nn, long long m, long long slot,
                                long long b, int tree, long long min_chunk, long long *chunk,
                                double *cost)
{
    double B = md->net_latency;
    long long nslots = (m + slot - 1) / slot, n, c;
    double binomial = ceil_log2(nn) * (b * B + m), chain;
    int use_chain;

    if (nn < 3) {
        /* (one tree: the chain of 2 nodes is the binomial tree) */
        *chunk = slot;
        *cost = binomial;
        return tree == MPIR_TOPO_TREE_CHAIN;
    }
    /* (the largest n with n.n.B <= (nn - 2).m, without libm) */
    for (n = 1; n < m / min_chunk && (n + 1) * (n + 1) * B <= (double) (nn - 2) * m; n++);
    if (n < nslots)
        n = nslots;
    c = ((m + n - 1) / n + 63) & ~63LL;
    if (c > slot)
        c = slot;
    n = (m + c - 1) / c;
    chain = (nn - 2 + n) * (B + (double) m / n);

    if (tree != MPIR_TOPO_TREE_AUTO)
        use_chain = tree == MPIR_TOPO_TREE_CHAIN;
    else
        use_chain = chain <= binomial;
    *chunk = use_chain ? c : slot;
    *cost = use_chain ? chain : binomial;
    return use_chain;
}

/* MPICH's scatter + allgather bcast of m bytes among p processes, one per
 * node: a binomial scatter (ceil(log2 p) messages), then an allgather by
 * recursive doubling where p is a power of two (log2 p messages; MPICH's
 * scatter_recursive_doubling_allgather) or else a ring (p - 1 messages;
 * scatter_ring_allgather), each moving (p-1)/p m through a NIC:
 *   doubling  2 log2(p).B + 2 (p-1)/p m
 *   ring      (p - 1 + ceil(log2 p)).B + 2 (p-1)/p m
 * Against the tree of nodes it sends the message's bytes twice, but pays
 * log2 p latencies where the binomial tree pays log2 p message times and
 * the chain p - 2 chunk times: on many nodes it wins from tens of KiB. */
double MPIR_Topo_model_bcast_scatter(const MPIR_Topo_model_t * md, int p, long long m,
                                     int *doubling)
{
    int d = ceil_log2(p);

    *doubling = (1 << d) == p;
    return (*doubling ? 2.0 * d : (double) (p - 1 + d)) * md->net_latency +
        2.0 * m * (p - 1) / p;
}

/* A bcast of m bytes across nn nodes of several processes, one leader per
 * node: the tree of nodes (cost tree, in chunks of tree_chunk, from
 * MPIR_Topo_model_bcast_nodes: its chunks overlap the node's copies but
 * the last, min(m, tree_chunk)/R more), or the whole message in one step
 * of MPICH's scatter + allgather among the leaders, into each leader's
 * buffer, which the node then copies out (m/R; on the root's node, where
 * the root is not its leader, that leader first gets the message through
 * the node: m/R more).  Never on 2 nodes.  Returns 1 for the scatter,
 * with *doubling (its allgather) and *cost. */
int MPIR_Topo_model_bcast_leaders_scatter(const MPIR_Topo_model_t * md, int nn, long long m,
                                          double tree, long long tree_chunk, int root_leads,
                                          int *doubling, double *cost)
{
    double net = MPIR_Topo_model_bcast_scatter(md, nn, m, doubling);

    tree += (double) (m < tree_chunk ? m : tree_chunk) / md->mem_speedup;
    *cost = net + (root_leads ? 1.0 : 2.0) * m / md->mem_speedup;
    /* (2 nodes: the allgather sends the root's node back the half it
     * has, a latency more than the tree for the same bytes) */
    return nn > 2 && *cost < tree;
}
