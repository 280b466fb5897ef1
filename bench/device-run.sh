#!/bin/bash
# The measurements made on the lent 16-core machine (bench/README.md), in
# the order they matter, inside one time budget, every file written to OUT:
#   1. the machine: cores, topology (lstopo), kernel, whether network
#      namespaces and tc work;
#   2. Open MPI on 2 emulated nodes x 2 with its launcher's and daemons'
#      debug output (ompi-cluster.txt);
#   3. 16 processes on one node, 8 B-1 MiB, allgather, bcast, allreduce
#      and reduce: mpich-topo's default, MPICH 4.0.2's default, forced
#      topo_pipeline, Open MPI, and allreduce with the flat small
#      reduction (MPIR_CVAR_TOPO_CELL_FANIN=0), with 512 KiB slots
#      (MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE), and allreduce and reduce with
#      the single-copy reduction forced (MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD;
#      reduce also with its root reading every input);
#   4. 16 processes on 4 emulated nodes x 4 (bench/cluster-suite.sh at
#      2 Gbit/s and its half, block, 64 KiB-1 MiB, Open MPI default and
#      coll_han beside MPICH): issue 13's targets, with each process on a
#      core of its own;
#   5. NUIOA multirail: 4 emulated nodes x 4, two NICs each, 1 MiB;
#   6. 2 emulated nodes x 8 (block), as far as the budget allows.
# It runs from install-ofi and build-bench/dev (bench/device-pack.sh),
# using the machine's own libraries where it has them. Meant for a
# machine that is thrown away afterwards: it unpacks Open MPI into
# /opt/ompi, links Open MPI's and PMIx's folders under /usr/lib where
# nothing is (and mounts ours over the image's own where it has them: a
# PMIx there of another version has its plugins found first), and links the checkout where install-ofi was built if that
# path does not exist there.
#   bench/device-run.sh OUT [BUDGET_SECONDS]   (default 480)
#   bench/device-run.sh --smoke OUT            (2 x 2, one size: checks the script)
#   bench/device-run.sh --suite "ARGS" OUT [BUDGET_SECONDS]
#                       step 1, then only bench/cluster-suite.sh ARGS (a second
#                       call on the machine: other rates, sizes, placements)
set -u
smoke=no
only=
[ "${1:-}" = --smoke ] && { smoke=yes; shift; }
[ "${1:-}" = --suite ] && { only=$2; shift 2; }
out=${1:?usage: bench/device-run.sh [--smoke] OUT [BUDGET_SECONDS]}
budget=${2:-480}
top=$(cd "$(dirname "$0")/.." && pwd)
dev=$top/build-bench/dev
mkdir -p "$out"
out=$(cd "$out" && pwd)
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
log=$out/device.log
say() { echo "[$(($(date +%s) - t0)) s] $*" | tee -a "$log"; }

# install-ofi's paths (RPATH, Hydra's proxy) name the checkout it was built in
built=$(sed -n 's/^prefix="\{0,1\}\([^"]*\)\/install-ofi"\{0,1\}$/\1/p' "$top/install-ofi/bin/mpicc" | head -1)
if [ -n "$built" ] && [ "$built" != "$top" ] && [ ! -e "$built" ]; then
    mkdir -p "$(dirname "$built")" && ln -s "$top" "$built"
fi
# Open MPI relocated; its plugin folders also where it was built to look
mkdir -p /opt/ompi && tar xzf "$dev/ompi.tgz" -C /opt/ompi
# Debian's PMIx names /usr/lib/.../pmix2/lib/pmix in its own configuration
# file, which it also reads from /usr, whatever PMIX_INSTALL_PREFIX says;
# Ubuntu's PMIx 5 lives at the same path (its plugins loaded into our PMIx 4
# on the 16-core machine), so ours is mounted over an image's own
mounted=
for d in lib/x86_64-linux-gnu/openmpi lib/x86_64-linux-gnu/pmix2 share/openmpi; do
    if [ ! -e "/usr/$d" ]; then
        ln -s "/opt/ompi/usr/$d" "/usr/$d"
    elif [ "$(readlink -f "/usr/$d")" != "/opt/ompi/usr/$d" ] &&
        mount --bind "/opt/ompi/usr/$d" "/usr/$d"; then
        mounted="$mounted /usr/$d"
    fi
