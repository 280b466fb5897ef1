#!/usr/bin/env python3
# Copyright (C) by the mpich-topo authors. See COPYRIGHT in top-level directory.
"""Summary and plots of a bench/run.sh output directory.

    report.py DIR [--no-plots]

Reads DIR/bench.csv, DIR/meta.txt and DIR/commands.txt; writes
DIR/summary.md and, with matplotlib (Debian's python3-matplotlib, run with
/usr/bin/python3), DIR/plots/*.png:
  lat-CASE-COLL.png  latency against bytes per process, one line per
                     algorithm, and each one's ratio to MPICH's default
  net-CASE.png       network bytes per call / lower bound (emulated nodes)
Times are medians over calls of the slowest process (med_us); ratios are
MPICH default / algorithm, so above 1 is faster than MPICH's default.
"""

import csv
import os
import re
import sys
from collections import defaultdict

OURS = ('mpich-topo default', 'topo_ring', 'topo_pipeline', 'topo_multileader', 'topo_tree')
COLLS = ('allgather', 'bcast', 'allreduce', 'reduce')
PEERS = ('openmpi', 'openmpi-han')
# MPICH's default in launches of its own, beside mpich-topo's default: the
# baseline of that one (the other algorithms share the main launch with
# 'MPICH default'; launches minutes apart differ on a shared machine)
STOCK_ALONE = 'MPICH default, own launches'


def base_of(d, s):
    if s == 'mpich-topo default' and STOCK_ALONE in d:
        return d[STOCK_ALONE]
    return d.get('MPICH default', {})
SHOW_SIZES = (16, 1024, 65536, 1048576, 4194304, 16777216)     # powers of 4: in every sweep


