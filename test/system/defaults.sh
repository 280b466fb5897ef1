#!/bin/sh
#
# Checks of the built-in tuning (maint/patches/0010-tuning-select-ch4-json.patch
# and 0017-tuning-select-mpir-json.patch): with no CVAR and no tuning file,
# MPICH picks our algorithms where the benchmarks put them ahead and its
# stock ones elsewhere. Which algorithm ran is read from
# MPIR_CVAR_COLL_TRACE=1 (rank 0's table).
# Usage: defaults.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2
tap_tail=25
. "$(dirname "$0")/tap.sh"
export MPIR_CVAR_COLL_TRACE=1
# Which algorithm the selection picks is what these checks are about: the
# engine is set up by the first call that uses it (the default, 5, defers
# it on fresh communicators: checked on its own at the end, section 10)
export MPIR_CVAR_TOPO_SETUP_CALLS=1

# sel COLL ALGO KIND SIZE: the selection chose ALGO on such a communicator
sel() { grep -qE "^mpich-topo: +$1 +$2 +selection +$3 +$4:" "$tmp/out"; }
# sizes COLL ALGO KIND SIZE: the size ranges of those calls
sizes() { grep -A1 -E "^mpich-topo: +$1 +$2 +selection +$3 +$4:" "$tmp/out" | sed -n '2p'; }
valid() { [ $rc = 0 ] && ! grep -q 'wrong' "$tmp/out"; }

"$prefix/bin/mpicc" -O2 -o "$tmp/threads" "$top/test/system/defaults_threads.c" -lpthread >"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/merged" "$top/test/system/defaults_merged.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/coll_bench" "$top/bench/coll_bench.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/ops" "$top/test/system/defaults_ops.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/cache" "$top/test/system/defaults_cache.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/ctx" "$top/test/system/defaults_ctx.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/nb_defaults" "$top/test/system/nb_defaults.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/defer" "$top/test/system/defaults_defer.c" >>"$tmp/out" 2>&1 &&
    "$prefix/bin/mpicc" -O2 -o "$tmp/reduce" "$top/test/system/defaults_reduce.c" >>"$tmp/out" 2>&1 ||
    { notok "build the test programs"; tap_summary defaults; exit 1; }

# every result is validated (-v); 16 B to 8 MiB per process
bench="$tmp/coll_bench -c allgather,bcast,allreduce,reduce -a default -m 16 -M 8388608 -s 8 -i 3 -w 1 -T 0.02 -R 1 -v"

# 1. one node, 2 processes bound to cores
run 2 -bind-to core $bench
check "one node: every bcast is topo_pipeline" \
    'valid && sel bcast topo_pipeline parent 2 && [ "$(grep -cE "^mpich-topo: +bcast +[a-z_]+ +selection +parent +2:" "$tmp/out")" = 1 ]'
check "one node: every allreduce (commutative op, count > 0) is topo_pipeline" \
    'valid && sel allreduce topo_pipeline parent 2 && [ "$(grep -E "^mpich-topo: +allreduce +[a-z_]+ +selection +parent +2:" "$tmp/out" | grep -vc " smp ")" = 1 ]'
check "one node: every reduce (predefined op, count > 0) is topo_pipeline" \
    'valid && sel reduce topo_pipeline parent 2 && [ "$(grep -cE "^mpich-topo: +reduce +[a-z_]+ +selection +parent +2:" "$tmp/out")" = 1 ]'
check "one node: every barrier is topo_flags (the benchmark's barriers between calls)" \
    'valid && sel barrier topo_flags parent 2 && [ "$(grep -cE "^mpich-topo: +barrier +[a-z_]+ +selection +parent +2:" "$tmp/out")" = 1 ]'
# (from 512 KiB in all topo_pipeline's first calls of a size also try
#  MPICH's ring, traced as "ring trial": section 12; how many of the
#  benchmark's calls that takes follows its clock, so a size class counts
#  as topo_pipeline's whether its calls ran as such or as the ring's)
trial() { grep -A1 -E "^mpich-topo: +allgather +ring +$1 +parent +$2:" "$tmp/out" | sed -n '2p'; }
tp_large() { { sizes allgather topo_pipeline parent 2; trial trial 2; trial learned 2; } | grep -q "$1"; }
check "one node, 2 processes: allgather topo_pipeline below 32 KiB in all and from 512 KiB, MPICH's tree between" \
    'valid && sel allgather topo_pipeline parent 2 && sizes allgather topo_pipeline parent 2 | grep -q "8K-<16K B" && ! sizes allgather topo_pipeline parent 2 | grep -q "64K-<128K B" && tp_large "512K-<1024K B" && tp_large "4M-<8192K B" && sizes allgather recursive_doubling parent 2 | grep -q "64K-<128K B" && ! sel allgather ring parent 2 && trial trial 2 | grep -q "512K-<1024K B"'

# 1b. more than 8 processes on one node keep topo_pipeline up to 64 KiB in
#     all, 64 KiB included (maint/patches/0017-tuning-select-mpir-json.patch;
#     16 processes with a core each measured it),
#     8 or fewer take MPICH's tree from 32 KiB (2, 4, 8 KiB per process)
run 9 -bind-to core $bench -c allgather -m 2048 -M 8192 -s 2
check "one node, 9 processes: allgather topo_pipeline up to 4 KiB per process (36 KiB in all), Bruck's at 8 KiB" \
    'valid && sizes allgather topo_pipeline parent 9 | grep -qE "2K-<4K B: [0-9]+, 4K-<8K B: [0-9]+$" && sizes allgather brucks parent 9 | grep -qE "sizes 8K-<16K B: [0-9]+$"'