done
unmount() { local m; for m in $mounted; do umount "$m"; done; }
trap unmount EXIT
o=/opt/ompi/usr
export OPAL_PREFIX=$o PMIX_INSTALL_PREFIX=$o/lib/x86_64-linux-gnu/pmix2
# (its zlib plugin does not load there: no compression of launch data)
export PMIX_MCA_pcompress_base_silence_warning=1
# carried libraries only where the machine lacks that soname
need=$out/.libs
mkdir -p "$need"
for l in "$dev"/libs/*; do
    ldconfig -p | grep -q "^[[:space:]]$(basename "$l") " || ln -sf "$l" "$need/"
done
export LD_LIBRARY_PATH=$top/install-ofi/lib:$o/lib/x86_64-linux-gnu:$o/lib/x86_64-linux-gnu/openmpi/lib:$o/lib/x86_64-linux-gnu/pmix2/lib:$need
mkdir -p "$out/.bin"
for t in ip tc lstopo-no-graphics; do command -v $t >/dev/null || ln -sf "$dev/bin/$t" "$out/.bin/"; done
export PATH=$top/install-ofi/bin:$o/bin:$PATH:$out/.bin

# 1. the machine
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "commit: $(cat "$dev/commit")"
    echo "kernel: $(uname -sr)"
    sed -n 's/^PRETTY_NAME=//p' /etc/os-release
    echo "cores: $(nproc)"
    lscpu | grep -E '^(Model name|Socket|Core|Thread|NUMA|L[123])'
    free -g | head -2
    echo "carried libraries used: $(ls "$need" | tr '\n' ' ')"
    echo "carried tools used: $(ls "$out/.bin" | tr '\n' ' ')"
    # what else could steer Open MPI there (its cluster launches once failed)
    echo "Open MPI settings of the image: $(env | grep -E '^(OMPI|OPAL|PMIX)_' | tr '\n' ' ')"
    ls /etc/openmpi 2>/dev/null | sed 's/^/  \/etc\/openmpi\//'
} >"$out/machine.txt" 2>&1
# the image's own Open MPI settings, recorded above, are cleared so that
# Open MPI runs with its defaults, as here (btl_vader_single_copy_mechanism
# =none there turned off its single copy, CMA), all but OMPI_MCA_plm=isolated:
# without it one-node launches look for ssh, and bench/cluster.sh asks for
# plm rsh itself
image_mca=$(env | grep -E '^(OMPI|PMIX)_MCA_' |
    grep -v -e '^PMIX_MCA_pcompress_base_silence_warning=' -e '^OMPI_MCA_plm=')
for v in $(echo "$image_mca" | sed 's/=.*//'); do unset "$v"; done
"$dev/bin/lstopo-no-graphics" --of console >"$out/topology.txt" 2>&1
"$dev/bin/lstopo-no-graphics" --of xml >"$out/topology.xml" 2>/dev/null
say "machine: $(nproc) cores; $(grep -c Package "$out/topology.txt") package(s), $(grep -c NUMANode "$out/topology.txt") NUMA node(s), $(grep -c 'L3 ' "$out/topology.txt") L3"
netns=no
if ip netns add devprobe 2>>"$log"; then
    ip -n devprobe link add name dp0 type veth peer name dp1 2>>"$log" &&
        ip -n devprobe link set dp0 up 2>>"$log" &&
        ip netns exec devprobe tc qdisc add dev dp0 root tbf rate 1gbit burst 64kb latency 20ms 2>>"$log" &&
        netns=yes
    ip netns del devprobe
fi
say "network namespaces with veth and tc tbf: $netns"

