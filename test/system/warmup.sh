#!/bin/sh
#
# Intra-node messages pay no page faults of the shared cells they pass
# through once MPI_Init is over (maint/patches/0048): warmup_faults.c
# counts the minor faults each of 2 processes takes while the first sends
# 48 messages of 256 KiB to the other.  Before the patch the sender took
# one per page of every cell at its first use (about 1,000 here), and the
# first ~40 such messages ran 4-14x slower than the rest, which misled
# the allgather learner's timing of MPICH's ring.  Counts, not times.
# Usage: warmup.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"

"$prefix/bin/mpicc" -O2 -o "$tmp/warmup_faults" "$top/test/system/warmup_faults.c" >"$tmp/out" 2>&1 ||
    { notok "build warmup_faults.c"; tap_summary warmup; exit 1; }

run 2 -bind-to core "$tmp/warmup_faults" 48
sender=$(sed -n 's/^rank 0 faults \([0-9-]*\) in 48 messages$/\1/p' "$tmp/out")
receiver=$(sed -n 's/^rank 1 faults \([0-9-]*\) in 48 messages$/\1/p' "$tmp/out")
check "48 messages of 256 KiB within a node arrive right" \
    '[ $rc = 0 ] && [ -n "$receiver" ] && ! grep -q "WRONG DATA" "$tmp/out"'
check "the sender takes no page faults on its shared cells after MPI_Init (faults: ${sender:-none}; about 1,000 before)" \
    '[ $rc = 0 ] && [ -n "$sender" ] && [ "$sender" -lt 200 ]'

tap_summary warmup
