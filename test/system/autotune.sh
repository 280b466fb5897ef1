#!/bin/sh
#
# Checks of maint/topo-autotune on emulated nodes (2 cliques, 4 processes).
# Usage: autotune.sh PREFIX DEVICE
# Prints "ok N - what" / "not ok N - what" lines (TAP-like).
#
#  1. From known measurements (a CSV written here, so the winners are known)
#     it must write tuning files under which MPICH runs, for each size, the
#     winner: checked with MPIR_CVAR_COLL_TRACE, which names the algorithm
#     that the selection picked.
#  2. Bad input must stop it with a message naming what is wrong.
#  3. A real (short) measuring run must produce files MPI_Init accepts.

set -u
prefix=$1 dev=$2
. "$(dirname "$0")/tap.sh"
tool=$top/maint/topo-autotune
export MPIR_CVAR_NUM_CLIQUES=2

"$prefix/bin/mpicc" -O2 -o "$tmp/coll_bench" "$top/bench/coll_bench.c" >"$tmp/out" 2>&1 ||
    { notok "build coll_bench"; tap_summary autotune; exit 1; }

# 1. known winners: allgather 1 KiB topo_pipeline, 8 KiB MPICH's default,
#    64 KiB ring; allreduce 4 KiB topo_pipeline; the rest default
hdr="label,collective,placement,nprocs,bytes,iterations,min_us,avg_us,max_us,errors,algorithm,nodes,ppn,cache,med_us,tcp_retrans,net_bytes,net_bound,node_net_bytes,node_net_bound,status"
{
    echo "$hdr"
    row() { echo "autotune,$1,block,4,$2,10,$4,$4,$4,0,$3,2,2,hot,$4,0,,,,,${5:-ok}"; }
    row allgather 1024 default 50; row allgather 1024 topo_pipeline 10; row allgather 1024 ring 60
    row allgather 8192 default 50; row allgather 8192 topo_pipeline 49; row allgather 8192 ring 70
    row allgather 65536 default 90; row allgather 65536 topo_pipeline 95; row allgather 65536 ring 40
    # a faster result with wrong bytes, and one that could not run, never win
    echo "autotune,allgather,block,4,65536,10,1,1,1,3,brucks,2,2,hot,1,0,,,,,ok"
    row allgather 65536 topo_multileader 1 "n/a:reason"
    row allreduce 4096 default 30; row allreduce 4096 topo_pipeline 10
    row allreduce 262144 default 30; row allreduce 262144 topo_pipeline 29.5
} >"$tmp/known.csv"
# on MPICH's own tree (the tool's --*-base options), where the default
# differs from every winner above (ours picks topo_pipeline itself)
sh "$top/maint/stock-tuning.sh" "$tmp/stock" >"$tmp/out" 2>&1 ||
    { notok "MPICH's own tuning files"; tap_summary autotune; exit 1; }
if python3 "$tool" --from-csv "$tmp/known.csv" --colls allgather,allreduce --out "$tmp/k" \
    --mpir-base "$tmp/stock/mpir.json" --ch4-base "$tmp/stock/ch4.json" >"$tmp/out" 2>&1 &&
    [ -s "$tmp/k/mpir.json" ] && [ -s "$tmp/k/ch4.json" ] && [ -s "$tmp/k/summary.md" ]; then
    ok "files written from known measurements"
else
    notok "files written from known measurements"
fi
if grep -q '| allgather | 4 | 65536 | ring |' "$tmp/k/summary.md" 2>/dev/null &&
    grep -q '| allreduce | 4 | 262144 | default |' "$tmp/k/summary.md"; then
    ok "winners: invalid or n/a results never win, a 2% lead is below the margin"
else
    cp "$tmp/k/summary.md" "$tmp/out" 2>/dev/null
    notok "winners: invalid or n/a results never win, a 2% lead is below the margin"
fi

