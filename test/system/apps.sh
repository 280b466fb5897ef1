#!/bin/sh
#
# Real applications, as Debian built them against its own MPICH, run on
# this build unchanged: NWChem (a B3LYP/6-31G* energy of water: Global
# Arrays over MPI-3 RMA, thousands of small allreduces and bcasts, bcasts
# up to 1 MiB) and BAGEL (density-fitted Hartree-Fock and MP2 of water).
# The packages (nwchem-mpich, bagel and the libraries they need that a
# build machine lacks) are fetched with apt-get download and unpacked into
# .cache/debian, nothing installed; our library answers to Debian's name
# (libmpich.so.12).  Each application first runs on 1 process, which
# gives the reference energy, then on 4 processes with the built-in
# selection (one node; 2 emulated nodes) and with each of our algorithms
# forced (2 emulated nodes).  On ch4:ucx, NWChem's 2 emulated nodes hung
# in ScaLAPACK's receives from any source before maint/patches/0046.
# Every run must end normally with the reference energy to
# 1e-8 hartree (the order of the reductions moves the last digits
# only), and COLL_TRACE must show that the forced algorithm ran.
# Skipped, with the reason, where apt cannot get the packages.
# Usage: apps.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"
. "$top/maint/topo-common.sh"
tap_timeout=240

cache=$top/.cache/debian
if ! topo_fetch_debs "$cache" nwchem-mpich nwchem-data bagel libxc9 \
    libboost-serialization1.74.0 libpython3.11 libscalapack-mpich2.2 libblas3 liblapack3 \
    2>"$tmp/why"; then
    ok "NWChem and BAGEL on this build # SKIP $(cat "$tmp/why")"
    tap_summary apps
    exit
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

resolved=$(ldd "$root/usr/bin/nwchem.mpich" 2>&1 | sed -n 's/^[[:space:]]*libmpich\.so\.12 => \([^ ]*\).*/\1/p')
check "Debian's nwchem.mpich loads libmpich.so.12 from this build ($resolved)" \
    '[ "$(readlink -f "$resolved")" = "$(readlink -f "$prefix/lib/libmpi.so.12")" ]'

# energy APP: the run's final energy, empty if it has none
energy() {
    case $1 in
        nwchem) sed -n 's/^ *Total DFT energy = *\([-0-9.]*\).*/\1/p' "$tmp/out" | tail -1 ;;
        bagel) sed -n 's/^ *MP2 total energy: *\([-0-9.]*\).*/\1/p' "$tmp/out" | tail -1 ;;
    esac
}
# same_energy APP REF: the run ended normally with REF to 1e-8 hartree
same_energy() {
    e=$(energy "$1")
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
    esac
}

for a in nwchem bagel; do
    app $a 1
    ref=$(energy $a)
    check "$a on 1 process: an energy ($ref)" '[ "$rc" = 0 ] && [ -n "$ref" ]'
    [ -n "$ref" ] || continue
    for cl in 1 2; do
        app $a MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=$cl 4
        check "$a on 4 processes, built-in selection, $cl node(s): the same energy ($(energy $a)), our algorithms ran" \
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
        check "$a, $coll $algo forced, 2 node(s): the same energy ($(energy $a))" \
            'same_energy $a "$ref"'
        if grep -q -E "^mpich-topo:   $coll " "$tmp/out"; then
            check "$a, $coll $algo forced, 2 node(s): it ran (COLL_TRACE)" \
                'grep -q -E "^mpich-topo:   $coll +$algo " "$tmp/out"'
        fi
    done
done

tap_summary apps
