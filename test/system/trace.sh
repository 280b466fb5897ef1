#!/bin/sh
#
# Checks of "which algorithm ran": MPIR_CVAR_COLL_TRACE (table with size
# ranges, per-call lines, fallbacks) and the MPI_T counters; and of what
# happened inside one call: MPIR_CVAR_TOPO_TIMELINE.
# Usage: trace.sh PREFIX COLL_TEST_DIR DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 coll=$2 dev=$3
. "$(dirname "$0")/tap.sh"
. "$top/maint/topo-common.sh"
export MPIR_CVAR_NUM_CLIQUES=2

"$prefix/bin/mpicc" -O2 -o "$tmp/coll_bench" "$top/bench/coll_bench.c" >"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/trace_pvar" "$top/test/system/trace_pvar.c" >>"$tmp/out" 2>&1 ||
    { notok "build the test programs"; tap_summary trace; exit 1; }

# 1. the table: forced topo_pipeline allgather at 1 KiB and 64 KiB, with the
#    calls counted per size range
MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline \
    run 4 "$tmp/coll_bench" -c allgather -m 1024 -M 65536 -s 64 -i 10 -w 2 -v
line=$(grep -A1 -E 'mpich-topo: +allgather +topo_pipeline +cvar +parent +4:' "$tmp/out" | tail -1)
if [ $rc = 0 ] && echo "$line" | grep -q 'sizes .*1K-<2K B: [1-9]' &&
    echo "$line" | grep -q '64K-<128K B: [1-9]'; then
    ok "COLL_TRACE=1 counts the calls of each algorithm per size range"
else
    notok "COLL_TRACE=1 counts the calls of each algorithm per size range"
fi

# 2. per-call lines, at most MPIR_CVAR_COLL_TRACE_CALLS per process
MPIR_CVAR_COLL_TRACE=3 MPIR_CVAR_COLL_TRACE_CALLS=5 MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline \
    run 2 "$tmp/coll_bench" -c bcast -m 4096 -M 4096 -i 10 -w 2
c0=$(grep -c '^mpich-topo: \[rank 0\] ' "$tmp/out")
c1=$(grep -c '^mpich-topo: \[rank 1\] ' "$tmp/out")
if [ $rc = 0 ] && [ "$c0" = 5 ] && [ "$c1" = 5 ] &&
    grep -q '^mpich-topo: \[rank 0\] [a-z]* [a-z_]* (\(cvar\|selection\|step_aside\|fallback\)) on a [a-z_]* communicator of [0-9]*, [0-9]* bytes per process$' "$tmp/out"; then
    ok "COLL_TRACE=3 prints the first MPIR_CVAR_COLL_TRACE_CALLS calls of each process"
else
    notok "COLL_TRACE=3 prints the first MPIR_CVAR_COLL_TRACE_CALLS calls of each process ($c0, $c1 lines)"
fi

# 3. a fallback shows what really ran: non-commutative ops under a forced
#    topo_pipeline allreduce run recursive doubling
MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline \
    MPIR_CVAR_COLLECTIVE_FALLBACK=silent run 4 "$coll/allred3"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" &&
    grep -q -E 'mpich-topo: +allreduce +recursive_doubling +fallback +parent' "$tmp/out"; then
    ok "a fallback is reported as the algorithm that ran"
else
    notok "a fallback is reported as the algorithm that ran"
fi

