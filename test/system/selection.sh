#!/bin/sh
#
# Selection and error-path checks for the topology-aware algorithms.
# Usage: selection.sh PREFIX COLL_TEST_DIR DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).
#
# Whether a topology-aware algorithm ran is observed through
# MPIR_CVAR_TOPO_PRINT: only those algorithms build a communicator's topology,
# and the print happens when they do.

set -u
prefix=$1 coll=$2 dev=$3
. "$(dirname "$0")/tap.sh"
export MPIR_CVAR_NUM_CLIQUES=2

# A complete MPIR tuning file: MPICH's generic.json with allgather (intra
# and, for the fallback check, inter) and bcast routed to our algorithms.
python3 - "$top/mpich/maint/tuning/coll/mpir/generic.json" "$tmp" <<'EOF'
import json, sys, collections
src, out = sys.argv[1], sys.argv[2]
tree = json.load(open(src), object_pairs_hook=collections.OrderedDict)
ring = {"algorithm=MPIR_Allgather_intra_topo_ring": {}}
tree["collective=allgather"] = {"comm_type=intra": ring, "comm_type=inter": ring}
tree["collective=bcast"]["comm_type=intra"] = {"algorithm=MPIR_Bcast_intra_topo_tree": {}}
json.dump(tree, open(out + "/mpir.json", "w"), indent=1)
EOF
ch4json="$tmp/ch4.json"
# CH4 level: bcast always through composition gamma (the netmod bcast on the
# whole communicator, i.e. the MPIR selection on the user's communicator)
python3 - "$top/mpich/maint/tuning/coll/ch4/generic.json" "$ch4json" <<'EOF'
import json, sys, collections
tree = json.load(open(sys.argv[1]), object_pairs_hook=collections.OrderedDict)
tree["collective=bcast"] = {"comm_type=intra": {"composition=MPIDI_Bcast_intra_composition_gamma": {}},
                            "comm_type=inter": {"composition=MPIDI_Bcast_intra_composition_gamma": {}}}
json.dump(tree, open(sys.argv[2], "w"), indent=1)
EOF

# 1. negative control: with one process per node the default selection
#    never builds our topology (test/system/defaults.sh checks where it does)
MPIR_CVAR_TOPO_PRINT=1 run 2 "$coll/topo_allgather"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" && ! grep -q 'mpich-topo: communicator' "$tmp/out"; then
    ok "default selection, one process per node: allgather correct, no topology-aware algorithm ran"
else
    notok "default selection, one process per node: allgather correct, no topology-aware algorithm ran"
fi

# 2. allgather routed to topo_ring by a user tuning file
MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/mpir.json" \
    run 4 "$coll/topo_allgather"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" && grep -q 'mpich-topo: communicator' "$tmp/out"; then
    ok "tuning file algorithm=MPIR_Allgather_intra_topo_ring selects it"
else
    notok "tuning file algorithm=MPIR_Allgather_intra_topo_ring selects it"
fi

# 3. bcast routed to topo_tree by a tuning file, device collectives off
MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0 \
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/mpir.json" run 4 "$coll/bcasttest"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" && grep -q 'mpich-topo: communicator' "$tmp/out"; then
    ok "tuning file algorithm=MPIR_Bcast_intra_topo_tree selects it (device collectives off)"
else
    notok "tuning file algorithm=MPIR_Bcast_intra_topo_tree selects it (device collectives off)"
fi

# 4. same through the CH4 tuning file (composition gamma) with device collectives on
MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE="$ch4json" \
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/mpir.json" run 4 "$coll/bcasttest"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" && grep -q 'mpich-topo: communicator' "$tmp/out"; then
    ok "CH4 + MPIR tuning files select topo_tree on the user's communicator"
else
    notok "CH4 + MPIR tuning files select topo_tree on the user's communicator"
fi

# 5. the bcast CVAR reaches the user's communicator with device collectives
#    on: the printed communicator has all 4 processes on 2 nodes
MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree run 4 "$coll/bcasttest"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" && grep -q '4 processes on 2 node' "$tmp/out"; then
    ok "MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree runs on the user's communicator"