# which algorithms the selection ran for coll's calls at size (4
# processes): the trace of a run with calls minus that of the same run
# without any (the benchmark's own bookkeeping also uses collectives)
trace() {   # coll size iters -> "algorithm count" lines
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$tmp/k/mpir.json \
    MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=$tmp/k/ch4.json \
    MPIR_CVAR_NUM_CLIQUES=$cliques MPIR_CVAR_COLL_TRACE=1 timeout 300 "$prefix/bin/mpiexec" -n 4 "$tmp/coll_bench" \
        -c "$1" -a default -m "$2" -M "$2" -i "$3" -w "$3" -v >"$tmp/out" 2>&1 || return 1
    awk -v c="$1" '$2 == c && $4 == "selection" && $(NF-1) == "4:" { print $3, $NF }' "$tmp/out"
}
ran() {     # coll size -> algorithm names on stdout
    trace "$1" "$2" 0 >"$tmp/base" || return 1
    trace "$1" "$2" 20 >"$tmp/with" || return 1
    grep -q ",$1,.*,ok\$" "$tmp/out" || return 1
    awk 'NR == FNR { base[$1] = $2; next } $2 - base[$1] >= 20 { print $1 }' "$tmp/base" "$tmp/with"
}
for t in "allgather 1024 topo_pipeline" "allgather 65536 ring" "allreduce 4096 topo_pipeline" \
    "allgather 8192 recursive_doubling" "allgather 1024 recursive_doubling 1"; do
    set -- $t
    cliques=${4:-2}
    # at 8 KiB MPICH's default won: MPICH's own tree runs (4 processes,
    # a power of two: recursive doubling below 512 KiB in total); on one
    # node the 4 processes are another layout than the measured one
    if algs=$(ran "$1" "$2") && [ "$algs" = "$3" ]; then
        ok "tuned files route $1 at $2 B on $cliques node(s) to $3"
    else
        notok "tuned files route $1 at $2 B on $cliques node(s) to $3 (ran: $(echo $algs))"
    fi
done

# 2. bad input
bad() {     # what expected-message args...
    what=$1 msg=$2
    shift 2
    python3 "$tool" "$@" --out "$tmp/bad" >"$tmp/out" 2>&1
    rc=$?
    if [ $rc = 2 ] && grep -q "$msg" "$tmp/out"; then ok "rejects $what"; else notok "rejects $what (exit $rc)"; fi
}
bad "an unknown collective" "unknown collective 'alltoall'" --from-csv "$tmp/known.csv" --colls alltoall
bad "an unreadable CSV" "cannot read $tmp/none.csv" --from-csv "$tmp/none.csv"
grep -v ',default,' "$tmp/known.csv" >"$tmp/nodefault.csv"
bad "measurements without MPICH's default" "default was not measured" --from-csv "$tmp/nodefault.csv" --colls allgather
bad "a malformed size" "not a size: '4Q'" --from-csv "$tmp/known.csv" --max 4Q
echo '{ "collective=bcast": ' >"$tmp/broken.json"
bad "a broken base JSON file" "is not valid JSON" --from-csv "$tmp/known.csv" --mpir-base "$tmp/broken.json"

# 3. a real measuring run, short
if python3 "$tool" --launcher "$prefix/bin/mpiexec -n 4" --bench "$tmp/coll_bench" --colls bcast,allreduce \
    --min 1K --max 4K --rounds 1 --time-cap 0.05 --out "$tmp/real" >"$tmp/out" 2>&1 &&
    grep -q '| bcast | 4 | 4096 |' "$tmp/real/summary.md" &&
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$tmp/real/mpir.json \
    MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=$tmp/real/ch4.json \
    timeout 300 "$prefix/bin/mpiexec" -n 4 "$tmp/coll_bench" -c bcast,allreduce -a default \
        -m 1024 -M 4096 -i 3 -w 1 -v >"$tmp/out" 2>&1 && ! grep -q ',fail' "$tmp/out"; then
    ok "a measuring run on 2 emulated nodes writes files MPICH runs with"
else
    notok "a measuring run on 2 emulated nodes writes files MPICH runs with"
fi

tap_summary autotune
