#!/bin/bash
# Where the time of a small collective goes, per layer: perf samples of
# every process of a back-to-back loop (bench/small_calls.c, 16 million
# calls by default; sampling starts 1 s in, after MPI_Init, at 2 kHz: faster
# sampling slows a paravirtualised machine's loop several times), grouped
# by function into the layers of a call, as a share of the samples and as
# nanoseconds per call. A loop that ends before sampling starts (a fast
# machine, too few calls) is reported as such: raise --calls.
#
#   bench/small-profile.sh [--prefix DIR] [--np N] [--bytes B] [--calls N] [COLL...]
#
# COLL: barrier bcast allreduce reduce allgather (default: all five).
# Needs perf (linux-perf) and permission to sample (root, or
# kernel.perf_event_paranoid <= 1). Default prefix: install-ofi.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/maint/topo-common.sh"
prefix=$top/install-ofi
np=2
bytes=16
calls=16000000
colls=()
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift ;;
        --np) np=$2; shift ;;
        --bytes) bytes=$2; shift ;;
        --calls) calls=$2; shift ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) colls+=("$1") ;;
    esac
    shift
done
[ ${#colls[@]} -gt 0 ] || colls=(barrier bcast allreduce reduce allgather)
command -v perf >/dev/null || { echo "small-profile.sh: perf not found (apt-get install linux-perf)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prefix/bin/mpicc" -O2 -g -o "$tmp/small_calls" "$top/bench/small_calls.c"

# the layer of a symbol (first match wins)
layer() {
    awk '
    function L(s) {
        if (s ~ /^\[k\]|^0x/) return "kernel";
        if (s ~ /Csel|csel/) return "selection (csel)";
        if (s ~ /[Tt]race/) return "trace hook";
        if (s ~ /MPIDI_Topo_(pause|wait)/) return "engine: waiting (calls)";
        if (s ~ /MPIDI_Topo|MPIR_Topo|topo_|^reduction$|_cells$|^bcast_cell$/) return "engine: steps, inlined waits";
        if (s ~ /OFI|fi_|ofi|sock|tcpx|ucp_|uct_|ucs_|UCX|epoll/) return "netmod progress";
        if (s ~ /POSIX|release_gather|MPIDI_SHM|shm/) return "CH4 shared memory";
        if (s ~ /Progress|progress/) return "progress engine";
        if (s ~ /memcpy|memmove|Localcopy|Typerep|MPIR_.*_op|MPIR_SUM|typerep/) return "copies and ops";
        if (s ~ /^(P?MPI_|MPIR_|MPID_|MPIDI_|internal_)/) return "MPI entry and dispatch";
        return "other (libc, ...)";
    }
    { pct = $1; sub(/%/, "", pct); $1 = ""; sym = $0; sub(/^ +/, "", sym); s[L(sym)] += pct }
    END { for (k in s) printf "%s\t%.1f\n", k, s[k] }'
}

echo "layer shares of $np processes' samples (perf), ns per call = share x loop time"
for c in "${colls[@]}"; do
    out=$("$prefix/bin/mpiexec" -n "$np" -bind-to core sh -c \
        "exec perf record -q -F 2000 -D 1000 -o $tmp/perf.\$PMI_RANK $tmp/small_calls -p -c $c -b $bytes -i $calls -l profile" 2>/dev/null)
    loop=$(echo "$out" | topo_csv - 'f("collective") == "'"$c"'" { print f("loop_us") }')
    echo
    echo "$c, $bytes B, $np processes: $loop us per call back to back"
    if [ -z "$(perf report -q -i "$tmp/perf.0" --sort sym --stdio 2>/dev/null)" ]; then
        echo "  no samples: the loop ended before sampling began (raise --calls)"
        continue
    fi
    for r in $(seq 0 $((np - 1))); do
        perf report -q -i "$tmp/perf.$r" --sort sym --stdio 2>/dev/null | awk 'NF>=3 {print $1, ($2 == "[k]" ? "[k]" : ""), $3}'
    done | awk '{p=$1; sub(/%/,"",p); $1=""; a[$0]+=p} END {for (k in a) printf "%.2f%% %s\n", a[k]/'"$np"', k}' |
        layer | sort -t$'\t' -k2 -rn | awk -F'\t' -v loop="$loop" '$2 >= 0.5 {printf "  %-28s %5.1f%%  %6.0f ns\n", $1, $2, $2 * loop * 10}'
done