else
    notok "MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_tree runs on the user's communicator"
fi

# 6. an unknown algorithm name is a clear error at MPI_Init
MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_bogus run 2 "$coll/topo_allgather"
if [ $rc != 0 ] && grep -q 'MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM' "$tmp/out" && grep -q 'topo_bogus' "$tmp/out"; then
    ok "unknown algorithm name is rejected naming the CVAR and the value"
else
    notok "unknown algorithm name is rejected naming the CVAR and the value"
fi

# 7./8. an algorithm that cannot run (intra algorithm selected for an
#    intercommunicator): error names it with FALLBACK=error, falls back with print
MPIR_CVAR_COLLECTIVE_FALLBACK=error MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/mpir.json" \
    run 4 "$coll/icallgather"
if [ $rc != 0 ] && grep -q 'MPIR_Allgather_intra_topo_ring cannot run here' "$tmp/out"; then
    ok "FALLBACK=error: forced algorithm that cannot run gives an error naming it"
else
    notok "FALLBACK=error: forced algorithm that cannot run gives an error naming it"
fi
MPIR_CVAR_COLLECTIVE_FALLBACK=print MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$tmp/mpir.json" \
    run 4 "$coll/icallgather"
if [ $rc = 0 ] && grep -q ' No Errors' "$tmp/out" && grep -q 'cannot run here' "$tmp/out"; then
    ok "FALLBACK=print: says so, falls back and the result is right"
else
    notok "FALLBACK=print: says so, falls back and the result is right"
fi

# 9./10. renamed CVARs: the old names still set them (environment aliases,
#    until the next release), and the new name wins where both are set
"$prefix/bin/mpicc" -o "$tmp/cvar_read" "$top/test/system/cvar_read.c" >"$tmp/out" 2>&1
new_names="MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE"
MPIR_CVAR_TOPO_CMA_THRESHOLD=12345 MPIR_CVAR_BCAST_TOPO_TREE_CHUNK_SIZE=777 \
    run 1 "$tmp/cvar_read" $new_names
check "old CVAR names set the renamed ones (TOPO_CMA_THRESHOLD, BCAST_TOPO_TREE_CHUNK_SIZE)" \
    '[ $rc = 0 ] && grep -q "^MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=12345$" "$tmp/out" && grep -q "^MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE=777$" "$tmp/out"'
MPIR_CVAR_TOPO_CMA_THRESHOLD=12345 MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=54321 \
    MPIR_CVAR_BCAST_TOPO_TREE_CHUNK_SIZE=777 MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE=888 \
    run 1 "$tmp/cvar_read" $new_names
check "a renamed CVAR set by both names takes the new name's value" \
    '[ $rc = 0 ] && grep -q "^MPIR_CVAR_TOPO_ALLGATHER_CMA_THRESHOLD=54321$" "$tmp/out" && grep -q "^MPIR_CVAR_TOPO_BCAST_TREE_CHUNK_SIZE=888$" "$tmp/out"'

# 11. an impossible value of an integer TOPO CVAR is named and replaced by
#    its default, as MPI_T then reads it; before, a negative stack size
#    mapped a huge stack and SETUP_BYTES=0 divided by zero
MPIR_CVAR_TOPO_NB_STACK_SIZE=-1 MPIR_CVAR_TOPO_SETUP_BYTES=0 \
    run 1 "$tmp/cvar_read" MPIR_CVAR_TOPO_NB_STACK_SIZE MPIR_CVAR_TOPO_SETUP_BYTES
check "an impossible CVAR value is named and replaced by its default" \
    '[ $rc = 0 ] && grep -q "MPIR_CVAR_TOPO_NB_STACK_SIZE=-1 is outside" "$tmp/out" &&
     grep -q "^MPIR_CVAR_TOPO_NB_STACK_SIZE=262144$" "$tmp/out" &&
     grep -q "^MPIR_CVAR_TOPO_SETUP_BYTES=65536$" "$tmp/out"'