run 16 -bind-to core $bench -c allgather -m 4096 -M 8192 -s 2
check "one node, 16 processes: allgather topo_pipeline at 4 KiB per process (64 KiB in all, ahead of MPICH's on both lent machines), recursive doubling at 8 KiB" \
    'valid && sizes allgather topo_pipeline parent 16 | grep -qE "4K-<8K B: [0-9]+$" && sizes allgather recursive_doubling parent 16 | grep -qE "sizes 8K-<16K B: [0-9]+$"'
run 8 -bind-to core $bench -c allgather -m 2048 -M 8192 -s 2
check "one node, 8 processes: allgather topo_pipeline at 2 KiB per process, recursive doubling from 4 KiB (32 KiB in all)" \
    'valid && sizes allgather topo_pipeline parent 8 | grep -qE ", 2K-<4K B: [0-9]+$" && sizes allgather recursive_doubling parent 8 | grep -qE "sizes 4K-<8K B: [0-9]+, 8K-<16K B: [0-9]+$"'

# 2. two emulated nodes with two processes each (round-robin placement),
#    16 B to 512 KiB
run MPIR_CVAR_NUM_CLIQUES=2 4 $bench -M 1048576
check "2 nodes x 2: allgather topo_pipeline (each node's data crosses the network once)" \
    'valid && sel allgather topo_pipeline parent 4 && ! grep -qE "^mpich-topo: +allgather +(ring|brucks|recursive_doubling) +selection +parent +4:" "$tmp/out"'
check "2 nodes x 2: bcast topo_pipeline from 64 KiB (the 64 KiB and 512 KiB calls only), MPICH's composition below" \
    'valid && sizes bcast topo_pipeline parent 4 | grep -qE "sizes 64K-<128K B: [0-9]+, 512K-<1024K B: [0-9]+$" && grep -qE "^mpich-topo: +bcast +[a-z_]+ +selection +node_roots" "$tmp/out"'
check "2 nodes x 2: barrier stays MPICH's" \
    'valid && ! sel barrier topo_flags parent 4 && grep -qE "^mpich-topo: +barrier +dissemination +selection +node_roots +2:" "$tmp/out"'
check "2 nodes x 2: reduce topo_pipeline above 2 KiB (8, 64 and 512 KiB calls), MPICH's node-aware composition below" \
    'valid && sizes reduce topo_pipeline parent 4 | grep -qE "sizes 8K-<16K B: [0-9]+, 64K-<128K B: [0-9]+, 512K-<1024K B: [0-9]+$" && sizes reduce binomial node_roots 2 | grep -qE "1K-<2K B: [0-9]+$"'
check "2 nodes x 2: allreduce topo_pipeline up to 8 KiB and from 256 KiB, MPICH's composition between (the 64 KiB calls)" \
    'valid && sizes allreduce topo_pipeline parent 4 | grep -qE "16-31 B: [0-9]+, 128-255 B: [0-9]+, (256-511 B: [0-9]+, )?1K-<2K B: [0-9]+, 8K-<16K B: [0-9]+, 512K-<1024K B: [0-9]+$" && sizes allreduce reduce_scatter_allgather node_roots 2 | grep -qE "sizes 64K-<128K B: [0-9]+$"'

# 2b. from 16 nodes allreduce is topo_pipeline at every size (SimGrid:
#     its step once 1.18-1.42x MPICH's composition at 16 KiB on 16-4,096
#     nodes; bench/results/scale-sim-colls), below 16 MPICH's between 8 and
#     256 KiB (section 2): 16 and 15 emulated nodes, node 0 holding two
#     processes (round-robin)
run MPIR_CVAR_NUM_CLIQUES=16 17 $bench -c allreduce -m 16384 -M 65536 -s 4
check "16 nodes: allreduce topo_pipeline at 16 and 64 KiB (MPICH's composition below 16 nodes)" \
    'valid && sizes allreduce topo_pipeline parent 17 | grep -qE " 16K-<32K B: [0-9]+, 64K-<128K B: [0-9]+$"'
run MPIR_CVAR_NUM_CLIQUES=15 16 $bench -c allreduce -m 16384 -M 65536 -s 4
check "15 nodes: allreduce at 16 and 64 KiB is MPICH's composition" \
    'valid && ! sizes allreduce topo_pipeline parent 16 | grep -q "K-<" && sizes allreduce reduce_scatter_allgather node_roots 15 | grep -qE "sizes 16K-<32K B: [0-9]+, 64K-<128K B: [0-9]+$"'

