#!/bin/sh
#
# mpich-topo test command: installs what is missing, builds MPICH with our
# tree for ch4:ucx and ch4:ofi (incrementally when already built), then runs
#   1. the unit tests of the topology logic (test/unit, no MPI);
#   2. per device (ofi over the tcp provider): MPICH's own coll tests with
#      each of our algorithms forced and with the built-in tuning, at 1-17
#      processes, with and without emulated nodes (cliques by block and
#      round-robin, uneven), -bind-to core and a fake 2-package hwloc
#      topology, plus our own MPI tests in test/mpi/coll (topo_*.c);
#   3. per device, the checks in test/topo/: selection.sh, tuning.sh,
#      defaults.sh, trace.sh, yield.sh, split.sh, faults.sh, dropin.sh; on ofi also
#      autotune.sh, bench/run.sh --smoke, cluster.sh (network namespaces),
#      large.sh (2 GiB calls) and valgrind.sh;
#   4. that no run left segments in /dev/shm.
# Ends with a line "N passed, N failed"; exit status 0 only if nothing failed.
#
# Usage: ./check.sh [--devices "ucx ofi"] [--quick]
#   --quick   fewer process counts and variations (a few minutes per device)
# Environment: JOBS (make -j, default: number of cores)

set -u

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
devices="ucx ofi"
quick=no
while [ $# -gt 0 ]; do
    case $1 in
        --devices) devices=$2; shift ;;
        --quick) quick=yes ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

. "$top/maint/topo-common.sh"

