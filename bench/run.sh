#!/bin/bash
# The benchmark suite: one command times every allgather, bcast, allreduce and
# reduce algorithm of this MPICH (ours, MPICH's stock ones and MPICH's default
# selection) side by side, on one node and on emulated nodes in block, cyclic
# and shuffled placements, counts the bytes each call puts on the emulated
# network against the lower bound, runs the same benchmark under Open MPI
# as a peer, and writes a CSV, plots and a markdown summary.  The peer
# (--ompi): 5 (default) is Open MPI 5.0.7 from bench/install-peers.sh, its
# default (coll/han) and tuned alone (--mca coll ^han), on one node only
# (PRRTE does not start daemons on this suite's loopback-emulated nodes:
# bench/cluster-suite.sh runs it on real emulated nodes); 4 is Debian 12's
# 4.1.4, its default and coll_han, on one node and on emulated nodes.
#
#   bench/run.sh [--quick | --smoke] [--np "2 4"] [--max BYTES] [--nodes N]
#                [--device ofi|ucx] [--out DIR] [--no-peers] [--no-plots]
#                [--relaunch] [--budget SECONDS] [--prebuilt] [--ompi 5|4]
#
#   (default)  full sweep, 1 B to 16 MiB (4 MiB where ranks outnumber cores),
#              about 20 minutes on 2 cores; writes DIR (bench/results/local)
#   --quick    1 B to 1 MiB in steps of 4, 2 ranks only (under a minute)
#   --smoke    builds the benchmark and checks every algorithm on 2-4 ranks
#              with validation and COLL_TRACE (under a minute); exit status
#              non-zero on any wrong result, failure or silent fallback
#   --relaunch one launch per algorithm with environment CVARs instead of
#              switching algorithms through MPI_T inside one launch
#   --prebuilt use the benchmark already built in build-bench/ (machines
#              without a compiler; see bench/README.md)
#
# Algorithms are switched inside each launch through MPI_T (see
# bench/coll_bench.c); every result is validated. Emulated nodes are
# MPIR_CVAR_NUM_CLIQUES on ch4:ofi with FI_PROVIDER=tcp, so their traffic
# crosses the loopback interface; each launch runs in a private network
# namespace (unshare -n) where one is available, so the loopback counters see
# this launch alone and nothing can reach a network.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
mode=full
nps=
max=
nodes=2
dev=ofi
out=
peers=yes
plots=yes
relaunch=no
prebuilt=no
budget=
ompi=5
cmdline="bench/run.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --quick) mode=quick ;;
        --smoke) mode=smoke ;;
        --np) nps=$2; shift ;;
        --max) max=$2; shift ;;
        --nodes) nodes=$2; shift ;;
        --device) dev=$2; shift ;;
        --out) out=$2; shift ;;
        --no-peers) peers=no ;;
        --no-plots) plots=no ;;
        --relaunch) relaunch=yes ;;
        --prebuilt) prebuilt=yes ;;
        --budget) budget=$2; shift ;;
        --ompi) ompi=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done

ncores=$(nproc 2>/dev/null || echo 2)
prefix=$top/install-$dev
if [ ! -x "$prefix/bin/mpiexec" ] || { [ $prebuilt = no ] && [ ! -x "$prefix/bin/mpicc" ]; }; then
    if [ $prebuilt = yes ]; then
        echo "run.sh: no MPICH in $prefix (--prebuilt: carry it here)" >&2
        exit 1
    fi
    # a fresh checkout: build it as demo.sh does (about 10 minutes)
    echo "run.sh: no MPICH in $prefix yet: building it (Debian packages, source, ch4:$dev)"
    JOBS=${JOBS:-$ncores}
    mkdir -p "$top/.cache"
    topo_ensure_deps && topo_autogen && topo_build "$dev" ||
        { echo "run.sh: building MPICH failed" >&2; exit 1; }
fi
# the peer and the plots: Debian's Open MPI and matplotlib, installed once
need_peers=no
{ [ $peers = yes ] && ! command -v mpicc.openmpi >/dev/null 2>&1; } && need_peers=yes
{ [ $plots = yes ] && ! /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; } && need_peers=yes
if [ $mode != smoke ] && [ $need_peers = yes ]; then
    echo "run.sh: installing Open MPI and matplotlib (bench/install-peers.sh)"
    bash "$top/bench/install-peers.sh" >"$top/.cache/install-peers.log" 2>&1 ||
        echo "run.sh: bench/install-peers.sh failed (log: .cache/install-peers.log); going on without"
