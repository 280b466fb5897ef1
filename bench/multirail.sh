#!/bin/bash
# NUIOA multirail on the emulated cluster: 2 nodes of 2 packages, one NIC
# near each package (bench/cluster.sh --rails 2), one leader per package.
# For allgather, bcast and allreduce it runs topo_pipeline and mpich-topo's
# default with each process on its nearest NIC (MPIR_CVAR_TOPO_NEAREST_NIC=1)
# and with every process on the interface libfabric lists first (=0, what
# MPICH does), at two NIC rates, and reports each NIC's share of its node's
# bytes and the time, validated.
#
#   bench/multirail.sh [--out DIR] [--rates "1gbit 500mbit"]
#                      [--sizes "1048576 4194304"] [--nodes 2] [--ppn 2]
#                      [--algs "topo_pipeline default"] [--prefix DIR]
#                      [--bench FILE] [--ucx-devices list|all]
#
# --bench: a coll_bench already built against the prefix (where there is
# no compiler, bench/device-run.sh), instead of building one.
# --ucx-devices: with ch4:ucx, UCX_NET_DEVICES set to the NICs (list, the
# default) or left unset (all), as bench/cluster.sh says.
# Writes DIR/multirail.csv (one row per run and size: collective,
# algorithm, nearest, rate, bytes, median time of the slowest process in
# us, largest and smallest share of a node's bytes one NIC carried) and
# DIR/summary.md. A cell counts as network-bound where its time at the
# second rate is at least 1.7x the first's. Needs root (namespaces).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build-bench/multirail
rates="1gbit 500mbit"
sizes="1048576 4194304"
nodes=2
ppn=2
algs="topo_pipeline default"
prefix=$top/install-ofi
bench=
ucx_devices=list
while [ $# -gt 0 ]; do
    case $1 in
        --out) out=$2; shift 2 ;;
        --rates) rates=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --nodes) nodes=$2; shift 2 ;;
        --ppn) ppn=$2; shift 2 ;;
        --algs) algs=$2; shift 2 ;;
        --bench) bench=$2; shift 2 ;;
        --prefix) prefix=$2; shift 2 ;;
        --ucx-devices) ucx_devices=$2; shift 2 ;;
        -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "multirail.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -z "$bench" ]; then
    bench=$out/coll_bench
    "$prefix/bin/mpicc" -O2 -std=c99 -o "$bench" "$top/bench/coll_bench.c"
fi
min=$(echo $sizes | tr ' ' '\n' | sort -n | head -1)
max=$(echo $sizes | tr ' ' '\n' | sort -n | tail -1)
np=$((nodes * ppn))
csv=$out/multirail.csv
echo "collective,algorithm,nearest,rate,bytes,time_us,nic_share_max,nic_share_min,status" >"$csv"
for rate in $rates; do
    for c in allgather bcast allreduce; do
        for near in 1 0; do
            for alg in $algs; do
                FI_PROVIDER=tcp "$top/bench/cluster.sh" --nodes "$nodes" --ppn "$ppn" --rails 2 --rate "$rate" \
                    --ucx-devices "$ucx_devices" --prefix "$prefix" --quiet --nic-counters "$out/nic.csv" --timeout 600 \
                    mpiexec -n $np -bind-to core -env MPIR_CVAR_TOPO_NEAREST_NIC $near "$bench" -H \
                    -c $c -a $alg -m "$min" -M "$max" -s 4 -i 5 -w 1 -v >"$out/run.txt" 2>&1 || true
                # the NIC counters cover the whole launch (every size)
                share=$(awk -F, 'NR > 1 { b = $3 + $4; tot[$1] += b; nb[$1 "," $2] = b }
                    END { mx = 0; mn = 1
                          for (k in nb) { split(k, a, ","); s = nb[k] / tot[a[1]]
                                          if (s > mx) mx = s; if (s < mn) mn = s }
                          printf "%.3f,%.3f", mx, mn }' "$out/nic.csv")
                awk -F, -v c=$c -v a=$alg -v n=$near -v r=$rate -v s="$share" '
                    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
                    $(col["collective"]) == c && $(col["bytes"]) + 0 > 0 {
                        printf "%s,%s,%s,%s,%s,%s,%s,%s\n", c, a, n, r, $(col["bytes"]),
                            $(col["med_us"]), s, $(col["status"]) }' \
                    <(sed -n '/^label,/,$p' "$out/run.txt") >>"$csv"
                echo "multirail: $rate $c $alg nearest=$near: NIC shares $share" >&2
            done
        done
    done
done
python3 - "$csv" "$rates" >"$out/summary.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
rates = sys.argv[2].split()
t = {(r['collective'], r['algorithm'], r['nearest'], r['rate'], r['bytes']): r for r in rows}
print("# NUIOA multirail: 2 NICs per node, one near each of its 2 packages\n")
print("Time: median over calls of the slowest process (us). Share: the largest")
print("share of its node's bytes one NIC carried (0.5 = even). nearest=1: each")
print("process on its package's NIC; nearest=0: every process on libfabric's first.")
print("gain = time(nearest=0) / time(nearest=1). `*`: not network-bound (time at")
print("%s below 1.7x the time at %s), decides nothing.\n" % (rates[-1], rates[0]))
print("| rate | collective | algorithm | bytes | nearest=1 us (share) | nearest=0 us (share) | gain |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    if r['nearest'] != '1':
        continue
    k = (r['collective'], r['algorithm'], '0', r['rate'], r['bytes'])
    if k not in t:
        continue
    o = t[k]
    gain = float(o['time_us']) / float(r['time_us'])
    bound = ''
    if len(rates) > 1 and r['rate'] == rates[0]:
        h1 = t.get((r['collective'], r['algorithm'], '1', rates[-1], r['bytes']))
        h0 = t.get((r['collective'], r['algorithm'], '0', rates[-1], r['bytes']))
        if h1 and h0 and (float(h1['time_us']) < 1.7 * float(r['time_us']) or
                          float(h0['time_us']) < 1.7 * float(o['time_us'])):
            bound = '*'
    print("| %s | %s | %s | %s | %.0f (%s) | %.0f (%s) | %.2f%s |" % (
        r['rate'], r['collective'], r['algorithm'], r['bytes'], float(r['time_us']),
        r['nic_share_max'], float(o['time_us']), o['nic_share_max'], gain, bound))
bad = [r for r in rows if r['status'] != 'ok']
print("\n%d rows, %d not ok" % (len(rows), len(bad)))
EOF
cat "$out/summary.md"