# 4. MPI_T: the counter of the forced algorithm grows by the number of calls
#    (counting is on while MPIR_CVAR_COLL_TRACE is set)
#    (nonblocking: after a persistent init has set the engine up, each call
#    is ours, none a fallback)
for c in allgather bcast allreduce iallgather ibcast iallreduce; do
    C=$(echo $c | tr a-z A-Z)
    env MPIR_CVAR_COLL_TRACE=1 "MPIR_CVAR_${C}_INTRA_ALGORITHM=topo_pipeline" \
        MPIR_CVAR_COLLECTIVE_FALLBACK=error timeout 300 "$mpiexec" -n 4 "$tmp/trace_pvar" $c 7 \
        >"$tmp/out" 2>&1
    rc=$?
    # (stock algorithms also appear: the engine's setup, inside the first
    # call, runs collectives on its own sub-communicators)
    if [ $rc = 0 ] && grep -qx 'pvar topo_pipeline 7' "$tmp/out"; then
        ok "MPI_T coll_algorithm_calls_$c counts the 7 topo_pipeline calls"
    else
        notok "MPI_T coll_algorithm_calls_$c counts the 7 topo_pipeline calls"
    fi
done
# with MPICH's default selection on 4 processes over 2 nodes, the default
# ibcast at 256 B is not ours, even with the engine set up (allreduce and
# iallreduce of that size are, since
# maint/patches/0010-tuning-select-ch4-json.patch and
# 0017-tuning-select-mpir-json.patch)
MPIR_CVAR_COLL_TRACE=1 run 4 "$tmp/trace_pvar" ibcast 3
if [ $rc = 0 ] && grep -q '^pvar ' "$tmp/out" && ! grep -q '^pvar topo_' "$tmp/out"; then
    ok "MPI_T counters follow MPICH's default selection too"
else
    notok "MPI_T counters follow MPICH's default selection too"
fi

# 5. the timeline of one call (MPIR_CVAR_TOPO_TIMELINE, the second call of
#    each collective by default): a 64 KiB bcast in 16 KiB chunks on 2
#    nodes x 2 (after the benchmark's own allgathers and allreduces, which
#    are recorded too); the leader of the node without the root receives
#    the 4 chunks, the 3 processes other than the root copy 4 chunks out
#    each, and bench/timeline.py reads it all
MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=16384 \
    MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline \
    run 4 "$tmp/coll_bench" -c bcast -a env=topo -m 65536 -M 65536 -i 3 -w 1 -v
python3 "$top/bench/timeline.py" --csv --collective bcast "$tmp/tl" >"$tmp/timeline.csv" 2>&1
python3 "$top/bench/timeline.py" --collective bcast "$tmp/tl" >>"$tmp/out" 2>&1
check "MPIR_CVAR_TOPO_TIMELINE records every process's chunks of one call; bench/timeline.py reads them" \
    '[ $rc = 0 ] && [ "$(ls "$tmp"/tl.* | wc -l)" = 4 ] &&
     [ "$(grep -c ",bcast,65536,.*,recv,[0-9]*,0$" "$tmp/timeline.csv")" = 4 ] &&
     [ "$(grep -c ",bcast,65536,.*,out,[0-9]*,0$" "$tmp/timeline.csv")" = 12 ] &&
     grep -q "bcast of 65536 bytes per process" "$tmp/out" && grep -q "4 processes on 2 nodes" "$tmp/out"'

# 6. the tree of nodes the bcast cost model picks, seen in the timeline: a
#    256 KiB bcast in 2 chunks of 128 KiB on 4 nodes, one leader each,
#    costs the same as a chain and as a binomial tree in the model, and the
#    chain must win the tie (it sends the message once per NIC; on 4
#    emulated nodes x 2 at 250 Mbit/s it took 11.3 ms, the binomial tree
#    15.0 ms).  A chain's leaders send on 3 nodes, a binomial tree's on 2.
# (bcast_timeline NODES NP BYTES [VAR=VALUE...]: one bcast topo_pipeline of
# BYTES on NP processes in NODES emulated nodes of one leader each, its
# timeline in $tmp/timeline.csv)
bcast_timeline() {
    nodes=$1 np=$2 bytes=$3
    shift 3
    rm -f "$tmp"/tl.*
    run MPIR_CVAR_NUM_CLIQUES="$nodes" MPIR_CVAR_TOPO_LEADERS_PER_NODE=1 \
        MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline "$@" \
        "$np" "$tmp/coll_bench" -c bcast -a env=topo -m "$bytes" -M "$bytes" -i 3 -w 1 -v
    python3 "$top/bench/timeline.py" --csv --collective bcast "$tmp/tl" >"$tmp/timeline.csv" 2>&1
}
bcast_timeline 4 8 262144
check "bcast topo_pipeline: at a tie in the cost model, the chain of nodes (4 nodes, 2 chunks)" \
    '[ $rc = 0 ] && [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "sent" { print f("node") }'\'' | sort -u | wc -l)" = 3 ]'

