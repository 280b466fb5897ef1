#!/bin/sh
#
# Fault injection for the engine: a process whose memory the others can no
# longer read (CMA refused mid-run) and a process killed mid-call.  Each
# run must end within 60 s, and nothing may be left in /dev/shm.
# Usage: faults.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1
dev=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/topo/tap.sh"
tap_timeout=60

"$prefix/bin/mpicc" -O2 -o "$tmp/fault" "$top/test/topo/fault.c" >"$tmp/out" 2>&1 ||
    { notok "build test/topo/fault.c"; tap_summary faults; exit 1; }

shm_clean() {
    ! ls /dev/shm 2>/dev/null | grep -q -i -E 'mpi|topo|shm'
}

# 1. CMA refused mid-run (rank 1 non-dumpable, CAP_SYS_PTRACE dropped): every
#    process returns an error, none hangs; on one node and on two emulated
#    nodes (the other node learns through the leaders' messages)
agp="MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_TOPO_CMA_THRESHOLD=4096"
for cl in 1 2; do
    # shellcheck disable=SC2086
    run $agp MPIR_CVAR_NUM_CLIQUES=$cl MPIR_CVAR_CLIQUES_BY_BLOCK=1 4 "$tmp/fault" cma 65536
    nerr=$(grep -c '^fault: rank [0-9]*: error' "$tmp/out")
    nrefused=$(grep -c 'process_vm_readv' "$tmp/out")
    check "CMA refused mid-call ($cl node(s)): all 4 processes return an error within 60 s" \
        '[ "$rc" != 124 ] && [ "$nerr" = 4 ] && [ "$nrefused" -ge 1 ]'
    check "CMA refused mid-call ($cl node(s)): /dev/shm left clean" 'shm_clean'
done

# 2. SIGKILL of one process during a long engine allgather (segment mode,
#    many rounds): the job ends within 60 s, with a failure, and /dev/shm is
#    left clean
# shellcheck disable=SC2086
run $agp MPIR_CVAR_TOPO_CMA_THRESHOLD=-1 MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=4096 4 \
    "$tmp/fault" kill 1048576
check "SIGKILL of one process mid-call: the job ends within 60 s with a failure" \
    '[ "$rc" != 124 ] && [ "$rc" != 0 ]'
check "SIGKILL of one process mid-call: /dev/shm left clean" 'shm_clean'

tap_summary faults
