#!/bin/sh
#
# mpich-topo demo: one command on a fresh Debian machine. Installs the
# dependencies, builds MPICH 4.0.2 with our tree (ch4:ucx + POSIX shm) and
# shows, on this machine:
#   1. the topology mpich-topo builds for a communicator (distances, the
#      distance-aware ring and bcast tree),
#   2. which algorithms MPICH's default selection picks,
#   3. allgather and bcast timings: MPICH's default, stock algorithms forced,
#      and the new topo_ring / topo_tree forced, with ratios.
# The processes are placed round-robin over 2 emulated nodes
# (MPIR_CVAR_NUM_CLIQUES=2), bound to cores, which is the placement where
# rank order and locality disagree.
#
# Usage: ./demo.sh [-n NPROCS] [--max BYTES]
# Output is also kept in build-ucx/demo/ (CSV per run).

set -eu
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
np=4
max=1048576
while [ $# -gt 0 ]; do
    case $1 in
        -n) np=$2; shift ;;
        --max) max=$2; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done

mkdir -p .cache
. "$top/maint/topo-common.sh"
topo_ensure_deps
topo_autogen
topo_build ucx

prefix=$top/install-ucx
out=$top/build-ucx/demo
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 -o "$out/coll_bench" bench/coll_bench.c

export MPIR_CVAR_NUM_CLIQUES=2
launch() { "$prefix/bin/mpiexec" -n "$np" -bind-to core "$@"; }

echo
echo "== mpich-topo demo: $np processes, round-robin over 2 emulated nodes, bound to cores"
echo "   machine: $(nproc) cores, $(lscpu 2>/dev/null | sed -n 's/^NUMA node(s): *//p' || echo '?') NUMA node(s)"
echo
echo "== 1. the topology mpich-topo builds (MPIR_CVAR_TOPO_PRINT=1)"
MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring \
    launch "$out/coll_bench" -c allgather -m 8 -M 8 -i 1 -w 0 2>&1 >/dev/null |
    grep 'mpich-topo' | head -20

echo
echo "== 2. what MPICH's default selection picks (MPIR_CVAR_COLL_TRACE=1)"
for c in allgather bcast; do
    MPIR_CVAR_COLL_TRACE=1 launch "$out/coll_bench" -c $c -m 1024 -M "$max" -i 10 -w 1 2>&1 >/dev/null |
        grep -E "mpich-topo: +$c " | sed 's/^mpich-topo: */   /'
done
echo "   (bcast: with device collectives on, CH4 runs these on its node/node_roots"
echo "    sub-communicators; large messages use the netmod bcast on the whole communicator)"

echo
echo "== 3. timings (microseconds per call, mean over processes; every result validated)"
run_set() {   # coll label CVAR=value ...
    c=$1
    lbl=$2
    shift 2
    env "$@" "$prefix/bin/mpiexec" -n "$np" -bind-to core "$out/coll_bench" -c "$c" \
        -m 1024 -M "$max" -i 40 -w 3 -v -l "$lbl" >"$out/$c-$lbl.csv"
    if awk -F, '$10 != 0 { bad = 1 } END { exit bad }' "$out/$c-$lbl.csv"; then :; else
        echo "   ERROR: $c $lbl returned wrong results" >&2
        exit 1
    fi
}
table() {     # coll label...; ratio = default / last label
    c=$1
    shift
    printf '   %-9s' bytes
    for l in "$@"; do printf ' %14s' "$l"; done
    printf ' %16s\n' "default/$(eval echo \${$#})"
    paste -d, $(for l in "$@"; do echo "$out/$c-$l.csv"; done) | awk -F, -v n=$# '
        { printf "   %-9s", $5
          for (i = 0; i < n; i++) printf " %14.1f", $(8 + 10 * i)
          printf " %15.2fx\n", $8 / $(8 + 10 * (n - 1)) }'
}

echo "-- allgather (bytes per process)"
run_set allgather default
run_set allgather ring MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ring
run_set allgather brucks MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=brucks
run_set allgather topo_ring MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring
table allgather default ring brucks topo_ring

echo "-- bcast (root rotates over all processes)"
run_set bcast default
run_set bcast binomial MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomial MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0
run_set bcast scatter_ring MPIR_CVAR_BCAST_INTRA_ALGORITHM=scatter_ring_allgather MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0
run_set bcast topo_tree MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree
table bcast default binomial scatter_ring topo_tree

echo
echo "   CSV files: $out/"
echo "   This machine has $(nproc) cores: with more processes than cores the numbers are"
echo "   dominated by scheduling; bench/ has the full benchmark suite."
