#!/bin/sh
#
# MPIR_CVAR_CH4_YIELD_WHEN_IDLE: CH4's blocking waits give the processor
# away between idle polls when it says so (on, or auto on an oversubscribed
# node), and never otherwise (off, MPICH's own behaviour).  yield_wait.c's
# rank 1 waits 300 ms in MPI_Recv; yield_count.c, preloaded, counts its
# sched_yield calls meanwhile.  Without the CVAR every count is 0.
# Usage: yield.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"

"$prefix/bin/mpicc" -o "$tmp/yield_wait" "$top/test/system/yield_wait.c" -ldl >"$tmp/out" 2>&1 &&
    cc -shared -fPIC -o "$tmp/yield_count.so" "$top/test/system/yield_count.c" -ldl >>"$tmp/out" 2>&1 ||
    { notok "build yield_wait.c and yield_count.c"; tap_summary yield; exit 1; }

yields() { sed -n 's/^yields \([0-9-]*\) value 42$/\1/p' "$tmp/out"; }
wait_run() {    # NP [NAME=VALUE...]: yield_wait on NP processes of one node
    np=$1
    shift
    run "$@" "$np" -genv LD_PRELOAD "$tmp/yield_count.so" "$tmp/yield_wait"
}

wait_run 2 MPIR_CVAR_CH4_YIELD_WHEN_IDLE=on
y=$(yields)
check "on: a 300 ms MPI_Recv yields the processor between polls (yields: ${y:-none})" \
    '[ $rc = 0 ] && [ -n "$y" ] && [ "$y" -gt 10 ]'

wait_run 2 MPIR_CVAR_CH4_YIELD_WHEN_IDLE=off
y=$(yields)
check "off: the same wait never yields (MPICH's polling; yields: ${y:-none})" \
    '[ $rc = 0 ] && [ "$y" = 0 ]'

ncpu=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpu" -ge 2 ]; then
    wait_run 2
    y=$(yields)
    check "auto, 2 processes on $ncpu processors: polls only (yields: ${y:-none})" \
        '[ $rc = 0 ] && [ "$y" = 0 ]'
fi
if [ "$ncpu" -le 8 ]; then
    wait_run $((ncpu + 1))
    y=$(yields)
    check "auto, $((ncpu + 1)) processes on $ncpu processors: yields (yields: ${y:-none})" \
        '[ $rc = 0 ] && [ -n "$y" ] && [ "$y" -gt 10 ]'
fi

wait_run 2 MPIR_CVAR_CH4_YIELD_WHEN_IDLE=sometimes
check "a value that is not auto, on or off is refused at MPI_Init, naming the CVAR" \
    '[ $rc != 0 ] && grep -q "MPIR_CVAR_CH4_YIELD_WHEN_IDLE" "$tmp/out"'

tap_summary yield
