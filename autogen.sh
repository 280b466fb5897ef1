#!/bin/sh
#
# mpich-topo autogen: obtain the MPICH 4.0.2 source, verify it, lay our tree
# over it, apply maint/patches/ in order and regenerate what MPICH generates.
# Safe to re-run: only files that changed are copied, only patches that
# changed are re-applied.
#
# Usage: ./autogen.sh [--quick]
#   --quick  skip the full autotools regeneration; only re-run MPICH's code
#            generators (gen_coll.py, extractcvars, tuning JSON, error
#            messages). Enough after editing .c/.h/cvars/coll_algorithms.txt/
#            JSON in an already generated tree; a configured build tree
#            re-runs automake by itself when a Makefile.mk changes.
# Environment:
#   MPICH_TARBALL  path to a local mpich_4.0.2.orig.tar.xz (else apt-get source)
#   MPICH_DIR      where the MPICH tree lives (default: ./mpich)

set -eu

MPICH_VERSION=4.0.2
MPICH_DEB_VERSION=4.0.2-3
MPICH_SHA256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
TARBALL_NAME=mpich_${MPICH_VERSION}.orig.tar.xz

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
MPICH_DIR=${MPICH_DIR:-$top/mpich}
cache=$top/.cache

quick=no
for arg in "$@"; do
    case $arg in
        --quick) quick=yes ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "autogen.sh: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