passed=0
failed=0
failures=""
note_result() {     # name status(0=ok)
    if [ "$2" = 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures="$failures
  FAILED: $1"
    fi
}

# tally FILE LABEL: count the "ok"/"not ok" lines of a TAP-like file, print
# and remember the failures; sets tally_count and tally_failed
tally() {
    tp=$(grep -c '^ok ' "$1" 2>/dev/null)
    tf=$(grep -c '^not ok ' "$1" 2>/dev/null)
    passed=$((passed + ${tp:-0}))
    failed=$((failed + ${tf:-0}))
    grep '^not ok ' "$1" >"$1.failed" 2>/dev/null
    while IFS= read -r l; do
        echo "  $2 $l"
        failures="$failures
  FAILED: $2 $l"
    done <"$1.failed"
    rm -f "$1.failed"
    tally_count=$((${tp:-0} + ${tf:-0}))
    tally_failed=${tf:-0}
}

# tap_script NAME LOG SCRIPT ARGS...: run one of test/topo/*.sh (sh) with
# its output in LOG, count its ok/not ok lines, and count a non-zero exit
# that no "not ok" line explains
tap_script() {
    ts_name=$1
    ts_log=$2
    shift 2
    sh "$@" >"$ts_log" 2>&1
    ts_rc=$?
    tally "$ts_log" "$ts_name"
    if [ $ts_rc != 0 ] && [ "$tally_failed" = 0 ]; then
        note_result "$ts_name: $(basename "$1") exited $ts_rc" 1
    fi
}

topo_ensure_deps || exit 1
topo_autogen || exit 1

# ------------------------------------------------------------ unit tests
echo "== unit tests (topology logic, no MPI)"
unit_out=$(make -s -C test/unit check 2>&1)
unit_rc=$?
echo "$unit_out" | tail -25
up=$(echo "$unit_out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' | tail -1)
uf=$(echo "$unit_out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' | tail -1)
passed=$((passed + ${up:-0}))
failed=$((failed + ${uf:-0}))
if [ $unit_rc != 0 ] && [ "${uf:-0}" = 0 ]; then
    note_result "unit tests (make -C test/unit check exited $unit_rc)" 1
fi

# ------------------------------------------------------------ MPI tests
# testlist lines: "prog np env=..." ; written per device into the build tree
gen_testlist() {    # device
    dev=$1
    if [ $quick = yes ]; then
        nps_ag="1 3 4"; nps_bc="2 5"; big=4
    else
        nps_ag="1 2 3 4 5 8"; nps_bc="1 2 3 4 5 8"; big=8
    fi
    ag="env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring env=MPIR_CVAR_COLLECTIVE_FALLBACK=error"
    bc="env=MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree env=MPIR_CVAR_COLLECTIVE_FALLBACK=error"
    small="env=MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE=1000"
    bind="mpiexecarg=-bind-to mpiexecarg=core"
    # two packages with a NUMA node each, as an hwloc XML file: a testlist
    # env= value cannot hold the spaces of an HWLOC_SYNTHETIC string
    fake2pkg="env=HWLOC_XMLFILE=$fake2pkg_xml env=HWLOC_THISSYSTEM=1"
    c2="env=MPIR_CVAR_NUM_CLIQUES=2"
    c3b="env=MPIR_CVAR_NUM_CLIQUES=3 env=MPIR_CVAR_CLIQUES_BY_BLOCK=1"
    c4b="env=MPIR_CVAR_NUM_CLIQUES=4 env=MPIR_CVAR_CLIQUES_BY_BLOCK=1"
    # MPICH's own tests
    for np in $nps_ag; do
        echo "allgather2 $np $ag"
        echo "allgather3 $np $ag $c2"
        echo "allgather_struct $np $ag $c3b"
    done
    for np in $nps_bc; do
        echo "bcasttest $np $bc"
        echo "bcasttest $np $bc $c2 $small"
        echo "bcastzerotype $np $bc $c3b"
    done
    echo "bcasttest 4 $bc $c2 $bind"
    echo "allgather2 4 $ag $c2 $bind"
    echo "allgatherv2 4 $ag $c2"
    # ours: shuffled/split communicators, pipelined counts, derived types
    echo "topo_allgather $big $ag $c2 $bind"
    echo "topo_allgather 5 $ag $c3b"
    echo "topo_allgather 4 $ag $bind $fake2pkg"
    echo "topo_allgather 3 $ag"
    echo "topo_bcast $big $bc $c2 $bind"
    echo "topo_bcast 5 $bc $c3b env=MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE=16384"
    echo "topo_bcast 4 $bc $bind $fake2pkg"
    echo "topo_bcast 7 $bc $c4b env=MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE=0"
    # the forced bcast must also work with CH4 device collectives off, and
    # both algorithms through the generated MPICH CVAR test list
    echo "topo_bcast 4 $bc $c2 env=MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0"
    # the shared-memory + network engine (topo_pipeline, topo_multileader)
    fb="env=MPIR_CVAR_COLLECTIVE_FALLBACK=error"
    agp="env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline $fb"
    agm="env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_multileader $fb"
    bcp="env=MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline $fb"
    arp="env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline $fb"
    chunk="env=MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=4096"
    nocma="env=MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=-1"
    # CMA is off by default for bcast and from 4 MiB for allgather: force it
    cma="env=MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=32768 env=MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD=32768"
    lead2="env=MPIR_CVAR_TOPO_LEADERS_PER_NODE=2"
    echo "allgather2 4 $agp $c2"
    echo "allgather3 5 $agp $c3b"
    echo "allgather_struct 3 $agp"
    echo "topo_allgather $big $agp $c2 $bind $cma"
    echo "topo_allgather 5 $agp $c3b $nocma"
    echo "topo_allgather 4 $agp $c2 $lead2 $chunk"
    echo "topo_allgather 6 $agp $c4b"
    echo "topo_allgather 4 $agp $bind $fake2pkg $cma"
    echo "topo_allgather 3 $agp"
    echo "allgather2 4 $agm $c2"
    echo "topo_allgather 5 $agm $c3b $chunk"
    echo "topo_allgather 4 $agm $bind $fake2pkg"
    echo "topo_allgather 7 $agm $c2 $lead2"
    echo "bcasttest 4 $bcp $c2 $cma"
    echo "bcasttest 5 $bcp $c3b $chunk"
    echo "bcastzerotype 3 $bcp"
    echo "topo_bcast $big $bcp $c2 $bind $cma"
    echo "topo_bcast 5 $bcp $c3b $nocma"
    echo "topo_bcast 4 $bcp $bind $fake2pkg $cma"
    echo "topo_bcast 6 $bcp $c4b $lead2 $chunk"
    echo "topo_bcast 3 $bcp"
    echo "allred 4 $arp $c2 arg=-count=100"
    echo "allred 5 $arp $c3b $chunk arg=-count=100"
    echo "allred2 4 $arp $c2"
    # one node: small calls right after multi-round ones (slot reuse)
    echo "allred2 4 $arp"
    echo "allred5 5 $arp $c2"
    # non-commutative user ops must fall back, in rank order
    arps="env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline env=MPIR_CVAR_COLLECTIVE_FALLBACK=silent"
    echo "allred3 4 $arps $c2"
    echo "allred4 4 $arps $c2"
    echo "allred6 4 $arps $c2 $lead2"
    if [ -f "$top/test/mpi/coll/topo_allreduce.c" ]; then
        echo "topo_allreduce 4 $arp $c2 $bind arg=-userops=0"
        echo "topo_allreduce 5 env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline env=MPIR_CVAR_COLLECTIVE_FALLBACK=silent $c3b $chunk"
        echo "topo_allreduce 4 $arp $bind $fake2pkg arg=-userops=0"
    fi
    # the built-in tuning picks ours (one node: bcast, allreduce, allgather
    # below 32 KiB; several nodes: allgather): MPICH's tests with
    # no CVAR set
    echo "bcasttest 4 $bind"
    echo "bcastzerotype 3"
    # (allred's own checks overflow from -count=127 on, with any algorithm)
    echo "allred 3 arg=-count=120"
    echo "allred 4 $bind arg=-count=120"
    echo "allred2 4 $bind"
    echo "allred3 4"
    echo "allred6 5"
    echo "allredmany 4"
    echo "allgather2 4 $c2"
    echo "allgather3 5 $c3b $bind"
    echo "allgather_struct 4 $c2"
    echo "allgatherv2 4 $c2"
    echo "coll2 5"
    echo "coll6 5 $c2"
    echo "coll9 4"
    echo "icallgather 5"
    echo "icbcast 5"
    echo "icallreduce 5"
    echo "op_commutative 2"
    echo "uoplong 4"
    if [ -f "$top/test/mpi/coll/topo_stress.c" ]; then
        echo "topo_stress 4 $bind"
        echo "topo_stress 5 $c3b"
    fi
    # same signature, different layouts (issue 12): every algorithm the
    # built-in tuning can pick (no CVAR), ours and MPICH's forced, one node
    # and emulated nodes; user ops called with the predefined type must
    # give the same answer as MPICH's network algorithms
    if [ -f "$top/test/mpi/coll/topo_mixed.c" ]; then
        fbs="env=MPIR_CVAR_COLLECTIVE_FALLBACK=silent"
        rg="env=MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD=0"
        echo "topo_mixed 4"
        echo "topo_mixed 4 $c2 $bind"
        echo "topo_mixed 5 $c3b"
        echo "topo_mixed 4 env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline $fbs $chunk"
        echo "topo_mixed 4 env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline $fbs $c2 $lead2"
        echo "topo_mixed 4 env=MPIR_CVAR_REDUCE_INTRA_ALGORITHM=topo_pipeline $fbs $chunk"
        echo "topo_mixed 5 env=MPIR_CVAR_REDUCE_INTRA_ALGORITHM=topo_pipeline $fbs $c2 $lead2"
        echo "topo_mixed 3 env=MPIR_CVAR_REDUCE_POSIX_INTRA_ALGORITHM=release_gather env=MPIR_CVAR_ALLREDUCE_POSIX_INTRA_ALGORITHM=release_gather env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=auto $rg"
        echo "topo_mixed 4 env=MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline $fbs $c2 $cma"
        echo "topo_mixed 4 env=MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_ring $fbs $c2"
        echo "topo_mixed 5 env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_multileader $fbs $c3b"
        # progress counters restart from 0 mid-run (MPIDI_Topo_rounds)
        echo "topo_mixed 4 $c2 $chunk env=MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT=300"
    fi
    # one process per node: only the network step runs, on the user's comm
    c3="env=MPIR_CVAR_NUM_CLIQUES=3"
    echo "topo_allgather 3 $agp $c3"
    echo "topo_bcast 3 $bcp $c3"
    echo "allred 2 $arp $c2 arg=-count=100"
    echo "reduce 3 env=MPIR_CVAR_REDUCE_INTRA_ALGORITHM=topo_pipeline $fb $c3"
    # the barrier: nobody leaves before the last enters, on one node (all
    # poll), across nodes (leaders meet), one process per node, by default,
    # and across a restart of the progress counters
    if [ -f "$top/test/mpi/coll/topo_barrier.c" ]; then
        bap="env=MPIR_CVAR_BARRIER_INTRA_ALGORITHM=topo_flags $fb"
        echo "topo_barrier 4 $bap $bind"
        echo "topo_barrier 5 $bap $c2"
        echo "topo_barrier 3 $bap $c3"
        echo "topo_barrier 3"
        echo "topo_barrier 4 $bap $c2 env=MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT=300"
        # more than 16 on a node: one process polls, the others wait on it
        [ $quick = yes ] || echo "topo_barrier 17 $bap"
    fi
    # persistent collectives started again and again with new data: the
    # built-in tuning, then each of MPICH's schedules forced (patch 0020)
    if [ -f "$top/test/mpi/coll/topo_persist.c" ]; then
        pi="env=MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM"
        pb="env=MPIR_CVAR_IBCAST_INTRA_ALGORITHM"
        pa="env=MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM"
        pr="env=MPIR_CVAR_IREDUCE_INTRA_ALGORITHM"
        pg="env=MPIR_CVAR_IGATHER_INTRA_ALGORITHM"
        ps="env=MPIR_CVAR_ISCATTER_INTRA_ALGORITHM"
        echo "topo_persist 4"
        echo "topo_persist 3 $c2"
        echo "topo_persist 4 $pi=sched_recursive_doubling $pb=sched_binomial $pa=sched_recursive_doubling $pr=sched_binomial $pg=sched_binomial $ps=sched_binomial"
        echo "topo_persist 2 $pi=sched_recursive_doubling $pg=sched_binomial $ps=sched_binomial"
        echo "topo_persist 5 $pi=sched_brucks $pb=sched_scatter_recursive_doubling_allgather $pa=sched_reduce_scatter_allgather $pr=sched_reduce_scatter_gather"
        echo "topo_persist 4 $pi=sched_ring $pb=sched_scatter_ring_allgather $pa=sched_naive $pr=sched_smp $c2"
        echo "topo_persist 4 $pi=tsp_ring $pb=tsp_tree $pa=tsp_ring $pr=tsp_tree $pg=tsp_tree $ps=tsp_tree"
        echo "topo_persist 3 $pi=tsp_brucks $pb=tsp_scatterv_recexch_allgatherv $pa=tsp_recexch_single_buffer $pr=tsp_ring"
        [ $quick = yes ] || echo "topo_persist 8 $pi=tsp_recexch_doubling $pb=tsp_ring $pa=tsp_recexch_reduce_scatter_recexch_allgatherv $c3b"
    fi
    # the engine's nonblocking and persistent calls (issue 15): many at once
    # on several communicators, completed in any order; persistent ones
    # started thousands of times.  On one node none may fall back; with
    # emulated nodes a half communicator can have one process per node,
    # where they must (silent)
    if [ -f "$top/test/mpi/coll/topo_nb.c" ]; then
        nbp="env=MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM=topo_pipeline env=MPIR_CVAR_IBCAST_INTRA_ALGORITHM=topo_pipeline env=MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM=topo_pipeline"
        fbs="env=MPIR_CVAR_COLLECTIVE_FALLBACK=silent"
        echo "topo_nb 4 $nbp $fb $bind"
        echo "topo_nb 3 $nbp $fb $chunk $cma arg=-starts=300"
        echo "topo_nb 5 $nbp $fbs $c2 $chunk arg=-starts=200"
        echo "topo_nb 6 $nbp $fbs $c3b $lead2 arg=-starts=200"
        echo "topo_nb 4 $nbp $fbs $c2 arg=-fresh"
        echo "topo_nb 4 $nbp $fbs $c2 env=MPIR_CVAR_TOPO_DEBUG_ROUNDS_LEFT=300 arg=-starts=500"
        echo "topo_nb 4"
        # MPICH's own nonblocking and persistent tests with the engine forced.
        # MPIR_CVAR_TOPO_EAGER_SETUP sets it up on every communicator as it
        # is created, so the nonblocking calls run it from their first one:
        # on one node nothing may fall back (user ops and mixed types aside)
        eager="env=MPIR_CVAR_TOPO_EAGER_SETUP=1"
        echo "nonblocking 4 $nbp $eager $fb"
        echo "iallred 2 $nbp $eager $fb"
        echo "nonblocking2 1 $nbp $eager $fb"
        echo "nonblocking2 4 $nbp $eager $fbs"
        echo "nonblocking3 3 $nbp $eager $fbs"
        echo "allred 4 arg=-count=100 env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=nb $nbp $eager $fb"
        echo "allgather2 3 env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=nb $nbp $eager $fb"
        echo "bcasttest 4 env=MPIR_CVAR_BCAST_INTRA_ALGORITHM=nb $nbp $eager $fb"
        echo "p_allgather 4 $nbp $fb"
        echo "p_allred 4 $nbp $fb"
        echo "p_bcast 4 $nbp $fb"
        echo "p_bcast2 5 $nbp $fb"
        # emulated nodes by block and round-robin
        echo "nonblocking 5 $nbp $eager $fbs $c2"
        echo "nonblocking2 6 $nbp $eager $fbs $c3b"
        echo "allred 7 arg=-count=10 env=MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=nb $nbp $eager $fbs $c3b $chunk"
        echo "bcasttest 5 env=MPIR_CVAR_BCAST_INTRA_ALGORITHM=nb $nbp $eager $fbs $c2 $chunk"
        echo "allgather3 4 env=MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=nb $nbp $eager $fbs $c2"
        echo "p_bcast2 8 $nbp $fbs $c3b"
        echo "p_allred 4 $nbp $fbs $c2"
        echo "p_allgather 6 $nbp $fbs $c3b"
    fi
    if [ -f "$top/test/mpi/coll/topo_stress.c" ]; then
        echo "topo_stress 4 $agp $bcp $arp $c2 $bind $cma"
        echo "topo_stress 5 $agp $bcp $arp $c3b $lead2 $chunk"
    fi
    if [ $quick = no ]; then
        echo "topo_allgather 6 $ag $c4b"
        echo "topo_bcast 3 $bc"
        echo "topo_allgather 8 $ag env=MPIR_CVAR_NUM_CLIQUES=3"
        echo "topo_bcast 6 $bc env=MPIR_CVAR_NUM_CLIQUES=4 $bind"
        grep -E 'ALGORITHM=topo_' "$builddir/mpich/test/mpi/coll/testlist.cvar" 2>/dev/null
    fi
}

run_device() {      # device
    dev=$1
    builddir=$top/build-$dev
    prefix=$top/install-$dev
    topo_build "$dev" || { note_result "build ch4:$dev" 1; return; }
    coll=$builddir/mpich/test/mpi/coll
    echo "== ch4:$dev: building test programs"
    make -s -C "$builddir/mpich/test/mpi/util" >/dev/null 2>&1 ||
        { note_result "ch4:$dev test util build" 1; return; }
    fake2pkg_xml=$builddir/fake2pkg.xml
    HWLOC_SYNTHETIC="pack:2 numa:1 core:1 pu:1" lstopo-no-graphics --of xml >"$fake2pkg_xml" ||
        note_result "ch4:$dev: lstopo-no-graphics could not write a 2-package topology" 1
    gen_testlist "$dev" >"$coll/testlist.topo"
    progs="$(awk '{print $1}' "$coll/testlist.topo" | sort -u) icallgather bcasttest topo_allgather"
    # shellcheck disable=SC2086
    make -s -j"$JOBS" -C "$coll" $progs >/dev/null 2>&1 ||
        { note_result "ch4:$dev test programs build" 1; return; }
    echo "== ch4:$dev: $(wc -l <"$coll/testlist.topo") MPI test runs"
    env_dev=""
    [ "$dev" = ofi ] && env_dev="FI_PROVIDER=tcp"
    rm -f "$coll/summary-topo.tap"
    (cd "$coll" && env $env_dev MPITEST_TIMEOUT_MULTIPLIER=3 \
        ../runtests -srcdir=. -tests=testlist.topo -mpiexec="$prefix/bin/mpiexec" \
        -xmlfile=summary-topo.xml -tapfile=summary-topo.tap -showprogress 2>&1 |
        grep -E '^(Running|not ok|ok|Summary|[0-9]+ tests)|Failed|Unexpected' | grep -v '^ok' | tail -40)
    tally "$coll/summary-topo.tap" "ch4:$dev"
    total=$(wc -l <"$coll/testlist.topo")
    if [ "$tally_count" -lt "$total" ]; then
        note_result "ch4:$dev: only $tally_count of $total test runs reported" 1
    fi

    # selection through a user tuning file, and the error paths
    tap_script "ch4:$dev selection" "$builddir/selection.log" "$top/test/topo/selection.sh" "$prefix" "$coll" "$dev"
    # tuning files: every error case, warn, and the topology predicates
    tap_script "ch4:$dev tuning" "$builddir/tuning.log" "$top/test/topo/tuning.sh" "$prefix" "$coll" "$dev"
    # the built-in tuning: ours where it should be, MPICH's elsewhere
    tap_script "ch4:$dev defaults" "$builddir/defaults.log" "$top/test/topo/defaults.sh" "$prefix" "$dev"
    # "which algorithm ran": trace table, per-call lines, fallbacks, MPI_T
    tap_script "ch4:$dev trace" "$builddir/trace.log" "$top/test/topo/trace.sh" "$prefix" "$coll" "$dev"
    # MPIR_CVAR_CH4_YIELD_WHEN_IDLE: blocking waits yield when told to or
    # oversubscribed, never otherwise
    tap_script "ch4:$dev yield" "$builddir/yield.log" "$top/test/topo/yield.sh" "$prefix" "$dev"
    # the autotuner: known measurements route as measured, bad input is
    # rejected, a short real run writes files MPICH runs with (~30 s)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev autotune" "$builddir/autotune.log" "$top/test/topo/autotune.sh" "$prefix" "$dev"
    fi
    # the benchmark suite's smoke run: every algorithm validated on 2-4
    # processes, forced ones seen in COLL_TRACE, bytes above the bound
    if [ "$dev" = ofi ]; then
        bash "$top/bench/run.sh" --smoke >"$builddir/bench-smoke.log" 2>&1
        note_result "ch4:$dev bench/run.sh --smoke (log: build-$dev/bench-smoke.log)" $?
    fi
    # the emulated cluster: 2 network namespaces x 2 processes started by
    # Hydra, shaped NICs, every result validated, per-node NIC counters
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev cluster" "$builddir/cluster.log" "$top/test/topo/cluster.sh" "$prefix" "$dev"
    fi
    # MPI_COMM_TYPE_HW_GUIDED against hwloc's own answer
    tap_script "ch4:$dev split" "$builddir/split.log" "$top/test/topo/split.sh" "$prefix" "$dev"
    # fault injection: CMA refused mid-call, a process killed mid-call
    tap_script "ch4:$dev faults" "$builddir/faults.log" "$top/test/topo/faults.sh" "$prefix" "$dev"
    # drop-in: Debian's ScaLAPACK LU test (built against Debian's MPICH)
    # on this build under libmpich.so.12, default and each algorithm forced
    tap_script "ch4:$dev dropin" "$builddir/dropin.log" "$top/test/topo/dropin.sh" "$prefix" "$dev"
    # calls of more than 2 GiB per process (about 2 minutes; the engine's
    # arithmetic is the same on both devices)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev large" "$builddir/large.log" "$top/test/topo/large.sh" "$prefix" "$dev"
    fi
    # memcheck of the engine algorithms (ofi: its tcp provider runs cleanly
    # under valgrind; about a minute)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev valgrind" "$builddir/valgrind.log" "$top/test/topo/valgrind.sh" "$dev"
    fi
    topo_check_shm_leaks "ch4:$dev" || note_result "ch4:$dev left segments in /dev/shm" 1
}

for d in $devices; do
    run_device "$d"
done

[ -n "$failures" ] && echo "$failures"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
