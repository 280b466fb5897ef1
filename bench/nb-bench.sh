#!/bin/bash
# Nonblocking and persistent allgather, bcast and allreduce (bench/nb_bench.c):
# mpich-topo's topo_pipeline against MPICH's own nonblocking algorithms and
# Open MPI's (libnbc), in one run, on one node or on the emulated cluster.
#
# Usage: bench/nb-bench.sh [--np "2 4"] [--max BYTES] [--device ofi|ucx]
#                          [--out DIR] [--no-peers]
#                          [--nodes N [--ppn P] [--rate RATE]]
#   --np       process counts (default "2 4"); -bind-to core when they fit
#   --max      largest size per process (default 1 MiB)
#   --out      where bench.csv, summary.md and commands.txt go
#              (default bench/results/local-nb)
#   --no-peers skip Open MPI even where it is installed
#   --nodes N  on bench/cluster.sh's emulated cluster instead (root): N
#              nodes of P processes (default 2), NICs shaped to RATE (tc
#              units, default 1gbit) and, as a validity check, to RATE/2:
#              a size counts as network-bound only where both MPICH's and
#              our time grow by 1.7x or more at RATE/2 (else CPU-bound on
#              this machine, and it decides nothing).  ch4:ofi only.
#
# For each collective and process count: MPICH 4.0.2's default selection
# (its own tuning files, maint/stock-tuning.sh), the
# engine forced (MPIR_CVAR_I<COLL>_INTRA_ALGORITHM=topo_pipeline with
# MPIR_CVAR_COLLECTIVE_FALLBACK=error, so a fallback cannot pass as ours),
# and Open MPI's default.  Every result is checked (errors column).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
nps="2 4" max=1048576 dev=ofi out=$top/bench/results/local-nb peers=yes
nodes= ppn=2 rate=1gbit
while [ $# -gt 0 ]; do
    case $1 in
        --np) nps=$2; shift ;;
        --max) max=$2; shift ;;
        --device) dev=$2; shift ;;
        --out) out=$2; shift ;;
        --no-peers) peers=no ;;
        --nodes) nodes=$2; shift ;;
        --ppn) ppn=$2; shift ;;
        --rate) rate=$2; shift ;;
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
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
sh "$top/maint/stock-tuning.sh" "$tmpd"
stock=(-env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmpd/mpir.json"
    -env MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE "$tmpd/ch4.json")
: > "$cmds"
cores=$(nproc)
# one node: no rate (kbits "-"); the cluster: RATE, then RATE/2
kbits=-
if [ -n "$nodes" ]; then
    [ "$(id -u)" = 0 ] || { echo "nb-bench.sh: --nodes needs root (bench/cluster.sh)" >&2; exit 2; }
    [ "$dev" = ofi ] || { echo "nb-bench.sh: --nodes runs ch4:ofi only" >&2; exit 2; }
    k=$(awk -v r="$rate" 'BEGIN { n = r + 0; u = tolower(substr(r, length(n "") + 1));
        f["kbit"] = 1; f["mbit"] = 1000; f["gbit"] = 1000000;
        if (n > 0 && (u in f)) printf "%d\n", n * f[u] }')
    [ -n "$k" ] || { echo "nb-bench.sh: rate '$rate': give NUMBER followed by kbit, mbit or gbit" >&2; exit 2; }
    kbits="$k $((k / 2))" nps=$((nodes * ppn))