# (a fresh communicator's first calls wait for the engine with MPICH's
#  flat choice: above 2 KiB reduce-scatter + allgather, where recursive
#  doubling over every process, what stood in before, is 3-6x slower at
#  16-64 KiB on 16 nodes and more in SimGrid; defaults_defer.c's 4 KiB
#  calls, and its 2 KiB ones still recursive doubling)
run MPIR_CVAR_TOPO_SETUP_CALLS=5 MPIR_CVAR_TOPO_SETUP_BYTES=16384 MPIR_CVAR_NUM_CLIQUES=16 17 "$tmp/defer"
check "16 nodes, fresh communicators: allreduce above 2 KiB before the engine's setup runs reduce-scatter + allgather, 2 KiB recursive doubling" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && grep -A1 -E "^mpich-topo: +allreduce +reduce_scatter_allgather +deferred +parent +17:" "$tmp/out" | grep -q "4K-<8K B: 2" && ! grep -A1 -E "^mpich-topo: +allreduce +recursive_doubling +deferred +parent +17:" "$tmp/out" | grep -q "4K-<8K B" && grep -A1 -E "^mpich-topo: +allreduce +recursive_doubling +deferred +parent +17:" "$tmp/out" | grep -q "2K-<4K B: 2"'

# 3. one process per node: nothing of ours (it would only run the same
#    network step) but bcast from 64 KiB, whose chain of nodes sends less
#    than MPICH's trees from 3 nodes on (and which runs MPICH's tree where
#    its cost model says so)
run MPIR_CVAR_NUM_CLIQUES=2 2 $bench -M 1048576
check "2 nodes x 1: bcast topo_pipeline from 64 KiB (the 64 KiB and 512 KiB calls only), otherwise only MPICH's algorithms" \
    'valid && grep -qE "^mpich-topo: +allgather +[a-z_]+ +selection" "$tmp/out" && sizes bcast topo_pipeline flat 2 | grep -qE "sizes 64K-<128K B: [0-9]+, 512K-<1024K B: [0-9]+$" && [ "$(grep -cE "^mpich-topo: +[a-z]+ +topo_" "$tmp/out")" = 1 ]'
check "2 nodes x 1: allreduce recursive doubling and reduce binomial up to 16 KiB (the 8 KiB calls too), reduce-scatter from 64 KiB" \
    'valid && sizes allreduce recursive_doubling flat 2 | grep -qE "1K-<2K B: [0-9]+, 8K-<16K B: [0-9]+$" && sizes reduce binomial flat 2 | grep -qE "1K-<2K B: [0-9]+, 8K-<16K B: [0-9]+$" && sizes allreduce reduce_scatter_allgather flat 2 | grep -qE "sizes 64K-<128K B: [0-9]+, 512K-<1024K B: [0-9]+$" && sizes reduce reduce_scatter_gather flat 2 | grep -qE "sizes 64K-<128K B: [0-9]+, 512K-<1024K B: [0-9]+$"'

# 4. user-defined ops within one node are never given to topo_pipeline
#    (MPI calls them with the call's datatype; the engine reduces packed
#    predefined elements): both ops' 5 allreduces go to recursive doubling,
#    only the final MPI_SUM of the error count to topo_pipeline; both ops'
#    5 reduces to binomial (the commutative one's through CH4's composition
#    gamma since the hunk from the old 0039 in
#    maint/patches/0010-tuning-select-ch4-json.patch), none to topo_pipeline
run 3 "$tmp/ops"
check "one node: user ops, commutative or not, correct by recursive doubling and binomial; MPI_SUM by topo_pipeline" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ "$(sed -nE "s/^mpich-topo: +allreduce +recursive_doubling +selection +parent +3: ([0-9]+)$/\1/p" "$tmp/out")" = 10 ] && [ "$(sed -nE "s/^mpich-topo: +allreduce +topo_pipeline +selection +parent +3: ([0-9]+)$/\1/p" "$tmp/out")" = 1 ] && [ "$(sed -nE "s/^mpich-topo: +reduce +binomial +selection +parent +3: ([0-9]+)$/\1/p" "$tmp/out")" = 10 ] && ! grep -qE "^mpich-topo: +reduce +topo_pipeline" "$tmp/out"'

# 4b. the selection trees' remembered decisions (MPIR_CVAR_COLL_SELECTION_CACHE)
#    never pass from one call to the next that differs: 1 KiB and 64 KiB
#    allgathers in turn, MPI_SUM, a user's sum and MPI_IN_PLACE allreduces
#    in turn, 5 of each
run 2 -bind-to core "$tmp/cache"
check "one node, calls in turn: each gets its own algorithm (allgather 1 KiB / 64 KiB, allreduce built-in / user op)" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && sizes allgather topo_pipeline parent 2 | grep -qE "sizes 1K-<2K B: 5$" && sizes allgather recursive_doubling parent 2 | grep -qE "sizes 64K-<128K B: 5$" && sizes allreduce recursive_doubling parent 2 | grep -qE "sizes 64-127 B: 5$" && sizes allreduce topo_pipeline parent 2 | grep -qE "64-127 B: 10$"'

# 5. the built-in tuning's choice is not the user's: where ours cannot run
#    (here: no room for the node segment), MPICH's runs, even with
#    MPIR_CVAR_COLLECTIVE_FALLBACK=error
run MPIR_CVAR_COLLECTIVE_FALLBACK=error MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE=1 2 $bench -c bcast -M 65536
check "no room for the segment, FALLBACK=error: built-in choice falls back silently" \
    'valid && grep -qE "^mpich-topo: +bcast +[a-z_]+ +fallback +parent +2:" "$tmp/out" && ! grep -q "cannot run here" "$tmp/out"'