fi

# ---------------------------------------------------------------- settings
ALG_AG="default brucks recursive_doubling ring topo_ring topo_pipeline topo_multileader"
ALG_BC="default binomial scatter_recursive_doubling_allgather scatter_ring_allgather topo_tree topo_pipeline"
ALG_AR="default recursive_doubling reduce_scatter_allgather topo_pipeline"
# (not reduce's smp: -a names apply to every collective that has one, and
# MPICH's bcast and allreduce smp, forced with FALLBACK=error, fail on some
# processes only when their inner calls reach the node communicator)
ALG_RD="default binomial reduce_scatter_gather topo_pipeline"
case $mode in
    full)  : "${nps:=2 4}"; netcalls=4; tmo=1800 ;;
    quick) : "${nps:=2}"; netcalls=4; tmo=600 ;;
    smoke) netcalls=1; peers=no; plots=no; tmo=240 ;;
esac
work=$top/build-bench/$dev
mkdir -p "$work"
# this run's own scratch files: several runs may share the tree (check.sh's
# smoke beside a full run)
tmpd=$(mktemp -d "$top/build-bench/run.XXXXXX")
trap 'rm -rf "$tmpd"' EXIT
smoke_out=no
if [ -z "$out" ]; then
    if [ $mode = smoke ]; then out=$tmpd/smoke; smoke_out=yes; else out=$top/bench/results/local; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
csv=$out/bench.csv
log=$out/log.txt
cmds=$out/commands.txt
: >"$log"
: >"$cmds"
say() { echo "$*" | tee -a "$log" >&2; }
# MPICH 4.0.2's own tuning files: "MPICH default" is measured with them, and
# mpich-topo's default selection (which picks ours where it should) in a
# launch of its own
sh "$top/maint/stock-tuning.sh" "$tmpd/stock"
stock=(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmpd/stock/mpir.json"
    MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE="$tmpd/stock/ch4.json")

# the sweep of a case: sizes (bytes per process, from 1 B times STEP up to
# MAX), base iterations, warm-up calls, seconds per size and algorithm,
# rounds; smaller where ranks outnumber cores (every call there costs
# scheduler slices, and the times measure scheduling anyway)
sweep_for() {   # np cache -> "max step iters warm budget rounds"
    local over=no
    [ "$1" -gt "$ncores" ] && over=yes
    case $mode-$over-$2 in
        full-no-hot)  echo "${max:-16777216} 2 100 5 ${budget:-0.3} 3" ;;
        full-no-cold) echo "${max:-16777216} 4 100 5 ${budget:-0.3} 1" ;;
        full-yes-*)   echo "${max:-4194304} 4 10 2 ${budget:-0.2} 1" ;;
        quick-*)  echo "${max:-1048576} 4 50 3 ${budget:-0.2} 1" ;;
        smoke-*)  echo "${max:-262144} 512 2 1 0 1" ;;
    esac
}

# ---------------------------------------------------------------- build
# built beside, then renamed: a run that uses the binary meanwhile keeps its own
bin=$work/coll_bench
if [ $prebuilt = no ]; then
    "$prefix/bin/mpicc" -O2 -std=c99 -o "$tmpd/coll_bench" "$top/bench/coll_bench.c"
    mv -f "$tmpd/coll_bench" "$bin"
elif [ ! -x "$bin" ]; then
    echo "run.sh: --prebuilt but no $bin" >&2
    exit 1
fi
ompibin=
ompi5=$top/.cache/openmpi-5.0.7
case $ompi in 5|4) ;; *) echo "run.sh: --ompi is 5 or 4" >&2; exit 2 ;; esac
if [ $peers = yes ] && [ $ompi = 5 ]; then
    if [ $prebuilt = no ] && [ -x "$ompi5/bin/mpicc" ]; then
        ompibin=$work/coll_bench-openmpi5
        "$ompi5/bin/mpicc" -O2 -std=c99 -o "$tmpd/coll_bench-openmpi5" "$top/bench/coll_bench.c"
        mv -f "$tmpd/coll_bench-openmpi5" "$ompibin"
    else
        say "note: no Open MPI 5.0.7 (bench/install-peers.sh; --ompi 4 for Debian's 4.1.4); no peer runs"
        peers=no
    fi
