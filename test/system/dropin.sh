#!/bin/sh
#
# Drop-in: Fortran (use mpi and use mpi_f08) and MPI-IO programs build
# against this build (its mpif90 and ROMIO, dropin_fortran.f90,
# dropin_f08.f90 and dropin_io.c), a program built against Debian's
# parallel HDF5 runs on it (dropin_hdf5.c), a C program that
# passes MPI_STATUSES_IGNORE builds with -Werror (dropin_statuses.c), and a
# program that Debian built against its own MPICH runs on it unchanged.
# That program is ScaLAPACK's LU test (xdlu, from Debian's
# scalapack-mpi-test, linked to libmpich.so.12 through
# libscalapack-mpich.so.2.2), fetched with apt-get download and unpacked
# into .cache/debian (nothing is installed into the system).  It runs on 4
# processes with our library under Debian's name (the libmpich.so.12 that
# `make install` provides, patch 0018), with the built-in selection and
# with each of our algorithms forced, on one node and on two emulated
# nodes; every run must report all its residual checks passed,
# and MPIR_CVAR_COLL_TRACE must show that our algorithms ran.  Skipped,
# with the reason, where apt cannot get the packages.
# Usage: dropin.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"
. "$top/maint/topo-common.sh"
tap_timeout=180

check "make install provides libmpich.so.12, Debian's name for MPICH's library" \
    '[ "$(readlink -f "$prefix/lib/libmpich.so.12")" = "$(readlink -f "$prefix/lib/libmpi.so.12")" ]'

# Fortran (use mpi) and MPI-IO, 4 processes, on one node and on 2 emulated
# nodes (cliques); the trace must show our algorithms under the Fortran
# calls
if [ -x "$prefix/bin/mpif90" ]; then
    "$prefix/bin/mpif90" -O2 -w -o "$tmp/fortran" "$top/test/system/dropin_fortran.f90" \
        >"$tmp/out" 2>&1 && rc=0 || rc=1
    check "a Fortran program builds with this build's mpif90 (libmpifort.so.12, mpi.mod)" \
        '[ $rc = 0 ] && [ -e "$prefix/lib/libmpichfort.so.12" ]'
    for env in "" MPIR_CVAR_NUM_CLIQUES=2; do
        # shellcheck disable=SC2086
        run MPIR_CVAR_COLL_TRACE=1 $env 4 "$tmp/fortran"
        check "Fortran allreduce (MINLOC on MPI_2DOUBLE_PRECISION, in place), bcast, allgather, reduce${env:+, $env}: right, through our algorithms" \
            '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -qE "^mpich-topo: +allreduce +topo_pipeline" "$tmp/out"'
    done
    # use mpi_f08: blocking, nonblocking (three outstanding) and persistent
    # calls; with the built-in selection the persistent ones run ours, with
    # the nonblocking CVARs set every nonblocking call does
    "$prefix/bin/mpif90" -O2 -w -o "$tmp/f08" "$top/test/system/dropin_f08.f90" \
        >"$tmp/out" 2>&1 && rc=0 || rc=1
    check "a Fortran 2008 program builds with this build's mpif90 (use mpi_f08)" \
        '[ $rc = 0 ] && [ -e "$prefix/include/mpi_f08.mod" ]'
    for cl in 1 2; do
        run MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=$cl 4 "$tmp/f08"
        check "use mpi_f08: allreduce, reduce, Iallreduce + Ibcast + Iallgather outstanding together, Allreduce_init + Bcast_init + Allgather_init started 4 times, $cl node(s): right, persistent calls through our algorithms" \
            '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -qE "^mpich-topo: +iallgather +topo_pipeline +selection +parent +4: [1-9]" "$tmp/out"'
        run MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=$cl \
            MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM=topo_pipeline \
            MPIR_CVAR_IBCAST_INTRA_ALGORITHM=topo_pipeline \
            MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM=topo_pipeline 4 "$tmp/f08"
        check "use mpi_f08, the nonblocking CVARs set to topo_pipeline, $cl node(s): right, every nonblocking and persistent call through it" \
            '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" &&
             grep -qE "^mpich-topo: +iallreduce +topo_pipeline +cvar +parent +4: 5\$" "$tmp/out" &&
             grep -qE "^mpich-topo: +ibcast +topo_pipeline +cvar +parent +4: 5\$" "$tmp/out" &&
             grep -qE "^mpich-topo: +iallgather +topo_pipeline +cvar +parent +4: 5\$" "$tmp/out"'
    done