MPIR_CVAR_NUM_CLIQUES=1 MPIR_CVAR_TOPO_NB_STACK_SIZE=-1 MPIR_CVAR_TOPO_SETUP_BYTES=0 \
    MPIR_CVAR_TOPO_EAGER_SETUP=1 MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_COLLECTIVE_FALLBACK=error \
    run 2 "$coll/iallred"
check "nonblocking engine calls run with the replaced values" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out"'

# 12. CET shadow stacks (acted out: MPIR_CVAR_TOPO_DEBUG_SHADOW_STACK): the
#    coroutines' stack switch would fault there, so nonblocking and
#    persistent topo_pipeline calls fall back to MPICH's algorithms, said
#    as FALLBACK says, with right results
for prog in nonblocking topo_order; do
    MPIR_CVAR_TOPO_DEBUG_SHADOW_STACK=1 MPIR_CVAR_TOPO_EAGER_SETUP=1 \
        MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM=topo_pipeline \
        MPIR_CVAR_IBCAST_INTRA_ALGORITHM=topo_pipeline \
        MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_COLLECTIVE_FALLBACK=print \
        run 4 "$coll/$prog"
    check "CET shadow stacks: $prog falls back, says why, right results" \
        '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -q "CET shadow stacks are enabled" "$tmp/out"'
done

# 13.-15. the node segment's slots: 1 MiB on one node (a copy into a slot
#    then finds its lines out of the readers' caches), 128 KiB across nodes
#    (the network chunk); a persistent request's own segment sized to its
#    call, so that 16 of them and the communicator's fit a 12 MiB budget
#    (before that sizing each took 2 MiB: "cannot run here", FALLBACK=error)
MPIR_CVAR_NUM_CLIQUES=1 MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline \
    MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0 MPIR_CVAR_COLLECTIVE_FALLBACK=error run 2 "$coll/bcasttest"
check "one node: 1 MiB slots" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -q "node segment: 2 slots of 1048576 B" "$tmp/out"'
MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline \
    MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0 MPIR_CVAR_COLLECTIVE_FALLBACK=error run 4 "$coll/bcasttest"
check "2 nodes: 128 KiB slots" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -q "node segment: 2 slots of 131072 B" "$tmp/out" && ! grep -q "slots of 1048576" "$tmp/out"'
MPIR_CVAR_NUM_CLIQUES=1 MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE=12288 \
    MPIR_CVAR_IALLGATHER_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_IBCAST_INTRA_ALGORITHM=topo_pipeline \
    MPIR_CVAR_IALLREDUCE_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_COLLECTIVE_FALLBACK=error \
    run 4 "$coll/topo_order"
check "persistent requests' own segments sized to their calls: 16 fit a 12 MiB budget" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out"'

# 18-19. the learners time every way in every size class, also where the
#        calls' sizes differ within a class (topo_* -learn: contiguous and
#        derived types of several sizes): each call of a class follows one
#        schedule, from the class's smallest size.  With the warm-up
#        counted from each call's own size, 3 processes and TRIALS=1 left
#        the ring or the segment untimed.  (The CVARs earlier checks set
#        before "run" stay set under dash: cleared here.)
for v in $(env | sed -n 's/^\(MPIR_CVAR_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_TOPO_ALLGATHER_TRIALS=1 run 3 "$coll/topo_allgather" -learn
check "allgather learner, 3 processes, sizes varying within each class: every way timed" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ "$(grep -c "allgather learned" "$tmp/out")" -ge 2 ] && ! grep "allgather learned" "$tmp/out" | grep -q untimed'
MPIR_CVAR_COLL_TRACE=1 MPIR_CVAR_TOPO_BCAST_TRIALS=1 run 3 "$coll/topo_bcast" -learn
check "bcast learner, 3 processes, sizes varying within each class: every way timed" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ "$(grep -c "bcast learned" "$tmp/out")" -ge 2 ] && ! grep "bcast learned" "$tmp/out" | grep -q untimed'

[ $fails = 0 ]