elif [ $peers = yes ]; then
    if [ $prebuilt = yes ] && [ -x "$work/coll_bench-openmpi" ] && command -v mpirun.openmpi >/dev/null 2>&1; then
        ompibin=$work/coll_bench-openmpi
    elif [ $prebuilt = no ] && command -v mpicc.openmpi >/dev/null 2>&1 &&
        command -v mpirun.openmpi >/dev/null 2>&1; then
        ompibin=$work/coll_bench-openmpi
        mpicc.openmpi -O2 -std=c99 -o "$tmpd/coll_bench-openmpi" "$top/bench/coll_bench.c"
        mv -f "$tmpd/coll_bench-openmpi" "$ompibin"
    else
        say "note: Open MPI not installed (bench/install-peers.sh); no peer runs"
        peers=no
    fi
fi

# a private network namespace per launch, if we may make one
netns=no
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 &&
    unshare -n sh -c 'ip link set lo up' >/dev/null 2>&1; then
    netns=yes
fi
[ "$dev" = ofi ] || say "note: ch4:$dev: traffic between emulated nodes may not cross loopback; no byte counts"

fakedir=$tmpd/nodes
mkdir -p "$fakedir"

# ---------------------------------------------------------------- launching
failures=0
t_start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
echo "label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors,algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,node_net_bytes,node_net_bound,status" >"$csv"

# run LABEL ENV... -- COMMAND...: one launch, CSV rows appended, progress shown
run() {
    label=$1
    shift
    local envs=()   # (local: callers pass their own envs in)
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    # the exact command, paths relative to the repository (and Open MPI's
    # host and rank files, which the next launch rewrites)
    if [ "${label#mpich}" = "$label" ] && [ "$ompi" = 4 ]; then
        echo "# hosts: $(paste -sd';' "$tmpd/hosts"); ranks: $(paste -sd';' "$tmpd/ranks")" |
            sed "s|$top/||g" >>"$cmds"
    fi
    echo "${envs[*]} $*" | sed "s|$top/||g" >>"$cmds"
    local wrap=()
    if [ $netns = yes ]; then
        wrap=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
    fi
    local tmp=$tmpd/launch.out rc
    # CSV to a file; stderr (progress, trace) to the terminal and the log
    # --foreground: an interrupt of run.sh reaches mpiexec and its processes
    env "${envs[@]}" timeout --foreground -k 10 $tmo "${wrap[@]}" "$@" 2>&1 >"$tmp" | tee -a "$log" >&2
    rc=${PIPESTATUS[0]}
    if [ "${label#openmpi5}" != "$label" ]; then
        # from the label on: PRRTE prints a rank's unfinished stderr line
        # (progress) into its stdout
        grep -o -- "$label,.*" "$tmp" >>"$csv" || true
    else
        grep -v '^label,' "$tmp" >>"$csv" || true
    fi
    if [ $rc != 0 ]; then
        failures=$((failures + 1))
        say "FAILED ($label, exit $rc): ${envs[*]} $*"
    fi
    return 0
}

# the emulated placement: env for MPICH, host and rank files for Open MPI
mpich_env() {   # nn placement
    local e=(FI_PROVIDER=tcp)
    if [ "$1" -gt 1 ]; then
        e+=(MPIR_CVAR_NUM_CLIQUES="$1")
        [ "$2" = cyclic ] || e+=(MPIR_CVAR_CLIQUES_BY_BLOCK=1)
    fi
    echo "${e[@]}"
}
ompi_files() {  # np nn placement -> $tmpd/hosts, $tmpd/ranks
    local np=$1 nn=$2 pl=$3 ppn=$(( ($1 + $2 - 1) / $2 )) r node
    : >"$tmpd/hosts"
    for ((node = 0; node < nn; node++)); do echo "n$node slots=$ppn" >>"$tmpd/hosts"; done
    : >"$tmpd/ranks"
    for ((r = 0; r < np; r++)); do
        if [ "$pl" = cyclic ]; then node=$((r % nn)); else node=$((r / ppn)); fi
        # the same cores as mpiexec -bind-to core gives rank r
        echo "rank $r=n$node slot=$((r % ncores))" >>"$tmpd/ranks"
    done
}

bench_args() {  # np placement cache
    local m st it wa bu ro
    read -r m st it wa bu ro <<<"$(sweep_for "$1" "$3")"
    local a=(-m 1 -M "$m" -s "$st" -i "$it" -w "$wa" -T "$bu" -R "$ro" -p "$2" -v -P)
    [ "$3" = cold ] && a+=(-o "$pool")
    echo "${a[@]}"
}

