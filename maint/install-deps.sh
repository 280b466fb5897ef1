#!/bin/sh
# Install what building and testing mpich-topo needs on Debian (run as root).
# Also enables deb-src entries, derived from the machine's own apt sources, so
# that autogen.sh can fetch the MPICH source with `apt-get source`.
set -eu

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

add_deb_src() {
    list=/etc/apt/sources.list.d/mpich-topo-src.sources
    [ -f "$list" ] && return 0
    tmp=$(mktemp)
    # deb822 files: copy every stanza with Types: deb-src.
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        [ "$f" = "$list" ] && continue
        awk 'BEGIN { RS=""; ORS="\n\n" }
             /(^|\n)Types:[^\n]*deb([ \t]|$|\n)/ && !/Enabled: *no/ {
                 sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$tmp"
    done
    # one-line format: deb URI suite comps -> deb-src URI suite comps
    if [ -f /etc/apt/sources.list ]; then
        grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list |
            sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' >"$tmp.list" || true
        if [ -s "$tmp.list" ]; then
            $SUDO cp "$tmp.list" /etc/apt/sources.list.d/mpich-topo-src.list
        fi
        rm -f "$tmp.list"
    fi
    if [ -s "$tmp" ]; then
        $SUDO cp "$tmp" "$list"
    fi
    rm -f "$tmp"
}

add_deb_src
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
    build-essential gfortran autoconf automake libtool python3 perl xz-utils dpkg-dev \
    libhwloc-dev hwloc-nox libucx-dev libfabric-dev libjson-c-dev valgrind strace