fi
header=-H
rm -f "$csv.tmp"
run() {     # kbit label np command...
    local kbit=$1 label=$2 np=$3; shift 3
    echo "$*" | sed "s|$top/||g; s|$tmpd/|\$STOCK/|g" >> "$cmds"
    echo "== $label np=$np rate=$kbit" >&2
    # the first run's header line gets the rate's column, the rows their rate
    { timeout 1800 "$@" $header -l "$label" ||
        echo "nb-bench.sh: $label np=$np failed" >&2; } |
        sed "s/^label,/rate_kbit,label,/; t; s/^/$kbit,/" >> "$csv.tmp"
    header=
}
for kbit in $kbits; do
    for np in $nps; do
        mpiexec=("$prefix/bin/mpiexec") mpirun=(mpirun.openmpi --allow-run-as-root --oversubscribe)
        bind=() obind=(--bind-to none)
        [ "$np" -le "$cores" ] && bind=(-bind-to core) obind=(--bind-to core)
        if [ "$kbit" != - ]; then
            # (cluster.sh places each node's processes on cores itself)
            cl=(bash "$top/bench/cluster.sh" --nodes "$nodes" --ppn "$ppn" --rate "${kbit}kbit"
                --prefix "$prefix" --quiet)
            mpiexec=("${cl[@]}" mpiexec) mpirun=("${cl[@]}" mpirun) bind=() obind=()
        fi
        for coll in iallreduce ibcast iallgather; do
            C=$(echo "$coll" | tr a-z A-Z)
            run "$kbit" mpich-default "$np" "${mpiexec[@]}" -n "$np" "${bind[@]}" "${stock[@]}" \
                "$bin" -c "$coll" -M "$max"
            run "$kbit" topo_pipeline "$np" "${mpiexec[@]}" -n "$np" "${bind[@]}" \
                -env "MPIR_CVAR_${C}_INTRA_ALGORITHM" topo_pipeline \
                -env MPIR_CVAR_COLLECTIVE_FALLBACK error "$bin" -c "$coll" -M "$max"
            [ -z "$ompi" ] || run "$kbit" openmpi "$np" "${mpirun[@]}" -n "$np" "${obind[@]}" \
                "$ompi" -c "$coll" -M "$max"
        done
    done
done
mv "$csv.tmp" "$csv"
{
    echo "# Nonblocking and persistent collectives: $(date -u +%F), $(nproc) cores, ch4:$dev"
    echo
    if [ -n "$nodes" ]; then
        echo "Emulated cluster (bench/cluster.sh): $nodes nodes x $ppn processes, NICs at $rate;"
        echo "bound: net where MPICH's and our nonblocking time both grow 1.7x or more at"
        echo "half the rate, cpu otherwise (this machine's cores: such sizes decide nothing)."
        echo
    fi
    echo "Times are the slowest process' mean per call (us); ratios are MPICH's default"
    echo "(or Open MPI's) over topo_pipeline, above 1 where ours is faster."
    echo
    echo "| coll | np | bytes | bound | topo nb | MPICH nb | ratio | Open MPI nb | ratio | topo persistent | MPICH persistent | topo blocking | overlap topo / MPICH / Open MPI |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    # rows at the first rate are reported; at its half (cluster) they only
    # tell whether a size is network-bound
    topo_csv_awk='
        { k = f("collective") " " f("nprocs") " " f("bytes"); L = f("label"); r = f("rate_kbit");
          if (f("errors") != 0) bad = bad " " L ":" k "@" r;
          if (rate == "") rate = r;
          if (r != rate) { half[k, L] = f("nb_us"); next }
          nb[k, L] = f("nb_us"); pe[k, L] = f("persistent_us"); bl[k, L] = f("blocking_us");
          ov[k, L] = f("overlap_pct");
          if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
        function grew(k, L) { return nb[k, L] > 0 && half[k, L] >= 1.7 * nb[k, L] }
        END {
          for (i = 1; i <= n; i++) { k = order[i]; split(k, p, " ");
            t = nb[k, "topo_pipeline"]; m = nb[k, "mpich-default"]; o = nb[k, "openmpi"];
            bound = rate == "-" ? "cpu" : grew(k, "topo_pipeline") && grew(k, "mpich-default") ? "net" : "cpu";
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n",
              p[1], p[2], p[3], bound, t, m, (t > 0 ? sprintf("%.2f", m / t) : "-"),
              (o == "" ? "-" : o), (o == "" || t <= 0 ? "-" : sprintf("%.2f", o / t)),
              pe[k, "topo_pipeline"], pe[k, "mpich-default"], bl[k, "topo_pipeline"],
              ov[k, "topo_pipeline"], ov[k, "mpich-default"], (ov[k, "openmpi"] == "" ? "-" : ov[k, "openmpi"]) }
          if (bad != "") print "\nWRONG RESULTS:" bad
        }'
    topo_csv "$csv" "$topo_csv_awk"
} > "$out/summary.md"
grep -q "WRONG RESULTS" "$out/summary.md" && { echo "nb-bench.sh: wrong results, see $out/summary.md" >&2; exit 1; }
echo "nb-bench.sh: $out/summary.md"
