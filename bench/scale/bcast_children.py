#!/usr/bin/env python3
# The binomial tree of nodes of bcast topo_pipeline in SimGrid: a leader's
# sends of each chunk to all its children at once (the engine before
# it sent one child after the other), one child after the other always
# (MPICH's binomial tree sends so), and the engine's rule (one after the
# other where a leader has at most as many chunks as the tree has levels),
# on the fat trees of colls.py, one leader per node, chunks of 128 KiB.
#
#   bench/scale/bcast_children.py BINDIR [FLAT_CSV] > OUT.csv
#
# BINDIR holds leaders (smpicc -O2 -o BINDIR/leaders bench/scale/leaders.c);
# FLAT_CSV, a colls.csv of run.sh --colls, adds MPICH's fastest flat bcast
# where it simulated that cell.
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import colls  # noqa: E402

SLOT = colls.SLOT
NODES = [4, 8, 16, 64, 256, 1024]
SIZES = [16384, 65536, 131072, 262144, 393216, 524288, 786432, 1048576, 4194304]
WAYS = ["binomial_all", "binomial_seq", "binomial"]


def main():
    bindir = sys.argv[1]
    flat = {}
    if len(sys.argv) > 2:
        for r in csv.DictReader(open(sys.argv[2])):
            if r["coll"] == "bcast" and r["variant"].startswith("flat:") and r["seconds"]:
                k = (r["platform"], int(r["nodes"]), int(r["bytes"]))
                flat[k] = min(flat.get(k, 1e9), float(r["seconds"]))
    colls.COPY_BW = "10GBps"
    w = csv.writer(sys.stdout)
    w.writerow(["platform", "nodes", "bytes", "chunks"] + [x + "_us" for x in WAYS] +
               ["engine_speedup", "mpich_flat_best_us"])
    for n in NODES:
        for name, bw, lat in colls.PLATFORMS:
            xml, hosts = colls.platform(bindir, name, n, bw, lat, 1)
            for m in SIZES:
                t = {a: colls.smpirun(xml, hosts, n, [os.path.join(bindir, "leaders"), a, str(m),
                                                      "16", "10", "5", str(SLOT)], timeout=300)
                     for a in WAYS}
                f = flat.get((name, n, m))
                w.writerow([name, n, m, -(-m // SLOT)] +
                           ["%.1f" % (t[a] * 1e6) if t[a] else "" for a in WAYS] +
                           ["%.2f" % (t["binomial_all"] / t["binomial"])
                            if t["binomial_all"] and t["binomial"] else "",
                            "%.1f" % (f * 1e6) if f else ""])
                sys.stdout.flush()


if __name__ == "__main__":
    main()
