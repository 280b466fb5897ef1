#!/bin/bash
# Multi-node timings that mean something on one small machine: the suite of
# bench/run.sh (every allgather, bcast, allreduce and reduce algorithm, MPICH's
# default selection, mpich-topo's, and Open MPI as a peer) run on the
# emulated cluster of bench/cluster.sh, whose shaped NICs are slower than
# memory, as on real clusters.
#
#   bench/cluster-suite.sh [--nodes "2"] [--ppn "1 2"] [--rates "1gbit 500mbit"]
#                          [--placements "block cyclic shuffle"] [--min BYTES]
#                          [--max BYTES] [--step K] [--colls LIST] [--latency-bytes B]
#                          [--no-peers] [--ompi 5|4] [--smoke] [--prebuilt DIR]
#                          [--out DIR]
#
#   --nodes, --ppn  the cluster shapes (every combination)
#   --rates         NIC rates, tc units; every rate R is also run at R/2:
#                   a size counts as network-bound at R only if the time of
#                   MPICH's default and of mpich-topo's default both grow by
#                   1.7x or more at R/2. Other sizes are labelled CPU-bound
#                   (this machine's cores, not the network, set their time)
#                   and decide nothing.
#   --placements    block, cyclic (launchers' placement) and shuffle (ranks
#                   split with random keys inside the benchmark)
#   --min/--max/--step  sizes per process, MIN times STEP up to MAX
#                   (default 4 KiB to 16 MiB, step 4)
#   --colls LIST    some of allgather,bcast,allreduce,reduce (default the
#                   first three)
#   --latency-bytes B  MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES for mpich-topo,
#                   what the network is, as a centre sets it for its fabric:
#                   the bytes a NIC moves in a message's latency (default:
#                   the first rate times 64 us; a small message between two
#                   emulated nodes takes 13 us with 2 processes on the 2
#                   cores, several times that with 8 sharing them)
#   --ompi V        the peer: 5 (default) is Open MPI 5.0.7 from
#                   bench/install-peers.sh, two columns: its default (coll/han
#                   within and across nodes) and tuned alone (--mca coll ^han);
#                   4 is Debian bookworm's 4.1.4: its default and coll_han
#                   raised to priority 100 (4.1.4's default leaves han aside).
#                   Both over ob1, shared memory within a node and tcp between
#                   (bench/cluster.sh --ompi)
#   --prebuilt DIR  take the benchmark (DIR/coll_bench, DIR/coll_bench-openmpi)
#                   and MPICH 4.0.2's stock tuning (DIR/stock/*.json) from DIR
#                   instead of building them: for a machine with neither a
#                   compiler nor the MPICH source (bench/device-pack.sh)
#   --smoke         2 nodes x 1 and x 2, three sizes, one rate, every
#                   algorithm validated; no timing claims (check.sh)
#   --out DIR       results (default bench/results/cluster-local): bench.csv
#                   (bench/coll_bench.c's columns after rate_kbit), counters,
#                   commands.txt, log.txt, meta.txt and summary.md
#
# Needs root (bench/cluster.sh) and an installed ch4:ofi MPICH (install-ofi,
# bench/run.sh builds it); Open MPI from bench/install-peers.sh.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
nodes_l="2"
ppn_l="1 2"
rates="1gbit 500mbit"
placements="block cyclic shuffle"
min=4096
max=16777216
step=4
peers=yes
smoke=no
out=
latency_bytes=
colls=allgather,bcast,allreduce
prebuilt=
ompi=5
cmdline="bench/cluster-suite.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) nodes_l=$2; shift ;;
        --ppn) ppn_l=$2; shift ;;
        --rates) rates=$2; shift ;;
        --placements) placements=$2; shift ;;
        --min) min=$2; shift ;;
        --max) max=$2; shift ;;
        --step) step=$2; shift ;;
        --latency-bytes) latency_bytes=$2; shift ;;
        --colls) colls=$2; shift ;;
        --no-peers) peers=no ;;
        --ompi) ompi=$2; shift ;;
        --smoke) smoke=yes ;;
        --prebuilt) prebuilt=$(cd "$2" && pwd); shift ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "cluster-suite.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
