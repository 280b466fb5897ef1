/*
 * Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
 */

/* The engine's cost model (src/mpi/coll/topo/topo_model.c, the same code)
 * for bench/scale/run.sh: reads lines "NODES PPN BYTES B R" and prints
 * "choice,ring,logstep" (choice ring or logstep, predictions in bytes of
 * NIC time). */

#include "topo_logic.h"
#include <stdio.h>

int main(void)
{
    int nn, ppn;
    long long m;
    double B, R, ring, logstep;

    while (scanf("%d %d %lld %lf %lf", &nn, &ppn, &m, &B, &R) == 5) {
        MPIR_Topo_model_t md = MPIR_Topo_model_default;
        md.net_latency = B;
        md.mem_speedup = R;
        int c = MPIR_Topo_model_allgather_leaders(&md, nn, ppn, ppn, m, &ring, &logstep);
        printf("%s,%.1f,%.1f\n", c == MPIR_TOPO_MODEL_LOGSTEP ? "logstep" : "ring", ring, logstep);
    }
    return 0;
}
