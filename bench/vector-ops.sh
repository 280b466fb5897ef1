#!/bin/bash
# The engine's vector reductions (MPIR_CVAR_TOPO_VECTOR_OPS, topo_op.c) on
# and off, side by side with MPICH's default selection and Open MPI, on one
# node: allreduce and reduce (MPI_INT, MPI_SUM) from 64 B to 16 MiB.
#
#   bench/vector-ops.sh [--np N] [--reps R] [--cold] [--out DIR]
#
# Each repetition launches, one after the other: mpich-topo's default and
# topo_pipeline with vectors (label vec1), the same without (vec0), MPICH
# 4.0.2's default selection (its own tuning files, maint/stock-tuning.sh;
# label mpich) and Open MPI's default (label openmpi, where installed:
# bench/install-peers.sh).  Every result is validated; the best median of
# the repetitions is kept, so a burst of load from elsewhere spoils one
# repetition, not one column.  --cold rotates the buffers through a pool
# larger than the last-level cache (coll_bench -o).  Writes DIR/bench.csv
# (coll_bench's columns), DIR/commands.txt and DIR/summary.md.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$top/install-ofi
np=2 reps=2 cold=no out=$top/bench/results/local-vector-ops
while [ $# -gt 0 ]; do
    case $1 in
        --np) np=$2; shift ;;
        --reps) reps=$2; shift ;;
        --cold) cold=yes ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "vector-ops.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
[ -x "$prefix/bin/mpicc" ] || { echo "vector-ops.sh: no MPICH in $prefix (./demo.sh builds it)" >&2; exit 1; }
mkdir -p "$out"
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
"$prefix/bin/mpicc" -O2 -std=c99 -o "$tmpd/cb" "$top/bench/coll_bench.c"
ompi=no
if command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1; then
    mpicc.openmpi -O2 -std=c99 -o "$tmpd/cb-ompi" "$top/bench/coll_bench.c"
    ompi=yes
fi
sh "$top/maint/stock-tuning.sh" "$tmpd/stock"
args=(-c allreduce,reduce -m 64 -M 16777216 -s 4 -R 3 -T 2 -v)
[ $cold = yes ] && args+=(-o 1090519040)
# a private network namespace where there is one: nothing leaves this run
ns=()
if command -v ip >/dev/null 2>&1 && unshare -n sh -c 'ip link set lo up' >/dev/null 2>&1; then
    ns=(unshare -n sh -c 'ip link set lo up && exec "$@"' sh)
fi
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)

: >"$out/bench.csv"
: >"$out/commands.txt"
run() {   # ENV... -- COMMAND...
    local e=()
    while [ "$1" != -- ]; do e+=("$1"); shift; done
    shift
    echo "env ${e[*]}${ns:+ unshare -n} $*" | sed "s|$tmpd/||g; s|$top/||g" >>"$out/commands.txt"
    env "${e[@]}" "${ns[@]}" "$@" | grep -v '^#' >>"$out/bench.csv"
}
for r in $(seq "$reps"); do
    for v in 1 0; do
        run MPIR_CVAR_TOPO_VECTOR_OPS=$v -- "$prefix/bin/mpiexec" -n "$np" -bind-to core \
            "$tmpd/cb" "${args[@]}" -a default,topo_pipeline -l vec$v
    done
    run MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmpd/stock/mpir.json" \
        MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE="$tmpd/stock/ch4.json" -- \
        "$prefix/bin/mpiexec" -n "$np" -bind-to core "$tmpd/cb" "${args[@]}" -a default -l mpich
    [ $ompi = yes ] && run OMPI_MCA_btl=self,vader -- mpirun.openmpi "${root[@]}" -n "$np" \
        --bind-to core "$tmpd/cb-ompi" "${args[@]}" -a default -l openmpi
done

wrong=$(awk -F, '$10 != 0 || $21 != "ok"' "$out/bench.csv" | wc -l)
{
    echo "# Vector reductions on one node: $np processes, $([ $cold = yes ] && echo off-cache || echo cache-hot)"
    echo
    echo "Made with \`bench/vector-ops.sh --np $np --reps $reps$([ $cold = yes ] && echo ' --cold')\`" \
        "on $(date -u '+%Y-%m-%d %H:%M') UTC, mpich-topo $(git -C "$top" rev-parse --short HEAD)," \
        "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')," \
        "AVX2: $(grep -q avx2 /proc/cpuinfo && echo yes || echo no)." \
        "$(wc -l <"$out/bench.csv") measurements, $wrong wrong or failed."
    echo "Times: median over calls of the slowest process, in us, best of $reps repetitions."
    echo "vec1 / vec0: MPIR_CVAR_TOPO_VECTOR_OPS on / off; default = mpich-topo's selection;" \
        "mpich = MPICH 4.0.2's own selection; speed-up = vec0 / vec1 (topo_pipeline);" \
        "vs Open MPI = Open MPI's time / mpich-topo default's (above 1: ours faster)."
    for c in allreduce reduce; do
        echo
        echo "## $c"
        echo
        echo "| bytes | default vec1 | default vec0 | topo_pipeline vec1 | topo_pipeline vec0 | speed-up | mpich | Open MPI | vs Open MPI |"
        echo "|---|---|---|---|---|---|---|---|---|"
        awk -F, -v C=$c '$2 == C && $21 == "ok" {
                k = $1 "/" $11; if (!(($5, k) in t) || $15 < t[$5, k]) t[$5, k] = $15; s[$5] = 1 }
            function f(x) { return x == "" ? "" : sprintf("%.2f", x) }
            END { for (b in s) {
                    d1 = t[b, "vec1/default"]; p1 = t[b, "vec1/topo_pipeline"]
                    p0 = t[b, "vec0/topo_pipeline"]; o = t[b, "openmpi/default"]
                    printf "%d | %s | %s | %s | %s | %s | %s | %s | %s\n", b, f(d1),
                        f(t[b, "vec0/default"]), f(p1), f(p0), (p1 > 0 ? f(p0 / p1) : ""),
                        f(t[b, "mpich/default"]), f(o), ((d1 > 0 && o != "") ? f(o / d1) : "") } }' \
            "$out/bench.csv" | sort -n | sed 's/^/| /; s/$/ |/'
    done
} >"$out/summary.md"
cat "$out/summary.md"