run MPIR_CVAR_COLLECTIVE_FALLBACK=error MPIR_CVAR_COLL_SHM_LIMIT_PER_NODE=1 \
    MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline 2 $bench -c allreduce -M 65536
check "the same forced by the CVAR: an error naming the algorithm and the reason" \
    '[ $rc != 0 ] && grep -q "MPIR_Allreduce_intra_topo_pipeline cannot run here" "$tmp/out" && grep -q "COLL_SHM_LIMIT_PER_NODE" "$tmp/out"'

# 6. every context id in use: the engine still sets itself up on the last
#    communicator, whose node and leader communicators take their ids
#    from its own (they were split off, and MPICH's algorithms ran there)
run 2 "$tmp/ctx"
check "all context ids in use: bcast and allreduce still right, by topo_pipeline" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && sel bcast topo_pipeline parent 2 && ! grep -qE "^mpich-topo: +bcast +[a-z_]+ +fallback" "$tmp/out"'

# 7. the engine steps aside on a communicator still being committed, but
#    runs on one made by MPI_Intercomm_merge (which is never given a
#    sequence number) and on its splits
run 4 "$tmp/merged"
check "intercommunicator merge and its split: bcast by topo_pipeline, right" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ "$(sed -nE "s/^mpich-topo: +bcast +topo_pipeline +selection +parent +4: ([0-9]+)$/\1/p" "$tmp/out")" -ge 20 ]'

# 8. MPI_THREAD_MULTIPLE, two communicators used at once by two threads
run 2 "$tmp/threads"
check "two threads, two communicators at once: no deadlock, right results, by topo_pipeline" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && sel bcast topo_pipeline parent 2 && sel allreduce topo_pipeline parent 2'

# 9. nonblocking and persistent calls (nb_defaults.c gives each case a size
#    of its own): topo_pipeline within one node where the engine is set up
#    (after a blocking collective that uses it, or by a persistent init),
#    MPICH's own algorithms elsewhere: on a fresh communicator, for a user
#    op, for an iallgather above 128 KiB in all; across nodes iallgather
#    up to 1 MiB in all where the engine is set up
nb() { sizes "$1" "$2" parent "$3" | grep -q "$4"; }
run 2 -bind-to core "$tmp/nb_defaults"
check "one node, fresh communicator: MPI_I<coll> get MPICH's (64 B calls)" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && nb iallreduce sched_recursive_doubling 2 "64-127" && nb ibcast sched_smp 2 "64-127" && nb iallgather sched_recursive_doubling 2 "64-127" && ! grep -A1 -E "^mpich-topo: +i[a-z]+ +topo_pipeline" "$tmp/out" | grep -q "64-127"'
check "one node, persistent init: topo_pipeline for all three (1 KiB calls)" \
    '[ $rc = 0 ] && nb iallreduce topo_pipeline 2 "1K-<2K" && nb ibcast topo_pipeline 2 "1K-<2K" && nb iallgather topo_pipeline 2 "1K-<2K"'
check "one node, after a blocking collective: topo_pipeline for all three (4 KiB calls)" \
    '[ $rc = 0 ] && nb iallreduce topo_pipeline 2 "4K-<8K" && nb ibcast topo_pipeline 2 "4K-<8K" && nb iallgather topo_pipeline 2 "4K-<8K" && ! grep -qE "^mpich-topo: +i[a-z]+ +[a-z_]+ +fallback" "$tmp/out"'
check "one node, engine set up: user-op iallreduce and iallgather of 256 KiB in all get MPICH's" \
    '[ $rc = 0 ] && nb iallreduce sched_recursive_doubling 2 "8K-<16K" && nb iallgather sched_recursive_doubling 2 "128K-<256K" && ! nb iallgather topo_pipeline 2 "128K-"'
