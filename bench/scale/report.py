#!/usr/bin/env python3
# Summary of bench/scale/run.sh: for every simulated cell, the faster of
# the leaders' ring and log-step exchange, the loss of the model's choice
# (with the platform's constants, and with the engine's defaults) against
# it, and the model's error on the time it predicts for what it chose.
#
#   report.py DIR      reads DIR/sim.csv and DIR/meta.txt, writes DIR/summary.md
import csv
import os
import sys


def size(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return "%d %s" % (b // f, unit)
    return "%d B" % b


def main(d):
    rows = [r for r in csv.DictReader(open(os.path.join(d, "sim.csv")))
            if r["ring_s"] and r["logstep_s"]]
    out = ["# Allgather's leaders at scale: SimGrid against the cost model", ""]
    meta = os.path.join(d, "meta.txt")
    if os.path.exists(meta):
        out += ["```"] + open(meta).read().splitlines() + ["```", ""]
    out += ["One leader per node runs topo_pipeline's ring or the log-step "
            "exchange (Bruck, recursive doubling) point to point; the node's "
            "copies are delays (bench/scale/leaders.c). `model` is the cost "
            "model's choice with the platform's constants, `default` with "
            "the engine's defaults (B 16384, R 6). `loss` is the chosen "
            "exchange's simulated time over the faster one's (1.00: it chose "
            "the faster). `error` is the model's predicted time for its choice "
            "over the simulated one.", "",
            "| platform | nodes x ppn | bytes per process | ring s | log-step s | faster | model | loss | default | loss | error |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    losses, dlosses, errors = [], [], []
    for r in rows:
        t = {"ring": float(r["ring_s"]), "logstep": float(r["logstep_s"])}
        best = min(t, key=t.get)
        loss = t[r["model"]] / t[best]
        dloss = t[r["default_model"]] / t[best]
        pred = float(r["model_ring_s"] if r["model"] == "ring" else r["model_logstep_s"])
        err = pred / t[r["model"]]
        losses.append((loss, r))
        dlosses.append((dloss, r))
        errors.append(err)
        out.append("| %s | %s x %s | %s | %.6f | %.6f | %s | %s | %.2f | %s | %.2f | %.2f |" % (
            r["platform"], r["nodes"], r["ppn"], size(int(r["bytes"])), t["ring"], t["logstep"],
            best, r["model"], loss, r["default_model"], dloss, err))
    out.append("")
    if rows:
        def line(name, ls):
            ok = sum(1 for v, _ in ls if v <= 1.05)
            worst = max(ls, key=lambda x: x[0])
            return ("- %s: within 5%% of the faster exchange in %d of %d cells; worst %.2f "
                    "(%s, %s nodes, %s)" % (name, ok, len(ls), worst[0], worst[1]["platform"],
                                            worst[1]["nodes"], size(int(worst[1]["bytes"]))))
        errors.sort()
        ae = sorted(abs(e - 1) for e in errors)
        out += ["## Verdict", "",
                line("the model with the platform's constants", losses),
                line("the model with the engine's defaults", dlosses),
                "- the model's predicted time over the simulated one: median %.2f, from %.2f to "
                "%.2f (median error %.0f%%, worst %.0f%%)" % (
                    errors[len(errors) // 2], errors[0], errors[-1],
                    100 * ae[len(ae) // 2], 100 * ae[-1]), ""]
    open(os.path.join(d, "summary.md"), "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
