#!/bin/bash
# Two builds of mpich-topo against each other in alternating launches (as
# bench/alternate.sh does for Open MPI): the way to time a change on a
# machine whose speed swings for minutes. Each round launches the same
# benchmark once on each build (the order swapped every round), 2
# processes on one node by default, default selection; per size the
# fastest launch and the median launch of each build.
#
#   bench/ab.sh --a DIR --b DIR [--rounds N] [--np P] [--min B] [--max B]
#               [--colls LIST] [--out DIR]
#
# DIR: an install prefix (its lib/ is put first on LD_LIBRARY_PATH, so a
# copy of install-ofi made before a change works). Defaults: 6 rounds, 1 B
# to 1 KiB, allgather, allreduce, bcast and reduce; the output folder
# (default build-bench/ab) gets bench.csv, commands.txt and summary.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
a= b= rounds=6 np=2 min=1 max=1024 colls=allgather,allreduce,bcast,reduce
out=$top/build-bench/ab
while [ $# -gt 0 ]; do
    case $1 in
        --a) a=$2; shift 2 ;;
        --b) b=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --min) min=$2; shift 2 ;;
        --max) max=$2; shift 2 ;;
        --colls) colls=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "ab.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
done
for d in "$a" "$b"; do
    [ -n "$d" ] && [ -x "$d/bin/mpiexec" ] ||
        { echo "ab.sh: --a and --b name install prefixes (DIR/bin/mpiexec)" >&2; exit 2; }
done
mkdir -p "$out"
bench=$out/coll_bench
"$a/bin/mpicc" -O2 -std=c99 -o "$bench" "$top/bench/coll_bench.c"
: >"$out/bench.csv"
: >"$out/commands.txt"
for ((i = 1; i <= rounds; i++)); do
    order="a b"
    [ $((i % 2)) = 0 ] && order="b a"
    for v in $order; do
        d=$a
        [ $v = b ] && d=$b
        cmd=(env FI_PROVIDER=tcp LD_LIBRARY_PATH="$d/lib" "$d/bin/mpiexec" -n "$np" -bind-to core
             -genv LD_LIBRARY_PATH "$d/lib" "$bench" -c "$colls" -a default -n 0 -l "$v"
             -m "$min" -M "$max" -s 2 -i 100 -w 5 -T 0.2 -R 1 -p block -v)
        [ $i = 1 ] && echo "${cmd[*]}" >>"$out/commands.txt"
        "${cmd[@]}" 2>/dev/null | grep -v '^label' >>"$out/bench.csv" || true
    done
    echo "ab.sh: round $i of $rounds done" >&2
done
python3 - "$out/bench.csv" "$a" "$b" "$rounds" >"$out/summary.md" <<'EOF'
import collections, statistics, sys
t = collections.defaultdict(list)
bad = 0
for line in open(sys.argv[1]):
    r = line.rstrip('\n').split(',')
    if len(r) < 21:
        continue
    if r[20] != 'ok' or r[9] != '0':
        bad += 1
        continue
    t[(r[0], r[1], int(r[4]))].append(float(r[14]))
print("# Two builds, alternating launches\n")
print("a = `%s`, b = `%s`, %s rounds. Times in us, the median over calls of the" % tuple(sys.argv[2:5]))
print("slowest process; per size the fastest and the median launch; a/b above 1:")
print("b faster. %d rows not ok.\n" % bad)
print("| collective | bytes | a fastest | b fastest | a/b | a median | b median | a/b |")
print("|---|---|---|---|---|---|---|---|")
for c in sorted({k[1] for k in t}):
    for n in sorted({k[2] for k in t if k[1] == c}):
        x, y = t.get(('a', c, n)), t.get(('b', c, n))
        if not x or not y:
            continue
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            c, n, min(x), min(y), min(x) / min(y), statistics.median(x), statistics.median(y),
            statistics.median(x) / statistics.median(y)))
EOF
cat "$out/summary.md"