np=16
nodes=4
[ $smoke = yes ] && np=4 nodes=2
ompibind=(--bind-to core)
[ $np -gt "$(nproc)" ] && ompibind=(--oversubscribe --bind-to none)
# sanity: every MPI starts and gets right answers
mpiexec -n $np -bind-to core "$dev/coll_bench" -c allreduce -a default,topo_pipeline -m 8 -M 8 -v \
    >>"$log" 2>&1 || say "FAILED: mpich on one node"
# (1 MiB: Open MPI's single copy; if its defaults fail there, the image's
# settings come back)
ompi1() {
    mpirun.openmpi --allow-run-as-root -n $np "${ompibind[@]}" "$dev/coll_bench-openmpi" \
        -c allreduce,bcast -a default -m 8 -M 1048576 -s 128 -i 20 -v >>"$log" 2>&1
}
if ! ompi1 && [ -n "$image_mca" ]; then
    say "Open MPI failed on one node with its defaults: the image's settings back"
    for kv in $image_mca; do export "$kv"; done
    ompi1 || say "FAILED: open mpi on one node"
fi

# a cluster-suite.sh run within its share of the budget
suite() {   # suite NAME SECONDS ARGS...
    local name=$1 secs=$2
    shift 2
    [ "$secs" -gt 30 ] || { say "$name: skipped, ${secs} s left"; return; }
    say "$name: up to $secs s: cluster-suite.sh $*"
    timeout -k 20 "$secs" bash "$top/bench/cluster-suite.sh" --prebuilt "$dev" --out "$out/$name" "$@" \
        >>"$log" 2>&1
    say "$name: exit $?"
}
# Open MPI's view of the cluster's hosts (its launches failed on the first
# lent machine, whose image sets OMPI_MCA_plm=isolated: no daemon on other
# hosts, "not enough slots"): how names resolve there and, for each way of
# giving mpirun the nodes (cluster.sh --ompi-hosts), what its launcher did
# and what its daemons said; the first way that works is the one the
# suites use
if [ $netns = yes ]; then
    { echo "hostname $(hostname)"; getent hosts "$(hostname)" node0 node1; cat /etc/hosts
      ls -l /etc/hosts /etc/nsswitch.conf; grep '^hosts' /etc/nsswitch.conf
      env | grep -E '^(SLURM|PBS|LSB|SGE|PE_|JOB_|FLUX|OMPI|OPAL|PMIX|PRTE)' | sort
      cat /etc/openmpi/openmpi-mca-params.conf 2>/dev/null | grep -v '^#'
      timeout -k 5 40 bash "$top/bench/cluster.sh" --nodes 2 --ppn 2 run sh -c \
          'hostname; getent hosts node0 node1; cat /etc/hosts'; } >"$out/ompi-cluster.txt" 2>&1
    for how in host hostfile node0; do
        echo "=== cluster.sh --ompi-hosts $how" >>"$out/ompi-cluster.txt"
        if timeout -k 5 60 bash "$top/bench/cluster.sh" --nodes 2 --ppn 2 --ompi-hosts $how mpirun \
            --display-allocation --mca plm_base_verbose 5 --mca ras_base_verbose 5 --debug-daemons \
            -n 4 "$dev/coll_bench-openmpi" -c bcast -a default -m 8 -M 8 -v >>"$out/ompi-cluster.txt" 2>&1; then
            export CLUSTER_OMPI_HOSTS=$how
            break
        fi
    done
    say "Open MPI on 2 emulated nodes x 2: ${CLUSTER_OMPI_HOSTS:+ran with --ompi-hosts }${CLUSTER_OMPI_HOSTS:-failed every way}"
fi
if [ -n "$only" ]; then
    # shellcheck disable=SC2086
    [ $netns = yes ] && suite custom $(($(left) - 20)) $only
    say "done, $(left) s of the budget left"
    rm -rf "$need" "$out/.bin"
    exit 0
