#!/bin/sh
# Copy the shared libraries that an MPICH install and the built benchmark
# load (as ldd finds them here) into one folder, so that both run on a bare
# machine of the same architecture with LD_LIBRARY_PATH pointing there (the
# lent GPU machine: see bench/README.md). The C library and the dynamic
# loader stay out: the machine's own are used.
#   bench/pack-libs.sh [--device ofi|ucx] [--out DIR] [--skip GLOB]... [FILE...]
#   (default DIR: build-bench/libs)
# FILEs: more programs and libraries whose libraries to take too; --skip:
# libraries (their paths as ldd prints them) that travel some other way.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dev=ofi
out=$top/build-bench/libs
skips=
while [ $# -gt 0 ]; do
    case $1 in
        --device) dev=$2; shift ;;
        --out) out=$2; shift ;;
        --skip) skips="$skips $2"; shift ;;
        -*) echo "usage: $0 [--device ofi|ucx] [--out DIR] [--skip GLOB]... [FILE...]" >&2; exit 2 ;;
        *) break ;;
    esac
    shift
done
prefix=$top/install-$dev
mkdir -p "$out"
files="$prefix/lib/libmpi.so $prefix/bin/mpiexec.hydra $prefix/bin/hydra_pmi_proxy"
[ -x "$top/build-bench/$dev/coll_bench" ] && files="$files $top/build-bench/$dev/coll_bench"
# libfabric loads its providers with dlopen: take those too
for d in /usr/lib/x86_64-linux-gnu/libfabric /usr/lib/libfabric; do
    [ -d "$d" ] && [ "$dev" = ofi ] && files="$files $(ls "$d"/*.so 2>/dev/null || true)"
done
for f in $files "$@"; do
    ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do
    case $lib in "$prefix"/*) continue ;; esac     # carried with the install
    skip=no
    for g in $skips; do
        # shellcheck disable=SC2254
        case $lib in $g) skip=yes ;; esac
    done
    [ $skip = no ] || continue
    case $(basename "$lib") in
        libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*) continue ;;
    esac
    cp -L "$lib" "$out/"
done
echo "pack-libs: $(ls "$out" | wc -l) libraries, $(du -sh "$out" | cut -f1), in $out"
