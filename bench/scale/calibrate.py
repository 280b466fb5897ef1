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
# the engine's own code.  Cells: topo_pipeline forced (label mpich, one
# leader per node: MPIR_CVAR_TOPO_LEADERS_PER_NODE unset) on 2 or more
# nodes of 2 or more processes, network-bound (the time grows by 1.7x or
# more at half the rate, and is no less than the bytes a node's NIC must
# take at its rate), with both rates measured.  The fit takes, over a
# grid, the B and R whose median |log(predicted / measured)| over the
# allgather cells (the ring: what those runs ran) is least; bcast (the
# tree of nodes the model picks, its network alone) and allreduce (the
# leaders' step per round or once, as the model picks, with the node's
# copies and reductions) are then predicted with those constants, cells
# the fit never saw.
import csv
import math
import os
import subprocess
import sys

GROWTH = 1.7


SLOT = 131072       # MPIDI_TOPO_NET_SLOT: the node slot across nodes
F_DEFAULT = 3.0     # MPIR_Topo_model_default.red_speedup
COLLS = ("allgather", "bcast", "allreduce")


def wire(coll, n, ppn, b):
    """the least a node's NIC must take in such a call, bytes (allreduce:
    2 (n-1)/n of the call, the bandwidth-optimal algorithms' bound)"""
    if coll == "allgather":
        return (n - 1) * ppn * b
    return b if coll == "bcast" else 2 * (n - 1) * b / n