# the last-level cache as this machine's processors see it (sysfs; getconf
# may report the host's total in a virtual machine)
l3=0
for c in /sys/devices/system/cpu/cpu0/cache/index*; do
    [ -r "$c/level" ] && [ -r "$c/size" ] || continue
    sz=$(sed 's/K$/*1024/; s/M$/*1048576/' "$c/size")
    l3=$(( $(cat "$c/level") >= 2 && $sz > l3 ? $sz : l3 ))
done
if [ "$l3" -le 0 ]; then
    l3=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
    case $l3 in ''|*[!0-9]*) l3=0 ;; esac
fi
[ "$l3" -gt 0 ] || l3=33554432
pool=$((4 * l3))        # off-cache pool: 4x the last-level cache per process

mpich_case() {  # np nn placement cache
    local np=$1 nn=$2 pl=$3 cache=$4 k=0
    [ "$nn" -gt 1 ] && [ "$dev" = ofi ] && k=$netcalls
    local envs
    read -r -a envs <<<"$(mpich_env "$nn" "$pl")"
    [ $mode = smoke ] && envs+=(MPIR_CVAR_COLL_TRACE=1) && k=$((k > 0 ? 1 : 0))
    local args
    read -r -a args <<<"$(bench_args "$np" "$pl" "$cache")"
    # mpich-topo's default selection cannot be switched to within a launch
    # (tuning files are read at MPI_Init): it has launches of its own before
    # and after the main one, each next to a launch of MPICH's default, and
    # the report keeps the fastest measurement of each, so that slow spells
    # of a shared machine do not land on one side only
    local topo_default=("${envs[@]}" -- "$prefix/bin/mpiexec" -n "$np" -bind-to core "$bin" -c all
        -a default -n $k -l mpich-topo "${args[@]}")
    local stock_default=("${envs[@]}" "${stock[@]}" -- "$prefix/bin/mpiexec" -n "$np" -bind-to core
        "$bin" -c all -a default -n $k -l mpich-alone "${args[@]}")
    run mpich-topo "${topo_default[@]}"
    run mpich "${stock_default[@]}"
    if [ $relaunch = no ]; then
        local all
        all=$(echo "$ALG_AG $ALG_BC $ALG_AR $ALG_RD" | tr ' ' '\n' | awk '!seen[$0]++' | paste -sd, -)
        # smoke, ranks outnumbering cores: MPICH's default and ours only (the
        # stock ones busy-poll there for seconds; the other cases check them)
        if [ $mode = smoke ] && [ "$np" -gt "$ncores" ]; then
            all=$(echo "$all" | tr , '\n' | grep -E '^(default|topo_)' | paste -sd, -)
        fi
        run mpich "${envs[@]}" "${stock[@]}" -- "$prefix/bin/mpiexec" -n "$np" -bind-to core \
            "$bin" -c all -a "$all" -n $k -l mpich "${args[@]}"
    else
        local c C a
        for c in allgather bcast allreduce reduce; do
            C=$(echo $c | tr a-z A-Z)
            case $c in
                allgather) algs=$ALG_AG ;; bcast) algs=$ALG_BC ;;
                allreduce) algs=$ALG_AR ;; *) algs=$ALG_RD ;;
            esac
            for a in $algs; do
                local ae=()
                [ $a = default ] || ae=(MPIR_CVAR_${C}_INTRA_ALGORITHM=$a MPIR_CVAR_${C}_DEVICE_COLLECTIVE=0
                    MPIR_CVAR_COLLECTIVE_FALLBACK=error)
                run mpich "${envs[@]}" "${stock[@]}" "${ae[@]}" -- "$prefix/bin/mpiexec" -n "$np" \
                    -bind-to core "$bin" -c $c -a env=$a -n $k -l mpich "${args[@]}"
            done
        done
    fi
    run mpich "${stock_default[@]}"
    run mpich-topo "${topo_default[@]}"
}

