#!/bin/sh
# Install the peers bench/ measures against (Debian, as root or with sudo):
#  - Open MPI 5.0.7, Debian's current Open MPI (coll/han by default), built
#    from Debian's source package into .cache/openmpi-5.0.7 once (its
#    bundled PMIx, PRRTE and libevent, Debian's hwloc and UCX; about 20
#    minutes on 2 cores, so not in CI); kept while its ompi_info says 5.0.7.
#    The source comes from the suite that carries 5.0.7-1, through a
#    private apt configuration derived at run time from this machine's own
#    sources (the same archive, that suite): nothing under /etc changes.
#  - Open MPI 4.1.4, bookworm's (mpicc.openmpi, mpirun.openmpi), as an
#    option (--ompi 4 in the bench scripts);
#  - matplotlib for the plots, run with /usr/bin/python3; util-linux
#    (unshare) and iproute2 (ip) give each launch a private loopback.
# Without them the bench scripts skip the peer runs and the plots.
# Usage: bench/install-peers.sh [--no-ompi5]
# Prints the Open MPI 5.0.7 prefix on its last line.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
OMPI5_VERSION=5.0.7
OMPI5_DEB=5.0.7-1
OMPI5_SUITE=${OMPI5_SUITE:-trixie}
prefix=$top/.cache/openmpi-$OMPI5_VERSION
ompi5=yes
[ "${1:-}" = --no-ompi5 ] && ompi5=no

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
    openmpi-bin libopenmpi-dev python3-matplotlib util-linux iproute2 \
    libhwloc-dev libucx-dev xz-utils build-essential flex

[ $ompi5 = yes ] || exit 0
if [ -x "$prefix/bin/ompi_info" ] &&
    "$prefix/bin/ompi_info" --version 2>/dev/null | grep -q "v$OMPI5_VERSION\$"; then
    echo "install-peers: Open MPI $OMPI5_VERSION already built"
    echo "$prefix"
    exit 0
fi

work=$top/.cache/openmpi-src
mkdir -p "$work/apt/sources.list.d" "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
# deb-src stanzas for OMPI5_SUITE from this machine's own deb822 sources
# (the main archive's, not the security or updates suites)
: >"$work/apt/sources.list.d/peer.sources"
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$OMPI5_SUITE" 'BEGIN { RS=""; ORS="\n\n" }
        /(^|\n)Types:[^\n]*deb([ \t]|$|\n)/ && !/Enabled: *no/ && !/-security/ {
            sub(/Types:[^\n]*/, "Types: deb-src"); sub(/Suites:[^\n]*/, "Suites: " suite); print }' \
        "$f" >>"$work/apt/sources.list.d/peer.sources"
done
# one-line format
if [ -f /etc/apt/sources.list ]; then
    grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list | grep -v -- '-security' |
        awk -v suite="$OMPI5_SUITE" '{ $1 = "deb-src"; i = 2; if ($2 ~ /^\[/) i = 3;
            $(i + 1) = suite; print }' >"$work/apt/sources.list.d/peer.list" || true
fi
aptopt="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$work/apt/sources.list.d
    -o Dir::State::Lists=$work/apt/lists -o Dir::Cache=$work/apt/cache"
if ! ls "$work"/openmpi_"$OMPI5_VERSION".orig.tar.* >/dev/null 2>&1; then
    echo "install-peers: fetching the Debian source package openmpi $OMPI5_DEB ($OMPI5_SUITE)"
    # shellcheck disable=SC2086
    apt-get $aptopt update -q >"$work/apt-update.log" 2>&1
    # (apt checks the files against the suite's signed index)
    # shellcheck disable=SC2086
    (cd "$work" && apt-get $aptopt source --download-only "openmpi=$OMPI5_DEB") \
        >"$work/apt-source.log" 2>&1 || {
        tail -5 "$work/apt-source.log"
        echo "install-peers: apt-get source openmpi=$OMPI5_DEB failed" >&2
        exit 1
    }
fi
src=$work/openmpi-$OMPI5_VERSION
if [ ! -f "$src/configure" ]; then
    rm -rf "$src"
    tar -C "$work" -xf "$work"/openmpi_"$OMPI5_VERSION".orig.tar.*
fi
echo "install-peers: building Open MPI $OMPI5_VERSION into $prefix (about 20 minutes on 2 cores)"
mkdir -p "$work/build"
cd "$work/build"
"$src/configure" --prefix="$prefix" --with-ucx --with-hwloc=external \
    --with-libevent=internal --with-pmix=internal --with-prrte=internal \
    --disable-mpi-fortran --disable-oshmem --disable-sphinx \
    >"$work/configure.log" 2>&1 || {
    tail -20 "$work/configure.log"
    exit 1
}
make -j"$(nproc)" >"$work/make.log" 2>&1 || {
    grep -E 'error' "$work/make.log" | head -20
    exit 1
}
make install >"$work/install.log" 2>&1
"$prefix/bin/ompi_info" --version | head -1
echo "$prefix"