def cells(dirs):
    t = {}
    for d in dirs:
        f = os.path.join(d, "bench.csv")
        if not os.path.exists(f):
            continue
        for r in csv.DictReader(open(f)):
            if "rate_kbit" not in r or r["label"] != "mpich" or r["collective"] not in COLLS:
                continue
            if r["algorithm"] != "topo_pipeline" or r["errors"] != "0" or not r["status"].startswith("ok"):
                continue
            if int(r["nodes"]) < 2 or int(r["ppn"]) < 2:
                continue
            k = (r["collective"], os.path.basename(os.path.normpath(d)), int(r["rate_kbit"]),
                 r["placement"], int(r["nodes"]), int(r["ppn"]), int(r["bytes"]))
            t[k] = float(r["med_us"]) * 1e-6
    out = []
    for (c, d, kb, pl, n, ppn, b), v in t.items():
        h = t.get((c, d, kb // 2, pl, n, ppn, b))
        # below the bytes at the NIC's rate, a time went through the
        # shaper's burst, not at the rate
        if h and h / v >= GROWTH and v >= wire(c, n, ppn, b) * 8 / (kb * 1000.0):
            out.append((c, d, kb, pl, n, ppn, b, v))
    return sorted(out)


def query(coll, n, ppn, b, B, R, F):
    if coll == "allgather":
        return "%d %d %d %g %g\n" % (n, ppn, b, B, R)
    if coll == "bcast":
        return "bcast %d %d %g %d\n" % (n, b, B, SLOT)
    return "steps %d %d %d %g %g %g\n" % (n, b, SLOT // ppn // 8 * 8, B, R, F)


def cost(coll, line):
    v = line.split(",")
    if coll == "allgather":
        return float(v[1])                      # the ring
    if coll == "bcast":
        return float(v[1])                      # the tree the model picks
    return float(v[1] if v[0] == "rounds" else v[2])


def predict(tool, rows, B, R, F=F_DEFAULT):
    inp = "".join(query(c, n, ppn, b, B, R, F) for c, _, kb, _, n, ppn, b, _ in rows)
    res = subprocess.run([tool], input=inp, capture_output=True, text=True, check=True)
    # bytes of NIC time / NIC bytes per second
    return [cost(r[0], line) / (r[2] * 1000 / 8) for line, r in zip(res.stdout.splitlines(), rows)]


def errors(p, rows):
    """median |log ratio| and the ratios, sorted"""
    e = sorted(abs(math.log(pi / r[7])) for pi, r in zip(p, rows))
    return e[len(e) // 2], sorted(pi / r[7] for pi, r in zip(p, rows))


def main(tool, out, dirs):
    rows = cells(dirs)
    fit_rows = [r for r in rows if r[0] == "allgather"]
    if not fit_rows:
        sys.exit("calibrate.py: no network-bound allgather topo_pipeline cells in " + " ".join(dirs))
    best = None
    for B in [2 ** (i / 2) for i in range(16, 40)]:        # 256 B to 512 KiB
        for R in [2 ** (i / 2) for i in range(-4, 17)]:     # 0.25 to 256
            score = errors(predict(tool, fit_rows, B, R), fit_rows)[0]
            if best is None or score < best[0]:
                best = (score, B, R)
    _, B, R = best
    p = predict(tool, rows, B, R)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "fit.csv"), "w") as f:
        f.write("collective,run,rate_kbit,placement,nodes,ppn,bytes,measured_s,predicted_s\n")
        for pi, r in zip(p, rows):
            f.write("%s,%s,%d,%s,%d,%d,%d,%.9f,%.9f\n" % (r + (pi,)))
    lines = ["# The cost model against the emulated cluster's measured cells", "",
             "`bench/scale/calibrate.py` over %s: topo_pipeline forced, 2 nodes or "
             "more of 2 or more processes, network-bound cells no faster than their bytes at "
             "the NIC's rate. The model (`topo_model.c`) predicts each time in bytes of NIC "
             "time, divided by the NIC's rate: allgather's ring (what those runs ran), "
             "bcast's tree of nodes as the model picks it (its network alone), allreduce's "
             "leaders' step per round or once as the model picks it (with the node's copies "
             "and reductions). Fitted over a grid to the allgather cells: **B = %.0f bytes, "
             "R = %.2f**; bcast and allreduce are predicted with those constants, cells the "
             "fit never saw." % (", ".join(sorted({r[1] for r in rows})), B, R), ""]
    summary = []
    for coll in COLLS:
        sel = [(pi, r) for pi, r in zip(p, rows) if r[0] == coll]
        if not sel:
            continue
        score, ratios = errors([x[0] for x in sel], [x[1] for x in sel])
        line = ("- **%s** (%d cells%s): predicted over measured median %.2f, from %.2f to "
                "%.2f; median error %.0f%%, worst %.0f%%." % (
                    coll, len(sel), ", fitted" if coll == "allgather" else "",
                    ratios[len(ratios) // 2], ratios[0], ratios[-1], 100 * (math.exp(score) - 1),
                    100 * (max(1 / ratios[0], ratios[-1]) - 1)))
        lines.append(line)
        summary.append("%s %d cells median error %.0f%%" % (coll, len(sel),
                                                           100 * (math.exp(score) - 1)))
    ar = [r for r in rows if r[0] == "allreduce"]
    if ar:
        fits = [(errors(predict(tool, ar, B, R, F), ar)[0], F)
                for F in [2 ** (i / 2) for i in range(-2, 17)]]   # 0.5 to 256
        fscore, fbest = min(fits)
        lines.append("- allreduce's reductions cost c/F of NIC time, F = %g by default (a "
                     "reduction 3 times a real NIC's speed); it is not fitted above. Fitted to "
                     "these allreduce cells alone (B and R as above): F = %.1f, median error "
                     "%.0f%%: on these slow NICs a reduction is nearly free, and the default "
                     "F makes the model pessimistic here." % (F_DEFAULT, fbest,
                                                              100 * (math.exp(fscore) - 1)))
        summary.append("allreduce with F %.1f: %.0f%%" % (fbest, 100 * (math.exp(fscore) - 1)))
    lines += ["- Errors are |log(predicted / measured)|, as factors: a worst error of 100% is a "
              "time off by 2x either way.",
              "- What B and R mean here: these NICs (tbf-shaped veth, 20 Mbit/s to 2 Gbit/s) "
              "are 40-3,000 times slower than the 2 cores' memory copies, and each message "
              "pays TCP on loopback-speed hardware, so the fitted values describe the emulated "
              "cluster, not a real fabric (set `MPIR_CVAR_TOPO_NETWORK_LATENCY_BYTES` from "
              "the fabric's latency x bandwidth).",
              "- The measured cells come from runs at earlier commits (each run's `meta.txt`): "
              "a cell measured before an engine change (bcast's leaders sending one child "
              "after the other, allreduce's step once) ran the engine of its day.",
              "", "| collective | run | rate | placement | nodes x ppn | bytes | measured us | "
              "predicted us | ratio |", "|---|---|---|---|---|---|---|---|---|"]
    for pi, r in zip(p, rows):
        lines.append("| %s | %s | %g Mbit/s | %s | %d x %d | %d | %.0f | %.0f | %.2f |" % (
            r[0], r[1], r[2] / 1000, r[3], r[4], r[5], r[6], r[7] * 1e6, pi * 1e6, pi / r[7]))
    open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
    print("calibrate: B %.0f, R %.2f; %s" % (B, R, "; ".join(summary)))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: calibrate.py MODEL_CHOICE OUT_DIR RESULTS_DIR...")
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