fi
# 3. one node, a core per process (before the cluster: it is quick, and
#    the small allreduce's two stages through cells, MPIR_CVAR_TOPO_CELL_FANIN,
#    are timed nowhere else: mpich-topo-flatcells is the flat reduction)
one() {   # one LABEL COLLECTIVES ARGS...: the single-node launches
    local label=$1 colls=$2
    shift 2
    timeout -k 10 60 "$@" -c "$colls" -l "$label" -m 8 -M 1048576 -s 8 -i 200 -T 0.2 \
        -R 2 -v >>"$out/node16.csv" 2>>"$log" || say "node16 $label: exit $?"
}
if [ "$(left)" -gt 60 ]; then
    say "node16: $np processes on one node"
    s=(-genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$dev/stock/mpir.json"
        -genv MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE "$dev/stock/ch4.json")
    one mpich-topo allgather,bcast,allreduce,reduce mpiexec -n $np -bind-to core "$dev/coll_bench" -a default
    one mpich-topo-flatcells allreduce mpiexec -genv MPIR_CVAR_TOPO_CELL_FANIN 0 -n $np -bind-to core \
        "$dev/coll_bench" -a default
    # allreduce's rounds at 16 processes hold 8 KiB per process (a 128 KiB
    # slot cut in 16 areas), each with two waits on all 16: 4x larger slots
    # tell whether those waits are what 256 KiB pays for
    one mpich-topo-slot512k allreduce mpiexec -genv MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE 524288 \
        -n $np -bind-to core "$dev/coll_bench" -a default
    # the single-copy reduction (topo_allreduce_cma.c) forced from 64 KiB,
    # beside the default, which learns between it and the segment there
    # (reduce: also its root reading every input, forced in -cma-root)
    one mpich-topo-cma allreduce,reduce mpiexec -genv MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD 65536 \
        -n $np -bind-to core "$dev/coll_bench" -a default
    one mpich-topo-cma-root reduce mpiexec -genv MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD 65536 \
        -genv MPIR_CVAR_TOPO_REDUCE_CMA_READER root -n $np -bind-to core "$dev/coll_bench" -a default
    one mpich allgather,bcast,allreduce,reduce mpiexec "${s[@]}" -n $np -bind-to core "$dev/coll_bench" \
        -a default,topo_pipeline
    one openmpi allgather,bcast,allreduce,reduce mpirun.openmpi --allow-run-as-root -n $np "${ompibind[@]}" \
        "$dev/coll_bench-openmpi" -a default
fi

# 4. 4 nodes x 4 on the shaped cluster
if [ $netns = yes ]; then
    if [ $smoke = yes ]; then
        suite c2x2 "$(left)" --nodes 2 --ppn 2 --placements block --rates 1gbit --min 65536 --max 65536
    else
        suite c4x4 $(($(left) - 100)) --nodes 4 --ppn 4 --placements block \
            --rates 2gbit --min 65536 --max 1048576
    fi
fi

# 5. NUIOA multirail, 4 nodes x 4 with 2 NICs each (bench/multirail.sh):
#    each NIC's share of its node's bytes, with a core per process
if [ $netns = yes ] && [ $smoke = no ] && [ "$(left)" -gt 120 ]; then
    say "multirail: 4 nodes x 4, 2 NICs per node"
    timeout -k 10 100 bash "$top/bench/multirail.sh" --bench "$dev/coll_bench" --prefix "$top/install-ofi" \
        --nodes 4 --ppn 4 --rates 2gbit --sizes 1048576 --algs default --out "$out/multirail" \
        >>"$log" 2>&1 || say "multirail: exit $?"
fi

# 6. 2 nodes x 8, with what is left
if [ $netns = yes ] && [ $smoke = no ]; then
    suite c2x8 $(($(left) - 20)) --nodes 2 --ppn 8 --placements block --rates 2gbit \
        --min 65536 --max 1048576
fi
say "done, $(left) s of the budget left"
rm -rf "$need" "$out/.bin"