else
    ok "Fortran programs on this build # SKIP no mpif90 (built without a Fortran compiler)"
fi
"$prefix/bin/mpicc" -O2 -o "$tmp/io" "$top/test/system/dropin_io.c" >"$tmp/out" 2>&1 && rc=0 || rc=1
check "an MPI-IO program builds (ROMIO)" '[ $rc = 0 ]'
for env in "" MPIR_CVAR_NUM_CLIQUES=2; do
    # shellcheck disable=SC2086
    run $env 4 "$tmp/io" "$tmp/io.dat"
    check "MPI-IO collective write, interleaved collective read${env:+, $env}: every int right" \
        '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ ! -e "$tmp/io.dat" ]'
done
"$prefix/bin/mpicc" -O2 -Wall -Werror -c -o "$tmp/statuses.o" \
    "$top/test/system/dropin_statuses.c" >"$tmp/out" 2>&1 && rc=0 || rc=1
check "a program passing MPI_STATUSES_IGNORE to MPI_Waitall, _Testall, _Waitsome and _Testsome builds with -O2 -Wall -Werror" \
    '[ $rc = 0 ]'

cache=$top/.cache/debian
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
lib=$cache/root/usr/lib/$arch

# Parallel HDF5 as Debian built it (libhdf5-mpich, linked to libmpich.so.12)
# over ours: a collective write and a collective read in another
# decomposition, every element checked (dropin_hdf5.c); HDF5 duplicates the
# communicator, so MPIR_CVAR_TOPO_EAGER_SETUP makes its few calls there run
# the engine at once, and the trace must show them
if topo_fetch_debs "$cache" libhdf5-mpich-dev libhdf5-mpich-103-1 libsz2 libaec0 2>"$tmp/why"; then
    "$prefix/bin/mpicc" -O2 -I"$cache/root/usr/include/hdf5/mpich" -o "$tmp/h5" \
        "$top/test/system/dropin_hdf5.c" -L"$lib/hdf5/mpich" -lhdf5 -Wl,-rpath-link,"$lib" \
        >"$tmp/out" 2>&1 && rc=0 || rc=1
    if [ $rc = 0 ] && LD_LIBRARY_PATH="$prefix/lib:$lib" ldd "$tmp/h5" 2>&1 | grep -q 'not found'; then
        ok "parallel HDF5 on this build # SKIP $(LD_LIBRARY_PATH="$prefix/lib:$lib" ldd "$tmp/h5" 2>&1 | grep 'not found' | head -1)"
    else
        check "a parallel HDF5 program builds against Debian's libhdf5-mpich-dev with this build's mpicc" \
            '[ $rc = 0 ]'
        resolved=$(LD_LIBRARY_PATH="$prefix/lib:$lib" ldd "$tmp/h5" 2>&1 |
            sed -n 's/^[[:space:]]*libmpi\(ch\)\{0,1\}\.so\.12 => \([^ ]*\).*/\2/p' | head -1)
        check "it and Debian's libhdf5_mpich.so.103 load libmpich.so.12 from this build ($resolved)" \
            '[ "$(readlink -f "$resolved")" = "$(readlink -f "$prefix/lib/libmpi.so.12")" ]'
        for cl in 1 2; do
            for env in "" MPIR_CVAR_TOPO_EAGER_SETUP=1; do
                # shellcheck disable=SC2086
                run LD_LIBRARY_PATH="$prefix/lib:$lib" MPIR_CVAR_COLL_TRACE=1 \
                    MPIR_CVAR_NUM_CLIQUES=$cl $env 4 "$tmp/h5" "$tmp/h5.dat"
                if [ -n "$env" ]; then
                    check "HDF5 collective write and read-back on 4 processes, $cl node(s), $env: every element right, our algorithms ran" \
                        '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ ! -e "$tmp/h5.dat" ] &&
                         grep -qE "^mpich-topo: +allreduce +topo_pipeline +selection +parent +4: [1-9]" "$tmp/out"'
                else
                    check "HDF5 collective write and read-back on 4 processes, $cl node(s), built-in selection: every element right" \
                        '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ ! -e "$tmp/h5.dat" ]'
                fi
            done
        done
        for forced in BCAST:bcast:topo_tree ALLGATHER:allgather:topo_ring \
            ALLGATHER:allgather:topo_multileader BARRIER:barrier:topo_flags; do
            C=${forced%%:*}
            rest=${forced#*:}
            coll=${rest%%:*}
            algo=${rest#*:}
            run LD_LIBRARY_PATH="$prefix/lib:$lib" MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=2 \
                "MPIR_CVAR_${C}_INTRA_ALGORITHM=$algo" 4 "$tmp/h5" "$tmp/h5.dat"
            check "HDF5, $coll $algo forced, 2 node(s): every element right, it ran" \
                '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" &&
                 grep -qE "^mpich-topo: +$coll +$algo +cvar +parent +4: [1-9]" "$tmp/out"'
        done
    fi
else
    ok "parallel HDF5 on this build # SKIP $(cat "$tmp/why")"
fi

if ! topo_fetch_debs "$cache" scalapack-mpi-test libscalapack-mpich2.2 scalapack-test-common \
    2>"$tmp/why"; then
    ok "Debian's ScaLAPACK tests on this build # SKIP $(cat "$tmp/why")"
    tap_summary dropin
    exit
fi
tests=$cache/root/usr/lib/$arch/scalapack/mpich-tests
# only ScaLAPACK's library next to ours: Debian's libmpich.so.12 is never
# on the path
mkdir -p "$tmp/lib" "$tmp/run"
ln -s "$cache/root/usr/lib/$arch/libscalapack-mpich.so.2.2" "$tmp/lib/"
export LD_LIBRARY_PATH="$prefix/lib:$tmp/lib"
cp "$tests/LU.dat" "$tmp/run/"
cd "$tmp/run" || exit 1

resolved=$(ldd "$tests/xdlu" 2>&1 | sed -n 's/^[[:space:]]*libmpich\.so\.12 => \([^ ]*\).*/\1/p')
check "Debian's xdlu loads libmpich.so.12 from this build ($resolved)" \
    '[ "$(readlink -f "$resolved")" = "$(readlink -f "$prefix/lib/libmpi.so.12")" ]'

# ScaLAPACK's own verdict: every test it finished passed its residual check
lu_passed() {
    fin=$(sed -n 's/^Finished *\([0-9]*\) tests.*/\1/p' "$tmp/out")
    pass=$(sed -n 's/^ *\([0-9]*\) tests completed and passed residual checks.*/\1/p' "$tmp/out")
    [ "$rc" = 0 ] && [ -n "$fin" ] && [ "$fin" -gt 0 ] && [ "$pass" = "$fin" ] &&
        grep -q 'END OF TESTS' "$tmp/out"
}

# ran COLL ALGO: the trace table of some process counts calls of ALGO
ran() {
    grep -q -E "^mpich-topo:   $1 +$2 " "$tmp/out"
}

run MPIR_CVAR_COLL_TRACE=1 4 "$tests/xdlu"
check "xdlu, built-in selection: all residual checks passed" lu_passed
check "xdlu, built-in selection: our algorithms ran (COLL_TRACE)" \
    'grep -q -E "^mpich-topo:   [a-z]+ +topo_" "$tmp/out"'

# Emulated nodes on both devices.  On ch4:ucx xdlu made no progress there
# before maint/patches/0046: BLACS sums receive from any source, and such
# a receive matched from another node never completed.
cliques="1 2"
run MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=2 4 "$tests/xdlu"
check "xdlu, built-in selection, 2 emulated nodes: all residual checks passed" lu_passed

for forced in BCAST:bcast:topo_pipeline BCAST:bcast:topo_tree \
    ALLREDUCE:allreduce:topo_pipeline REDUCE:reduce:topo_pipeline \
    BARRIER:barrier:topo_flags ALLGATHER:allgather:topo_pipeline \
    ALLGATHER:allgather:topo_ring ALLGATHER:allgather:topo_multileader; do
    C=${forced%%:*}
    rest=${forced#*:}
    coll=${rest%%:*}
    algo=${rest#*:}
    for cl in $cliques; do
        run MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_NUM_CLIQUES=$cl \
            "MPIR_CVAR_${C}_INTRA_ALGORITHM=$algo" 4 "$tests/xdlu"
        check "xdlu, $coll $algo forced, $cl node(s): all residual checks passed" lu_passed
        if grep -q -E "^mpich-topo:   $coll " "$tmp/out"; then
            check "xdlu, $coll $algo forced, $cl node(s): it ran (COLL_TRACE)" "ran $coll $algo"
        fi
    done
done

tap_summary dropin
