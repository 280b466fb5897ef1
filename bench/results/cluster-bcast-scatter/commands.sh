#!/bin/bash
# bcast topo_pipeline across 8 emulated nodes x 2, each tree of nodes forced
# (MPIR_CVAR_TOPO_BCAST_NODE_TREE: binomial, chain, and the leaders'
# scatter + allgather), launches alternating between them, twice
cd /work/main
out=${OUT:-/tmp/bcast-scatter}; mkdir -p $out
bin=$(mktemp -d)
/work/main/install-ofi/bin/mpicc -O2 -o $bin/coll_bench bench/coll_bench.c || exit 1
i=0
for rep in 1 2; do
  for tree in binomial chain scatter; do
    i=$((i+1))
    bench/cluster.sh --nodes 8 --ppn 2 --rate 100mbit --timeout 600 mpiexec -n 16 -bind-to core \
      -env MPIR_CVAR_TOPO_BCAST_NODE_TREE $tree \
      $bin/coll_bench -c bcast -a topo_pipeline -m 65536 -M 1048576 -s 2 -i 20 -w 3 -T 1 -R 1 -v \
      -l $tree > $out/run$i-$tree.csv 2>$out/run$i.err
    echo "run $i $tree rc=$?"
  done
done