if [ $smoke = yes ]; then
    nodes_l=2 ppn_l="1 2" rates=1gbit placements="block cyclic" min=4096 max=1048576 step=16 peers=no
fi
prefix=$top/install-ofi
[ -x "$prefix/bin/mpicc" ] ||
    { echo "cluster-suite.sh: no MPICH in $prefix (bench/run.sh --smoke or demo.sh builds it)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "cluster-suite.sh: needs root (bench/cluster.sh)" >&2; exit 2; }

# a tc rate in kbit/s, and half of it
kbit_of() {
    awk -v r="$1" 'BEGIN {
        n = r + 0; u = tolower(substr(r, length(n "") + 1))
        f["kbit"] = 1; f["mbit"] = 1000; f["gbit"] = 1000000
        if (n <= 0 || !(u in f)) { print "bad"; exit }
        printf "%d\n", n * f[u] }'
}
for r in $rates; do
    [ "$(kbit_of "$r")" != bad ] ||
        { echo "cluster-suite.sh: rate '$r': give NUMBER followed by kbit, mbit or gbit" >&2; exit 2; }
done

# one network for every rate and its half: the half-rate runs must make
# the same choices for the growth check to compare like with like
if [ -z "$latency_bytes" ]; then
    latency_bytes=$(( $(kbit_of "${rates%% *}") * 1000 / 8 * 64 / 1000000 ))
fi
case $latency_bytes in ''|*[!0-9]*) echo "cluster-suite.sh: --latency-bytes needs a number" >&2; exit 2 ;; esac
net=(-genv MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES "$latency_bytes")

# every rate and its half, each once, fastest first
kbits=$(for r in $rates; do
    k=$(kbit_of "$r")
    echo "$k"
    [ $smoke = yes ] || echo $((k / 2))
done | sort -rnu)

if [ -z "$out" ]; then
    out=$top/bench/results/cluster-local
    [ $smoke = yes ] && out=$(mktemp -d "${TMPDIR:-/tmp}/cluster-smoke.XXXXXX")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
csv=$out/bench.csv log=$out/log.txt cmds=$out/commands.txt
: >"$log"
: >"$cmds"
say() { echo "$*" | tee -a "$log" >&2; }
tmpd=$(mktemp -d "${TMPDIR:-/tmp}/cluster-suite.XXXXXX")
trap 'rm -rf "$tmpd"' EXIT

bin=$tmpd/coll_bench
ompibin=
if [ -n "$prebuilt" ]; then
    bin=$prebuilt/coll_bench
    [ -x "$bin" ] || { echo "cluster-suite.sh: no $bin" >&2; exit 2; }
    cp -r "$prebuilt/stock" "$tmpd/stock"
else
    "$prefix/bin/mpicc" -O2 -std=c99 -o "$bin" "$top/bench/coll_bench.c"
    # MPICH 4.0.2's own tuning: what "MPICH default" means
    sh "$top/maint/stock-tuning.sh" "$tmpd/stock"
fi
case $ompi in 5|4) ;; *) echo "cluster-suite.sh: --ompi is 5 or 4" >&2; exit 2 ;; esac
ompi5=$top/.cache/openmpi-5.0.7
if [ $peers = yes ] && [ $ompi = 5 ]; then
    if [ -n "$prebuilt" ] || [ ! -x "$ompi5/bin/mpicc" ]; then
        say "note: no Open MPI 5.0.7 (bench/install-peers.sh; --ompi 4 for Debian's 4.1.4): no peer runs"
        peers=no
    else
        ompibin=$tmpd/coll_bench-openmpi5
        "$ompi5/bin/mpicc" -O2 -std=c99 -o "$ompibin" "$top/bench/coll_bench.c"
    fi
elif [ $peers = yes ]; then
    if ! command -v mpirun.openmpi >/dev/null; then
        say "note: Open MPI not installed (bench/install-peers.sh): no peer runs"
        peers=no
    elif [ -n "$prebuilt" ] && [ -x "$prebuilt/coll_bench-openmpi" ]; then
        ompibin=$prebuilt/coll_bench-openmpi
    elif command -v mpicc.openmpi >/dev/null; then
        ompibin=$tmpd/coll_bench-openmpi
        mpicc.openmpi -O2 -std=c99 -o "$ompibin" "$top/bench/coll_bench.c"
    else
        say "note: no Open MPI compiler and no prebuilt benchmark for it: no peer runs"
        peers=no
    fi
