#!/bin/bash
# What a short-lived communicator costs (bench/comm_life.c): MPI_Comm_dup, K
# small calls, MPI_Comm_free, for mpich-topo's default, the same with the
# engine set up by the first call (MPIR_CVAR_TOPO_SETUP_CALLS=1, as before
# the setup was deferred), MPICH 4.0.2's built-in tuning
# (maint/stock-tuning.sh) and Open MPI's default, in alternating launches
# (ROUNDS of each); writes OUT/comm_life.csv, OUT/commands.txt and
# OUT/summary.md (the median launch per K).
#
#   bench/comm-life.sh [--prefix DIR] [--np N] [--rounds R] [--iters I] [--out DIR]
#                      [--ks K,K,...] [--bytes B] [--setup-calls N,N,...]
#
# --ks: the call counts (comm_life's default 0,1,2,4,8,16,64); --bytes: each
# call's size (8); --setup-calls: one more mpich-topo launch per N with
# MPIR_CVAR_TOPO_SETUP_CALLS=N (label mpich-topo-setup-N), to choose the
# default.
#
# Default prefix: install-ofi (libfabric's tcp provider); 2 processes bound
# to cores, 5 rounds, 300 rounds of dup/calls/free per K, OUT
# bench/results/local-comm-life.  CPU-bound on one node: what it shows is
# the setup's cost against the calls', not a network's.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$top/install-ofi
np=2
rounds=5
iters=300
out=$top/bench/results/local-comm-life
ks=
bytes=8
setup_calls=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift ;;
        --np) np=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --iters) iters=$2; shift ;;
        --out) out=$2; shift ;;
        --ks) ks=$2; shift ;;
        --bytes) bytes=$2; shift ;;
        --setup-calls) setup_calls=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "comm-life.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
export FI_PROVIDER=${FI_PROVIDER:-tcp}
"$prefix/bin/mpicc" -O2 -o "$tmp/comm_life" "$top/bench/comm_life.c"
sh "$top/maint/stock-tuning.sh" "$tmp/stock"
ompi=
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 -o "$tmp/comm_life-ompi" \
    "$top/bench/comm_life.c" 2>/dev/null; then
    ompi=yes
fi

run1() {    # LABEL COMMAND...: one launch, its CSV lines tagged with the round
    local label=$1
    shift
    echo "$label: $* -l $label" >>"$tmp/cmds"
    "$@" -l "$label" | grep -v '^label' | sed "s/^/$r,/" >>"$tmp/csv"
}
args=(-i "$iters" -b "$bytes")
[ -n "$ks" ] && args+=(-k "$ks")
mpich=("$prefix/bin/mpiexec" -n "$np" -bind-to core "$tmp/comm_life" "${args[@]}")
echo "round,label,calls,round_us,per_call_us" >"$tmp/csv"
for r in $(seq 1 "$rounds"); do
    run1 mpich-topo "${mpich[@]}"
    run1 mpich-topo-setup-at-once env MPIR_CVAR_TOPO_SETUP_CALLS=1 "${mpich[@]}"
    for n in ${setup_calls//,/ }; do
        run1 "mpich-topo-setup-$n" env MPIR_CVAR_TOPO_SETUP_CALLS="$n" "${mpich[@]}"
    done
    run1 mpich-4.0.2 env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/stock/mpir.json" \
        MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE="$tmp/stock/ch4.json" "${mpich[@]}"
    if [ -n "$ompi" ]; then
        run1 openmpi mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" --bind-to core \
            "$tmp/comm_life-ompi" "${args[@]}"
    fi
    echo "comm-life: round $r of $rounds done" >&2
done
cp "$tmp/csv" "$out/comm_life.csv"
sort -u "$tmp/cmds" | sed "s#$tmp/#\$tmp/#g; s#$top/#./#g" >"$out/commands.txt"
python3 - "$out" <<'EOF'
import csv, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(out + "/comm_life.csv")))
labels = list(dict.fromkeys(r["label"] for r in rows))
ks = sorted({int(r["calls"]) for r in rows})
med = {(l, k): statistics.median(float(r["round_us"]) for r in rows
                                 if r["label"] == l and int(r["calls"]) == k)
       for l in labels for k in ks}
with open(out + "/summary.md", "w") as f:
    f.write("# MPI_Comm_dup + K calls + MPI_Comm_free (us, median of %d launches)\n\n"
            % len({r["round"] for r in rows}))
    f.write("| K | " + " | ".join(labels) + " | mpich-topo / MPICH | mpich-topo / Open MPI |\n")
    f.write("|---" * (len(labels) + 3) + "|\n")
    for k in ks:
        cells = ["%.1f" % med[(l, k)] for l in labels]
        r1 = med[("mpich-4.0.2", k)] / med[("mpich-topo", k)]
        r2 = med[("openmpi", k)] / med[("mpich-topo", k)] if "openmpi" in labels else float("nan")
        f.write("| %d | %s | %.2fx | %.2fx |\n" % (k, " | ".join(cells), r1, r2))
    f.write("\nRatios: the other library's time over mpich-topo's (above 1: ours faster).\n")
    topo = [l for l in labels if l.startswith("mpich-topo")]
    if len(topo) > 2:
        # each setup threshold against the best of all of them at each K
        # (about what knowing K in advance would give): the worst ratio
        # over K is what a communicator of unknown lifetime risks
        best = {k: min(med[(l, k)] for l in topo) for k in ks}
        f.write("\n## Setup thresholds: time over the best mpich-topo launch at each K\n\n")
        f.write("| label | " + " | ".join("K=%d" % k for k in ks) + " | worst |\n")
        f.write("|---" * (len(ks) + 2) + "|\n")
        for l in topo:
            r = [med[(l, k)] / best[k] for k in ks]
            f.write("| %s | %s | %.2f |\n" % (l, " | ".join("%.2f" % x for x in r), max(r)))
print(open(out + "/summary.md").read())
EOF
