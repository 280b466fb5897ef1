#!/bin/bash
# Allgather topo_pipeline with local copies through the node segment
# against single CMA copies (MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD), with
# MPICH's algorithms in the same launches: what the threshold's default
# and the built-in tuning of large allgathers within a node rest on.
#
#   bench/allgather-cma.sh [--prefix DIR] [--rounds R] [--no-cluster] [--out DIR]
#
# Each round launches, once with CMA from 4 MiB per process (the old
# default) and once without (the order swapped every round):
#   - one node, 2 processes bound to the cores, 1-64 MiB per process,
#     cache-hot, and off-cache (256 MiB buffer pool) from 512 KiB;
#   - unless --no-cluster: 2 emulated nodes x 2 processes (bench/cluster.sh),
#     4 and 8 MiB per process, NICs at 1 Gbit/s and at 500 Mbit/s (the
#     suite's validity check: a network-bound size takes at least 1.7x as
#     long at half the rate).
# Algorithms in each launch, switched through MPI_T: MPICH's default
# selection (mpich-topo's built-in tuning), MPICH's ring and recursive
# doubling, topo_pipeline. Every result validated (-v). Writes OUT/bench.csv
# (coll_bench's CSV, its label column naming the case and the setting),
# OUT/commands.txt and OUT/summary.md (per case, size and algorithm the
# median launch of each setting).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$top/install-ofi
rounds=3
cluster=yes
out=$top/build-bench/allgather-cma
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --no-cluster) cluster=no ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "allgather-cma.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out"
export FI_PROVIDER=${FI_PROVIDER:-tcp}
bench=$out/coll_bench
"$prefix/bin/mpicc" -O2 -std=c99 -o "$bench" "$top/bench/coll_bench.c"
algs=default,ring,recursive_doubling,topo_pipeline
: >"$out/commands.txt"
"$bench" -H 2>/dev/null | head -1 >"$out/bench.csv"

# one LABEL CMA ARGS...: a launch whose CSV rows are labelled LABEL/cma|segment
one() {
    label=$1 th=$2
    shift 2
    if [ "$th" = -1 ]; then set_=segment; else set_=cma; fi
    echo "$label/$set_: $*" >>"$out/commands.txt"
    "$@" -l "$label/$set_" 2>>"$out/log.txt" | grep -E '^[^,]+,allgather,' >>"$out/bench.csv.tmp" || true
}
: >"$out/bench.csv.tmp"
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="4194304 -1"; else order="-1 4194304"; fi
    for th in $order; do
        one node-hot "$th" "$prefix/bin/mpiexec" -n 2 -bind-to core \
            -env MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD "$th" \
            "$bench" -c allgather -a $algs -m 1048576 -M 67108864 -s 2 -R 1 -v
        one node-offcache "$th" "$prefix/bin/mpiexec" -n 2 -bind-to core \
            -env MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD "$th" \
            "$bench" -c allgather -a $algs -m 524288 -M 8388608 -s 2 -R 1 -o 268435456 -v
        if [ $cluster = yes ]; then
            for rate in 1gbit 500mbit; do
                one "2x2-$rate" "$th" "$top/bench/cluster.sh" --nodes 2 --ppn 2 --rate $rate \
                    --quiet --prefix "$prefix" mpiexec -n 4 -bind-to core \
                    -env MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD "$th" -env FI_PROVIDER tcp \
                    "$bench" -c allgather -a $algs -m 4194304 -M 8388608 -s 2 -R 1 -v
            done
        fi
    done
done
cat "$out/bench.csv.tmp" >>"$out/bench.csv"
rm -f "$out/bench.csv.tmp"

python3 - "$out" <<'EOF'
import csv, sys, statistics, collections
out = sys.argv[1]
rows = list(csv.reader(open(out + "/bench.csv")))
head, rows = rows[0], [r for r in rows[1:] if len(r) > 10]
ix = {k: i for i, k in enumerate(head)}
t = collections.defaultdict(list)
bad = 0
for r in rows:
    case, setting = r[ix["label"]].split("/")
    if r[ix["status"]] != "ok":
        bad += 1
    t[(case, int(r[ix["bytes"]]), r[ix["algorithm"]], setting)].append(float(r[ix["med_us"]]))
med = {k: statistics.median(v) for k, v in t.items()}
cases = sorted({k[0] for k in med}, key=lambda c: (not c.startswith("node"), c))
with open(out + "/summary.md", "w") as f:
    f.write("# allgather: node segment against CMA (median launch, us)\n\n")
    f.write("%d measurements, %d not validated. Ratios above 1: the first faster.\n\n" % (len(rows), bad))
    for c in cases:
        f.write("## %s\n\n| bytes per process | MPICH default (segment launches) | ring | topo_pipeline, segment | topo_pipeline, CMA | CMA / segment | ring / segment |\n|---|---|---|---|---|---|---|\n" % c)
        for b in sorted({k[1] for k in med if k[0] == c}):
            g = lambda a, s: med.get((c, b, a, s))
            seg, cma, ring, dflt = g("topo_pipeline", "segment"), g("topo_pipeline", "cma"), g("ring", "segment"), g("default", "segment")
            fmt = lambda x: "%.1f" % x if x else "-"
            rat = lambda x, y: "%.2f" % (x / y) if x and y else "-"
            f.write("| %d | %s | %s | %s | %s | %s | %s |\n" % (b, fmt(dflt), fmt(ring), fmt(seg), fmt(cma), rat(cma, seg), rat(ring, seg)))
        f.write("\n")
print(open(out + "/summary.md").read())
EOF
