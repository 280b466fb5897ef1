#!/bin/bash
# Nonblocking and persistent allgather, bcast and allreduce (bench/nb_bench.c):
# mpich-topo's topo_pipeline against MPICH's own nonblocking algorithms and
# Open MPI's (libnbc), in one run, on one node.
#
# Usage: bench/nb-bench.sh [--np "2 4"] [--max BYTES] [--device ofi|ucx]
#                          [--out DIR] [--no-peers]
#   --np       process counts (default "2 4"); -bind-to core when they fit
#   --max      largest size per process (default 1 MiB)
#   --out      where bench.csv, summary.md and commands.txt go
#              (default bench/results/local-nb)
#   --no-peers skip Open MPI even where it is installed
#
# For each collective and process count: MPICH's default selection, the
# engine forced (MPIR_CVAR_I<COLL>_INTRA_ALGORITHM=topo_pipeline with
# MPIR_CVAR_COLLECTIVE_FALLBACK=error, so a fallback cannot pass as ours),
# and Open MPI's default.  Every result is checked (errors column).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
nps="2 4" max=1048576 dev=ofi out=$top/bench/results/local-nb peers=yes
while [ $# -gt 0 ]; do
    case $1 in
        --np) nps=$2; shift ;;
        --max) max=$2; shift ;;
        --device) dev=$2; shift ;;
        --out) out=$2; shift ;;
        --no-peers) peers=no ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "nb-bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
prefix=$top/install-$dev
[ -x "$prefix/bin/mpicc" ] || { echo "nb-bench.sh: no $prefix (run ./check.sh or ./demo.sh first)" >&2; exit 1; }
mkdir -p "$out" "$top/build-bench"
bin=$top/build-bench/nb_bench-mpich
"$prefix/bin/mpicc" -O2 -o "$bin" "$top/bench/nb_bench.c"
ompi=
if [ $peers = yes ] && command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    ompi=$top/build-bench/nb_bench-openmpi
    mpicc.openmpi -O2 -o "$ompi" "$top/bench/nb_bench.c"
fi
csv=$out/bench.csv cmds=$out/commands.txt
: > "$cmds"
header=-H
cores=$(nproc)
run() {     # label np command...
    local label=$1 np=$2; shift 2
    echo "$*" >> "$cmds"
    echo "== $label np=$np" >&2
    timeout 900 "$@" $header -l "$label" >> "$csv.tmp" || echo "nb-bench.sh: $label np=$np failed" >&2
    header=
}
rm -f "$csv.tmp"
for np in $nps; do
    bind=; obind="--bind-to none"
    [ "$np" -le "$cores" ] && bind="-bind-to core" obind="--bind-to core"
    for coll in iallreduce ibcast iallgather; do
        C=$(echo "$coll" | tr a-z A-Z)
        run mpich-default "$np" "$prefix/bin/mpiexec" -n "$np" $bind "$bin" -c "$coll" -M "$max"
        run topo_pipeline "$np" "$prefix/bin/mpiexec" -n "$np" $bind \
            -env "MPIR_CVAR_${C}_INTRA_ALGORITHM" topo_pipeline \
            -env MPIR_CVAR_COLLECTIVE_FALLBACK error "$bin" -c "$coll" -M "$max"
        [ -z "$ompi" ] || run openmpi "$np" mpirun.openmpi --allow-run-as-root --oversubscribe \
            -n "$np" $obind "$ompi" -c "$coll" -M "$max"
    done
done
mv "$csv.tmp" "$csv"
{
    echo "# Nonblocking and persistent collectives: $(date -u +%F), $(nproc) cores, ch4:$dev"
    echo
    echo "Times are the slowest process' mean per call (us); ratios are MPICH's default"
    echo "(or Open MPI's) over topo_pipeline, above 1 where ours is faster."
    echo
    echo "| coll | np | bytes | topo nb | MPICH nb | ratio | Open MPI nb | ratio | topo persistent | MPICH persistent | topo blocking | overlap topo / MPICH / Open MPI |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    topo_csv_awk='
        { k = f("collective") " " f("nprocs") " " f("bytes"); L = f("label");
          nb[k, L] = f("nb_us"); pe[k, L] = f("persistent_us"); bl[k, L] = f("blocking_us");
          ov[k, L] = f("overlap_pct"); if (f("errors") != 0) bad = bad " " L ":" k;
          if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
        END {
          for (i = 1; i <= n; i++) { k = order[i]; split(k, p, " ");
            t = nb[k, "topo_pipeline"]; m = nb[k, "mpich-default"]; o = nb[k, "openmpi"];
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n",
              p[1], p[2], p[3], t, m, (t > 0 ? sprintf("%.2f", m / t) : "-"),
              (o == "" ? "-" : o), (o == "" || t <= 0 ? "-" : sprintf("%.2f", o / t)),
              pe[k, "topo_pipeline"], pe[k, "mpich-default"], bl[k, "topo_pipeline"],
              ov[k, "topo_pipeline"], ov[k, "mpich-default"], (ov[k, "openmpi"] == "" ? "-" : ov[k, "openmpi"]) }
          if (bad != "") print "\nWRONG RESULTS:" bad
        }'
    topo_csv "$csv" "$topo_csv_awk"
} > "$out/summary.md"
grep -q "WRONG RESULTS" "$out/summary.md" && { echo "nb-bench.sh: wrong results, see $out/summary.md" >&2; exit 1; }
echo "nb-bench.sh: $out/summary.md"
