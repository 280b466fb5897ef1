#!/bin/sh
#
# Smoke of the emulated cluster (bench/cluster.sh): 2 nodes of 2 processes,
# each node a network namespace with its own shaped NIC, started by Hydra
# through its rsh launcher.  MPICH must learn the 2 nodes from its process
# manager (no MPIR_CVAR_NUM_CLIQUES), every allgather, bcast and allreduce
# result is validated (the default selection and ours forced, a few sizes),
# and each node's NIC must carry traffic, at least the per-node lower bound.
# No timing claims.  Skipped (with the reason) where namespaces cannot be
# made.  With "rails", only the two-NIC checks (5) and the clean-up (6).
# Usage: cluster.sh PREFIX DEVICE [rails]
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).

set -u
prefix=$1 dev=$2 only=${3:-}
. "$(dirname "$0")/tap.sh"
. "$top/maint/topo-common.sh"

if [ "$(id -u)" != 0 ] || ! ip netns add "tc-probe-$$" >/dev/null 2>&1; then
    echo "# skipped: network namespaces need root (ip netns add failed)"
    tap_summary cluster
    exit 0
fi
ip netns del "tc-probe-$$"
# the machine's segments before the runs: each node's /dev/shm is a tmpfs
# of its own, so a run can leave nothing new here (names, one per line)
shm_names() { ls /dev/shm 2>/dev/null | grep -i -E 'mpi|topo' | sort; }
shm_names >"$tmp/shm-before"

"$prefix/bin/mpicc" -O2 -std=c99 -o "$tmp/coll_bench" "$top/bench/coll_bench.c" >"$tmp/out" 2>&1 ||
    { notok "build bench/coll_bench.c"; tap_summary cluster; exit 1; }

# cl [CLUSTER OPTIONS] -- ARGS...: 2 nodes x 2 processes at 1 Gbit/s;
# output in $tmp/out, the benchmark's CSV (header and rows) in
# $tmp/rows.csv, per-node NIC bytes in $tmp/nic.csv
cl() {
    opts=""
    while [ "$1" != -- ]; do opts="$opts $1"; shift; done
    shift
    # shellcheck disable=SC2086
    timeout 600 "$top/bench/cluster.sh" --nodes 2 --ppn 2 --rate 1gbit --prefix "$prefix" $opts \
        --counters "$tmp/nic.csv" --timeout 500 mpiexec -n 4 -bind-to core "$@" >"$tmp/out" 2>&1
    rc=$?
    # (-P, where given, puts each row after its progress line's "B:")
    sed -n -e 's/^[^,]* B://' -e '/^label,/p' -e '/^[^,:]*,\(allgather\|bcast\|allreduce\),/p' \
        "$tmp/out" >"$tmp/rows.csv"
}
# rows ALG [PLACEMENT]: CSV rows of that algorithm on 2 nodes x 2 (with
# that placement, if given) with status ok and no wrong result
rows_ok() {
    topo_csv "$tmp/rows.csv" 'f("algorithm") == "'"$1"'" &&
                              ("'"${2:-}"'" == "" || f("placement") == "'"${2:-}"'") &&
                              f("nprocs") == 4 && f("nodes") == 2 && f("ppn") == 2 &&
                              f("errors") == 0 && f("status") == "ok"' | wc -l
}
bench="$tmp/coll_bench -H -c allgather,bcast,allreduce -m 4096 -M 1048576 -s 16 -i 3 -w 1 -T 0.05 -v -I eth0 -n 2"

if [ "$only" != rails ]; then
# 1. the default selection: 2 nodes seen, results right, ours selected
#    where the built-in tuning says (allgather across nodes)
cl -- -env MPIR_CVAR_COLL_TRACE 1 $bench -a default
check "2 namespaces x 2: MPICH sees 2 nodes, default selection right at 4 KiB-1 MiB" \
    '[ $rc = 0 ] && [ "$(rows_ok default)" = 9 ] && ! grep -q "fail:" "$tmp/out"'