# 6b. a binomial tree's leader with fewer chunks than children sends to
#    one child after the other: 128 KiB (one chunk) on 4 nodes, the root's
#    node posts it to its 2 children in turn, the second once the first's
#    send completed (concurrent sends share the
#    NIC, so the first child forwarded only after both had it: on 8
#    emulated nodes x 2 at 100 Mbit/s 128 KiB took 46-51 ms, 30 ms one child
#    at a time; bench/results/cluster-bcast-children)
bcast_timeline 4 8 131072 MPIR_CVAR_TOPO_BCAST_NODE_TREE=binomial
check "bcast topo_pipeline: a leader with fewer chunks than children sends to one child after the other" \
    '[ $rc = 0 ] && [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "child" { print f("a") ":" f("b") }'\'' | tr "\n" " ")" = "0:0 0:1 " ] &&
     [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "child" { print f("node") }'\'' | sort -u | wc -l)" = 1 ]'

# 6c. on 8 nodes the leaders take 256 KiB whole by MPICH's scatter +
#    allgather (2 log2 8 latencies and twice the bytes) where the tree of
#    nodes would pay log2 8 chunk times (binomial) or 6 of its 10 chunks
#    filling the chain; the cost model puts it first with the default
#    latency (16 KiB): one network step per node ("net"), no chunk
#    received ("recv") or forwarded ("sent") down a tree.  Before, the
#    chain ran (SimGrid, 64 nodes x 16, 256 KiB: 1.3-2.1x slower than
#    MPICH's node-aware scatter + allgather, bench/results/scale-sim-colls)
bcast_timeline 8 16 262144
check "bcast topo_pipeline: 256 KiB on 8 nodes goes whole by the leaders' scatter + allgather" \
    '[ $rc = 0 ] && [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "net" { print f("node") }'\'' | sort -u | wc -l)" = 8 ] &&
     [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "recv" || f("event") == "sent"'\'' | wc -l)" = 0 ]'

# 7. the chain's chunks shrink to keep it full: 64 KiB on 4 nodes where a
#    message's latency is worth 2 KiB of a NIC's time goes in 8 chunks (it
#    went whole, in one 128 KiB slot, down a binomial tree: 4.0-4.5 ms on 4
#    emulated nodes x 2 at 250 Mbit/s, 1.9 ms in 8 chunks)
bcast_timeline 4 8 65536 MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES=2048
check "bcast topo_pipeline: the chain of 4 nodes takes 64 KiB in 8 chunks where a latency is 2 KiB" \
    '[ $rc = 0 ] && [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "recv"'\'' | wc -l)" = 24 ] &&
     [ "$(topo_csv "$tmp/timeline.csv" '\''f("event") == "sent" { print f("node") }'\'' | sort -u | wc -l)" = 3 ]'

# 8. the built-in tuning gives a 64 KiB bcast across 4 nodes to
#    topo_pipeline (MPICH's below 256 KiB before)
MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_COLL_TRACE=1 \
    run 8 "$tmp/coll_bench" -c bcast -m 65536 -M 65536 -i 3 -w 1 -v
check "bcast: the built-in tuning runs topo_pipeline at 64 KiB across 4 nodes" \
    '[ $rc = 0 ] && grep -q -E "mpich-topo: +bcast +topo_pipeline +selection +parent +8: [1-9]" "$tmp/out"'

