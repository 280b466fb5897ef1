#!/bin/sh
# Times the engine algorithms (topo_pipeline, topo_multileader) against
# MPICH's default selection, relaunching once per algorithm (the CVARs are
# read at MPI_Init), and writes a CSV plus a markdown table of ratios.
#
#   bench/engine_bench.sh [--device ofi|ucx] [--out DIR] [--max BYTES] [--np-list "2 4"]
#
# Layouts: one node with every process bound to a core (intra-node stages:
# shared memory and CMA), and 2 emulated nodes (MPIR_CVAR_NUM_CLIQUES=2,
# round-robin) whose inter-node traffic goes over loopback TCP on ch4:ofi.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dev=ofi
out=$top/bench/results
max=1048576
nps="2 4"
while [ $# -gt 0 ]; do
    case $1 in
        --device) dev=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --max) max=$2; shift 2 ;;
        --np-list) nps=$2; shift 2 ;;
        *) echo "usage: $0 [--device ofi|ucx] [--out DIR] [--max BYTES] [--np-list LIST]" >&2; exit 2 ;;
    esac
done
prefix=$top/install-$dev
[ -x "$prefix/bin/mpiexec" ] || { echo "no $prefix; build first (./check.sh or demo.sh)" >&2; exit 1; }
mkdir -p "$out"
bin=$out/.coll_bench-$dev
"$prefix/bin/mpicc" -O2 -o "$bin" "$top/bench/coll_bench.c"
csv=$out/engine-$dev.csv
echo "label,collective,placement,np,bytes,iters,min_us,avg_us,max_us,errors,layout" >"$csv"
[ "$dev" = ofi ] && export FI_PROVIDER=tcp

run() {     # layout np coll label env...
    layout=$1 np=$2 coll=$3 label=$4
    shift 4
    echo "  $layout np=$np $coll $label" >&2
    # shellcheck disable=SC2086
    env "$@" "$prefix/bin/mpiexec" -n "$np" -bind-to core "$bin" -c "$coll" -m 1024 -M "$max" \
        -i 200 -w 20 -v -l "$label" | grep -v '^label' | sed "s/\$/,$layout/" >>"$csv"
}

for np in $nps; do
    for layout in 1node 2nodes; do
        if [ $layout = 2nodes ]; then
            [ "$np" -ge 2 ] || continue
            lenv="MPIR_CVAR_NUM_CLIQUES=2"
        else
            lenv="MPIR_CVAR_NUM_CLIQUES=1"
        fi
        for coll in allgather bcast allreduce; do
            C=$(echo $coll | tr a-z A-Z)
            run $layout "$np" $coll default $lenv
            run $layout "$np" $coll topo_pipeline $lenv MPIR_CVAR_${C}_INTRA_ALGORITHM=topo_pipeline \
                MPIR_CVAR_COLLECTIVE_FALLBACK=error
            if [ $coll = allgather ]; then
                run $layout "$np" $coll topo_multileader $lenv \
                    MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM=topo_multileader MPIR_CVAR_COLLECTIVE_FALLBACK=error
            fi
        done
    done
done

python3 - "$csv" "$out/engine-$dev.md" "$dev" <<'PY'
import csv, sys, os, platform
rows = list(csv.DictReader(open(sys.argv[1])))
base = {}
for r in rows:
    if r['label'] == 'default':
        base[(r['layout'], r['np'], r['collective'], r['bytes'])] = float(r['avg_us'])
out = open(sys.argv[2], 'w')
ncpu = os.cpu_count()
out.write("# Engine algorithms vs MPICH's default (ch4:%s, %d cores, %s)\n\n" % (sys.argv[3], ncpu, platform.machine()))
out.write("Average time per call over processes; ratio = default / algorithm (>1: ours is faster).\n")
out.write("Validation errors (every result checked): %d.\n\n" % sum(int(r['errors']) for r in rows))
keys = sorted({(r['layout'], int(r['np']), r['collective']) for r in rows})
for layout, np_, coll in keys:
    algs = [a for a in ('topo_pipeline', 'topo_multileader')
            if any(r['label'] == a and r['collective'] == coll for r in rows)]
    out.write("## %s, %s, %d processes\n\n| bytes/proc | default us | %s |\n|---|---|%s\n" % (
        coll, layout, np_, ' | '.join('%s us (ratio)' % a for a in algs), '---|' * len(algs)))
    sizes = sorted({int(r['bytes']) for r in rows if r['layout'] == layout and int(r['np']) == np_ and r['collective'] == coll})
    for b in sizes:
        d = base.get((layout, str(np_), coll, str(b)))
        cells = []
        for a in algs:
            v = [float(r['avg_us']) for r in rows if r['label'] == a and r['layout'] == layout and int(r['np']) == np_ and r['collective'] == coll and int(r['bytes']) == b]
            cells.append('%.1f (%.2fx)' % (v[0], d / v[0]) if v and d else '-')
        out.write("| %d | %s | %s |\n" % (b, '%.1f' % d if d else '-', ' | '.join(cells)))
    out.write("\n")
PY
echo "wrote $csv and $out/engine-$dev.md"