# MPIR_CVAR_TOPO_EAGER_SETUP=1 sets the engine up as communicators are
# created: the fresh communicator's first calls are ours too
run MPIR_CVAR_TOPO_EAGER_SETUP=1 2 -bind-to core "$tmp/nb_defaults"
check "one node, MPIR_CVAR_TOPO_EAGER_SETUP=1: fresh communicator's MPI_I<coll> get topo_pipeline (64 B calls)" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && nb iallreduce topo_pipeline 2 "64-127" && nb ibcast topo_pipeline 2 "64-127" && nb iallgather topo_pipeline 2 "64-127"'
run MPIR_CVAR_NUM_CLIQUES=2 4 "$tmp/nb_defaults"
# (the 4 B blocking allreduce across nodes is topo_pipeline too and sets
# the engine up: iallgather is ours after it, up to 1 MiB in all, and
# iallreduce with a predefined op up to 8 KiB)
check "2 nodes x 2: iallgather and iallreduce topo_pipeline where the engine is set up (1 KiB init, 4 KiB after a blocking allreduce; iallgather 128 KiB), 64 B and the user op MPICH's; ibcast MPICH's" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && [ "$(grep -cE "^mpich-topo: +i[a-z]+ +topo_" "$tmp/out")" = 2 ] && nb iallgather topo_pipeline 4 "1K-<2K B: [0-9]*, 4K-<8K B: [0-9]*, 128K-<256K" && nb iallgather sched_recursive_doubling 4 "64-127" && nb iallreduce topo_pipeline 4 "1K-<2K B: [0-9]*, 4K-<8K B: [0-9]*$" && nb iallreduce sched_recursive_doubling 4 "64-127 B: [0-9]*, 8K-<16K" && nb ibcast sched_smp 4 "1K-<2K"'
run MPIR_CVAR_TOPO_EAGER_SETUP=1 MPIR_CVAR_NUM_CLIQUES=2 4 "$tmp/nb_defaults"
check "2 nodes x 2, MPIR_CVAR_TOPO_EAGER_SETUP=1: every iallgather (up to 512 KiB in all) and every iallreduce with MPI_SUM topo_pipeline, the user op's and ibcast MPICH's" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && nb iallgather topo_pipeline 4 "64-127" && nb iallgather topo_pipeline 4 "128K-" && ! grep -qE "^mpich-topo: +iallgather +sched_" "$tmp/out" && nb iallreduce topo_pipeline 4 "64-127 B: [0-9]*, 1K-<2K B: [0-9]*, 4K-<8K B: [0-9]*$" && nb iallreduce sched_recursive_doubling 4 "sizes 8K-<16K B: 1$" && ! grep -qE "^mpich-topo: +ibcast +topo_" "$tmp/out"'
# each process asks for its own thread level: one with MPI_THREAD_MULTIPLE
# (whose calls cannot run as the engine's coroutines) keeps all from the
# engine's nonblocking calls; each used to decide alone, and the others'
# calls waited for it in the engine
run MPIR_CVAR_NUM_CLIQUES=2 tap_timeout=60 4 "$tmp/nb_defaults" mixed
check "2 nodes x 2, rank 0 alone at MPI_THREAD_MULTIPLE: every MPI_I<coll> MPICH's, right results, no hang" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && ! grep -qE "^mpich-topo: +i[a-z]+ +topo_" "$tmp/out"'
run tap_timeout=60 2 -bind-to core "$tmp/nb_defaults" mixed
check "one node, rank 0 alone at MPI_THREAD_MULTIPLE: every MPI_I<coll> MPICH's, right results, no hang" \
    '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && ! grep -qE "^mpich-topo: +i[a-z]+ +topo_" "$tmp/out"'

# 10. when the engine is set up (defaults_defer.c, SETUP_CALLS=5,
#     SETUP_BYTES=16K): a fresh communicator's first 4 small calls that
#     would run it get the stock algorithm that stands in ("deferred"),
#     nonblocking ones counted too, and the 5th sets it up; a 4 KiB call
#     counts as 2 small ones (the 3rd sets it up); a call of 16 KiB or more
#     sets it up at once.
#     Short-lived communicators (MPI_File_open's dup, a split per step) no
#     longer pay the setup for their few calls.
deferred() { grep -A1 -E "^mpich-topo: +$1 +$2 +deferred +parent +$3:" "$tmp/out" | sed -n '2p'; }
# has LINE RANGE N: a trace's sizes line counts N calls in RANGE
has() { echo "$1" | grep -qE "(sizes |, )$2: $3(,|\$)"; }
deferred_any() { grep -A1 -E "^mpich-topo: +$1 +[a-z_]+ +deferred +parent +$2:" "$tmp/out" | grep -E "^mpich-topo: +sizes"; }
for cliques in 1 2; do
    if [ $cliques = 1 ]; then where="one node" np=2; else where="2 nodes x 2" np=4; fi
    run MPIR_CVAR_TOPO_SETUP_CALLS=5 MPIR_CVAR_TOPO_SETUP_BYTES=16384 MPIR_CVAR_NUM_CLIQUES=$cliques $np "$tmp/defer"
    check "$where, fresh communicators: 4 small calls deferred to MPICH's, the 5th sets the engine up (MPI_Iallreduce counted), a 64 KiB bcast at once, right results" \
        '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out" && has "$(deferred allreduce recursive_doubling $np)" "8-15 B" 4 && has "$(deferred allreduce recursive_doubling $np)" "2K-<4K B" 2 && has "$(sizes allreduce topo_pipeline parent $np)" "8-15 B" 1 && has "$(sizes allreduce topo_pipeline parent $np)" "2K-<4K B" 1 && sizes bcast topo_pipeline parent $np | grep -q "sizes 64K-<128K B: 1$" && ! grep -qE "^mpich-topo: +bcast +[a-z_]+ +deferred" "$tmp/out" && nb iallreduce sched_recursive_doubling $np "sizes 2K-<4K B: 2$" && nb iallreduce topo_pipeline $np "sizes 512-<1K B: 1$"'
    check "$where, fresh communicator: a 4 KiB allreduce counts as 2 small calls, the 3rd sets the engine up" \
        '[ $rc = 0 ] && [ "$(deferred_any allreduce $np | grep -o "4K-<8K B: [0-9]*" | awk "{s += \$3} END {print s}")" = 2 ] && has "$(sizes allreduce topo_pipeline parent $np)" "4K-<8K B" 1'
done

# 11. user-defined commutative reductions above 2 KiB across nodes, every
#     root, in place and not (defaults_reduce.c): right sums where CH4's
#     composition alpha, which the built-in tuning chose there before
#     the hunk from the old 0039 in
#     maint/patches/0010-tuning-select-ch4-json.patch, lost or corrupted
#     contributions
for v in "MPIR_CVAR_CLIQUES_BY_BLOCK=1" "MPIR_CVAR_CLIQUES_BY_BLOCK=0"; do
    run MPIR_CVAR_NUM_CLIQUES=3 $v 5 "$tmp/reduce"
    check "3 nodes, 5 processes ($v): user-op reduce of 18 KiB to every root, in place and not, right sums" \
        '[ $rc = 0 ] && grep -q " No Errors" "$tmp/out"'