say() { echo "autogen: $*"; }
die() { echo "autogen: error: $*" >&2; exit 1; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------- source
fetch_tarball() {
    if [ -n "${MPICH_TARBALL:-}" ]; then
        [ -r "$MPICH_TARBALL" ] || die "MPICH_TARBALL=$MPICH_TARBALL is not readable"
        tarball=$MPICH_TARBALL
    else
        tarball=$cache/$TARBALL_NAME
        if [ ! -f "$tarball" ]; then
            mkdir -p "$cache"
            say "fetching the Debian source package mpich $MPICH_DEB_VERSION (apt-get source)"
            if ! (cd "$cache" && apt-get source --download-only "mpich=$MPICH_DEB_VERSION" >apt-source.log 2>&1); then
                cat "$cache/apt-source.log" >&2
                die "apt-get source failed; run maint/install-deps.sh (it enables deb-src entries) or set MPICH_TARBALL"
            fi
        fi
    fi
    sum=$(sha256_of "$tarball")
    [ "$sum" = "$MPICH_SHA256" ] ||
        die "$tarball has sha256 $sum, expected $MPICH_SHA256"
    say "source verified: $tarball"
}

extract_source() {
    if [ -f "$MPICH_DIR/.topo-extracted" ]; then
        return 0
    fi
    fetch_tarball
    tmp=$(mktemp -d "$top/.extract.XXXXXX")
    say "extracting into $MPICH_DIR"
    tar -C "$tmp" -xJf "$tarball"
    [ -d "$tmp/mpich-$MPICH_VERSION" ] || die "tarball does not contain mpich-$MPICH_VERSION/"
    rm -rf "$MPICH_DIR"
    mv "$tmp/mpich-$MPICH_VERSION" "$MPICH_DIR"
    rmdir "$tmp"
    # the pristine file list tells overlay files apart from MPICH's own
    (cd "$MPICH_DIR" && find . -type f | sort) >"$MPICH_DIR/.topo-pristine-files"
    touch "$MPICH_DIR/.topo-extracted"
}

# ---------------------------------------------------------------- overlay
# Our own files live at their MPICH paths under src/, test/mpi/ and maint/.
overlay_list() {
    # src/ and test/mpi/ mirror MPICH's tree; of maint/ only subdirectories
    # other than patches/ do (maint/*.sh and maint/patches/ are our tooling)
    { find src test/mpi -type f 2>/dev/null
      find maint -mindepth 2 -type f 2>/dev/null | grep -v '^maint/patches/'; } |
        grep -v -e '\.o$' -e '~$' -e '\.orig$' -e '\.rej$' | sort
}

lay_overlay() {
    new_list=$(mktemp)
    overlay_list >"$new_list"
    while IFS= read -r f; do
        if grep -qxF "./$f" "$MPICH_DIR/.topo-pristine-files"; then
            die "$f would overwrite MPICH's own file; change MPICH files with a patch in maint/patches/"
        fi
        if ! cmp -s "$f" "$MPICH_DIR/$f"; then
            mkdir -p "$MPICH_DIR/$(dirname "$f")"
            cp -p "$f" "$MPICH_DIR/$f"
            say "overlay $f"
        fi
    done <"$new_list"
    # files we laid before but no longer have
    if [ -f "$MPICH_DIR/.topo-overlay-files" ]; then
        comm -23 "$MPICH_DIR/.topo-overlay-files" "$new_list" | while IFS= read -r f; do
            rm -f "$MPICH_DIR/$f" && say "removed stale overlay $f"
        done
    fi
    mv "$new_list" "$MPICH_DIR/.topo-overlay-files"
}

# ---------------------------------------------------------------- patches
# Applied patches are remembered (with their contents) in .topo-patches/; on a
# re-run the applied ones that differ from maint/patches/ are reversed (last
# first) and the current ones applied, so editing a patch is safe.
apply_patches() {
    state=$MPICH_DIR/.topo-patches
    mkdir -p "$state"
    current=$(ls maint/patches/*.patch 2>/dev/null | xargs -n1 basename 2>/dev/null | sort || true)
    applied=$(ls "$state" 2>/dev/null | grep '\.patch$' | sort || true)

    # longest common prefix of identical patches stays applied
    keep=""
    for p in $current; do
        if [ -f "$state/$p" ] && cmp -s "maint/patches/$p" "$state/$p" &&
            [ "$(echo "$applied" | sed -n "$(( $(echo "$keep" | wc -w) + 1 ))p")" = "$p" ]; then
            keep="$keep $p"
        else
            break
        fi
    done
    nkeep=$(echo "$keep" | wc -w)

    # files the patches about to be reverted or applied touch: if one ends
    # up with the same content, it keeps its timestamp (no needless rebuild)
    redo=$( (echo "$applied" | sed -n "$((nkeep + 1)),\$p" | grep . | sed "s|^|$state/|"
             echo "$current" | sed -n "$((nkeep + 1)),\$p" | grep . | sed "s|^|maint/patches/|") ||
            true)
    bk=$MPICH_DIR/.topo-patch-backup
    rm -rf "$bk"
    touched=""
    if [ -n "$redo" ]; then
        touched=$(cat $redo | sed -n 's|^+++ b/||p' | sort -u)
        for f in $touched; do
            if [ -f "$MPICH_DIR/$f" ]; then
                mkdir -p "$bk/$(dirname "$f")"
                cp -p "$MPICH_DIR/$f" "$bk/$f"
            fi
        done
    fi

    # reverse everything applied after the common prefix, newest first
    for p in $(echo "$applied" | sed -n "$((nkeep + 1)),\$p" | sort -r); do
        say "reverting previously applied $p"
        (cd "$MPICH_DIR" && patch -p1 -R -s -f --no-backup-if-mismatch <"$state/$p") ||
            die "could not revert $p; remove $MPICH_DIR and re-run ./autogen.sh"
        rm -f "$state/$p"
    done

    for p in $(echo "$current" | sed -n "$((nkeep + 1)),\$p"); do
        if ! (cd "$MPICH_DIR" && patch -p1 -N -s -f --dry-run <"$top/maint/patches/$p" >/dev/null 2>&1); then
            (cd "$MPICH_DIR" && patch -p1 -N -f --dry-run <"$top/maint/patches/$p") >&2 || true
            die "patch maint/patches/$p does not apply to MPICH $MPICH_VERSION"
        fi
        (cd "$MPICH_DIR" && patch -p1 -N -s -f --no-backup-if-mismatch <"$top/maint/patches/$p")
        cp "maint/patches/$p" "$state/$p"
        say "applied $p"
    done
    for f in $touched; do
        if [ -f "$bk/$f" ] && cmp -s "$bk/$f" "$MPICH_DIR/$f"; then
            cp -p "$bk/$f" "$MPICH_DIR/$f"
        fi
    done
    rm -rf "$bk"
}

# ---------------------------------------------------------------- generate
# Files MPICH's generators rewrite; most are included by every libmpi
# object, so an unchanged file keeps its old timestamp (no full rebuild).
GENERATED="src/mpi/coll/mpir_coll.c src/mpi/coll/include/coll_algos.h src/include/mpir_cvars.h
 src/util/mpir_cvars.c README.envvar src/mpi/coll/src/csel_json_autogen.c src/mpi/errhan/defmsg.h"

# Ours: the names a tuning file may use, from MPICH's selection code (after
# the patches). Writes its output only when it changed.
generate_csel_names() {
    sh "$top/maint/gen_csel_names.sh" "$MPICH_DIR" || die "maint/gen_csel_names.sh failed"
}

generate_quick() {
    cd "$MPICH_DIR"
    bk=.topo-gen-backup
    rm -rf $bk && mkdir -p $bk
    for f in $GENERATED; do
        [ -f "$f" ] && mkdir -p "$bk/$(dirname "$f")" && cp -p "$f" "$bk/$f"
    done
    say "gen_coll.py, extractcvars, tuning JSON, error messages, tuning-file names"
    generate_csel_names
    # called where set -e does not hold: each generator's failure stops us
    python3 maint/gen_coll.py >/dev/null || die "gen_coll.py failed"
    (cd maint && ./configure >/dev/null) || die "maint/configure failed"
    ./maint/extractcvars --dirs="$(cat maint/cvardirs)" >/dev/null || die "extractcvars failed"
    sh maint/tuning/coll/json_gen.sh >/dev/null || die "json_gen.sh failed"
    maint/extracterrmsgs -careful=unusederr.txt -skip=src/util/multichannel/mpi.c \
        $(cat maint/errmsgdirs) >.topo-defmsg.tmp 2>.topo-defmsg.err || true
    if grep -v "Warning:" .topo-defmsg.err | grep -q . || [ ! -s .topo-defmsg.tmp ]; then
        cat .topo-defmsg.err >&2
        die "extracting error messages failed"
    fi
    cmp -s .topo-defmsg.tmp src/mpi/errhan/defmsg.h || cp .topo-defmsg.tmp src/mpi/errhan/defmsg.h
    rm -f .topo-defmsg.tmp .topo-defmsg.err
    for f in $GENERATED; do
        # extractcvars stamps the generation time into its outputs
        if [ -f "$bk/$f" ] && diff -q -I '^ \*   \(on\|at\): ' -I '^  at:   ' "$f" "$bk/$f" >/dev/null; then
            cp -p "$bk/$f" "$f"
        elif [ -f "$bk/$f" ]; then
            say "regenerated $f"
        fi
    done
    rm -rf $bk
    cd "$top"
}

generate_full() {
    say "running MPICH's autogen.sh (about 1-2 minutes)"
    (cd "$MPICH_DIR" && ./autogen.sh -without-ucx -without-ofi -without-hwloc -without-json \
        -without-yaksa -without-romio -without-izem -without-hydra -without-hydra2) \
        >"$top/.cache/mpich-autogen.log" 2>&1 ||
        { tail -40 "$top/.cache/mpich-autogen.log" >&2; die "MPICH autogen.sh failed (log: .cache/mpich-autogen.log)"; }
    generate_csel_names
    say "top-level autoreconf"
    autoreconf -fi --no-recursive >/dev/null 2>&1 || autoreconf -fi --no-recursive
}

mkdir -p "$cache"
extract_source
lay_overlay
apply_patches
if [ $quick = yes ] && [ -f "$MPICH_DIR/.topo-generated" ]; then
    generate_quick
else
    generate_full
    touch "$MPICH_DIR/.topo-generated"
fi
say "done. Next: ./configure --prefix=DIR [--with-device=ch4:ucx|ch4:ofi] && make -j && make install"
