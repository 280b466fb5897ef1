/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The engine's cost model (src/mpi/coll/topo/topo_model.c, the same code)
 * for bench/scale/run.sh and colls.py.  Reads lines and prints, per line:
 *   "NODES PPN BYTES B R" or "allgather NODES PPN BYTES B R"
 *        -> "choice,ring,logstep" (ring or logstep)
 *   "bcast NODES BYTES B SLOT [R]"
 *        -> "choice,cost,chunk" (chain, binomial, or the leaders' scatter +
 *           allgather with the root leading its node; the chunk the chain
 *           takes where it runs, forced or chosen)
 *   "allreduce NODES BYTES B [F]"
 *        -> "choice,doubling,split" (one round of BYTES, doubles)
 *   "steps NODES BYTES ROUND B [R [F [K [M]]]]"
 *        -> "choice,rounds,once" (an allreduce of BYTES in rounds of ROUND,
 *           K leaders per node (default 1), doubles: the leaders' step per
 *           round or once; R the memory's speed over the NIC's, F a
 *           reduction's, M the margin once needs, by default the engine's
 *           defaults)
 *   "link MBPS KIND"
 *        -> "B,R,F,M": the constants the engine takes on a network of ports
 *           of MBPS Mbit/s of that kind (MPIR_TOPO_LINK_*: 1 Ethernet,
 *           2 RoCE, 3 InfiniBand; MPIR_Topo_model_for_link)
 * Predictions are in bytes of NIC time. */

#include "topo_logic.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    char line[256], what[16];
    int nn, ppn, n, k;
    long long m, slot;
    double B, R, F, a, b;

    while (fgets(line, sizeof(line), stdin)) {
        MPIR_Topo_model_t md = MPIR_Topo_model_default;
        if ((n = sscanf(line, "bcast %d %lld %lf %lld %lf", &nn, &m, &B, &slot, &R)) >= 4) {
            long long chunk;
            md.net_latency = B;
            if (n == 5)
                md.mem_speedup = R;
            long long chain_chunk;
            double c;
            int chain = MPIR_Topo_model_bcast_nodes(&md, nn, m, slot, (m + slot - 1) / slot,
                                                    MPIR_TOPO_TREE_AUTO, 4096, &chunk, &a);
            int doubling;
            /* (the chain's own chunk, as where it is forced) */
            MPIR_Topo_model_bcast_nodes(&md, nn, m, slot, (m + slot - 1) / slot,
                                        MPIR_TOPO_TREE_CHAIN, 4096, &chain_chunk, &c);
            if (MPIR_Topo_model_bcast_leaders_scatter(&md, nn, m, a, chunk, 1, &doubling, &b))
                printf("scatter,%.1f,%lld\n", b, chain_chunk);
            else
                printf("%s,%.1f,%lld\n", chain ? "chain" : "binomial", a, chain_chunk);
        } else if (sscanf(line, "link %lld %d", &m, &k) == 2) {
            md = MPIR_Topo_model_for_link((long) m, k);
            printf("%.1f,%.4f,%.4f,%.2f\n", md.net_latency, md.mem_speedup, md.red_speedup,
                   md.once_margin);
        } else if ((n = sscanf(line, "allreduce %d %lld %lf %lf", &nn, &m, &B, &F)) >= 3) {
            md.net_latency = B;
            if (n == 4)
                md.red_speedup = F;
            int c = MPIR_Topo_model_reduce_leaders(&md, nn, m, m / 8, &a, &b);
            printf("%s,%.1f,%.1f\n", c == MPIR_TOPO_MODEL_SPLIT ? "split" : "doubling", a, b);
        } else if ((n = sscanf(line, "steps %d %lld %lld %lf %lf %lf %d %lf", &nn, &m, &slot, &B,
                               &R, &F, &k, &a)) >= 4) {
            if (n >= 8)
                md.once_margin = a;
            md.net_latency = B;
            if (n >= 5)
                md.mem_speedup = R;
            if (n >= 6)
                md.red_speedup = F;
            if (n < 7)
                k = 1;
            int c = MPIR_Topo_model_allreduce_steps(&md, nn, k, k, m, slot, m / 8, &a, &b);
            printf("%s,%.1f,%.1f\n", c == MPIR_TOPO_MODEL_ONCE ? "once" : "rounds", a, b);
        } else if (sscanf(line, "%d %d %lld %lf %lf", &nn, &ppn, &m, &B, &R) == 5 ||
                   (sscanf(line, "%15s %d %d %lld %lf %lf", what, &nn, &ppn, &m, &B, &R) == 6 &&
                    strcmp(what, "allgather") == 0)) {
            md.net_latency = B;
            md.mem_speedup = R;
            int c = MPIR_Topo_model_allgather_leaders(&md, nn, ppn, ppn, m, &a, &b);
            printf("%s,%.1f,%.1f\n", c == MPIR_TOPO_MODEL_LOGSTEP ? "logstep" : "ring", a, b);
        } else {
            fprintf(stderr, "model_choice: cannot read '%s'\n", line);
            return 2;
        }
        fflush(stdout);
    }
    return 0;
}