def human(b):
    b = int(b)
    for unit, div in (('MiB', 1 << 20), ('KiB', 1 << 10)):
        if b >= div and b % div == 0:
            return '%d %s' % (b // div, unit)
    return '%d B' % b


def series_name(label, alg):
    if label in ('openmpi', 'openmpi5'):
        return 'Open MPI'
    if label == 'openmpi5-tuned':
        return 'Open MPI tuned'
    if label == 'openmpi-han':
        return 'Open MPI + coll_han'
    if label == 'mpich-topo':
        return 'mpich-topo default'
    if label == 'mpich-alone':
        return STOCK_ALONE
    return 'MPICH default' if alg == 'default' else alg


def load(d):
    rows = list(csv.DictReader(open(os.path.join(d, 'bench.csv'))))
    meta = {}
    if os.path.exists(os.path.join(d, 'meta.txt')):
        for line in open(os.path.join(d, 'meta.txt')):
            if ':' in line:
                k, v = line.split(':', 1)
                meta[k.strip()] = v.strip()
    cmds = []
    if os.path.exists(os.path.join(d, 'commands.txt')):
        cmds = [l.rstrip('\n') for l in open(os.path.join(d, 'commands.txt'))]
    # "coll_bench: 4 ranks on 2 node(s), other; node of each rank: 0 1 1 0"
    layouts = {}
    if os.path.exists(os.path.join(d, 'log.txt')):
        for line in open(os.path.join(d, 'log.txt'), errors='replace'):
            m = re.match(r'coll_bench: (\d+) ranks on (\d+) node\(s\), (\w+); node of each rank: (.*)', line)
            if m:
                layouts[(int(m.group(2)), int(m.group(1)), m.group(3))] = m.group(4).strip()
    meta['layouts'] = layouts
    return rows, meta, cmds


def case_of(r):
    return (int(r['nodes']), int(r['nprocs']), r['placement'] if int(r['nodes']) > 1 else 'block',
            r['cache'])


def case_title(c, cores):
    nodes, np_, pl, cache = c
    t = '%d ranks, %s' % (np_, '1 node' if nodes == 1 else '%d emulated nodes, %s' % (nodes, pl))
    if cache == 'cold':
        t += ', off-cache'
    if cores and np_ > cores:
        t += ' (oversubscribed: %d ranks on %d cores)' % (np_, cores)
    return t


def layout_of(c, meta):
    nodes, np_, pl, _ = c
    want = {'block': 'block', 'cyclic': 'cyclic', 'shuffle': 'other'}.get(pl, pl)
    seq = meta.get('layouts', {}).get((nodes, np_, want))
    return ' (node of each rank: %s)' % seq if seq and nodes > 1 else ''


def case_slug(c):
    nodes, np_, pl, cache = c
    return 'np%d-%dn-%s-%s' % (np_, nodes, pl, cache)


def med(r):
    v = float(r['med_us'] or 0)
    return v if v > 0 else float(r['avg_us'] or 0)


def organise(rows):
    """data[case][coll][series][bytes] = row (status ok only); of several
    launches that measured the same thing, the fastest (the machine's noise
    only ever adds time)"""
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    na = defaultdict(set)
    for r in rows:
        key = (case_of(r), r['collective'], series_name(r['label'], r['algorithm']))
        if r['status'] == 'ok' and int(r['iterations']) > 0:
            d = data[key[0]][key[1]][key[2]]
            b = int(r['bytes'])
            if b not in d or med(r) < med(d[b]):
                d[b] = r
        else:
            na[key].add((int(r['bytes']), r['status']))
    return data, na


def order(series):
    def rank(s):
        if s == 'MPICH default':
            return (0, s)
        if s in OURS:
            return (1, OURS.index(s))
        if s.startswith('Open MPI'):
            return (3, s)
        return (2, s)
    return sorted(series, key=rank)


def ratio_cell(d, s, b):
    base = base_of(d, s)
    if b not in d.get(s, {}) or b not in base:
        return '-'
    return '%.2f' % (med(base[b]) / med(d[s][b]))


def net_ratio(r):
    if not r or not r['net_bytes'] or not r['net_bound'] or float(r['net_bound']) <= 0:
        return None
    return float(r['net_bytes']) / float(r['net_bound'])


def summary(d, rows, meta, cmds, data, na, plots):
    cores = int(meta.get('cores', '0') or 0)
    out = []
    w = out.append
    w('# Benchmark suite: %s' % (os.path.basename(os.path.abspath(d))))
    w('')
    w('Made with `%s` on %s, in %s s (%s failed launches).' % (
        meta.get('command', 'bench/run.sh'), meta.get('date', '?'), meta.get('duration_s', '?'),
        meta.get('failed_launches', '?')))
    w('')
    w('- Machine: %s cores, %s NUMA node(s), %s, %s memory; %s; %s.' % (
        meta.get('cores', '?'), meta.get('numa_nodes', '?'), meta.get('cpu', '?'),
        meta.get('memory', '?'), meta.get('kernel', '?'), meta.get('os', '?')))
    w('- Build: MPICH %s; configure: `%s`; libfabric %s.' % (
        meta.get('mpich', '?'), meta.get('mpich_configure', '?'), meta.get('libfabric', '?')))
    if 'openmpi' in meta:
        w('- Peer: %s, same `bench/coll_bench.c` built with `mpicc.openmpi -O2`; default '
          'collectives, and `--mca coll_han_priority 100` on emulated nodes (coll_han steps '
          'aside on one node).' % meta['openmpi'])
    w('- Algorithms switched by %s; every result validated (%d wrong in %d measurements); '
      'buffers rewritten before every call%s.' % (
          meta.get('switching', '?'), sum(int(r['errors']) for r in rows), len(rows),
          ', off-cache pool of %s per process in the off-cache cases' % human(meta['offcache_pool_bytes'])
          if 'offcache_pool_bytes' in meta and any(r['cache'] == 'cold' for r in rows) else ''))
    w('- Emulated nodes: `MPIR_CVAR_NUM_CLIQUES` (`MPIR_CVAR_CLIQUES_BY_BLOCK=1` for block and '
      'shuffle), ch4:ofi with `FI_PROVIDER=tcp`, so traffic between them crosses loopback TCP; '
      'Open MPI: one orted per emulated node (`bench/fake-node-rsh.sh`), btl tcp on lo. '
      'Same cores for rank r in both (r mod cores). Private network namespace per launch: %s.'
      % meta.get('netns', '?'))
    w('- Times: median over calls of the slowest process (`med_us`; the CSV also has OSU\'s '
      'min/avg/max over processes of each one\'s mean). Ratio = MPICH default / algorithm: '
      'above 1 is faster than MPICH\'s default selection. "MPICH default" is MPICH 4.0.2\'s own '
      'selection (its tuning files, `maint/stock-tuning.sh`); "mpich-topo default" is ours, '
      'whose built-in tuning picks our algorithms where these benchmarks put them ahead.')
    if cores:
        w('- Ranks above the core count (%d) oversubscribe: our engine yields in its waits, stock '
          'MPICH busy-polls and loses whole scheduler slices, so those time ratios measure '
          'scheduling, not algorithms. Network bytes are deterministic and hold everywhere.' % cores)
    if 'load_average' in meta:
        w('- Load average during the run: %s. Other jobs shared this machine: time ratios are '
          'noisy (the best of several interleaved rounds is kept); byte counts are not.'
          % meta['load_average'])
    w('- Every launch command is in `commands.txt`; all measurements in `bench.csv`; plots in '
      '`plots/`; progress and traces in `log.txt`.')
    w('')

    cases = sorted(data.keys(), key=lambda c: (c[1] > cores if cores else 0, c[1], c[0], c[3] != 'hot', c[2]))

    # headlines: best of ours and peers at the shown sizes, cases with dedicated cores
    w('## Headlines')
    w('')
    w('Ratio to MPICH default of the best of ours (which one), then Open MPI\'s default (OMPI), '
      'Open MPI with coll_han (HAN, 4.1.4) or tuned alone (TUNED, 5.0.7), in the cases with a '
      'core per rank.')
    w('')
    head = [c for c in cases if not (cores and c[1] > cores)]
    present = {b for c in head for coll in data[c] for s in data[c][coll] for b in data[c][coll][s]}
    shown = [b for b in SHOW_SIZES if b in present]
    w('| case | collective | ' + ' | '.join(human(b) for b in shown) + ' |')
    w('|---|---|' + '---|' * len(shown))
    for c in head:
        for coll in COLLS:
            dd = data[c].get(coll)
            if not dd:
                continue
            cells = []
            for b in shown:
                best = None
                for s in dd:
                    if s in OURS and b in dd[s] and b in base_of(dd, s):
                        rt = med(base_of(dd, s)[b]) / med(dd[s][b])
                        if best is None or rt > best[0]:
                            best = (rt, s)
                peer = [('%s %s' % ({'Open MPI': 'OMPI', 'Open MPI tuned': 'TUNED'}.get(p, 'HAN'),
                                    ratio_cell(dd, p, b)))
                        for p in ('Open MPI', 'Open MPI + coll_han', 'Open MPI tuned')
                        if b in dd.get(p, {})]
                cells.append(('%.2f %s' % best if best else '-') +
                             ('; ' + ', '.join(peer) if peer else ''))
            w('| %s | %s | %s |' % (case_title(c, cores), coll, ' | '.join(cells)))
    w('')

    # network bytes
    netcases = [c for c in cases if c[0] > 1 and c[3] == 'hot']
    if netcases:
        w('Network bytes per call / lower bound at 1 MiB per process (deterministic; all cases, '
          'oversubscribed or not):')
        w('')
        cols = ['MPICH default', 'mpich-topo default', 'best stock', 'topo_ring', 'topo_tree', 'topo_multileader',
                'topo_pipeline', 'Open MPI', 'Open MPI + coll_han']
        w('| case | collective | ' + ' | '.join(cols) + ' |')
        w('|---|---|' + '---|' * len(cols))
        for c in netcases:
            for coll in COLLS:
                dd = data[c].get(coll, {})
                vals = {s: net_ratio(dd[s].get(1048576)) for s in dd}
                stock = [v for s, v in vals.items() if v is not None
                         and s not in ('MPICH default', STOCK_ALONE)
                         and s not in OURS and not s.startswith('Open MPI')]
                cells = []
                for col in cols:
                    v = min(stock) if col == 'best stock' and stock else vals.get(col)
                    cells.append('%.2fx' % v if v is not None else '')
                w('| %s%s | %s | %s |' % (case_title(c, cores), layout_of(c, meta), coll,
                                         ' | '.join(cells)))
        w('')

        w('## Bytes on the emulated network per call / lower bound')
        w('')
        w('Loopback transmit counter around back-to-back calls minus the same without calls, '
          'smallest of 3 tries (TCP/IP headers included: about 1.00-1.01x for one large '
          'message). Bounds: allgather each node receives what it lacks once, m * sum over '
          'nodes of (p - p_node) (= N(N-1)Pm for equal nodes); bcast and reduce (N-1)m; allreduce 2(N-1)m. '
          'Shown at 1 MiB, and the range from 64 KiB up.')
        w('')
        for c in netcases:
            w('### %s%s' % (case_title(c, cores), layout_of(c, meta)))
            w('')
            w('| collective | ' + ' | '.join(['algorithm', 'at 1 MiB', '64 KiB and up']) + ' |')
            w('|---|---|---|---|')
            for coll in COLLS:
                dd = data[c].get(coll, {})
                for s in order(dd.keys()):
                    if s == STOCK_ALONE:
                        continue
                    at = net_ratio(dd[s].get(1048576))
                    rs = [net_ratio(r) for b, r in dd[s].items() if b >= 65536]
                    rs = [x for x in rs if x is not None]
                    if at is None and not rs:
                        continue
                    w('| %s | %s | %s | %s |' % (coll, s, '%.2fx' % at if at else '-',
                                                  '%.2f-%.2fx' % (min(rs), max(rs)) if rs else '-'))
            w('')

    # time tables
    w('## Time ratios per case (MPICH default median us, then MPICH default / algorithm)')
    w('')
    for c in cases:
        w('### %s%s' % (case_title(c, cores), layout_of(c, meta)))
        w('')
        if plots:
            w('Plots: ' + ', '.join('[%s](plots/lat-%s-%s.png)' % (coll, case_slug(c), coll)
                                    for coll in COLLS if coll in data[c]) + '.')
            w('')
        for coll in COLLS:
            dd = data[c].get(coll)
            if not dd:
                continue
            ss = [s for s in order(dd.keys()) if s not in ('MPICH default', STOCK_ALONE)]
            sizes = sorted({b for s in dd for b in dd[s]})
            shown = [b for b in sizes if b in SHOW_SIZES or b == sizes[-1]]
            w('%s:' % coll)
            w('')
            w('| bytes | default us | ' + ' | '.join(ss) + ' |')
            w('|---|---|' + '---|' * len(ss))
            for b in shown:
                dflt = dd.get('MPICH default', {}).get(b)
                w('| %s | %s | %s |' % (human(b), '%.1f' % med(dflt) if dflt else '-',
                                        ' | '.join(ratio_cell(dd, s, b) for s in ss)))
            w('')

    if na:
        w('## Not applicable (n/a) or failed')
        w('')
        for key in sorted(na):
            c, coll, s = key
            sizes = sorted(b for b, _ in na[key])
            reasons = sorted({st for _, st in na[key]})
            w('- %s, %s, %s: %s (%s)' % (case_title(c, cores), coll, s,
                                         ', '.join(human(b) for b in sizes[:3]) +
                                         (' ... %s' % human(sizes[-1]) if len(sizes) > 3 else ''),
                                         '; '.join(reasons)[:200]))
        w('')

    if cmds:
        w('## Launch commands (first of each kind; all in commands.txt)')
        w('')
        seen = set()
        for l in cmds:
            if l.startswith('#'):
                continue
            kind = ('openmpi-han' if 'coll_han' in l else 'openmpi5-tuned' if 'coll ^han' in l
                    else 'openmpi' if 'mpirun' in l and 'mpiexec' not in l else 'mpich')
            if kind in seen:
                continue
            seen.add(kind)
            w('    ' + l)
        w('')
    open(os.path.join(d, 'summary.md'), 'w').write('\n'.join(out))


def style(s):
    if s == 'MPICH default':
        return dict(color='black', lw=2.2, ls='-', marker='o', ms=3)
    if s in OURS:
        if s == 'mpich-topo default':
            return dict(color='tab:red', lw=2.6, ls='-', marker='*', ms=5)
        cols = {'topo_ring': 'tab:blue', 'topo_pipeline': 'tab:red',
                'topo_multileader': 'tab:orange', 'topo_tree': 'tab:green'}
        return dict(color=cols[s], lw=2, ls='-', marker='s', ms=3)
    if s.startswith('Open MPI'):
        return dict(color='tab:purple' if 'han' in s else 'tab:brown', lw=1.8, ls=':', marker='^', ms=3)
    return dict(lw=1.2, ls='--', marker='.', ms=3)


def make_plots(d, meta, data):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    cores = int(meta.get('cores', '0') or 0)
    pdir = os.path.join(d, 'plots')
    os.makedirs(pdir, exist_ok=True)
    fmt = FuncFormatter(lambda x, _: human(x) if x >= 1 and int(x) == x else '')
    where = meta.get('cpu', '')
    for c in data:
        for coll in COLLS:
            dd = data[c].get(coll)
            if not dd:
                continue
            fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5))
            for s in order(dd.keys()):
                if s == STOCK_ALONE:
                    continue
                base = base_of(dd, s)
                xs = sorted(dd[s])
                a1.plot(xs, [med(dd[s][b]) for b in xs], label=s, **style(s))
                xr = [b for b in xs if b in base]
                if xr:
                    a2.plot(xr, [med(base[b]) / med(dd[s][b]) for b in xr], label=s, **style(s))
            a1.set_xscale('log', base=2)
            a1.set_yscale('log')
            a1.set_xlabel('bytes per process')
            a1.set_ylabel('median time per call (us)')
            a1.xaxis.set_major_formatter(fmt)
            a1.grid(True, which='both', alpha=0.3)
            a2.set_xscale('log', base=2)
            a2.set_yscale('log', base=2)
            a2.axhline(1.0, color='grey', lw=1)
            a2.set_xlabel('bytes per process')
            a2.set_ylabel('MPICH default / algorithm (>1: faster)')
            a2.xaxis.set_major_formatter(fmt)
            a2.grid(True, which='both', alpha=0.3)
            a1.legend(fontsize=7)
            for ax in (a1, a2):
                for lab in ax.get_xticklabels():
                    lab.set_rotation(45)
            fig.suptitle('%s: %s (%s cores%s)' % (coll, case_title(c, cores), meta.get('cores', '?'),
                                                   ', ' + where if where else ''), fontsize=10)
            fig.tight_layout()
            fig.savefig(os.path.join(pdir, 'lat-%s-%s.png' % (case_slug(c), coll)), dpi=90)
            plt.close(fig)
        if c[0] > 1 and c[3] == 'hot':
            fig, axes = plt.subplots(1, len(COLLS), figsize=(5 * len(COLLS), 4.5))
            anyline = False
            for ax, coll in zip(axes, COLLS):
                dd = data[c].get(coll, {})
                for s in order(dd.keys()):
                    pts = [(b, net_ratio(dd[s][b])) for b in sorted(dd[s])]
                    pts = [(b, v) for b, v in pts if v is not None and b >= 1024]
                    if pts:
                        anyline = True
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=s, **style(s))
                ax.set_xscale('log', base=2)
                ax.axhline(1.0, color='grey', lw=1)
                ax.set_title(coll)
                ax.set_xlabel('bytes per process')
                ax.set_ylabel('network bytes per call / lower bound')
                ax.xaxis.set_major_formatter(fmt)
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=7)
                for lab in ax.get_xticklabels():
                    lab.set_rotation(45)
            fig.suptitle('bytes on the emulated network: %s' % case_title(c, cores), fontsize=10)
            fig.tight_layout()
            if anyline:
                fig.savefig(os.path.join(pdir, 'net-%s.png' % case_slug(c)), dpi=90)
            plt.close(fig)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    plots = '--no-plots' not in sys.argv
    rows, meta, cmds = load(d)
    data, na = organise(rows)
    if plots:
        make_plots(d, meta, data)
    summary(d, rows, meta, cmds, data, na, plots)


if __name__ == '__main__':
    main()
