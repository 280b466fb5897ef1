#!/bin/sh
# Prepares build-bench/dev/: what bench/device-run.sh needs on a bare machine
# of the same architecture that has neither a compiler, nor the MPICH
# source, nor Debian's packages (the lent 16-core machine, bench/README.md):
#   coll_bench, coll_bench-openmpi   the benchmark, built here for both MPIs
#   stock/{mpir,ch4}.json            MPICH 4.0.2's own tuning ("MPICH default")
#   ompi.tgz                         Debian's Open MPI 4.1.4 and PMIx, unpacked
#                                    from the packages bench/install-peers.sh
#                                    installed, to run relocated (OPAL_PREFIX)
#   bin/                             ip, tc and lstopo-no-graphics
#   libs/                            every shared library the above load, as
#                                    bench/pack-libs.sh finds them (not libc)
#   commit                           the commit the install was built from
# Carry install-ofi and build-bench/dev (about 40 MiB).
#   bench/device-pack.sh             (after bench/run.sh --smoke has built install-ofi)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dev=$top/build-bench/dev
prefix=$top/install-ofi
[ -x "$prefix/bin/mpicc" ] || { echo "device-pack: no $prefix (bench/run.sh --smoke)" >&2; exit 2; }
command -v mpicc.openmpi >/dev/null || { echo "device-pack: no Open MPI (bench/install-peers.sh)" >&2; exit 2; }
rm -rf "$dev"
mkdir -p "$dev/bin" "$dev/libs"
"$prefix/bin/mpicc" -O2 -std=c99 -o "$dev/coll_bench" "$top/bench/coll_bench.c"
mpicc.openmpi -O2 -std=c99 -o "$dev/coll_bench-openmpi" "$top/bench/coll_bench.c"
sh "$top/maint/stock-tuning.sh" "$dev/stock"
(cd "$top" && git rev-parse --short HEAD) >"$dev/commit"
for t in ip tc lstopo-no-graphics; do
    cp -L "$(command -v "$t")" "$dev/bin/"
done

# Open MPI: the files of its packages, as dpkg installed them
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for p in openmpi-bin libopenmpi3 openmpi-common libpmix2; do
    dpkg -L "$p" | while read -r f; do
        [ -f "$f" ] || [ -L "$f" ] || continue
        case $f in /usr/share/doc/*|/usr/share/man/*|/etc/*) continue ;; esac
        mkdir -p "$root$(dirname "$f")"
        cp -P "$f" "$root$f"
    done
done
tar czf "$dev/ompi.tgz" -C "$root" usr

# the libraries of all of them; MPICH's own travel with install-ofi,
# Open MPI's and PMIx's own in ompi.tgz
o=/usr/lib/x86_64-linux-gnu
sh "$top/bench/pack-libs.sh" --out "$dev/libs" \
    --skip '*/openmpi/*' --skip '*/pmix2/*' --skip '*/libpmix.so*' --skip '*/libmpi.so.40*' \
    --skip '*/libopen-*' --skip '*/liboshmem*' --skip '*/libmca_common_*' \
    "$dev"/bin/* "$dev/coll_bench-openmpi" $o/openmpi/lib/*.so.* $o/openmpi/lib/openmpi3/*.so \
    $o/pmix2/lib/pmix/*.so >/dev/null
echo "device-pack: $(du -sh "$dev" | cut -f1) in $dev, with install-ofi $(du -sh "$prefix" | cut -f1)"
