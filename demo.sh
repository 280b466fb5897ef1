#!/bin/sh
#
# mpich-topo demo: one command on a fresh Debian machine. Installs the
# dependencies, builds MPICH 4.0.2 with our tree and shows, on this machine:
#   1. the topology mpich-topo builds for a communicator (distances, the
#      distance-aware ring and bcast tree),
#   2. which algorithms mpich-topo's default selection picks (its built-in
#      tuning picks ours where bench/ shows them ahead),
#   3. the bytes each collective puts on the (emulated) network per call,
#      against the lower bound: deterministic, so meaningful even here,
#   4. allgather, bcast and allreduce timings: stock MPICH 4.0.2's default
#      selection, mpich-topo's default, stock algorithms forced, and the new
#      topo_ring / topo_tree / topo_pipeline forced, with ratios to stock.
# The processes are placed round-robin over 2 nodes, bound to cores: the
# placement where rank order and locality disagree. As root, with ch4:ofi,
# the nodes are an emulated cluster (bench/cluster.sh): 2 network
# namespaces whose NICs are shaped to 1 Gbit/s, so MPICH learns the nodes
# from Hydra and its traffic between them crosses a network slower than
# memory. Elsewhere they are emulated nodes on one (MPIR_CVAR_NUM_CLIQUES=2)
# with traffic over loopback TCP (FI_PROVIDER=tcp; with ch4:ucx it would
# take UCX's shared memory).
#
# Usage: ./demo.sh [-n NPROCS] [--max BYTES] [--device ofi|ucx]
# Output is also kept in build-DEVICE/demo/ (CSV per run).

set -eu
top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
np=4
max=1048576
dev=ofi
while [ $# -gt 0 ]; do
    case $1 in
        -n) np=$2; shift ;;
        --max) max=$2; shift ;;
        --device) dev=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done

mkdir -p .cache
. "$top/maint/topo-common.sh"
topo_ensure_deps
topo_autogen
topo_build "$dev"

prefix=$top/install-$dev
out=$top/build-$dev/demo
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 -o "$out/coll_bench" bench/coll_bench.c
# MPICH 4.0.2's own tuning files: "stock" below is MPICH's default selection
sh maint/stock-tuning.sh "$out/stock"
stock="MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$out/stock/mpir.json MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=$out/stock/ch4.json"

[ "$dev" = ofi ] && export FI_PROVIDER=tcp
# launch PROGRAM ARGS: on the emulated cluster where this machine allows it
cluster=no
if [ "$dev" = ofi ] && [ "$(id -u)" = 0 ] && ip netns add "demo-probe-$$" >/dev/null 2>&1; then
    ip netns del "demo-probe-$$"
    cluster=yes
fi
if [ $cluster = yes ]; then
    nodes_desc="2 namespaces with 1 Gbit/s NICs (bench/cluster.sh)"
    nic=eth0
    launch() {
        bash "$top/bench/cluster.sh" --quiet --nodes 2 --ppn $(((np + 1) / 2)) --placement cyclic \
            --rate 1gbit --prefix "$prefix" mpiexec -n "$np" -bind-to core "$@"
    }
else
    nodes_desc="2 emulated nodes on one (MPIR_CVAR_NUM_CLIQUES=2)"
    nic=lo
    export MPIR_CVAR_NUM_CLIQUES=2
    launch() { "$prefix/bin/mpiexec" -n "$np" -bind-to core "$@"; }
fi
# with_env NAME=VALUE... -- PROGRAM ARGS: launch with those settings
with_env() {
    (
        while [ "$1" != -- ]; do export "$1"; shift; done
        shift
        launch "$@"
    )
}

echo
echo "== mpich-topo demo (ch4:$dev): $np processes, round-robin over $nodes_desc, bound to cores"
echo "   machine: $(nproc) cores, $(lscpu 2>/dev/null | sed -n 's/^NUMA node(s): *//p' || echo '?') NUMA node(s)"
echo
echo "== 1. the topology mpich-topo builds (MPIR_CVAR_TOPO_PRINT=1)"
with_env MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring -- \
    "$out/coll_bench" -c allgather -m 8 -M 8 -i 1 -w 0 2>&1 >/dev/null |
    grep 'mpich-topo' | head -20

echo
echo "== 2. what mpich-topo's default selection picks (MPIR_CVAR_COLL_TRACE=1)"
for c in allgather bcast; do
    with_env MPIR_CVAR_COLL_TRACE=1 -- "$out/coll_bench" -c $c -m 1024 -M "$max" -i 10 -w 1 2>&1 >/dev/null |
        grep -E "mpich-topo: +$c " | sed 's/^mpich-topo: */   /'
done
echo "   (bcast: with device collectives on, CH4 runs these on its node/node_roots"
echo "    sub-communicators; large messages use the netmod bcast on the whole communicator)"