ompi_case() {   # np nn placement cache han
    local np=$1 nn=$2 pl=$3 cache=$4 han=$5 k=0 label=openmpi
    if [ $ompi = 5 ]; then
        ompi5_case "$@"
        return
    fi
    [ "$nn" -gt 1 ] && k=$netcalls
    ompi_files "$np" "$nn" "$pl"
    local o=(--oversubscribe --hostfile "$tmpd/hosts" --rankfile "$tmpd/ranks"
        --mca plm_rsh_agent "$top/bench/fake-node-rsh.sh"
        --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
    [ "$(id -u)" = 0 ] && o+=(--allow-run-as-root)
    # it cannot see that the emulated nodes share the cores: tell it to yield
    [ "$np" -gt "$ncores" ] && o+=(--mca mpi_yield_when_idle 1)
    if [ "$han" = yes ]; then
        o+=(--mca coll_han_priority 100)
        label=openmpi-han
    fi
    local args
    read -r -a args <<<"$(bench_args "$np" "$pl" "$cache")"
    run $label BENCH_FAKE_DIR="$fakedir" -- mpirun.openmpi "${o[@]}" -n "$np" "$ompibin" -c all \
        -a default -n $k -l $label "${args[@]}"
}

# Open MPI 5.0.7 on one node: its default (han) or, with han=yes here,
# tuned alone; the same cores as mpiexec -bind-to core
ompi5_case() {  # np nn placement cache tuned
    local np=$1 pl=$3 cache=$4 label=openmpi5
    local o=(--bind-to core)
    [ "$np" -gt "$ncores" ] && o=(--map-by core:OVERSUBSCRIBE --bind-to core:overload-allowed
        --mca mpi_yield_when_idle 1)
    [ "$(id -u)" = 0 ] && o+=(--allow-run-as-root)
    if [ "$5" = yes ]; then
        o+=(--mca coll ^han)
        label=openmpi5-tuned
    fi
    local args
    read -r -a args <<<"$(bench_args "$np" "$pl" "$cache")"
    run $label -- "$ompi5/bin/mpirun" "${o[@]}" -n "$np" "$ompibin" -c all -a default -n 0 \
        -l $label "${args[@]}"
}

# the cases: (np, nodes, placement, cache)
cases=()
first_np=
[ $mode = smoke ] && nps=
if [ $mode = smoke ]; then    # one node; one rank per node; cyclic with 2 per node
    cases=("2 1 block hot" "$nodes $nodes block hot" "$((2 * nodes)) $nodes cyclic hot")
fi
for np in $nps; do
    cases+=("$np 1 block hot")
    if [ "$np" -ge "$nodes" ] && [ "$nodes" -gt 1 ]; then
        if [ $((np / nodes)) -ge 2 ]; then
            cases+=("$np $nodes block hot" "$np $nodes cyclic hot" "$np $nodes shuffle hot")
        else
            cases+=("$np $nodes block hot")
        fi
    fi
    if [ $mode = full ] && [ -z "$first_np" ] && [ "$np" -le "$ncores" ]; then
        first_np=$np
        cases+=("$np 1 block cold")
    fi
done

say "== bench/run.sh ($mode): ${#cases[@]} cases, MPICH ch4:$dev, peers: $peers, private netns: $netns, $ncores cores"
say "   output: $out"
i=0
for c in "${cases[@]}"; do
    read -r np nn pl cache <<<"$c"
    i=$((i + 1))
    over=""
    [ "$np" -gt "$ncores" ] && over=" (oversubscribed: $np ranks on $ncores cores)"
    say "== [$i/${#cases[@]}] $np ranks, $nn node(s), $pl, $cache cache$over, $(( $(date +%s) - t_start )) s so far"
    say "   mpich-topo (ch4:$dev): MPICH default, stock and topology-aware algorithms"
    mpich_case "$np" "$nn" "$pl" "$cache"
    if [ $peers = yes ] && [ $ompi = 5 ]; then
        if [ "$nn" = 1 ]; then
            say "   Open MPI 5.0.7: default (han), tuned alone"
            ompi_case "$np" "$nn" "$pl" "$cache" no
            ompi_case "$np" "$nn" "$pl" "$cache" yes
        fi
    elif [ $peers = yes ]; then
        say "   Open MPI: default collectives"
        ompi_case "$np" "$nn" "$pl" "$cache" no
        if [ "$nn" -gt 1 ]; then        # coll_han steps aside on one node
            say "   Open MPI: coll_han"
            ompi_case "$np" "$nn" "$pl" "$cache" yes
        fi
    fi
done
elapsed=$(( $(date +%s) - t_start ))

# ---------------------------------------------------------------- smoke check
if [ $mode = smoke ]; then
    bad=$(topo_csv "$csv" 'f("errors") != 0 || f("status") ~ /^fail/ ||
                            (f("status") !~ /^ok/ && f("algorithm") ~ /^topo_/)')
    # every forced algorithm that ran must show in the trace as chosen by CVAR
    missing=""
    for ca in $(topo_csv "$csv" 'f("status") == "ok" && f("algorithm") != "default" {
                                     print f("collective") ":" f("algorithm") }' | sort -u); do
        grep -Eq "mpich-topo: +${ca%%:*} +${ca#*:} +cvar" "$log" || missing="$missing $ca"
    done
    # nobody can beat the lower bound on the network (where the payload, not
    # the headers and acknowledgements, makes the count)
    below=$(topo_csv "$csv" 'f("bytes") >= 65536 && f("net_bytes") != "" && f("net_bound") > 0 &&
                              f("net_bytes") < 0.97 * f("net_bound")')
    rows=$(($(wc -l <"$csv") - 1))
    if [ -n "$bad" ] || [ -n "$missing" ] || [ -n "$below" ] || [ $failures != 0 ] || [ "$rows" -lt 50 ]; then
        [ -n "$bad" ] && { echo "smoke: wrong results, failures or n/a of ours:"; echo "$bad"; }
        [ -n "$missing" ] && echo "smoke: forced algorithms not seen in MPIR_CVAR_COLL_TRACE:$missing"
        [ -n "$below" ] && { echo "smoke: network bytes below the lower bound:"; echo "$below"; }
        if [ $smoke_out = yes ]; then     # keep what failed: $tmpd goes at exit
            rm -rf "$top/build-bench/smoke-failed"
            cp -r "$out" "$top/build-bench/smoke-failed"
            csv=$top/build-bench/smoke-failed/bench.csv log=$top/build-bench/smoke-failed/log.txt
        fi
        echo "smoke: FAILED ($failures launches failed, $rows rows; $csv, $log)"
        exit 1
    fi
    na=$(topo_csv "$csv" 'f("status") ~ /^n\/a/' | wc -l)
    echo "smoke: ok ($rows measurements validated, $na n/a of stock algorithms, ${elapsed} s)"
    exit 0
fi

# ---------------------------------------------------------------- report
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "command: $cmdline"
    echo "duration_s: $elapsed"
    echo "failed_launches: $failures"
    echo "cores: $ncores"
    echo "numa_nodes: $(lscpu 2>/dev/null | sed -n 's/^NUMA node(s): *//p')"
    echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
    echo "memory: $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "kernel: $(uname -sr)"
    echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "load_average: $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?') at the end (1, 5, 15 minutes)"
    echo "l3_bytes: $l3"
    echo "offcache_pool_bytes: $pool"
    echo "mpich: $("$prefix/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p') ch4:$dev, install-$dev built $(date -u -r "$prefix/lib/libmpi.so" '+%Y-%m-%d %H:%M UTC' 2>/dev/null), mpich-topo $(cd "$top" && git rev-parse --short HEAD 2>/dev/null)$(cd "$top" && git diff --quiet HEAD -- src maint 2>/dev/null || echo ' (src/ or maint/ differ from that commit)')"
    echo "mpich_configure: $("$prefix/bin/mpichversion" 2>/dev/null | sed -n 's/^MPICH [Cc]onfigure:[[:space:]]*//p')"
    echo "libfabric: $(dpkg-query -W -f '${Version}' libfabric1 2>/dev/null || echo '?')"
    if [ $peers = yes ]; then
        if [ $ompi = 5 ]; then
            echo "openmpi: $("$ompi5/bin/ompi_info" --version 2>/dev/null | head -1) (bench/install-peers.sh; one node only)"
        else
            echo "openmpi: $(ompi_info --version 2>/dev/null | head -1) (Debian $(dpkg-query -W -f '${Version}' libopenmpi3 2>/dev/null || echo '?'))"
        fi
    fi
    echo "netns: $netns"
    echo "mode: $mode"
    echo "switching: $([ $relaunch = yes ] && echo 'relaunch with environment CVARs' || echo 'MPI_T control variables inside one launch')"
} >"$out/meta.txt"

py=python3
if [ $plots = yes ]; then
    if /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; then
        py=/usr/bin/python3
    else
        say "note: no matplotlib (bench/install-peers.sh installs python3-matplotlib); no plots"
        plots=no
    fi
fi
popt=()
[ $plots = yes ] || popt=(--no-plots)
"$py" "$top/bench/report.py" "$out" "${popt[@]}"
say "== done in ${elapsed} s: $out/summary.md, $csv$([ $plots = yes ] && echo ", $out/plots/")"
[ $failures = 0 ]