done

# 12. large allgathers within one node (from 512 KiB in all,
#     maint/patches/0017-tuning-select-mpir-json.patch): the first
#     calls of each size class run MPICH's ring, the segment and CMA, each
#     for its untimed warm-up (the ring: one pass over the POSIX shared
#     cells, 1 + ceil(64 x 69632 B / ((p - 1) m)) calls) and then TRIALS
#     timed calls, the processes agree on the fastest and keep it; no
#     learning with TRIALS=0, where the user chose topo_pipeline, or across
#     nodes
learned() { grep -E "^mpich-topo: allgather learned on a one-node communicator of $1, $2 B per process: (ring|segment|cma) " "$tmp/out"; }
ag="$tmp/coll_bench -c allgather -a default -m 1048576 -M 1048576 -i 30 -w 0 -R 1 -v"
run MPIR_CVAR_TOPO_ALLGATHER_TRIALS=2 2 -bind-to core $ag
check "one node, 2 processes, 1 MiB per process: the ring warmed 6 calls and timed 2 (traced as trial), agreed once" \
    'valid && [ "$(learned 2 1048576 | wc -l)" = 1 ] && has "$(trial trial 2)" "1M-<2048K B" 8'
way=$(learned 2 1048576 | sed 's/.* B per process: \([a-z]*\) .*/\1/')
check "one node, 2 processes: the way agreed on runs every later call (ring: traced as learned; else: no ring after the trials)" \
    'valid && if [ "$way" = ring ]; then [ -n "$(trial learned 2)" ]; else [ -z "$(trial learned 2)" ]; fi'
run MPIR_CVAR_TOPO_ALLGATHER_TRIALS=1 MPIR_CVAR_TOPO_CMA=off 3 "$tmp/coll_bench" -c allgather -a default -m 262144 -M 262144 -i 20 -w 0 -R 1 -v
check "one node, 3 processes, CMA off: ring (10 warm-up calls) and segment timed once each, one kept" \
    'valid && [ "$(learned 3 262144 | grep -cv " cma ")" = 1 ] && has "$(trial trial 3)" "256K-<512K B" 11'
run MPIR_CVAR_TOPO_ALLGATHER_TRIALS=0 2 -bind-to core $ag
check "one node, TRIALS=0: every large allgather topo_pipeline, nothing tried" \
    'valid && ! learned 2 1048576 >/dev/null && [ -z "$(trial trial 2)" ] && sel allgather topo_pipeline parent 2'
run MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_pipeline 2 -bind-to core $tmp/coll_bench -c allgather -a env=forced -m 1048576 -M 1048576 -i 30 -w 0 -R 1 -v
check "one node, topo_pipeline chosen by the user: nothing tried" \
    'valid && ! learned 2 1048576 >/dev/null && [ -z "$(trial trial 2)" ] && grep -A1 -E "^mpich-topo: +allgather +topo_pipeline +cvar +parent +2:" "$tmp/out" | grep -qE "1M-<2048K B: [0-9]+$"'
run MPIR_CVAR_NUM_CLIQUES=2 4 $ag
check "2 nodes x 2: nothing tried (learning is for one node)" \
    'valid && ! learned 4 1048576 >/dev/null && [ -z "$(trial trial 4)" ]'

# 13. large bcasts within one node: the first calls of each size class from
#     64 KiB run the segment and CMA, each for its warm-up (2 calls, 1)
#     and then TRIALS timed calls, and keep the way
#     the processes agree on; not below 64 KiB, with TRIALS=0, where the
#     user chose topo_pipeline, without CMA, or across nodes
blearned() { grep -E "^mpich-topo: bcast learned on a one-node communicator of $1, $2 B: (segment|cma) " "$tmp/out"; }
bc() { echo "$tmp/coll_bench -c bcast -a ${2:-default} -m $1 -M $1 -i 30 -w 0 -R 1 -v"; }
run MPIR_CVAR_TOPO_BCAST_TRIALS=2 2 -bind-to core $(bc 1048576)
check "one node, 2 processes, 1 MiB bcast: segment and CMA tried, agreed once, right results" \
    'valid && [ "$(blearned 2 1048576 | wc -l)" = 1 ]'
run MPIR_CVAR_TOPO_BCAST_TRIALS=2 3 $(bc 4194304)
check "one node, 3 processes, 4 MiB bcast: agreed once, right results" \
    'valid && [ "$(blearned 3 4194304 | wc -l)" = 1 ]'
run MPIR_CVAR_TOPO_BCAST_TRIALS=2 2 -bind-to core $(bc 65536)
check "one node, 2 processes, 64 KiB bcast: segment and CMA tried, agreed once, right results" \
    'valid && [ "$(blearned 2 65536 | wc -l)" = 1 ]'
