#!/bin/bash
# OSU micro-benchmarks' blocking collectives (a peer's benchmark, as users
# run it) on mpich-topo's default, MPICH 4.0.2's default (its own tuning
# files, maint/stock-tuning.sh) and Open MPI 5.0.7's default, on one node,
# in launches that alternate (as bench/alternate.sh: on a shared virtual
# machine whole launches run fast or slow for minutes).  Per size the
# fastest and the median launch of each, by OSU's average latency
# (averaged over the processes) and its maximum (the slowest process).
#
#   bench/osu.sh --src DIR [--np P] [--rounds N] [--min BYTES] [--max BYTES]
#                [--colls "bcast allreduce allgather reduce"] [--iters N]
#                [--device ofi|ucx] [--out DIR] [--ours "LABEL:VAR=VAL[,VAR=VAL...] ..."]
#
# DIR: the OSU micro-benchmarks source (7.4 was used: its tarball from
# mvapich.cse.ohio-state.edu, unpacked; nothing here downloads it).  It is
# configured and built twice under the output folder, with mpich-topo's
# mpicc and with Open MPI 5.0.7's (bench/install-peers.sh).  Defaults: 2
# processes bound to cores, 3 rounds, 4 B to 16 MiB, OSU's iteration
# counts with -i 2000 for the small sizes; DIR (default
# bench/results/osu-local) gets osu.csv, commands.txt and summary.md.
# OSU reuses one buffer for every call (cache-hot, no data written between
# calls); bench/alternate.sh --cold is the off-cache counterpart.
# --ours adds launches of mpich-topo with CVARs set (a way forced, say),
# each under its LABEL, alternating with the others and compared in the
# summary like the peers.  Before each launch bench/xcore.c probes how fast
# data moves between the two first cores (the VM's mode): probes.txt.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
src= np=2 rounds=3 min=4 max=16777216 colls="bcast allreduce allgather reduce" iters=2000 dev=ofi
ours=
out=$top/bench/results/osu-local
cmdline="bench/osu.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --src) src=$2; shift ;;
        --np) np=$2; shift ;;
        --rounds) rounds=$2; shift ;;
        --min) min=$2; shift ;;
        --max) max=$2; shift ;;
        --ours) ours=$2; shift ;;
        --colls) colls=$2; shift ;;
        --iters) iters=$2; shift ;;
        --device) dev=$2; shift ;;
        --out) out=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "osu.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$src" ] && [ -x "$src/configure" ] ||
    { echo "osu.sh: --src names an unpacked OSU micro-benchmarks source (DIR/configure)" >&2; exit 2; }