if [ "$dev" = ofi ] && [ -r /sys/class/net/lo/statistics/tx_bytes ]; then
    traffic() {   # coll bytes calls CVAR=value... -> bytes on the network per call
        # coll_bench -n: loopback bytes around k back-to-back calls minus the
        # same without calls (the benchmark's untimed priming calls excluded)
        c=$1; m=$2; k=$3; shift 3
        with_env "$@" -- "$out/coll_bench" -c "$c" -H \
            -m "$m" -M "$m" -n "$k" -I $nic -i 1 -w 0 |
            topo_csv - 'f("net_bytes") ~ /^[0-9]+$/ { print f("net_bytes"); exit }'
    }
    m=1048576
    nn=2
    ppn=$((np / nn))
    echo
    echo "== 3. bytes on the network per call ($nic counters, minus a run"
    echo "      with zero calls), m = $m bytes, $nn nodes x $ppn processes, lower bounds:"
    echo "      allgather N(N-1)Pm = $((nn * (nn - 1) * ppn * m)), bcast (N-1)m = $(((nn - 1) * m))"
    ag_bound=$((nn * (nn - 1) * ppn * m))
    bc_bound=$(((nn - 1) * m))
    printf '   %-10s %-22s %14s %8s\n' collective algorithm bytes/call x-bound
    for a in stock default ring recursive_doubling brucks topo_ring topo_pipeline topo_multileader; do
        cv=""
        [ $a = stock ] && cv=$stock
        case $a in stock|default) ;; *) cv=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=$a ;; esac
        b=$(traffic allgather $m 4 $cv)
        printf '   %-10s %-22s %14d %7.2fx\n' allgather $a "$b" "$(awk -v b="$b" -v d="$ag_bound" 'BEGIN { print b / d }')"
    done
    for a in stock default binomial scatter_ring_allgather topo_tree topo_pipeline; do
        cv="MPIR_CVAR_BCAST_INTRA_ALGORITHM=$a MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0"
        case $a in stock) cv=$stock ;; default) cv="" ;; topo_*) cv=MPIR_CVAR_BCAST_INTRA_ALGORITHM=$a ;; esac
        # shellcheck disable=SC2086
        b=$(traffic bcast $m 4 $cv)
        printf '   %-10s %-22s %14d %7.2fx\n' bcast $a "$b" "$(awk -v b="$b" -v d="$bc_bound" 'BEGIN { print b / d }')"
    done
fi

echo
echo "== 4. timings (microseconds per call, mean over processes; every result validated)"
run_set() {   # coll label CVAR=value ...
    c=$1
    lbl=$2
    shift 2
    with_env "$@" -- "$out/coll_bench" -c "$c" -H \
        -m 1024 -M "$max" -i 40 -w 3 -v -l "$lbl" >"$out/$c-$lbl.csv"
    if topo_csv "$out/$c-$lbl.csv" 'f("errors") != 0 { bad = 1 } END { exit bad }'; then :; else
        echo "   ERROR: $c $lbl returned wrong results" >&2
        exit 1
    fi
}
table() {     # coll label...; ratios = first label (stock) / second, / last
    c=$1
    shift
    printf '   %-9s' bytes
    for l in "$@"; do printf ' %14s' "$l"; done
    printf ' %15s %15s\n' "$1/$2" "$1/$(eval echo \${$#})"
    # the files side by side: column a of file i is at a + w.i
    paste -d, $(for l in "$@"; do echo "$out/$c-$l.csv"; done) | awk -F, -v n=$# '
        NR == 1 { w = NF / n; for (i = 1; i <= w; i++) col[$i] = i; next }
        { t = col["avg_us"]
          printf "   %-9s", $(col["bytes"])
          for (i = 0; i < n; i++) printf " %14.1f", $(t + w * i)
          printf " %14.2fx %14.2fx\n", $t / $(t + w), $t / $(t + w * (n - 1)) }'
}

echo "-- allgather (bytes per process)"
# shellcheck disable=SC2086
run_set allgather stock $stock
run_set allgather default
run_set allgather ring MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=ring
run_set allgather brucks MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=brucks
run_set allgather topo_ring MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring
run_set allgather topo_pipeline MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline
table allgather stock default ring brucks topo_ring topo_pipeline

echo "-- bcast (root rotates over all processes)"
# shellcheck disable=SC2086
run_set bcast stock $stock
run_set bcast default
run_set bcast binomial MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomial MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0
run_set bcast scatter_ring MPIR_CVAR_BCAST_INTRA_ALGORITHM=scatter_ring_allgather MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0
run_set bcast topo_tree MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree
run_set bcast topo_pipeline MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline
table bcast stock default binomial scatter_ring topo_tree topo_pipeline

echo "-- allreduce (doubles, MPI_SUM)"
# shellcheck disable=SC2086
run_set allreduce stock $stock
run_set allreduce default
run_set allreduce recursive_doubling MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE=0
run_set allreduce topo_pipeline MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline
table allreduce stock default recursive_doubling topo_pipeline

echo
echo "   CSV files: $out/"
echo "   This machine has $(nproc) cores: with more processes than cores the numbers are"
echo "   dominated by scheduling; bench/ has the full benchmark suite."
