#!/bin/bash
# bcast's binomial tree of nodes (MPIR_CVAR_TOPO_BCAST_NODE_TREE=binomial),
# topo_pipeline: each leader's sends to all its children at once (old: the
# library of e4d1e68, copied aside before the rebuild) or one child after
# the other (new), alternating launches, through LD_LIBRARY_PATH (coll_bench's
# RUNPATH gives way to it)
cd /work/main
out=${OUT:-/tmp/bcast-children}; mkdir -p $out
/work/main/install-ofi/bin/mpicc -O2 -o $out/coll_bench bench/coll_bench.c || exit 1
i=0
run() {  # nodes rate min max
  for lib in old new; do
    i=$((i+1))
    if [ $lib = old ]; then ld=/tmp/install-ofi-old/lib; else ld=/work/main/install-ofi/lib; fi
    bench/cluster.sh --nodes $1 --ppn 2 --rate $2 --timeout 600 mpiexec -n $(($1 * 2)) -bind-to core \
      -env LD_LIBRARY_PATH $ld -env MPIR_CVAR_TOPO_BCAST_NODE_TREE binomial \
      $out/coll_bench -c bcast -a topo_pipeline -m $3 -M $4 -s 2 -i 30 -w 3 -T 1 -R 1 -v \
      -l $lib-$1x2-$2 > $out/run$i-$lib-$1x2-$2.csv 2>$out/run$i.err
    echo "run $i $lib $1x2 $2 rc=$?"
  done
}
for rep in 1 2; do
  run 4 250mbit 32768 262144
  run 4 100mbit 32768 262144
  run 8 100mbit 65536 524288
done