# 9. allreduce in two levels within a node (MPIR_CVAR_TOPO_NODE_LEVELS=2):
#    on 2 nodes x 3 in 2 groups each (of 1 and 2), every process reduces
#    its part of its group's partial in every round ("grouped"), which a
#    one-level reduction never does; the default (auto) keeps one level on
#    nodes this small
for levels in 2 1 0; do
    rm -f "$tmp"/tl.*
    MPIR_CVAR_TOPO_LEADERS_PER_NODE=2 MPIR_CVAR_TOPO_NODE_LEVELS=$levels \
        MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=16384 \
        MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline \
        run 6 "$tmp/coll_bench" -c allreduce -a env=topo -m 65536 -M 65536 -i 3 -w 1 -v
    python3 "$top/bench/timeline.py" --csv --collective allreduce "$tmp/tl" \
        >"$tmp/timeline.csv" 2>&1
    reduced=$(topo_csv "$tmp/timeline.csv" 'f("event") == "reduced"' | wc -l)
    grouped=$(topo_csv "$tmp/timeline.csv" 'f("event") == "grouped"' | wc -l)
    if [ $levels = 2 ]; then
        check "allreduce topo_pipeline, MPIR_CVAR_TOPO_NODE_LEVELS=2: groups reduce first, every round ($grouped of $reduced)" \
            '[ $rc = 0 ] && [ "$reduced" -ge 12 ] && [ "$grouped" = "$reduced" ]'
    else
        check "allreduce topo_pipeline, MPIR_CVAR_TOPO_NODE_LEVELS=$levels on nodes of 3: one level" \
            '[ $rc = 0 ] && [ "$reduced" -ge 12 ] && [ "$grouped" = 0 ]'
    fi
done

# 10. more levels within a node: 12 processes on a made-up node of 2
#     packages x 2 NUMA groups x 2 L3 caches (MPIR_CVAR_TOPO_DEBUG_LOCATION;
#     4 caches hold 2 processes, 4 hold one).  With 4 levels every process
#     reduces its part at 3 stages of every round (caches, groups,
#     packages: "grouped" events 1, 2, 3), with 3 at 2 (caches, groups),
#     and with 2 at one, as before there were more
for levels in 4 3 2; do
    rm -f "$tmp"/tl.*
    MPIR_CVAR_NUM_CLIQUES=1 MPIR_CVAR_TOPO_DEBUG_LOCATION=pack:2,numa:2,l3:2,core:1,pu:1 \
        MPIR_CVAR_TOPO_NODE_LEVELS=$levels MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" \
        MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=16384 MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline \
        run 12 "$tmp/coll_bench" -c allreduce -a env=topo -m 65536 -M 65536 -i 3 -w 1 -v
    python3 "$top/bench/timeline.py" --csv --collective allreduce "$tmp/tl" \
        >"$tmp/timeline.csv" 2>&1
    reduced=$(topo_csv "$tmp/timeline.csv" 'f("event") == "reduced"' | wc -l)
    stages=$(topo_csv "$tmp/timeline.csv" 'f("event") == "grouped" { print f("b") }' | sort -u | tr '\n' ' ')
    grouped=$(topo_csv "$tmp/timeline.csv" 'f("event") == "grouped"' | wc -l)
    check "allreduce topo_pipeline, MPIR_CVAR_TOPO_NODE_LEVELS=$levels on a node of 3 levels below it: $((levels - 1)) stage(s) per round (stages $stages; $grouped of $reduced)" \
        '[ $rc = 0 ] && [ "$reduced" -ge 12 ] && [ "$grouped" = $((reduced * (levels - 1))) ]'
done