fi
stock=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmpd/stock/mpir.json"
    -genv MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE "$tmpd/stock/ch4.json")
case ",$colls," in
    *[!a-z,]* | *,,* | ,,) echo "cluster-suite.sh: --colls takes some of allgather,bcast,allreduce,reduce" >&2; exit 2 ;;
esac
for c in ${colls//,/ }; do
    case $c in allgather|bcast|allreduce|reduce) ;;
        *) echo "cluster-suite.sh: --colls: '$c' is not allgather, bcast, allreduce or reduce" >&2; exit 2 ;;
    esac
done
algs="default,brucks,recursive_doubling,ring,topo_ring,topo_pipeline,topo_multileader"
algs="$algs,binomial,scatter_recursive_doubling_allgather,scatter_ring_allgather,topo_tree"
algs="$algs,reduce_scatter_allgather,reduce_scatter_gather"

echo "rate_kbit,label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors,algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,node_net_bytes,node_net_bound,status" >"$csv"
failures=0
# one launch on the cluster: launch KBIT N P PLACEMENT LABEL mpiexec|mpirun ARGS...
launch() {
    local kbit=$1 n=$2 p=$3 pl=$4 label=$5 mode=$6
    shift 6
    local cpl=$pl
    [ "$pl" = shuffle ] && cpl=block
    local c=(bash "$top/bench/cluster.sh" --nodes "$n" --ppn "$p" --rate "${kbit}kbit"
        --placement "$cpl" --counters "$tmpd/counters.csv" --timeout 1800 --prefix "$prefix" --ompi "$ompi" "$mode" "$@")
    echo "${c[*]}" | sed "s|$tmpd/|\$TMP/|g; s|$top/||g" >>"$cmds"
    local rc
    "${c[@]}" 2>&1 >"$tmpd/launch.out" | tee -a "$log" >&2
    rc=${PIPESTATUS[0]}
    # the rows from their label on: PRRTE (Open MPI 5) prints a rank's
    # unfinished stderr line (-P progress) into its stdout
    grep -o -- "$label,.*" "$tmpd/launch.out" | sed "s/^/$kbit,/" >>"$csv" || true
    sed "1d; s/^/$kbit,$n,$p,$pl,$label,/" "$tmpd/counters.csv" >>"$out/counters.csv" 2>/dev/null || true
    if [ "$rc" != 0 ]; then
        failures=$((failures + 1))
        say "FAILED ($label, $n x $p, $pl, ${kbit} kbit/s, exit $rc)"
    fi
}
echo "rate_kbit,nodes,ppn,placement,label,node,tx_bytes,rx_bytes" >"$out/counters.csv"

