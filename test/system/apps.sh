#!/bin/sh
#
# Real applications, as Debian built them against its own MPICH, run on
# this build unchanged: NWChem (a B3LYP/6-31G* energy of water: Global
# Arrays over MPI-3 RMA, thousands of small allreduces and bcasts, bcasts
# up to 1 MiB), BAGEL (density-fitted Hartree-Fock and MP2 of water), and
# OpenCoarrays (libcaf_mpich: Fortran 2018 coarrays, whose co_sum, co_min,
# co_max, co_reduce, co_broadcast and sync all are MPI collectives) under
# a coarray program of ours (apps_coarray.f90, built with this build's
# mpif90 -fcoarray=lib).
# The packages (nwchem-mpich, bagel, libcaf-mpich-3 and the libraries they
# need that a build machine lacks) are fetched with apt-get download and
# unpacked into .cache/debian, nothing installed; our library answers to
# Debian's name (libmpich.so.12).  NWChem and BAGEL first run on 1
# process, which gives the reference energy, then on 4 processes with the
# built-in selection (one node; 2 emulated nodes) and with each of our
# algorithms forced (2 emulated nodes); the coarray program checks its own
# results, on 4 images, in the same runs.  On ch4:ucx, NWChem's 2 emulated
# nodes hung in ScaLAPACK's receives from any source before
# maint/patches/0046.  Every run must end normally with the reference
# energy to 1e-8 hartree (the order of the reductions moves the last
# digits only) or "No Errors", and COLL_TRACE must show that the forced
# algorithm ran.
# Skipped, with the reason, where apt cannot get the packages.
# Usage: apps.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"
. "$top/maint/topo-common.sh"
tap_timeout=240

cache=$top/.cache/debian
apps=""
if topo_fetch_debs "$cache" nwchem-mpich nwchem-data bagel libxc9 \
    libboost-serialization1.74.0 libpython3.11 libscalapack-mpich2.2 libblas3 liblapack3 \
    2>"$tmp/why"; then
    apps="nwchem bagel"
else
    ok "NWChem and BAGEL on this build # SKIP $(cat "$tmp/why")"
fi
if topo_fetch_debs "$cache" libcaf-mpich-3 2>"$tmp/why"; then
    apps="$apps coarray"
else
    ok "OpenCoarrays on this build # SKIP $(cat "$tmp/why")"
fi
root=$cache/root
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
lib=$root/usr/lib/$arch
# ours first: Debian's libmpich.so.12 is never fetched, nor on the path
export LD_LIBRARY_PATH="$prefix/lib:$lib:$lib/blas:$lib/lapack"
# NWChem's Global Arrays over MPI-3 RMA: its windows from MPI_Win_create
# (Debian's README.Debian for nwchem-mpich asks for this with MPICH)
export ARMCI_USE_WIN_ALLOCATE=0
export NWCHEM_BASIS_LIBRARY="$root/usr/share/nwchem/libraries/"
export OMP_NUM_THREADS=1 BAGEL_NUM_THREADS=1
mkdir -p "$tmp/run"
cd "$tmp/run" || exit 1

cat >h2o.nw <<EOF
start h2o
permanent_dir $tmp/run
scratch_dir $tmp/run
geometry units angstrom
  O  0.000  0.000  0.117
  H  0.000  0.757 -0.469
  H  0.000 -0.757 -0.469
end
basis
  * library 6-31g*
end
dft
  xc b3lyp
end
task dft energy
EOF
cat >h2o.json <<EOF
{ "bagel" : [
  { "title" : "molecule",
    "basis" : "$root/usr/share/bagel/cc-pvdz.json",
    "df_basis" : "$root/usr/share/bagel/cc-pvdz-jkfit.json",
    "angstrom" : true,
    "geometry" : [
      { "atom" : "O", "xyz" : [ 0.000,  0.000,  0.117 ] },
      { "atom" : "H", "xyz" : [ 0.000,  0.757, -0.469 ] },
      { "atom" : "H", "xyz" : [ 0.000, -0.757, -0.469 ] } ] },
  { "title" : "hf" },
  { "title" : "mp2" }
] }
EOF

