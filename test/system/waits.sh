#!/bin/sh
#
# The engine's waits on a node-local communicator poll the netmod only
# once they have lasted (MPIDI_Topo_engine_t's poll_after): a wait of a
# few microseconds makes no system call, and a long one still progresses
# the process's other operations.  waits_poll.c, with waits_count.c
# preloaded to count epoll_wait (libfabric tcp's poll). The count is
# checked on ch4:ofi only (UCX polls without a system call).
# Usage: waits.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"

"$prefix/bin/mpicc" -O2 -o "$tmp/waits_poll" "$top/test/system/waits_poll.c" -ldl >"$tmp/out" 2>&1 &&
    cc -shared -fPIC -o "$tmp/waits_count.so" "$top/test/system/waits_count.c" -ldl >>"$tmp/out" 2>&1 ||
    { notok "build waits_poll.c and waits_count.c"; tap_summary waits; exit 1; }

ncpu=$(getconf _NPROCESSORS_ONLN)
run MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline \
    MPIR_CVAR_COLLECTIVE_FALLBACK=error 2 -bind-to core -genv LD_PRELOAD "$tmp/waits_count.so" \
    "$tmp/waits_poll"
polled=$(sed -n 's/^polls [0-9-]* in \([0-9-]*\) of 2000 calls$/\1/p' "$tmp/out")
long=$(sed -n 's/^long wait polls \([0-9-]*\)$/\1/p' "$tmp/out")
check "a rank blocked in MPI_Send until the other progresses, the other waiting in topo_pipeline: both finish, right data" \
    '[ $rc = 0 ] && grep -q "^progress ok" "$tmp/out"'
if [ "$dev" = ofi ] && [ "$ncpu" -ge 2 ]; then
    check "3 us waits in 2000 topo_pipeline allgathers: few poll the netmod (calls with an epoll_wait: ${polled:-none}; most before)" \
        '[ $rc = 0 ] && [ -n "$polled" ] && [ "$polled" -ge 0 ] && [ "$polled" -lt 500 ]'
    check "the epoll_wait counter sees the polls of a long wait (the one above: ${long:-none})" \
        '[ $rc = 0 ] && [ -n "$long" ] && [ "$long" -gt 0 ]'
fi

tap_summary waits
