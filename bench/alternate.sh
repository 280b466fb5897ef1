#!/bin/bash
# mpich-topo's default against Open MPI's default on one node, in launches
# that alternate: on a shared virtual machine whole launches run fast or
# slow for minutes (the same binary 0.22 or 2 us a call), so one launch of
# each compares two moments, not two libraries.  Each of the N rounds runs
# one launch of each (the order swapped every round); every time is the
# median over calls of the slowest process (bench/coll_bench.c), and the
# summary keeps each one's fastest launch per size and its median launch.
#
#   bench/alternate.sh [--rounds N] [--np P] [--min B] [--max B] [--step K]
#                      [--colls LIST] [--nodes N [--rate RATE]] [--out DIR]
#                      [--ompi 5|4] [--cold]
#
# Defaults: 5 rounds, 2 processes, 1 B to 64 KiB in steps of 2x, bcast,
# allreduce, allgather and reduce; DIR (default
# bench/results/alternate-local) gets bench.csv, commands.txt and
# summary.md.  --nodes N runs both on N emulated nodes of P processes each
# (bench/cluster.sh, NICs at RATE, default 1gbit; as root), else on this
# one.  Needs install-ofi and Open MPI (bench/install-peers.sh).
# --ompi 5 (default, one node): Open MPI 5.0.7 built by install-peers.sh,
# twice per round: its default (coll/han over tuned) and tuned alone
# (--mca coll ^han); --ompi 4: Debian bookworm's 4.1.4, its default, the
# only one on emulated nodes (cluster.sh starts mpirun.openmpi).
# --cold: off-cache, every call's buffers from a 256 MiB pool
# (coll_bench -o), instead of data written just before each call.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
rounds=5 np=2 min=1 max=65536 step=2 colls=bcast,allreduce,allgather,reduce nodes=1 rate=1gbit
ompi=5 pool=
out=$top/bench/results/alternate-local
cmdline="bench/alternate.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --rounds) rounds=$2; shift ;;
        --np) np=$2; shift ;;
        --min) min=$2; shift ;;
        --max) max=$2; shift ;;
        --step) step=$2; shift ;;
        --nodes) nodes=$2; shift ;;
        --rate) rate=$2; shift ;;
        --colls) colls=$2; shift ;;
        --ompi) ompi=$2; shift ;;
        --out) out=$2; shift ;;
        --cold) pool=268435456 ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "alternate.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
prefix=$top/install-ofi
[ -x "$prefix/bin/mpicc" ] || { echo "alternate.sh: no $prefix (bench/run.sh --smoke)" >&2; exit 2; }
ompi5=$top/.cache/openmpi-5.0.7
case $ompi in
    5) [ "$nodes" = 1 ] || { echo "alternate.sh: --ompi 5 runs on one node (--ompi 4 on emulated nodes)" >&2; exit 2; }
       [ -x "$ompi5/bin/mpicc" ] || { echo "alternate.sh: no Open MPI 5.0.7 (bench/install-peers.sh)" >&2; exit 2; }
       ompicc=$ompi5/bin/mpicc ;;
    4) command -v mpicc.openmpi >/dev/null || { echo "alternate.sh: no Open MPI (bench/install-peers.sh)" >&2; exit 2; }
       ompicc=mpicc.openmpi ;;
    *) echo "alternate.sh: --ompi is 5 or 4" >&2; exit 2 ;;
esac
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prefix/bin/mpicc" -O2 -std=c99 -o "$tmp/coll_bench" "$top/bench/coll_bench.c"
"$ompicc" -O2 -std=c99 -o "$tmp/coll_bench-openmpi" "$top/bench/coll_bench.c"
a=(-c "$colls" -a default -m "$min" -M "$max" -s "$step" -i 2000 -T 0.2 -R 3 -v)
[ -n "$pool" ] && a+=(-o "$pool")
# the launches of a round: ours, then each peer's (label, command)
if [ "$nodes" = 1 ]; then
    ours=(env FI_PROVIDER=tcp "$prefix/bin/mpiexec" -n "$np" -bind-to core)
    if [ "$ompi" = 5 ]; then
        run5=("$ompi5/bin/mpirun" --allow-run-as-root -n "$np" --bind-to core)
        peer1=("${run5[@]}" "$tmp/coll_bench-openmpi" -l openmpi5 "${a[@]}")
        peer2=("${run5[@]}" --mca coll ^han "$tmp/coll_bench-openmpi" -l openmpi5-tuned "${a[@]}")
    else
        peer1=(mpirun.openmpi --allow-run-as-root -n "$np" --bind-to core
            "$tmp/coll_bench-openmpi" -l openmpi "${a[@]}")
    fi