check "2 namespaces x 2: the built-in tuning picks topo_pipeline for allgather across the nodes" \
    'grep -qE "^mpich-topo: +allgather +topo_pipeline +selection +parent +4" "$tmp/out"'
# busiest node's bytes against its bound for allgather at 1 MiB: at least
# the bound, and not more than 3 times it
check "per-node NIC counters: the busiest node sent at least its lower bound (allgather, 1 MiB)" \
    'topo_csv "$tmp/rows.csv" '\''
        f("collective") == "allgather" && f("bytes") == 1048576 && f("algorithm") == "default" {
            seen = 1
            if (f("node_net_bytes") < f("node_net_bound") || f("node_net_bytes") > 3 * f("node_net_bound"))
                bad = 1
        }
        END { exit !(seen && !bad) }'\'''
check "each node's NIC carried the traffic (bench/cluster.sh --counters)" \
    '[ "$(topo_csv "$tmp/nic.csv" '\''f("tx_bytes") > 1048576 && f("rx_bytes") > 1048576'\'' | wc -l)" = 2 ]'

# 2. ours forced (a silent fallback fails the row: FALLBACK=error)
cl -- $bench -a topo_pipeline,topo_multileader,topo_ring,topo_tree
check "2 namespaces x 2: topo_pipeline/multileader/ring/tree forced, every result right" \
    '[ $rc = 0 ] && [ "$(rows_ok topo_pipeline)" = 9 ] && [ "$(rows_ok topo_multileader)" = 3 ] && [ "$(rows_ok topo_ring)" = 3 ] && [ "$(rows_ok topo_tree)" = 3 ] && ! grep -q "fail:" "$tmp/out"'

# 3. cyclic placement (--placement cyclic): ranks 0 and 2 on node0; the
#    benchmark checks the placement with MPI_COMM_TYPE_SHARED (-p cyclic)
#    and every result; the default selection across the nodes.  (Not -P:
#    its progress text on stderr shares one stream with the CSV rows; this
#    check failed once in CI with -P, with intact rows in its last lines,
#    and passed in 5 runs by hand.)
cl --placement cyclic -- $bench -a default -p cyclic
check "--placement cyclic: ranks alternate between the namespaces, default selection right" \
    '[ $rc = 0 ] && [ "$(rows_ok default cyclic)" = 9 ] && ! grep -q "asked for\|fail:" "$tmp/out"'

# 4. each node has a /dev/shm of its own, as on a cluster: each process
#    sees its node's 2 files, never the other node's
timeout 300 "$top/bench/cluster.sh" --nodes 2 --ppn 2 --rate off --prefix "$prefix" --quiet --timeout 200 \
    mpiexec -n 4 sh -c 'touch /dev/shm/cl-probe-$$; sleep 1; ls /dev/shm | grep -c "^cl-probe-"' >"$tmp/out" 2>&1
rc=$?
check "a /dev/shm per node: each process sees its own node's files only" \
    '[ $rc = 0 ] && [ "$(grep -cx 2 "$tmp/out")" = 4 ]'

fi

