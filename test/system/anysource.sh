#!/bin/sh
#
# Receives from MPI_ANY_SOURCE (anysource.c) on 2, 3 and 4 processes, on
# one node and on 2 emulated nodes, so that the senders are on the
# receiver's node, on another, or both: CH4 posts such a receive in shared
# memory and in the netmod at once, and with ch4:ucx one matched from
# another node never completed before maint/patches/0046.  Every message
# must come whole from its sender, and a message longer than the receive
# must fail it with MPI_ERR_TRUNCATE (not on ch4:ofi across emulated nodes:
# libfabric 1.17's tcp provider stalls that connection after a truncated
# receive, ofiwg/libfabric#8274; the sockets provider does not).
# Usage: anysource.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"
tap_timeout=120

"$prefix/bin/mpicc" -O2 -o "$tmp/anysource" "$top/test/system/anysource.c" >"$tmp/out" 2>&1 ||
    { notok "build anysource.c"; tap_summary anysource; exit 1; }

for cl in 1 2; do
    trunc=-truncate
    [ "$dev" = ofi ] && [ $cl = 2 ] && trunc=
    for np in 2 3 4; do
        run MPIR_CVAR_NUM_CLIQUES=$cl $np "$tmp/anysource" $trunc
        check "MPI_ANY_SOURCE receives, $np processes on $cl node(s): blocking, posted first, unexpected, probe, mprobe, persistent, cancelled${trunc:+, truncated}" \
            '[ $rc = 0 ] && grep -q "^ No Errors" "$tmp/out"'
    done
done
tap_summary anysource
