#!/usr/bin/env python3
# Fits the cost model's constants (src/mpi/coll/topo/topo_model.c: B, the
# bytes a NIC moves in one message's latency, and R, the memory's speed over
# the NIC's) to the emulated cluster's measured cells, and reports, for
# every network-bound cell, the model's time against the measured one.
#
#   calibrate.py MODEL_CHOICE OUT_DIR RESULTS_DIR...
#
# MODEL_CHOICE is bench/scale/model_choice.c built against topo_model.c
# (bench/scale/run.sh --calibrate builds it and passes every
# bench/results/cluster-*), so the predictions come from
# the engine's own code.  Cells: allgather topo_pipeline forced (label
# mpich, one leader per node: MPIR_CVAR_TOPO_LEADERS_PER_NODE unset) on 2
# or more nodes, network-bound (the time grows by 1.7x or more at half the
# rate), with both rates measured.  The ring is what those runs ran.  The
# fit takes, over a grid, the B and R whose median |log(predicted /
# measured)| is least.
import csv
import math
import os
import subprocess
import sys

GROWTH = 1.7


def cells(dirs):
    t = {}
    for d in dirs:
        f = os.path.join(d, "bench.csv")
        if not os.path.exists(f):
            continue
        for r in csv.DictReader(open(f)):
            if "rate_kbit" not in r or r["label"] != "mpich" or r["collective"] != "allgather":
                continue
            if r["algorithm"] != "topo_pipeline" or r["errors"] != "0" or not r["status"].startswith("ok"):
                continue
            if int(r["nodes"]) < 2 or int(r["ppn"]) < 2:
                continue
            k = (os.path.basename(os.path.normpath(d)), int(r["rate_kbit"]), r["placement"],
                 int(r["nodes"]), int(r["ppn"]), int(r["bytes"]))
            t[k] = float(r["med_us"]) * 1e-6
    out = []
    for (d, kb, pl, n, ppn, b), v in t.items():
        h = t.get((d, kb // 2, pl, n, ppn, b))
        # the least a node's NIC must receive, at its rate: a time below it
        # went through the shaper's burst, not at the rate
        wire = (n - 1) * ppn * b * 8 / (kb * 1000.0)
        if h and h / v >= GROWTH and v >= wire:
            out.append((d, kb, pl, n, ppn, b, v))
    return sorted(out)


def predict(tool, rows, B, R):
    inp = "".join("%d %d %d %g %g\n" % (n, ppn, b, B, R) for _, kb, _, n, ppn, b, _ in rows)
    res = subprocess.run([tool], input=inp, capture_output=True, text=True, check=True)
    preds = []
    for line, (_, kb, _, n, ppn, b, _) in zip(res.stdout.splitlines(), rows):
        ring = float(line.split(",")[1])
        preds.append(ring / (kb * 1000 / 8))   # bytes of NIC time / NIC bytes per second
    return preds


def main(tool, out, dirs):
    rows = cells(dirs)
    if not rows:
        sys.exit("calibrate.py: no network-bound allgather topo_pipeline cells in " + " ".join(dirs))
    best = None
    for B in [2 ** (i / 2) for i in range(16, 40)]:        # 256 B to 512 KiB
        for R in [2 ** (i / 2) for i in range(-4, 17)]:     # 0.25 to 256
            p = predict(tool, rows, B, R)
            e = sorted(abs(math.log(pi / r[6])) for pi, r in zip(p, rows))
            score = e[len(e) // 2]
            if best is None or score < best[0]:
                best = (score, B, R, p)
    score, B, R, p = best
    ratios = sorted(pi / r[6] for pi, r in zip(p, rows))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "fit.csv"), "w") as f:
        f.write("run,rate_kbit,placement,nodes,ppn,bytes,measured_s,predicted_s\n")
        for pi, r in zip(p, rows):
            f.write("%s,%d,%s,%d,%d,%d,%.9f,%.9f\n" % (r + (pi,)))
    lines = ["# The cost model against the emulated cluster's measured cells", "",
             "`bench/scale/calibrate.py` over %s: allgather topo_pipeline forced, 2 nodes or "
             "more of 2 or more processes, network-bound cells no faster than their bytes at "
             "the NIC's rate (%d). The model (`topo_model.c`, the ring: what "
             "those runs ran) predicts each time in bytes of NIC time, divided by the NIC's "
             "rate. Fitted over a grid: **B = %.0f bytes, R = %.2f**." % (
                 ", ".join(sorted({r[0] for r in rows})), len(rows), B, R),
             "",
             "- Predicted over measured: median %.2f, from %.2f to %.2f; median error %.0f%%, "
             "worst %.0f%%." % (ratios[len(ratios) // 2], ratios[0], ratios[-1],
                                100 * (math.exp(score) - 1),
                                100 * max(abs(ratios[0] - 1), abs(ratios[-1] - 1))),
             "- What B and R mean here: these NICs (tbf-shaped veth, 250 Mbit/s to 2 Gbit/s) "
             "are 40-300 times slower than the 2 cores' memory copies, and each message pays "
             "TCP on loopback-speed hardware, so the fitted values describe the emulated "
             "cluster, not a real fabric (set `MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES` from "
             "the fabric's latency x bandwidth).",
             "", "| run | rate | placement | nodes x ppn | bytes | measured us | predicted us | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for pi, r in zip(p, rows):
        lines.append("| %s | %g Mbit/s | %s | %d x %d | %d | %.0f | %.0f | %.2f |" % (
            r[0], r[1] / 1000, r[2], r[3], r[4], r[5], r[6] * 1e6, pi * 1e6, pi / r[6]))
    open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
    print("calibrate: B %.0f, R %.2f, %d cells, median error %.0f%%" % (
        B, R, len(rows), 100 * (math.exp(score) - 1)))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: calibrate.py MODEL_CHOICE OUT_DIR RESULTS_DIR...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
