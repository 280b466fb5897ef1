#!/bin/bash
# Your application on Debian's MPICH and on mpich-topo, same launcher,
# same settings: the wall time of each and their ratio.
set -eu

usage() {
    cat <<'EOF'
Usage: bench/compare-mpich.sh [options] [--] PROGRAM [ARGS...]

Runs PROGRAM, a binary built against Debian's MPICH (it needs
libmpich.so.12), twice per repeat, alternately: with Debian's libmpich.so.12
and with mpich-topo's, both launched by mpich-topo's mpiexec (MPICH 4.0.2's
Hydra, the same as Debian's) with the same options and environment. Prints
each run's wall time, the median of each library, and the ratio
Debian / mpich-topo (above 1: mpich-topo is faster).

Options:
  -n NP              processes (default 4)
  --prefix DIR       mpich-topo install (default: install-ucx, else
                     install-ofi; Debian's MPICH is ch4:ucx, and startup
                     alone differs by device: an empty MPI program took
                     0.35 s on ucx, 0.65 s on ofi, here, 2 processes)
  --debian-lib DIR   folder holding Debian's libmpich.so.12 (default: the
                     system's, where the libmpich12 package is installed;
                     else it is fetched with apt-get download into
                     .cache/debian-mpich, without installing anything)
  --repeat R         runs per library (default 3)
  --timeout S        seconds per run (default 600)
  -e NAME=VALUE      environment for both libraries (repeatable)
  --mpiexec-opts "…" extra mpiexec options for both (e.g. "-bind-to core")
  -h, --help         this text

The program runs in the current folder (input files are read from there).
Its output goes to compare-mpich-out/{debian,topo}-N.txt.
Measure what you will run: on a 2-core machine with more processes than
cores, Debian's MPICH busy-polls and can be many times slower for that
reason alone.
EOF
}

top=$(cd "$(dirname "$0")/.." && pwd)
np=4
prefix=
deblib=
repeat=3
tmo=600
envs=()
mopts=
while [ $# -gt 0 ]; do
    case $1 in
        -n) np=$2; shift ;;
        --prefix) prefix=$2; shift ;;
        --debian-lib) deblib=$2; shift ;;
        --repeat) repeat=$2; shift ;;
        --timeout) tmo=$2; shift ;;
        -e) envs+=("$2"); shift ;;
        --mpiexec-opts) mopts=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "compare-mpich.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
[ $# -gt 0 ] || { usage >&2; exit 2; }
prog=$1
shift
command -v "$prog" >/dev/null 2>&1 || [ -x "$prog" ] ||
    { echo "compare-mpich.sh: $prog: not found" >&2; exit 2; }

if [ -z "$prefix" ]; then
    for p in "$top/install-ucx" "$top/install-ofi"; do
        [ -x "$p/bin/mpiexec" ] && [ -e "$p/lib/libmpich.so.12" ] && { prefix=$p; break; }
    done
fi
[ -n "$prefix" ] && [ -e "$prefix/lib/libmpich.so.12" ] || {
    echo "compare-mpich.sh: no mpich-topo install with libmpich.so.12 (build it: ./demo.sh)" >&2
    exit 2
}

arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
if [ -z "$deblib" ]; then
    if [ -e "/usr/lib/$arch/libmpich.so.12" ]; then
        deblib=/usr/lib/$arch
    else
        . "$top/maint/topo-common.sh"
        topo_fetch_debs "$top/.cache/debian-mpich" libmpich12 ||
            { echo "compare-mpich.sh: cannot get Debian's libmpich12" >&2; exit 1; }
        deblib=$top/.cache/debian-mpich/root/usr/lib/$arch
    fi
fi
[ -e "$deblib/libmpich.so.12" ] ||
    { echo "compare-mpich.sh: $deblib has no libmpich.so.12" >&2; exit 2; }

# Each library comes first on the path; a program's other libraries
# (ScaLAPACK, HDF5, ...) keep coming from wherever they are.
libpath() {
    echo "$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}
loaded() {
    LD_LIBRARY_PATH=$(libpath "$1") ldd "$(command -v "$prog" || echo "$prog")" 2>/dev/null |
        sed -n 's/^[[:space:]]*libmpich\.so\.12 => \([^ ]*\).*/\1/p'
}
echo "program:    $prog $*  (-n $np${mopts:+ $mopts})"
echo "debian:     $(readlink -f "$(loaded "$deblib")")"
echo "mpich-topo: $(readlink -f "$(loaded "$prefix/lib")")"

out=compare-mpich-out
mkdir -p "$out"
declare -A times
for r in $(seq 1 "$repeat"); do
    for lib in debian topo; do
        if [ $lib = debian ]; then dir=$deblib; else dir=$prefix/lib; fi
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        if env "${envs[@]}" LD_LIBRARY_PATH="$(libpath "$dir")" timeout "$tmo" \
            "$prefix/bin/mpiexec" -n "$np" $mopts "$prog" "$@" >"$out/$lib-$r.txt" 2>&1; then
            t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
        else
            rc=$?
            t=fail
            echo "  $lib run $r: exit status $rc (output: $out/$lib-$r.txt)"
        fi
        times[$lib]="${times[$lib]:-} $t"
        printf '  run %d %-10s %s s\n' "$r" "$lib" "$t"
    done
done

median() {
    tr ' ' '\n' | grep -v '^$' | grep -v fail | sort -g |
        awk '{v[NR]=$1} END {if (NR == 0) print "fail"; else if (NR % 2) print v[(NR+1)/2];
             else print (v[NR/2] + v[NR/2+1]) / 2}'
}
md=$(echo "${times[debian]}" | median)
mt=$(echo "${times[topo]}" | median)
echo "median:     debian $md s, mpich-topo $mt s"
if [ "$md" != fail ] && [ "$mt" != fail ]; then
    echo "ratio:      $(awk -v a="$md" -v b="$mt" 'BEGIN {printf "%.2f", a / b}')x  (debian / mpich-topo; above 1: mpich-topo faster)"
fi
