#!/bin/sh
#
# Calls of more than 2 GiB per process (large.c): bcast, allreduce and
# allgather, every byte checked, with the built-in selection and with our
# engine forced, on one node (through the segment, and with CMA) and on two emulated nodes
# of one process each (the network step alone: MPICH's algorithms on the
# user's communicator).  About 4.2 GiB of memory per process; skipped
# where the machine has less than 12 GiB available.
# Usage: large.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"
tap_timeout=240

avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo)
if [ "${avail:-0}" -lt 12 ]; then
    echo "# skipped: ${avail:-?} GiB of memory available, 12 needed"
    tap_summary large
    exit 0
fi
"$prefix/bin/mpicc" -O2 -o "$tmp/large" "$top/test/system/large.c" >"$tmp/out" 2>&1 ||
    { notok "build test/system/large.c"; tap_summary large; exit 1; }

forced="MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline
        MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_COLLECTIVE_FALLBACK=error"
all_ok='[ "$rc" = 0 ] && [ "$(grep -c "^large: [a-z]* ok$" "$tmp/out")" = 3 ]'
# (each run takes about a minute on 2 cores: the three that matter most)
run MPIR_CVAR_NUM_CLIQUES=2 2 "$tmp/large"
check "over 2 GiB per process, built-in selection, 2 nodes: every byte right" "$all_ok"
# shellcheck disable=SC2086
run $forced 2 "$tmp/large"
check "over 2 GiB per process, topo_pipeline forced, one node (segment): every byte right" "$all_ok"
# shellcheck disable=SC2086
run $forced MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=4194304 MPIR_CVAR_TOPO_BCAST_CMA_THRESHOLD=4194304 \
    2 "$tmp/large"
check "over 2 GiB per process, topo_pipeline forced, one node, CMA: every byte right" "$all_ok"

tap_summary large