prefix=$top/install-$dev
ompi5=$top/.cache/openmpi-5.0.7
[ -x "$prefix/bin/mpicc" ] || { echo "osu.sh: no $prefix (./check.sh or ./demo.sh builds it)" >&2; exit 2; }
[ -x "$ompi5/bin/mpicc" ] || { echo "osu.sh: no Open MPI 5.0.7 (bench/install-peers.sh)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$top/build-bench/osu
# one build per MPI, out of the source tree: only the collectives and their utilities
for mpi in mpich-topo openmpi5; do
    cc=$prefix/bin/mpicc
    [ $mpi = openmpi5 ] && cc=$ompi5/bin/mpicc
    b=$build/$mpi
    if ! (for c in $colls; do [ -x "$b/c/mpi/collective/blocking/osu_$c" ] || exit 1; done); then
        rm -rf "$b" && mkdir -p "$b"
        echo "osu.sh: building OSU with $cc" >&2
        (cd "$b" && "$src/configure" CC="$cc" CXX="$cc" >configure.log 2>&1 &&
            make -C c/mpi/collective/blocking $(printf 'osu_%s ' $colls) >make.log 2>&1) ||
            { echo "osu.sh: the OSU build failed, see $b/*.log" >&2; exit 1; }
    fi
done
# the cross-core probe (bench/xcore.c), before each launch
xcore=$top/build-bench/xcore
cc -O2 -o "$xcore" "$top/bench/xcore.c" || { echo "osu.sh: bench/xcore.c did not build" >&2; exit 1; }
: >"$out/probes.txt"
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
sh "$top/maint/stock-tuning.sh" "$tmpd"
bin() { echo "$build/$1/c/mpi/collective/blocking/osu_$2"; }
osu_args=(-f -m "$min:$max" -i "$iters")
# the CVARs of a --ours label, as mpiexec -env pairs
ours_env() {
    local v
    for v in $ours; do
        [ "${v%%:*}" = "$1" ] || continue
        echo "${v#*:}" | tr ',' '\n' | while IFS='=' read -r k val; do printf -- '-env %s %s ' "$k" "$val"; done
    done
}
launch() {      # label coll
    case $1 in
        mpich-topo|mpich-default|openmpi5) ;;
        *)
            # shellcheck disable=SC2046
            env FI_PROVIDER=tcp "$prefix/bin/mpiexec" -n "$np" -bind-to core $(ours_env "$1") \
                "$(bin mpich-topo "$2")" "${osu_args[@]}"
            return ;;
    esac
    case $1 in
        mpich-topo)
            env FI_PROVIDER=tcp "$prefix/bin/mpiexec" -n "$np" -bind-to core \
                "$(bin mpich-topo "$2")" "${osu_args[@]}" ;;
        mpich-default)
            env FI_PROVIDER=tcp "$prefix/bin/mpiexec" -n "$np" -bind-to core \
                -env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE "$tmpd/mpir.json" \
                -env MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE "$tmpd/ch4.json" \
                "$(bin mpich-topo "$2")" "${osu_args[@]}" ;;
        openmpi5)
            "$ompi5/bin/mpirun" --allow-run-as-root -n "$np" --bind-to core \
                "$(bin openmpi5 "$2")" "${osu_args[@]}" ;;
    esac
}
{
    echo "mpich-topo:    FI_PROVIDER=tcp install-$dev/bin/mpiexec -n $np -bind-to core osu_COLL ${osu_args[*]}"
    echo "mpich-default: the same with MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE and MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE from maint/stock-tuning.sh"
    echo "openmpi5:      .cache/openmpi-5.0.7/bin/mpirun -n $np --bind-to core osu_COLL ${osu_args[*]}"
    for v in $ours; do
        echo "${v%%:*}: the same as mpich-topo with ${v#*:}"
    done
} >"$out/commands.txt"
csv=$out/osu.csv
echo "round,label,collective,bytes,avg_us,min_us,max_us,iterations" >"$csv"
labels="mpich-topo mpich-default openmpi5"
for v in $ours; do labels="$labels ${v%%:*}"; done
nlabels=$(echo $labels | wc -w)
for r in $(seq 1 "$rounds"); do
    order=$labels
    for i in $(seq 2 $(( (r - 1) % nlabels + 1 ))); do
        order="${order#* } ${order%% *}"
    done
    for c in $colls; do
        for l in $order; do
            echo "round $r, before $l osu_$c: $("$xcore" 524288 500)" >>"$out/probes.txt"
            # (PRRTE may put a rank's stderr into stdout: keep the rows only)
            launch "$l" "$c" 2>/dev/null | awk -v r="$r" -v l="$l" -v c="$c" \
                '$1 ~ /^[0-9]+$/ && NF >= 5 { print r "," l "," c "," $1 "," $2 "," $3 "," $4 "," $5 }' \
                >>"$csv" || echo "osu.sh: $l osu_$c failed in round $r" >&2
        done
    done
    echo "osu.sh: round $r of $rounds done ($order)" >&2
done
python3 - "$csv" "$cmdline" "$rounds" "$np" "$labels" >"$out/summary.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = {}
for r in rows:
    t.setdefault((r["collective"], int(r["bytes"])), {}).setdefault(r["label"], []).append(
        (float(r["avg_us"]), float(r["max_us"])))
peers = sys.argv[5].split()[1:]
print("# OSU micro-benchmarks 7.4, %s processes on one node\n" % sys.argv[4])
print("`%s`: %s rounds, each one launch of each. OSU's latency in us: avg (over processes "
      "of each one's mean) and max (the slowest process' mean), per size the fastest launch "
      "and the median launch; ratio = peer / mpich-topo (above 1: ours faster).\n"
      % (sys.argv[2], sys.argv[3]))
head = ["collective", "bytes", "ours avg"]
for p in peers:
    head += ["%s avg" % p, "ratio"]
head += ["ours max"]
for p in peers:
    head += ["%s max" % p, "ratio"]
head += ["ours median avg", "openmpi5 median avg", "ratio"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
behind = []
for (c, b) in sorted(t):
    d = t[(c, b)]
    if any(not d.get(l) for l in ["mpich-topo"] + peers):
        continue
    best = {l: (min(a for a, _ in v), min(m for _, m in v)) for l, v in d.items()}
    med = {l: statistics.median(a for a, _ in v) for l, v in d.items()}
    o = best["mpich-topo"]
    cells = [c, str(b), "%.2f" % o[0]]
    for p in peers:
        cells += ["%.2f" % best[p][0], "%.2f" % (best[p][0] / o[0])]
        if best[p][0] / o[0] < 1 and p in ("mpich-default", "openmpi5"):
            behind.append("%s %d B: %.2fx %s (avg)" % (c, b, best[p][0] / o[0], p))
    cells += ["%.2f" % o[1]]
    for p in peers:
        cells += ["%.2f" % best[p][1], "%.2f" % (best[p][1] / o[1])]
    cells += ["%.2f" % med["mpich-topo"], "%.2f" % med["openmpi5"],
              "%.2f" % (med["openmpi5"] / med["mpich-topo"])]
    print("| " + " | ".join(cells) + " |")
print("\nFastest launches where mpich-topo is behind a peer (avg): " +
      ("; ".join(behind) if behind else "none") + ".")
EOF
echo "osu.sh: $out/summary.md" >&2