run 2 -bind-to core $(bc 32768)
check "one node, 32 KiB bcast: nothing tried" 'valid && ! grep -q "bcast learned" "$tmp/out"'
run MPIR_CVAR_TOPO_BCAST_TRIALS=0 2 -bind-to core $(bc 1048576)
check "one node, MPIR_CVAR_TOPO_BCAST_TRIALS=0: nothing tried" 'valid && ! grep -q "bcast learned" "$tmp/out"'
run MPIR_CVAR_TOPO_CMA=off 2 -bind-to core $(bc 1048576)
check "one node, CMA off: nothing to learn between" 'valid && ! grep -q "bcast learned" "$tmp/out"'
run MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline 2 -bind-to core $(bc 1048576 env=forced)
check "one node, topo_pipeline chosen by the user: nothing tried" 'valid && ! grep -q "bcast learned" "$tmp/out"'
run MPIR_CVAR_NUM_CLIQUES=2 4 $(bc 1048576)
check "2 nodes x 2: nothing tried (learning is for one node)" 'valid && ! grep -q "bcast learned" "$tmp/out"'

# 13b. large allreduces and reduces within one node likewise learn
#      between the segment and the single copy (CMA), each collective
#      apart: from 64 KiB, with TRIALS, not where the user chose
#      topo_pipeline, without CMA, or across nodes.  Reduce also times its
#      root reading every input (cma-root), allreduce does not.
rlearned() { grep -E "^mpich-topo: $1 learned on a one-node communicator of $2, $3 B: (segment|cma|cma-root) .* cma [0-9.]+ us${4-}" "$tmp/out"; }
rc_() { echo "$tmp/coll_bench -c $1 -a ${3:-default} -m $2 -M $2 -i 30 -w 0 -R 1 -v"; }
run MPIR_CVAR_TOPO_ALLREDUCE_TRIALS=2 2 -bind-to core $(rc_ allreduce,reduce 1048576)
check "one node, 2 processes, 1 MiB allreduce and reduce: segment and CMA tried (reduce: and its root reading all), each agreed once, right results" \
    'valid && [ "$(rlearned allreduce 2 1048576 "\)" | wc -l)" = 1 ] &&
     [ "$(rlearned reduce 2 1048576 ", cma-root [0-9.]+ us\)" | wc -l)" = 1 ]'
run MPIR_CVAR_TOPO_ALLREDUCE_TRIALS=2 3 $(rc_ allreduce,reduce 4194304)
check "one node, 3 processes, 4 MiB allreduce and reduce: each agreed once, right results" \
    'valid && [ "$(rlearned allreduce 3 4194304 | wc -l)" = 1 ] && [ "$(rlearned reduce 3 4194304 | wc -l)" = 1 ]'
run 2 -bind-to core $(rc_ allreduce,reduce 32768)
check "one node, 32 KiB allreduce and reduce: nothing tried" 'valid && ! grep -q "reduce learned" "$tmp/out"'
run MPIR_CVAR_TOPO_ALLREDUCE_TRIALS=0 2 -bind-to core $(rc_ allreduce 1048576)
check "one node, MPIR_CVAR_TOPO_ALLREDUCE_TRIALS=0: nothing tried" 'valid && ! grep -q "reduce learned" "$tmp/out"'
run MPIR_CVAR_TOPO_CMA=off 2 -bind-to core $(rc_ allreduce 1048576)
check "one node, CMA off: nothing to learn between" 'valid && ! grep -q "reduce learned" "$tmp/out"'
run MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline 2 -bind-to core $(rc_ allreduce 1048576 env=forced)
check "one node, allreduce topo_pipeline chosen by the user: nothing tried" 'valid && ! grep -q "reduce learned" "$tmp/out"'
run MPIR_CVAR_NUM_CLIQUES=2 4 $(rc_ allreduce,reduce 1048576)
check "2 nodes x 2, allreduce and reduce: nothing tried (learning is for one node)" 'valid && ! grep -q "reduce learned" "$tmp/out"'

# 14. allreduce across nodes in several rounds: where the rounds are small
#     against the leaders' step's latencies (64 processes per node share a
#     128 KiB slot in rounds of 2 KiB: here 2 per node share a 4 KiB one)
#     the cost model runs the step once on the whole call; with rounds of
#     64 KiB (2 per node, the default slot) per round.  Before, every such
#     call ran its step per round.
once() { grep -q "calls of several rounds ($1 B each): the leaders' step $2" "$tmp/out"; }
ar="$tmp/coll_bench -c allreduce -a default -m 1048576 -M 1048576 -i 2 -w 1 -T 0.02 -R 1 -v"
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=4096 MPIR_CVAR_TOPO_PRINT=1 4 $ar
check "2 nodes x 2, rounds of 2 KiB, 1 MiB allreduce: the leaders' step once from 8 KiB, right results" \
    'valid && sel allreduce topo_pipeline parent 4 && once 2048 "per round below 8192 B, once"'
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_TOPO_PRINT=1 4 $ar
check "2 nodes x 2, rounds of 64 KiB, 1 MiB allreduce: the leaders' step per round, right results" \
    'valid && sel allreduce topo_pipeline parent 4 && once 65536 "per round up to"'

# 15. reduce likewise: rounds of 2 KiB, 1 MiB, the built-in tuning's
#     topo_pipeline: each node's first leader collects the call and the
#     leaders reduce it in one step (one "net" event per node in the
#     timeline, no step started per round).  Before, its step ran per
#     round at every size (512 of them here; on 16 nodes of 16 each round
#     paid log2 16 latencies for 8 KiB).
rd="$tmp/coll_bench -c reduce -a default -m 1048576 -M 1048576 -i 2 -w 1 -T 0.02 -R 1 -v"
rm -f "$tmp"/tl.*
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=4096 MPIR_CVAR_TOPO_PRINT=1 \
    MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" 4 $rd