# loads_ours BIN: every MPI library that BIN loads (libmpich.so.12 or
# libmpi.so.12, which the loader takes for one another: ours is both) is
# this build's, and nothing is missing
loads_ours() {
    ldd "$1" >"$tmp/ldd" 2>&1 || return 1
    ! grep -q 'not found' "$tmp/ldd" || return 1
    sed -n 's/^[[:space:]]*libmpi\(ch\)\{0,1\}\.so\.12 => \([^ ]*\).*/\2/p' "$tmp/ldd" >"$tmp/mpis"
    [ -s "$tmp/mpis" ] || return 1
    while read -r l; do
        [ "$(readlink -f "$l")" = "$(readlink -f "$prefix/lib/libmpi.so.12")" ] || return 1
    done <"$tmp/mpis"
}
case $apps in *nwchem*)
    check "Debian's nwchem.mpich loads libmpich.so.12 from this build" \
        'loads_ours "$root/usr/bin/nwchem.mpich"' ;;
esac
case $apps in *coarray*)
    if [ ! -x "$prefix/bin/mpif90" ]; then
        ok "a coarray program on this build # SKIP no mpif90 (built without gfortran)"
        apps=${apps%coarray}
    else
        "$prefix/bin/mpif90" -fcoarray=lib -O1 -o "$tmp/coarray" \
            "$top/test/system/apps_coarray.f90" \
            "$lib/open-coarrays/mpich/lib/libcaf_mpich.so.3" >"$tmp/out" 2>&1 && rc=0 || rc=1
        check "a coarray program builds with this build's mpif90 -fcoarray=lib and Debian's OpenCoarrays" \
            '[ $rc = 0 ] && loads_ours "$tmp/coarray"'
    fi ;;
esac

# energy APP: the run's final energy (the coarray program: its "No Errors"),
# empty if it has none
energy() {
    case $1 in
        nwchem) sed -n 's/^ *Total DFT energy = *\([-0-9.]*\).*/\1/p' "$tmp/out" | tail -1 ;;
        bagel) sed -n 's/^ *MP2 total energy: *\([-0-9.]*\).*/\1/p' "$tmp/out" | tail -1 ;;
        coarray) grep -q '^ No Errors$' "$tmp/out" && echo "No Errors" ;;
    esac
}
# same_energy APP REF: the run ended normally with REF (an energy: to 1e-8
# hartree)
same_energy() {
    e=$(energy "$1")
    [ "$1" = coarray ] && { [ "$rc" = 0 ] && [ "$e" = "$2" ]; return; }
    [ "$rc" = 0 ] && [ -n "$e" ] && awk -v a="$e" -v b="$2" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-8) }'
}
# app NAME [VAR=VALUE ...] NP: one run of application NAME
app() {
    a=$1
    shift
    rm -f "$tmp/run"/h2o.[!nj]* 2>/dev/null
    case $a in
        nwchem) run "$@" "$root/usr/bin/nwchem.mpich" h2o.nw ;;
        bagel) run "$@" "$root/usr/bin/BAGEL" h2o.json ;;
        coarray) run "$@" "$tmp/coarray" ;;
    esac
}

for a in $apps; do
    [ $a = coarray ] && [ ! -x "$tmp/coarray" ] && continue
    app $a 1
    ref=$(energy $a)
    check "$a on 1 process: a result ($ref)" '[ "$rc" = 0 ] && [ -n "$ref" ]'
    [ -n "$ref" ] || continue
    for cl in 1 2; do
        app $a MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=$cl 4
        check "$a on 4 processes, built-in selection, $cl node(s): the same result ($(energy $a)), our algorithms ran" \
            'same_energy $a "$ref" && grep -q -E "^mpich-topo:   [a-z]+ +topo_" "$tmp/out"'
    done
    for forced in ALLREDUCE:allreduce:topo_pipeline BCAST:bcast:topo_pipeline \
        BCAST:bcast:topo_tree REDUCE:reduce:topo_pipeline BARRIER:barrier:topo_flags \
        ALLGATHER:allgather:topo_pipeline ALLGATHER:allgather:topo_ring \
        ALLGATHER:allgather:topo_multileader; do
        C=${forced%%:*}
        rest=${forced#*:}
        coll=${rest%%:*}
        algo=${rest#*:}
        app $a MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=2 \
            "MPIR_CVAR_${C}_INTRA_ALGORITHM=$algo" 4
        check "$a, $coll $algo forced, 2 node(s): the same result ($(energy $a))" \
            'same_energy $a "$ref"'
        if grep -q -E "^mpich-topo:   $coll " "$tmp/out"; then
            check "$a, $coll $algo forced, 2 node(s): it ran (COLL_TRACE)" \
                'grep -q -E "^mpich-topo:   $coll +$algo " "$tmp/out"'
        fi
    done
done

tap_summary apps
