#!/bin/bash
# rounds vs once on the emulated cluster, alternating launches
cd /work/main
out=/tmp/steps-cluster; mkdir -p $out
/work/main/install-ofi/bin/mpicc -O2 -o $out/coll_bench bench/coll_bench.c || exit 1
i=0
for rep in 1 2; do
  for mode in rounds once; do
    for rate in 1gbit 250mbit; do
      i=$((i+1))
      bench/cluster.sh --nodes 4 --ppn 2 --rate $rate --timeout 600 mpiexec -n 8 -bind-to core \
        -env MPIR_CVAR_TOPO_ALLREDUCE_LEADERS_STEP $mode \
        $out/coll_bench -c allreduce -a topo_pipeline,reduce_scatter_allgather,default -m 262144 -M 4194304 -s 4 -i 20 -w 2 -T 1 -R 1 -v -l $mode-$rate > $out/run$i-$mode-$rate.csv 2>$out/run$i.err
      echo "run $i $mode $rate rc=$?"
    done
  done
done