# 11. bcast and allgather copy through every level too: on the same node
#     of 12, each chunk of a bcast is copied once into each innermost unit
#     that does not hold the process it arrived at (8 L3 domains with 4 or
#     3 levels: 7 copies a chunk; 4 NUMA groups with 2: 3), and in each
#     round of an allgather each innermost unit's first member copies the
#     blocks from outside it (8 copies a round; 4 with 2 levels).  Before
#     they had two levels at most (3 and 4 at every setting).
for coll in bcast allgather; do
    for levels in 4 3 2; do
        rm -f "$tmp"/tl.*
        case $levels in 2) units=4 ;; *) units=8 ;; esac
        MPIR_CVAR_NUM_CLIQUES=1 MPIR_CVAR_TOPO_DEBUG_LOCATION=pack:2,numa:2,l3:2,core:1,pu:1 \
            MPIR_CVAR_TOPO_NODE_LEVELS=$levels MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" \
            MPIR_CVAR_TOPO_TIMELINE_CALL=4 MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=-1 \
            MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline \
            MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline \
            run 12 "$tmp/coll_bench" -c $coll -a env=topo -m 65536 -M 65536 -i 3 -w 1 -v
        python3 "$top/bench/timeline.py" --csv --collective $coll "$tmp/tl" \
            >"$tmp/timeline.csv" 2>&1
        out=$(topo_csv "$tmp/timeline.csv" 'f("event") == "out"' | wc -l)
        staged=$(topo_csv "$tmp/timeline.csv" 'f("event") == "staged"' | wc -l)
        if [ $coll = bcast ]; then
            # (11 processes copy each chunk out)
            rounds=$((out / 11)) copies=$((units - 1))
        else
            rounds=$((out / 12)) copies=$units
        fi
        check "$coll topo_pipeline, MPIR_CVAR_TOPO_NODE_LEVELS=$levels on a node of 3 levels below it: $copies copies a round into $units units ($staged in $rounds rounds)" \
            '[ $rc = 0 ] && [ "$rounds" -ge 2 ] && [ "$staged" = $((rounds * copies)) ]'
    done
done

# 12. the single-copy reduction within one node
#     (MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD=0): on 3 processes each one
#     reduces its slice once, straight from the others' buffers ("reduced"
#     once, nothing copied into the segment: no "in"), and reads the 2
#     other slices ("out"); reduce: the root only.  Before, every such call
#     went through the segment, round by round.  With
#     MPIR_CVAR_TOPO_REDUCE_CMA_READER=root, reduce's root reads every input
#     itself: no slice is read afterwards (before that CVAR, 2 were).
for coll in allreduce reduce reduce:root; do
    rm -f "$tmp"/tl.*
    reader=slices
    case $coll in *:root) reader=root ;; esac
    MPIR_CVAR_NUM_CLIQUES=1 MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD=0 \
        MPIR_CVAR_TOPO_REDUCE_CMA_READER=$reader \
        MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline \
        MPIR_CVAR_REDUCE_INTRA_ALGORITHM=topo_pipeline \
        run 3 "$tmp/coll_bench" -c ${coll%:*} -a env=topo -m 1048576 -M 1048576 -i 3 -w 1 -v
    python3 "$top/bench/timeline.py" --csv --collective ${coll%:*} "$tmp/tl" >"$tmp/timeline.csv" 2>&1
    # (the benchmark's own small allreduces are recorded too)
    ev() { topo_csv "$tmp/timeline.csv" "f(\"bytes\") == 1048576 && f(\"event\") == \"$1\"" | wc -l; }
    case $coll in
        allreduce) outs=6 how="each process reduces its slice once from the others' buffers" ;;
        reduce) outs=2 how="each process reduces its slice once from the others' buffers" ;;
        *) outs=0 how="the root reduces every input from the others' buffers" ;;
    esac
    check "$coll, CMA from 0 B, one node of 3, 1 MiB: $how, then $outs slices read in all" \
        '[ $rc = 0 ] && grep -q ",ok$" "$tmp/out" && ! grep -q wrong "$tmp/out" && [ "$(ev reduced)" = 3 ] && [ "$(ev in)" = 0 ] && [ "$(ev out)" = $outs ]'
done

tap_summary trace
