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
#
# Defaults: 5 rounds, 2 processes, 1 B to 64 KiB in steps of 2x, bcast,
# allreduce, allgather and reduce; DIR (default
# bench/results/alternate-local) gets bench.csv, commands.txt and
# summary.md.  --nodes N runs both on N emulated nodes of P processes each
# (bench/cluster.sh, NICs at RATE, default 1gbit; as root), else on this
# one.  Needs install-ofi and Open MPI (bench/install-peers.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
rounds=5 np=2 min=1 max=65536 step=2 colls=bcast,allreduce,allgather,reduce nodes=1 rate=1gbit
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
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "alternate.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
prefix=$top/install-ofi
[ -x "$prefix/bin/mpicc" ] || { echo "alternate.sh: no $prefix (bench/run.sh --smoke)" >&2; exit 2; }
command -v mpicc.openmpi >/dev/null || { echo "alternate.sh: no Open MPI (bench/install-peers.sh)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prefix/bin/mpicc" -O2 -std=c99 -o "$tmp/coll_bench" "$top/bench/coll_bench.c"
mpicc.openmpi -O2 -std=c99 -o "$tmp/coll_bench-openmpi" "$top/bench/coll_bench.c"
a=(-c "$colls" -a default -m "$min" -M "$max" -s "$step" -i 2000 -T 0.2 -R 3 -v)
if [ "$nodes" = 1 ]; then
    ours=(env FI_PROVIDER=tcp "$prefix/bin/mpiexec" -n "$np" -bind-to core)
    peer=(mpirun.openmpi --allow-run-as-root -n "$np" --bind-to core)
else
    # each launch gets its own cluster; both wait alike when oversubscribed
    cl=(bash "$top/bench/cluster.sh" --nodes "$nodes" --ppn "$np" --rate "$rate" --quiet
        --prefix "$prefix")
    ours=("${cl[@]}" mpiexec -n $((nodes * np)) -bind-to core)
    peer=("${cl[@]}" mpirun -n $((nodes * np)) --bind-to core)
fi
ours+=("$tmp/coll_bench" -l mpich-topo "${a[@]}")
peer+=("$tmp/coll_bench-openmpi" -l openmpi "${a[@]}")
{ echo "${ours[*]}"; echo "${peer[*]}"; } | sed "s|$tmp/|\$TMP/|g; s|$top/||g" >"$out/commands.txt"
csv=$out/bench.csv
echo "round,label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors,algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,node_net_bytes,node_net_bound,status" >"$csv"
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="ours peer"; else order="peer ours"; fi
    for w in $order; do
        if [ "$w" = ours ]; then "${ours[@]}"; else "${peer[@]}"; fi 2>/dev/null |
            grep -v '^label,' | sed "s/^/$r,/" >>"$csv"
    done
    echo "alternate.sh: round $r of $rounds done" >&2
done
bad=$(topo_csv "$csv" 'f("errors") != 0 || f("status") !~ /^ok/')
[ -z "$bad" ] || { echo "alternate.sh: wrong results or failed sizes:"; echo "$bad"; exit 1; }
python3 - "$csv" "$cmdline" "$rounds" >"$out/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = {}
for r in rows:
    t.setdefault((r["collective"], int(r["bytes"])), {}).setdefault(r["label"], []).append(float(r["med_us"]))
print("# mpich-topo's default against Open MPI's, alternating launches\n")
print("`%s`: %s rounds, each one launch of each. Times in us, the median over calls of the "
      "slowest process; per size the fastest launch and the median launch of each; ratio = "
      "Open MPI / mpich-topo (above 1: ours faster).\n" % (sys.argv[2], sys.argv[3]))
print("| collective | bytes | ours fastest | Open MPI fastest | ratio | ours median | Open MPI median | ratio |")
print("|---|---|---|---|---|---|---|---|")
for (c, b) in sorted(t):
    o, p = t[(c, b)].get("mpich-topo", []), t[(c, b)].get("openmpi", [])
    if not o or not p:
        continue
    mo, mp, so, sp = min(o), min(p), statistics.median(o), statistics.median(p)
    print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (c, b, mo, mp, mp / mo, so, sp, sp / so))
EOF
echo "alternate.sh: $out/summary.md"
