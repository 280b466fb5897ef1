#!/usr/bin/env python3
# SimGrid against the emulated cluster: the platform of bench/cluster.sh
# (each node one NIC into a bridge, shaped both ways) in SimGrid, with the
# one-way latency and the bandwidth a ping-pong measures on the emulated
# cluster at each NIC rate, runs the engine's schedules among the leaders
# (leaders.c) for the measured network-bound cells of bench/results
# (calibrate.py's), so that the simulation at scale can be read against
# what 2 and 4 real (emulated) nodes did.
#
#   bench/scale/emulated.py BINDIR OUT_DIR RESULTS_DIR...
#
# BINDIR holds leaders (smpicc -O2 -o BINDIR/leaders bench/scale/leaders.c)
# and pingpong (install-ofi/bin/mpicc -O2 -o BINDIR/pingpong
# bench/scale/pingpong.c).  Needs root (bench/cluster.sh's namespaces).
# Cells: allgather topo_pipeline (the ring) on 2 and 4 nodes, bcast on 2
# (the only tree of 2 nodes; on 4 the tree a cell ran depends on its
# commit).  The node's copies are delays at COPY_GBS per process (2 cores
# shared by the node's processes: 2.5 GB/s).  Writes OUT_DIR/emulated.csv
# and OUT_DIR/summary.md.
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import calibrate  # noqa: E402
import colls  # noqa: E402

TOP = os.path.dirname(os.path.dirname(HERE))
COPY_GBS = 2.5


def pingpong(bindir, kbit, nbytes):
    r = subprocess.run([os.path.join(TOP, "bench", "cluster.sh"), "--nodes", "2", "--ppn", "1",
                        "--rate", "%dkbit" % kbit, "--timeout", "300", "mpiexec", "-n", "2",
                        os.path.join(bindir, "pingpong"), str(nbytes), "30"],
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("pingpong,"):
            return float(line.split(",")[2])
    sys.exit("emulated.py: no ping-pong at %d kbit/s: %s" % (kbit, r.stderr[-400:]))


def platform(bindir, n, bw_bps, lat_s):
    """bench/cluster.sh's shape: a private link per node into one switch;
    a route crosses two of them, so each carries half the one-way time"""
    xml = os.path.join(bindir, "emu-%d-%d.xml" % (n, int(bw_bps)))
    with open(xml, "w") as f:
        f.write("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                '  <cluster id="c" prefix="node" suffix="" radical="0-%d" speed="1Gf" '
                'bw="%.0fBps" lat="%.3fus" bb_bw="100GBps" bb_lat="0us" '
                'sharing_policy="SPLITDUPLEX"/>\n</platform>\n' % (n - 1, bw_bps, lat_s / 2 * 1e6))
    hosts = os.path.join(bindir, "emu-hosts-%d" % n)
    with open(hosts, "w") as f:
        f.write("".join("node%d\n" % i for i in range(n)))
    return xml, hosts


def main(bindir, out, dirs):
    rows = [r for r in calibrate.cells(dirs)
            if r[0] == "allgather" and r[4] <= 4 or r[0] == "bcast" and r[4] == 2]
    if not rows:
        sys.exit("emulated.py: no network-bound cells in " + " ".join(dirs))
    links = {}
    for kb in sorted({r[2] for r in rows}):
        lat = pingpong(bindir, kb, 8)
        t = pingpong(bindir, kb, 1 << 20)
        links[kb] = (lat, (1 << 20) / (t - lat))
    colls.COPY_BW = "%gGBps" % COPY_GBS
    os.makedirs(out, exist_ok=True)
    res = []
    for c, d, kb, pl, n, ppn, b, v in rows:
        lat, bw = links[kb]
        xml, hosts = platform(bindir, n, bw, lat)
        args = ["ring", b, ppn, COPY_GBS] if c == "allgather" else \
            ["chain", b, ppn, COPY_GBS, COPY_GBS / 2, calibrate.SLOT]
        t = colls.smpirun(xml, hosts, n, [os.path.join(bindir, "leaders")] + [str(a) for a in args],
                          timeout=300)
        res.append((c, d, kb, pl, n, ppn, b, v, t))
    with open(os.path.join(out, "emulated.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["collective", "run", "rate_kbit", "placement", "nodes", "ppn", "bytes",
                    "measured_s", "simulated_s"])
        for r in res:
            w.writerow(list(r[:7]) + ["%.9f" % r[7], "%.9f" % r[8] if r[8] else ""])
    lines = ["# SimGrid against the emulated cluster", "",
             "`bench/scale/emulated.py`: bench/cluster.sh's platform in SimGrid (a link per "
             "node into one switch, full duplex), each NIC rate's one-way latency and "
             "bandwidth from a ping-pong on the emulated cluster (8 B and 1 MiB), the "
             "engine's schedules among the leaders (`leaders.c`, the node's copies as delays "
             "at %g GB/s per process) for calibrate.py's network-bound cells: allgather's "
             "ring on 2 and 4 nodes, bcast on 2." % COPY_GBS, "",
             "| NIC rate | ping-pong one-way, 8 B | bandwidth (1 MiB) |", "|---|---|---|"]
    for kb, (lat, bw) in sorted(links.items()):
        lines.append("| %g Mbit/s | %.1f us | %.0f Mbit/s |" % (kb / 1000, lat * 1e6, bw * 8 / 1e6))
    lines.append("")
    for c in ("allgather", "bcast"):
        for n in (2, 4):
            q = sorted(r[8] / r[7] for r in res if r[0] == c and r[4] == n and r[8])
            if q:
                lines.append("- **%s, %d nodes** (%d cells): simulated over measured median %.2f, "
                             "from %.2f to %.2f." % (c, n, len(q), q[len(q) // 2], q[0], q[-1]))
    lines += ["", "| collective | run | rate | placement | nodes x ppn | bytes | measured us | "
              "simulated us | ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res:
        lines.append("| %s | %s | %g Mbit/s | %s | %d x %d | %d | %.0f | %s | %s |" % (
            r[0], r[1], r[2] / 1000, r[3], r[4], r[5], r[6], r[7] * 1e6,
            "%.0f" % (r[8] * 1e6) if r[8] else "", "%.2f" % (r[8] / r[7]) if r[8] else ""))
    open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(l for l in lines if l.startswith("- **")))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: emulated.py BINDIR OUT_DIR RESULTS_DIR...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
