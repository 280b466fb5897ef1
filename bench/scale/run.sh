#!/bin/bash
# Allgather's exchange among node leaders at scale, simulated with SimGrid's
# SMPI (Debian's libsimgrid-dev), against the engine's cost model
# (src/mpi/coll/topo/topo_model.c, the same code, through model_choice.c).
#
#   bench/scale/run.sh [--nodes "16 64 256 1024"] [--ppn 16]
#                      [--sizes "8 1024 65536 1048576 16777216"]
#                      [--copy-gbs 10] [--out DIR]
#   bench/scale/run.sh --calibrate [--out DIR]
#   bench/scale/run.sh --colls "bcast allreduce allgather" [--nodes ...]
#                      [--flat-nodes "16 64"] [--ppn 16] [--sizes ...]
#                      [--timeout 120] [--red-fraction F] [--leaders K] [--out DIR]
#
# --colls: the engine's schedules of those collectives among one leader
# per node (leaders.c) beside MPICH's flat algorithms over every process
# (flat.c, on --flat-nodes only: those simulate every process), through
# bench/scale/colls.py; report.py --colls writes DIR/summary.md (default
# DIR bench/results/scale-sim-colls).  --timeout bounds each cell.
# --red-fraction F charges the node's reductions (ours and those of MPICH's
# composition) at F x the copy rate (0, default: free, as SMPI's flat
# algorithms' are).  --leaders K (default 2): allreduce's step once is also
# run with K leaders per node, each on its share (ours:once-kK), what the
# engine runs on nodes of K NUMA domains; the tuning row names it.
#
# --calibrate: no simulation; fits the model's B and R to the emulated
# cluster's measured allgather cells (bench/results/cluster-*) and writes,
# for every network-bound one, the predicted against the measured time
# (bench/scale/calibrate.py; default DIR bench/results/model-fit).
#
# For every platform, node count and size (bytes per process), leaders.c
# runs topo_pipeline's ring and the log-step exchange (Bruck / recursive
# doubling) among one leader per node, point to point as the engine sends
# them, with the node's copies as delays at --copy-gbs GB/s per process.
# Platforms: SimGrid fat trees (2 levels of 32-port switches, full
# bisection) with InfiniBand-like links (1.5 us, 200 Gbit/s) and
# Ethernet-like ones (10 us, 25 Gbit/s), the latencies one way between the
# farthest nodes (each link a share), SMPI's size-dependent latency and
# bandwidth factors off (they model one Gigabit Ethernet cluster's MPI, and
# multiply the latency of a 64 KiB message by 11.6).  The model decides twice: with the
# platform's own constants (B = latency x bandwidth, R = copy rate over
# NIC rate, both from a simulated ping-pong between the farthest nodes:
# DIR/constants.csv), what a centre gets by setting
# MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES to its fabric, and with the
# engine's defaults (B 16384, R 6).  Writes DIR/sim.csv and DIR/summary.md
# (default bench/results/scale-sim): each choice's loss against the faster
# simulated exchange, and the model's error on the time it predicts.
# Installs SimGrid with apt where smpicc is missing (root).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
nodes_l="16 64 256 1024"
ppn=16
sizes="8 1024 65536 1048576 16777216"
copy_gbs=10
out=
calibrate=no
colls=
flat_nodes="16 64"
timeout=120
red_fraction=0
leaders=2
cmdline="bench/scale/run.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --nodes) nodes_l=$2; shift ;;
        --ppn) ppn=$2; shift ;;
        --sizes) sizes=$2; shift ;;
        --copy-gbs) copy_gbs=$2; shift ;;
        --out) out=$2; shift ;;
        --calibrate) calibrate=yes ;;
        --colls) colls=$2; shift ;;
        --flat-nodes) flat_nodes=$2; shift ;;
        --timeout) timeout=$2; shift ;;
        --red-fraction) red_fraction=$2; shift ;;
        --leaders) leaders=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "scale/run.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
for n in $nodes_l $flat_nodes; do
    case $n in 16|32|64|128|256|512|1024|2048|4096) ;;
        *) echo "scale/run.sh: --nodes takes powers of two from 16 to 4096" >&2; exit 2 ;;
    esac
done
if [ $calibrate = yes ]; then
    out=${out:-$top/bench/results/model-fit}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    cc -O2 -DMPIR_TOPO_STANDALONE -I"$top/src/mpi/coll/topo" -o "$tmp/model_choice" \
        "$top/bench/scale/model_choice.c" "$top/src/mpi/coll/topo/topo_model.c"
    python3 "$top/bench/scale/calibrate.py" "$tmp/model_choice" "$out" "$top"/bench/results/cluster-*/
    echo "== done: $out/summary.md"
    exit 0
fi
if [ -n "$colls" ]; then
    out=${out:-$top/bench/results/scale-sim-colls}
else
    out=${out:-$top/bench/results/scale-sim}