else
    # each launch gets its own cluster; both wait alike when oversubscribed
    cl=(bash "$top/bench/cluster.sh" --nodes "$nodes" --ppn "$np" --rate "$rate" --quiet
        --prefix "$prefix")
    ours=("${cl[@]}" mpiexec -n $((nodes * np)) -bind-to core)
    peer1=("${cl[@]}" mpirun -n $((nodes * np)) --bind-to core
        "$tmp/coll_bench-openmpi" -l openmpi "${a[@]}")
fi
ours+=("$tmp/coll_bench" -l mpich-topo "${a[@]}")
npeers=1
[ "$ompi" = 5 ] && [ "$nodes" = 1 ] && npeers=2
{
    echo "${ours[*]}"
    echo "${peer1[*]}"
    [ $npeers = 2 ] && echo "${peer2[*]}"
} | sed "s|$tmp/|\$TMP/|g; s|$top/||g" >"$out/commands.txt"
launch() {      # ours | peer1 | peer2
    case $1 in
        ours) "${ours[@]}" ;;
        peer1) "${peer1[@]}" ;;
        peer2) "${peer2[@]}" ;;
    esac
}
csv=$out/bench.csv
echo "round,label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors,algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,node_net_bytes,node_net_bound,status" >"$csv"
for r in $(seq 1 "$rounds"); do
    order="ours peer1"
    [ $npeers = 2 ] && order="ours peer1 peer2"
    # (the order turned every round, so no one always runs first)
    for i in $(seq 2 $(( (r - 1) % (npeers + 1) + 1 ))); do
        order="${order#* } ${order%% *}"
    done
    for w in $order; do
        launch "$w" 2>/dev/null | grep -v '^label,' | sed "s/^/$r,/" >>"$csv"
    done
    echo "alternate.sh: round $r of $rounds done ($order)" >&2
done
bad=$(topo_csv "$csv" 'f("errors") != 0 || f("status") !~ /^ok/')
[ -z "$bad" ] || { echo "alternate.sh: wrong results or failed sizes:"; echo "$bad"; exit 1; }
python3 - "$csv" "$cmdline" "$rounds" >"$out/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t, peers = {}, []
for r in rows:
    t.setdefault((r["collective"], int(r["bytes"])), {}).setdefault(r["label"], []).append(float(r["med_us"]))
    if r["label"] != "mpich-topo" and r["label"] not in peers:
        peers.append(r["label"])
print("# mpich-topo's default against Open MPI, alternating launches\n")
print("`%s`: %s rounds, each one launch of each. Times in us, the median over calls of the "
      "slowest process; per size the fastest launch and the median launch of each; ratio = "
      "peer / mpich-topo (above 1: ours faster). Peers: %s.\n" % (sys.argv[2], sys.argv[3], ", ".join(peers)))
head = ["collective", "bytes", "ours fastest"]
for p in peers:
    head += ["%s fastest" % p, "ratio"]
head += ["ours median"]
for p in peers:
    head += ["%s median" % p, "ratio"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for (c, b) in sorted(t):
    o = t[(c, b)].get("mpich-topo", [])
    if not o or any(not t[(c, b)].get(p) for p in peers):
        continue
    cells = [c, str(b), "%.2f" % min(o)]
    for p in peers:
        v = t[(c, b)][p]
        cells += ["%.2f" % min(v), "%.2f" % (min(v) / min(o))]
    cells += ["%.2f" % statistics.median(o)]
    for p in peers:
        v = t[(c, b)][p]
        cells += ["%.2f" % statistics.median(v), "%.2f" % (statistics.median(v) / statistics.median(o))]
    print("| " + " | ".join(cells) + " |")
EOF
echo "alternate.sh: $out/summary.md"
