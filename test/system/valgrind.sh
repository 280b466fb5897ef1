#!/bin/sh
# Runs MPICH's and our coll tests with the engine algorithms forced under
# valgrind (memcheck) and fails on any error valgrind reports in any process.
#   test/system/valgrind.sh [DEVICE]     (default ofi; needs ./check.sh's build)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dev=${1:-ofi}
prefix=$top/install-$dev
coll=$top/build-$dev/mpich/test/mpi/coll
command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; exit 2; }
[ "$dev" = ofi ] && export FI_PROVIDER=tcp
logs=$(mktemp -d)
make -s -C "$coll" allgather2 bcasttest allred topo_bcast topo_allreduce >/dev/null 2>&1 || { echo "cannot build tests" >&2; exit 2; }
alg="-env MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM topo_pipeline -env MPIR_CVAR_BCAST_INTRA_ALGORITHM topo_pipeline"
alg="$alg -env MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM topo_pipeline -env MPIR_CVAR_COLLECTIVE_FALLBACK error"
fail=0 n=0
# vg DESCRIPTION MPIEXEC-OPTIONS -- PROGRAM ARGS...: one run under valgrind
vg() {
    local desc=$1 opts=$2
    shift 3
    n=$((n + 1))
    # shellcheck disable=SC2086
    out=$(cd "$coll" && timeout 900 "$prefix/bin/mpiexec" -n 3 $opts $alg \
        valgrind -q --error-exitcode=99 --log-file="$logs/vg.$n.%p" "$@" 2>&1)
    errs=$(cat "$logs"/vg.$n.* 2>/dev/null | grep -c -E '^==[0-9]+== [A-Z]')
    if echo "$out" | grep -q ' No Errors' && [ "$errs" = 0 ]; then
        echo "ok $n - valgrind $*, 3 processes, $desc"
    else
        echo "not ok $n - valgrind $*, 3 processes, $desc: $errs valgrind lines"
        cat "$logs"/vg.$n.* 2>/dev/null | head -20
        fail=$((fail + 1))
    fi
}
for t in "allgather2" "bcasttest" "allred -count=100" "topo_bcast" "topo_allreduce -userops=0"; do
    for cl in 1 2; do
        # shellcheck disable=SC2086
        vg "$cl clique(s)" "-env MPIR_CVAR_NUM_CLIQUES $cl" -- ./$t
    done
done
# small allreduces and reduces in two stages through cells (groups [0] [1 2])
vg "cell groups of 2" "-env MPIR_CVAR_TOPO_CELL_FANIN 2 -env MPIR_CVAR_REDUCE_INTRA_ALGORITHM topo_pipeline" \
    -- ./topo_allreduce -small=1 -userops=0
# bcast's leaders' scatter + allgather: the root's node shares the message
# before the leaders' step where the root does not lead it (2 nodes of 2
# and 1), after it elsewhere; one process per node (3 nodes)
for cl in 2 3; do
    vg "$cl clique(s), the leaders' scatter" "-env MPIR_CVAR_NUM_CLIQUES $cl -env MPIR_CVAR_TOPO_LEADERS_PER_NODE 1 -env MPIR_CVAR_TOPO_BCAST_NODE_TREE scatter" \
        -- ./topo_bcast
done
# the single-copy reduction within one node: each process reduces its
# slice from the others' buffers (CMA) into its own, then reads theirs
vg "the single-copy reduction" "-env MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD 0 -env MPIR_CVAR_REDUCE_INTRA_ALGORITHM topo_pipeline" \
    -- ./topo_allreduce -userops=0
# reduce's root reading every input itself (the others only wait)
vg "reduce's root reading every input" "-env MPIR_CVAR_TOPO_ALLREDUCE_CMA_THRESHOLD 0 -env MPIR_CVAR_TOPO_REDUCE_CMA_READER root -env MPIR_CVAR_REDUCE_INTRA_ALGORITHM topo_pipeline" \
    -- ./topo_allreduce -userops=0
rm -rf "$logs"
echo "valgrind: $((n - fail)) passed, $fail failed"
[ $fail = 0 ]