# 5. two NICs per node (--rails 2: NIC r under package r, as hwloc sees
#    it): with one leader per package, each process's netmod on its
#    package's NIC (MPIR_CVAR_TOPO_NEAREST_NIC) makes each NIC carry half
#    of its node's bytes, within 5%, in topo_pipeline's allgather, bcast
#    and allreduce at 1 MiB, results validated.  With the choice off
#    (ofi) every process takes the interface libfabric lists first, and
#    that one NIC carries 95% or more of each node's bytes (so does every
#    run before the choice existed).
#    On 4 nodes bcast's chain of nodes cuts 1 MiB into 11 chunks, dealt
#    to the 2 leaders in turn, unless the chunks are made even in number.
#    With UCX and UCX_NET_DEVICES unset, each process's list is every
#    device UCX finds less the far NIC (before, UCX's own choice put 99.8%
#    or more of each node's bytes on one NIC, in 3 runs of 3).
# rails NEAREST COLL [NODES [UCX_DEVICES]]: the run; per-NIC bytes in
# $tmp/rails-COLL-NEAREST.csv
rails() {
    local nn=${3:-2}
    timeout 300 "$top/bench/cluster.sh" --nodes $nn --ppn 2 --rails 2 --rate 1gbit --prefix "$prefix" \
        --ucx-devices "${4:-list}" --quiet --nic-counters "$tmp/rails-$2-$1.csv" --timeout 200 mpiexec -n $((2 * nn)) -bind-to core \
        -env MPIR_CVAR_TOPO_NEAREST_NIC "$1" "$tmp/coll_bench" -H -c "$2" -a topo_pipeline \
        -m 1048576 -M 1048576 -i 3 -w 1 -v >"$tmp/out" 2>&1
    rc=$?
}
# nic_share FILE: the largest share of its node's bytes (sent + received)
# that one NIC carried, and the smallest, over the nodes ("max min")
nic_share() {
    topo_csv "$1" '{ b = f("tx_bytes") + f("rx_bytes"); tot[f("node")] += b; nb[f("node") SUBSEP f("nic")] = b }
        END { mx = 0; mn = 1
              for (k in nb) { split(k, a, SUBSEP); s = nb[k] / tot[a[1]]; if (s > mx) mx = s; if (s < mn) mn = s }
              printf "%.3f %.3f\n", mx, mn }'
}
for run in "allgather 2" "bcast 2" "allreduce 2" "bcast 4"; do
    set -- $run
    rails 1 $1 $2
    share=$(nic_share "$tmp/rails-$1-1.csv")
    check "--rails 2, $1 1 MiB on $2 nodes: each process on its package's NIC, each NIC half its node's bytes within 5% (largest, smallest share: $share)" \
        '[ $rc = 0 ] && grep -q ",ok\$" "$tmp/out" && ! grep -q "fail:" "$tmp/out" &&
         echo "$share" | awk "{ exit !(\$1 <= 0.525 && \$2 >= 0.475) }"'
done
if [ "$dev" = ucx ]; then
    rails 1 allreduce 2 all
    share=$(nic_share "$tmp/rails-allreduce-1.csv")
    check "--rails 2, allreduce 1 MiB, UCX_NET_DEVICES unset: each NIC half its node's bytes within 5% (largest, smallest share: $share)" \
        '[ $rc = 0 ] && grep -q ",ok\$" "$tmp/out" && ! grep -q "fail:" "$tmp/out" &&
         echo "$share" | awk "{ exit !(\$1 <= 0.525 && \$2 >= 0.475) }"'
fi
# (ofi only: UCX left to itself puts a node's bytes on one NIC in most
# launches and stripes large messages over both in some,
# bench/results/dev-2core-multirail-ucx)
if [ "$dev" = ofi ]; then
    rails 0 allreduce
    share=$(nic_share "$tmp/rails-allreduce-0.csv")
    check "--rails 2 with MPIR_CVAR_TOPO_NEAREST_NIC=0: one NIC carries 95% or more of each node's bytes (largest, smallest share: $share)" \
        '[ $rc = 0 ] && grep -q ",ok\$" "$tmp/out" && echo "$share" | awk "{ exit !(\$1 >= 0.95 && \$2 <= 0.05) }"'
fi

# 6. nothing left behind.  Segments compared with those there before the
#    runs: CI once saw one here that the end-of-device check (check.sh)
#    no longer saw, left for a moment by an earlier test, not by this one
shm_names >"$tmp/shm-after"
check "no namespace, /etc/netns entry or new /dev/shm segment left" \
    '! ip netns list | grep -q "^tc[0-9]*-" && ! ls /etc/netns 2>/dev/null | grep -q "^tc[0-9]*-" && [ -z "$(comm -13 "$tmp/shm-before" "$tmp/shm-after")" ]'

tap_summary cluster
