#!/bin/sh
#
# Writes MPICH 4.0.2's own built-in tuning files, as they were before
# maint/patches/*-tuning-select-* (0010-tuning-select-ch4-json.patch and
# 0017-tuning-select-mpir-json.patch) made the built-in tuning pick our
# algorithms, to OUTDIR/mpir.json and OUTDIR/ch4.json. Benchmarks and the
# demo load them (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE,
# MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE) to measure "MPICH's
# default" against mpich-topo's.
# Usage: maint/stock-tuning.sh OUTDIR   (needs ./autogen.sh to have run)

set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: maint/stock-tuning.sh OUTDIR}
src=$top/mpich/maint/tuning/coll
[ -r "$src/mpir/generic.json" ] || { echo "stock-tuning: run ./autogen.sh first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/maint/tuning/coll/mpir" "$tmp/maint/tuning/coll/ch4" "$out"
cp "$src/mpir/generic.json" "$tmp/maint/tuning/coll/mpir/"
cp "$src/ch4/generic.json" "$tmp/maint/tuning/coll/ch4/"
# every patch that made the built-in tuning pick ours, last first
for p in $(ls "$top"/maint/patches/*-tuning-select-*.patch | sort -r); do
    patch -s -R -p1 -d "$tmp" <"$p"
done
cp "$tmp/maint/tuning/coll/mpir/generic.json" "$out/mpir.json"
cp "$tmp/maint/tuning/coll/ch4/generic.json" "$out/ch4.json"