fi
if ! command -v smpicc >/dev/null; then
    echo "scale/run.sh: installing SimGrid (libsimgrid-dev, simgrid)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q libsimgrid-dev simgrid >/dev/null ||
        { echo "scale/run.sh: apt-get install libsimgrid-dev simgrid failed" >&2; exit 1; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
smpicc -O2 -o "$tmp/leaders" "$top/bench/scale/leaders.c" 2>"$tmp/cc.log" ||
    { cat "$tmp/cc.log"; exit 1; }
cc -O2 -DMPIR_TOPO_STANDALONE -I"$top/src/mpi/coll/topo" -o "$tmp/model_choice" \
    "$top/bench/scale/model_choice.c" "$top/src/mpi/coll/topo/topo_model.c"
mkdir -p "$out"
# what made DIR's results (t0: when the simulations began)
write_meta() {
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "command: $cmdline"
        echo "simgrid: $(smpirun --version 2>&1 | head -1)"
        echo "mpich-topo: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
        echo "duration_s: $(( $(date +%s) - t0 ))"
    } >"$out/meta.txt"
}
if [ -n "$colls" ]; then
    smpicc -O2 -o "$tmp/flat" "$top/bench/scale/flat.c" 2>"$tmp/cc.log" || { cat "$tmp/cc.log"; exit 1; }
    t0=$(date +%s)
    python3 "$top/bench/scale/colls.py" "$tmp" "$out" "$nodes_l" "$ppn" "$sizes" "$colls" \
        "$flat_nodes" "$copy_gbs" "$timeout" "$red_fraction" "$leaders"
    write_meta
    python3 "$top/bench/scale/report.py" --colls "$out"
    echo "== done: $out/summary.md"
    exit 0
fi

# platform NAME NODES BW LAT_US: a fat tree of NODES hosts (one leader
# each), LAT_US the one-way latency between the farthest (each link its
# share of the 2 or 4 links on that route)
platform() {
    local tp lat
    if [ "$2" -le 32 ]; then tp="1;$2;1;1"; lat=$(awk -v l="$4" 'BEGIN { print l / 2 }')
    else tp="2;32,$(($2 / 32));1,32;1,1"; lat=$(awk -v l="$4" 'BEGIN { print l / 4 }'); fi
    cat >"$tmp/$1-$2.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node" suffix="" radical="0-$(($2 - 1))" speed="1Gf" bw="$3" lat="${lat}us" topology="FAT_TREE" topo_parameters="$tp" sharing_policy="FULLDUPLEX"/>
</platform>
EOF
    seq 0 $(($2 - 1)) | sed 's/^/node/' >"$tmp/hosts-$2"
}

echo "platform,nodes,ppn,bytes,ring_s,logstep_s,model,model_ring_s,model_logstep_s,default_model" >"$out/sim.csv"
echo "platform,nodes,latency_s,bytes_per_s,B,R" >"$out/constants.csv"
t0=$(date +%s)
# name, link bandwidth (SimGrid units and bytes/s), one-way latency between
# the farthest nodes (us, for platform(); and s)
for plat in "ib 200Gbps 25e9 1.5 1.5e-6" "eth 25Gbps 3.125e9 10 10e-6"; do
    read -r name bw bps lat lats <<<"$plat"
    for n in $nodes_l; do
        platform "$name" "$n" "$bw" "$lat"
        # the constants the model needs, fitted on this platform as a
        # centre would measure its fabric: one way at 8 B and 64 MiB
        pp() {
            smpirun -np "$n" -platform "$tmp/$name-$n.xml" -hostfile "$tmp/hosts-$n" \
                --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --log=root.thres:critical "$tmp/leaders" pingpong "$1" 1 1 2>/dev/null | tail -1 | cut -d, -f5
        }
        lat1=$(pp 8) big=$(pp 67108864)
        B=$(awk -v l="$lat1" -v t="$big" 'BEGIN { bw = 67108864 / (t - l); printf "%.0f", l * bw }')
        bps=$(awk -v l="$lat1" -v t="$big" 'BEGIN { printf "%.6g", 67108864 / (t - l) }')
        R=$(awk -v c="$copy_gbs" -v b="$bps" 'BEGIN { printf "%.4f", c * 1e9 / b }')
        echo "$name,$n,$lat1,$bps,$B,$R" >>"$out/constants.csv"
        for m in $sizes; do
            t=()
            for a in ring logstep; do
                r=$(smpirun -np "$n" -platform "$tmp/$name-$n.xml" -hostfile "$tmp/hosts-$n" \
                    --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 \
                    --log=root.thres:critical "$tmp/leaders" $a "$m" "$ppn" "$copy_gbs" 2>"$tmp/err" |
                    sort -t, -k5 -g | tail -1)
                case $r in "$a,"*) t+=("${r##*,}") ;; *) cat "$tmp/err" >&2; t+=("") ;; esac
            done
            mine=$(echo "$n $ppn $m $B $R" | "$tmp/model_choice")
            dflt=$(echo "$n $ppn $m 16384 6" | "$tmp/model_choice")
            # the model's predictions in seconds: bytes of NIC time / NIC rate
            IFS=, read -r choice pr pl <<<"$mine"
            echo "$name,$n,$ppn,$m,${t[0]},${t[1]},$choice,$(awk -v x="$pr" -v b="$bps" 'BEGIN{printf "%.9f", x/b}'),$(awk -v x="$pl" -v b="$bps" 'BEGIN{printf "%.9f", x/b}'),${dflt%%,*}" >>"$out/sim.csv"
            echo "scale: $name $n x $ppn, $m B: ring ${t[0]} s, logstep ${t[1]} s, model $choice ($(( $(date +%s) - t0 )) s so far)" >&2
        done
    done
done
write_meta
python3 "$top/bench/scale/report.py" "$out"
echo "== done: $out/summary.md"
