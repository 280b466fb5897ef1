#!/bin/sh
#
# mpich-topo test command: installs what is missing, builds MPICH with our
# tree for ch4:ucx and ch4:ofi (incrementally when already built), then runs
#   1. the unit tests of the topology logic (test/unit, no MPI), and that
#      doc/cvars.md is what the sources' CVAR blocks give;
#   2. MPICH's own coll tests with each of our algorithms forced and with
#      the built-in tuning, at 1-17 processes, with and without emulated
#      nodes (cliques by block and round-robin, uneven), -bind-to core and
#      a fake 2-package hwloc topology, plus our own MPI tests in
#      test/mpi/coll (topo_*.c): the runs of test/mpi/coll/testlist.topo
#      (and testlist.topo-full), ofi over the tcp provider.  With several
#      devices the devices share the runs, line by line in turn, ucx three
#      lines of every four (a run over ofi's tcp provider takes about
#      1.7x as long, and ofi has more checks of its own in step 3), so
#      that the whole check fits CI's 90 minutes;
#      --full runs every line on every device;
#   3. the checks in test/system/: selection.sh, tuning.sh, trace.sh (the
#      selection's logic) and dropin.sh (the library's names), the same on
#      every device, on the first device only but with --full; per device
#      defaults.sh, yield.sh, waits.sh, warmup.sh, anysource.sh, split.sh,
#      faults.sh, apps.sh; on ofi also
#      autotune.sh, bench/run.sh --smoke, cluster.sh (network namespaces),
#      large.sh (2 GiB calls) and valgrind.sh;
#   4. that no run left segments in /dev/shm.
# Ends with a line "N passed, N failed"; exit status 0 only if nothing failed.
#
# Usage: ./check.sh [--devices "ucx ofi"] [--quick] [--full]
#   --quick   fewer process counts and variations (a few minutes per device)
#   --full    every MPI test run on every device (the MPI runs'
#             time with two devices goes from about 18 to 42 minutes)
# Environment: JOBS (make -j, default: number of cores)

set -u

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
devices="ucx ofi"
quick=no
full=no
while [ $# -gt 0 ]; do
    case $1 in
        --devices) devices=$2; shift ;;
        --quick) quick=yes ;;
        --full) full=yes ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "check.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

. "$top/maint/topo-common.sh"

passed=0
failed=0
# seconds since the start, printed with each step so that a slow CI run
# shows where its time went
check_t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - check_t0 )); }
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

# tap_script NAME LOG SCRIPT ARGS...: run one of test/system/*.sh (sh) with
# its output in LOG, count its ok/not ok lines, and count a non-zero exit
# that no "not ok" line explains
tap_script() {
    ts_name=$1
    ts_log=$2
    shift 2
    ts_t0=$(date +%s)
    sh "$@" >"$ts_log" 2>&1
    ts_rc=$?
    tally "$ts_log" "$ts_name"
    echo "-- $ts_name: $tally_count checks, $tally_failed failed, $(( $(date +%s) - ts_t0 )) s (at $(elapsed) s)"
    if [ $ts_rc != 0 ] && [ "$tally_failed" = 0 ]; then
        note_result "$ts_name: $(basename "$1") exited $ts_rc" 1
    fi
}

topo_ensure_deps || exit 1
topo_autogen || exit 1

# ------------------------------------------------------------ unit tests
echo "== unit tests (topology logic, no MPI) (at $(elapsed) s)"
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

# ------------------------------------------------------------ docs
# the CVAR reference is what the sources' CVAR blocks give, every CVAR
# described (doc/cvars.md, maint/gen-cvar-doc.py)
echo "== docs (doc/cvars.md against the CVAR blocks)"
python3 "$top/maint/gen-cvar-doc.py" --check
note_result "doc/cvars.md documents every CVAR as the sources say (maint/gen-cvar-doc.py)" $?

# ------------------------------------------------------------ MPI tests
# the matrix is test/mpi/coll/testlist.topo (and testlist.topo-full)

# a device's share of the MPI test runs, in lines of each cycle of the
# devices' shares
dev_share() { if [ "$1" = ucx ]; then echo 3; else echo 1; fi; }