python3 "$top/bench/timeline.py" --csv --collective reduce "$tmp/tl" >"$tmp/timeline.csv" 2>&1
check "2 nodes x 2, rounds of 2 KiB, 1 MiB reduce: the leaders' step once from 8 KiB, right results" \
    'valid && sel reduce topo_pipeline parent 4 &&
     grep -q "reduce topo_pipeline, calls of several rounds (2048 B each): the leaders. step per round below 8192 B, once" "$tmp/out" &&
     [ "$(grep -c ",net_start," "$tmp/timeline.csv")" = 0 ] && [ "$(grep -c ",net," "$tmp/timeline.csv")" = 2 ]'

# 16. allreduce's step once with two leaders per node: each keeps its
#     group's share of every round and steps on it among the nodes' leaders
#     of its group (two "net" events per node in the timeline, none per
#     round), so that each carries half the call.  Before, the node's first
#     leader alone copied out and sent the whole call (one per node).
rm -f "$tmp"/tl.*
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=2 MPIR_CVAR_TOPO_PIPELINE_CHUNK_SIZE=4096 MPIR_CVAR_TOPO_PRINT=1 \
    MPIR_CVAR_TOPO_LEADERS_PER_NODE=2 MPIR_CVAR_TOPO_TIMELINE="$tmp/tl" 4 $ar
python3 "$top/bench/timeline.py" --csv --collective allreduce "$tmp/tl" >"$tmp/timeline.csv" 2>&1
check "2 nodes x 2, two leaders per node, 1 MiB allreduce: each leader steps once on its share, right results" \
    'valid && sel allreduce topo_pipeline parent 4 && once 2048 "per round below 8192 B, once" &&
     [ "$(grep -c ",net_start," "$tmp/timeline.csv")" = 0 ] && [ "$(grep -c ",net," "$tmp/timeline.csv")" = 4 ]'

# 17. the cost model's constants from each node's network ports (sysfs;
#     MPIR_CVAR_TOPO_DEBUG_SYSFS gives half the processes 200 Gbit/s
#     InfiniBand and half 25 Gbit/s Ethernet): every member takes the
#     slowest, so that all decide alike.  On 4 nodes of 2 the two networks'
#     constants choose differently (bcast 256 KiB: the chain of nodes on
#     InfiniBand, the leaders' scatter on Ethernet; allreduce 16 KiB in one
#     round: reduce-scatter + allgather, recursive doubling), which a
#     process deciding from its own node alone would mismatch.
mkport() {
    mkdir -p "$1/class/infiniband/mlx5_0/ports/1" "$1/class/net/eth0"
    echo "4: ACTIVE" >"$1/class/infiniband/mlx5_0/ports/1/state"
    echo "200 Gb/sec (4X HDR)" >"$1/class/infiniband/mlx5_0/ports/1/rate"
    echo "InfiniBand" >"$1/class/infiniband/mlx5_0/ports/1/link_layer"
    echo up >"$1/class/net/eth0/operstate"
    echo 25000 >"$1/class/net/eth0/speed"
}
mkport "$tmp/ib"
mkdir -p "$tmp/eth/class/net/eth0"
echo up >"$tmp/eth/class/net/eth0/operstate"
echo 25000 >"$tmp/eth/class/net/eth0/speed"
nic="$tmp/coll_bench -c bcast,allreduce -a default -m 16384 -M 1048576 -s 4 -i 2 -w 1 -T 0.02 -R 1 -v"
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_BCAST_INTRA_ALGORITHM=topo_pipeline \
    MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=topo_pipeline MPIR_CVAR_COLLECTIVE_FALLBACK=error \
    4 -env MPIR_CVAR_TOPO_DEBUG_SYSFS "$tmp/ib" $nic : -n 4 -env MPIR_CVAR_TOPO_DEBUG_SYSFS "$tmp/eth" $nic
check "4 nodes x 2 of two networks: the model takes the slower (25 Gbit/s Ethernet) everywhere, right results" \
    'valid && sel bcast topo_pipeline parent 8 && sel allreduce topo_pipeline parent 8 &&
     grep -q "cost model, 4 nodes: network 25000 Mbit/s Ethernet: latency 31250 B" "$tmp/out"'
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_TOPO_DEBUG_SYSFS="$tmp/ib" 8 $nic -M 16384
check "4 nodes x 2 on InfiniBand: its constants (B 37500, R 0.4)" \
    'valid && grep -q "network 200000 Mbit/s InfiniBand: latency 37500 B, copies 0.40" "$tmp/out"'
# shellcheck disable=SC2086
run MPIR_CVAR_NUM_CLIQUES=4 MPIR_CVAR_TOPO_PRINT=1 MPIR_CVAR_TOPO_DEBUG_SYSFS="$tmp/none" 8 $nic -M 16384
check "4 nodes x 2 without a port that reports its rate: the defaults (B 16384, R 6)" \
    'valid && grep -q "network not known: latency 16384 B, copies 6.00" "$tmp/out"'

tap_summary defaults