t0=$(date +%s)
for n in $nodes_l; do
    for p in $ppn_l; do
        np=$((n * p))
        for pl in $placements; do
            [ "$p" = 1 ] && [ "$pl" != block ] && continue   # one per node: one placement
            for kbit in $kbits; do
                    say "== $n nodes x $p, $pl, NIC ${kbit} kbit/s, $(( $(date +%s) - t0 )) s so far"
                    # sizes: 1 round, few calls: at a NIC rate the big sizes
                    # take 0.1-1 s a call; -T caps each size and algorithm
                    a=(-m "$min" -M "$max" -s "$step" -i 20 -w 2 -T 0.5 -R 1 -p "$pl" -v -P -I eth0 -n 2)
                    # the two default selections in launches of their own
                    # (tuning files are read at MPI_Init), compared with
                    # each other; forced algorithms with MPICH's default in
                    # their launch
                    launch "$kbit" "$n" "$p" "$pl" mpich-topo mpiexec "${net[@]}" -n "$np" -bind-to core \
                        "$bin" -c "$colls" -a default -l mpich-topo "${a[@]}"
                    launch "$kbit" "$n" "$p" "$pl" mpich-alone mpiexec "${stock[@]}" -n "$np" -bind-to core \
                        "$bin" -c "$colls" -a default -l mpich-alone "${a[@]}"
                    launch "$kbit" "$n" "$p" "$pl" mpich mpiexec "${stock[@]}" "${net[@]}" -n "$np" -bind-to core \
                        "$bin" -c "$colls" -a "$algs" -l mpich "${a[@]}"
                    if [ $peers = yes ] && [ $ompi = 5 ]; then
                        launch "$kbit" "$n" "$p" "$pl" openmpi5 mpirun -n "$np" --bind-to core \
                            "$ompibin" -c "$colls" -a default -l openmpi5 "${a[@]}"
                        launch "$kbit" "$n" "$p" "$pl" openmpi5-tuned mpirun -n "$np" --bind-to core \
                            --mca coll ^han "$ompibin" -c "$colls" -a default -l openmpi5-tuned "${a[@]}"
                    elif [ $peers = yes ]; then
                        launch "$kbit" "$n" "$p" "$pl" openmpi mpirun -n "$np" --bind-to core \
                            "$ompibin" -c "$colls" -a default -l openmpi "${a[@]}"
                        launch "$kbit" "$n" "$p" "$pl" openmpi-han mpirun -n "$np" --bind-to core \
                            --mca coll_han_priority 100 "$ompibin" -c "$colls" -a default -l openmpi-han "${a[@]}"
                    fi
            done
        done
    done
done
elapsed=$(( $(date +%s) - t0 ))

if [ $smoke = yes ]; then
    bad=$(topo_csv "$csv" 'f("errors") != 0 || f("status") ~ /^fail/ ||
                            (f("status") !~ /^ok/ && f("algorithm") ~ /^topo_/)')
    rows=$(($(wc -l <"$csv") - 1))
    # each node's NIC carried the busiest node's share at least
    below=$(topo_csv "$csv" 'f("bytes") >= 65536 && f("node_net_bytes") != "" &&
                              f("node_net_bound") > 0 && f("node_net_bytes") < 0.97 * f("node_net_bound")')
    if [ -n "$bad" ] || [ -n "$below" ] || [ $failures != 0 ] || [ "$rows" -lt 40 ]; then
        [ -n "$bad" ] && { echo "cluster smoke: wrong results, failures or n/a of ours:"; echo "$bad"; }
        [ -n "$below" ] && { echo "cluster smoke: a node's NIC below the per-node bound:"; echo "$below"; }
        echo "cluster smoke: FAILED ($failures launches failed, $rows rows; $out)"
        exit 1
    fi
    echo "cluster smoke: ok ($rows measurements validated, ${elapsed} s)"
    rm -rf "$out"
    exit 0
fi

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "command: $cmdline"
    echo "duration_s: $elapsed"
    echo "failed_launches: $failures"
    echo "cores: $(nproc)"
    echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
    echo "kernel: $(uname -sr)"
    echo "shaping: tc tbf on each node's veth, both directions, burst 64 KiB, queue 20 ms; no added delay (no netem)"
    echo "network: MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES=$latency_bytes for mpich-topo (its forced algorithms too)"
    echo "waiting: MPIR_CVAR_CH4_YIELD_WHEN_IDLE=on and mpi_yield_when_idle 1 where the cluster's processes outnumber the cores"
    echo "mpich: $("$prefix/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p') ch4:ofi (tcp between nodes), mpich-topo $(cd "$top" && git rev-parse --short HEAD 2>/dev/null || cat "$prebuilt/commit" 2>/dev/null)"
    if [ $peers = yes ] && [ $ompi = 5 ]; then
        echo "openmpi: $("$ompi5/bin/ompi_info" --version 2>/dev/null | head -1) (bench/install-peers.sh), ob1: sm within a node, tcp between"
    elif [ $peers = yes ]; then
        echo "openmpi: $(ompi_info --version 2>/dev/null | head -1), ob1: vader within a node, tcp between"
    fi
} >"$out/meta.txt"
python3 "$top/bench/cluster_report.py" "$out" >/dev/null
say "== done in ${elapsed} s: $out/summary.md"
[ $failures = 0 ]