run_device() {      # device index share-offset
    dev=$1
    dev_index=$2
    dev_offset=$3
    # the checks that are the same on every device: the first one's
    dev_once=no
    [ "$dev_index" = 0 ] || [ $full = yes ] && dev_once=yes
    builddir=$top/build-$dev
    prefix=$top/install-$dev
    topo_build "$dev" || { note_result "build ch4:$dev" 1; return; }
    coll=$builddir/mpich/test/mpi/coll
    echo "== ch4:$dev: building test programs (at $(elapsed) s)"
    make -s -C "$builddir/mpich/test/mpi/util" >/dev/null 2>&1 ||
        { note_result "ch4:$dev test util build" 1; return; }
    # (testlist.topo's 2-package topology, read relative to this directory)
    HWLOC_SYNTHETIC="pack:2 numa:1 core:1 pu:1" lstopo-no-graphics --of xml >"$coll/topo_2pkg.xml" ||
        note_result "ch4:$dev: lstopo-no-graphics could not write a 2-package topology" 1
    cp "$top/test/mpi/coll/testlist.topo" "$coll/testlist.topo"
    lists=testlist.topo
    if [ $quick = no ]; then
        cp "$top/test/mpi/coll/testlist.topo-full" "$coll/testlist.topo-full"
        grep -E 'ALGORITHM=topo_' "$coll/testlist.cvar" >"$coll/testlist.topo-cvar" 2>/dev/null
        lists=testlist.topo,testlist.topo-full,testlist.topo-cvar
    fi
    # the runs: every line that is not a comment; this device's share
    runs=$(cd "$coll" && echo "$lists" | tr , '\n' | xargs cat | sed 's/#.*//' | grep -v '^[[:space:]]*$')
    all=$(echo "$runs" | wc -l)
    if [ $full = no ] && [ "$ndevices" -gt 1 ]; then
        # (each cycle of lines shifted by one, so that a list's groups of
        # the same size do not give one device always the same member)
        runs=$(echo "$runs" | awk -v c="$share_cycle" -v o="$dev_offset" -v n="$(dev_share "$dev")" \
            '{ k = (NR - 1 + int((NR - 1) / c)) % c } k >= o && k < o + n')
        echo "$runs" >"$coll/testlist.share"
        lists=testlist.share
        share=" (its share of $all)"
    else
        share=""
    fi
    total=$(echo "$runs" | wc -l)
    # (and the programs that test/system runs)
    progs="$(echo "$runs" | awk '{print $1}' | sort -u) icallgather bcasttest topo_allgather topo_bcast topo_order nonblocking iallred allred3 allgather2"
    # shellcheck disable=SC2086
    make -s -j"$JOBS" -C "$coll" $progs >/dev/null 2>&1 ||
        { note_result "ch4:$dev test programs build" 1; return; }
    echo "== ch4:$dev: $total MPI test runs$share ($lists) (at $(elapsed) s)"
    env_dev=""
    [ "$dev" = ofi ] && env_dev="FI_PROVIDER=tcp"
    rm -f "$coll/summary-topo.tap"
    mt_t0=$(date +%s)
    (cd "$coll" && env $env_dev MPITEST_TIMEOUT_MULTIPLIER=3 \
        ../runtests -srcdir=. -tests=$lists -mpiexec="$prefix/bin/mpiexec" \
        -xmlfile=summary-topo.xml -tapfile=summary-topo.tap -showprogress 2>&1 |
        grep -E '^(Running|not ok|ok|Summary|[0-9]+ tests)|Failed|Unexpected' | grep -v '^ok' | tail -40)
    tally "$coll/summary-topo.tap" "ch4:$dev"
    echo "-- ch4:$dev MPI tests: $tally_count runs, $tally_failed failed, $(( $(date +%s) - mt_t0 )) s (at $(elapsed) s)"
    if [ "$tally_count" -lt "$total" ]; then
        note_result "ch4:$dev: only $tally_count of $total test runs reported" 1
    fi

    if [ $dev_once = yes ]; then
        # selection through a user tuning file, and the error paths
        tap_script "ch4:$dev selection" "$builddir/selection.log" "$top/test/system/selection.sh" "$prefix" "$coll" "$dev"
        # tuning files: every error case, warn, and the topology predicates
        tap_script "ch4:$dev tuning" "$builddir/tuning.log" "$top/test/system/tuning.sh" "$prefix" "$coll" "$dev"
        # "which algorithm ran": trace table, per-call lines, fallbacks, MPI_T
        tap_script "ch4:$dev trace" "$builddir/trace.log" "$top/test/system/trace.sh" "$prefix" "$coll" "$dev"
    fi
    # the built-in tuning: ours where it should be, MPICH's elsewhere
    tap_script "ch4:$dev defaults" "$builddir/defaults.log" "$top/test/system/defaults.sh" "$prefix" "$dev"
    # MPIR_CVAR_CH4_YIELD_WHEN_IDLE: blocking waits yield when told to or
    # oversubscribed, never otherwise
    tap_script "ch4:$dev yield" "$builddir/yield.log" "$top/test/system/yield.sh" "$prefix" "$dev"
    # the engine's short waits make no netmod poll; long ones still progress
    tap_script "ch4:$dev waits" "$builddir/waits.log" "$top/test/system/waits.sh" "$prefix" "$dev"
    # intra-node messages take no faults on the shared cells after MPI_Init
    tap_script "ch4:$dev warmup" "$builddir/warmup.log" "$top/test/system/warmup.sh" "$prefix" "$dev"
    # receives from any source, from this node and from others
    tap_script "ch4:$dev anysource" "$builddir/anysource.log" "$top/test/system/anysource.sh" "$prefix" "$dev"
    # the autotuner: known measurements route as measured, bad input is
    # rejected, a short real run writes files MPICH runs with (~30 s)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev autotune" "$builddir/autotune.log" "$top/test/system/autotune.sh" "$prefix" "$dev"
    fi
    # the benchmark suite's smoke run: every algorithm validated on 2-4
    # processes, forced ones seen in COLL_TRACE, bytes above the bound
    if [ "$dev" = ofi ]; then
        bs_t0=$(date +%s)
        bash "$top/bench/run.sh" --smoke >"$builddir/bench-smoke.log" 2>&1
        note_result "ch4:$dev bench/run.sh --smoke (log: build-$dev/bench-smoke.log)" $?
        echo "-- ch4:$dev bench smoke: $(( $(date +%s) - bs_t0 )) s (at $(elapsed) s)"
    fi
    # the emulated cluster: 2 network namespaces x 2 processes started by
    # Hydra, shaped NICs, every result validated, per-node NIC counters
    # (ucx: only the two-NIC checks, its per-process interface choice)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev cluster" "$builddir/cluster.log" "$top/test/system/cluster.sh" "$prefix" "$dev"
    else
        tap_script "ch4:$dev cluster" "$builddir/cluster.log" "$top/test/system/cluster.sh" "$prefix" "$dev" rails
    fi
    # MPI_COMM_TYPE_HW_GUIDED against hwloc's own answer
    tap_script "ch4:$dev split" "$builddir/split.log" "$top/test/system/split.sh" "$prefix" "$dev"
    # fault injection: CMA refused mid-call, a process killed mid-call
    tap_script "ch4:$dev faults" "$builddir/faults.log" "$top/test/system/faults.sh" "$prefix" "$dev"
    # drop-in: Debian's ScaLAPACK LU test (built against Debian's MPICH)
    # on this build under libmpich.so.12, default and each algorithm forced
    # (the library's names are the same on every device: the first only)
    if [ $dev_once = yes ]; then
        tap_script "ch4:$dev dropin" "$builddir/dropin.log" "$top/test/system/dropin.sh" "$prefix" "$dev"
    fi
    # real applications as Debian built them: NWChem and BAGEL energies,
    # default and each algorithm forced (about 2 minutes)
    tap_script "ch4:$dev apps" "$builddir/apps.log" "$top/test/system/apps.sh" "$prefix" "$dev"
    # calls of more than 2 GiB per process (about 2 minutes; the engine's
    # arithmetic is the same on both devices)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev large" "$builddir/large.log" "$top/test/system/large.sh" "$prefix" "$dev"
    fi
    # memcheck of the engine algorithms (ofi: its tcp provider runs cleanly
    # under valgrind; about a minute)
    if [ "$dev" = ofi ]; then
        tap_script "ch4:$dev valgrind" "$builddir/valgrind.log" "$top/test/system/valgrind.sh" "$dev"
    fi
    topo_check_shm_leaks "ch4:$dev" || note_result "ch4:$dev left segments in /dev/shm" 1
}

ndevices=$(echo $devices | wc -w)
share_cycle=0
for d in $devices; do
    share_cycle=$((share_cycle + $(dev_share "$d")))
done
dev_i=0
dev_next=0
for d in $devices; do
    dev_off=$dev_next
    dev_next=$((dev_off + $(dev_share "$d")))
    run_device "$d" $dev_i $dev_off
    dev_i=$((dev_i + 1))
done
[ -n "$failures" ] && echo "$failures"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
