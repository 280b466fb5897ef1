#!/usr/bin/env python3
# Summary of bench/scale/run.sh: for every simulated cell, the faster of
# the leaders' ring and log-step exchange, the loss of the model's choice
# (with the platform's constants, and with the engine's defaults) against
# it, and the model's error on the time it predicts for what it chose.
#
#   report.py DIR      reads DIR/sim.csv and DIR/meta.txt, writes DIR/summary.md
#   report.py --colls DIR   reads DIR/colls.csv (bench/scale/colls.py):
#                      per cell the built-in tuning's choice against the
#                      best simulated option (ours and MPICH's flat ones)
#                      and against MPICH's flat default
import csv
import re
import os
import sys


def size(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return "%d %s" % (b // f, unit)
    return "%d B" % b


def header(d, title):
    """the summary's title and the run's meta.txt"""
    out = [title, ""]
    meta = os.path.join(d, "meta.txt")
    if os.path.exists(meta):
        out += ["```"] + open(meta).read().splitlines() + ["```", ""]
    return out


def main(d):
    rows = [r for r in csv.DictReader(open(os.path.join(d, "sim.csv")))
            if r["ring_s"] and r["logstep_s"]]
    out = header(d, "# Allgather's leaders at scale: SimGrid against the cost model")
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


def colls(d):
    cells = {}
    for r in csv.DictReader(open(os.path.join(d, "colls.csv"))):
        k = (r["platform"], int(r["nodes"]), int(r["ppn"]), r["coll"], int(r["bytes"]))
        cells.setdefault(k, []).append(r)
    out = header(d, "# bcast, allreduce and allgather at scale: SimGrid, ours against MPICH's "
                 "flat and node-aware algorithms")
    # run.sh --red-fraction F: the node's reductions charged (meta.txt's command)
    meta = open(os.path.join(d, "meta.txt")).read() if os.path.exists(os.path.join(d, "meta.txt")) else ""
    m = re.search(r"--red-fraction ([0-9.]+)", meta)
    frac = float(m.group(1)) if m else 0.0
    if frac > 0:
        reds = ("The node's reductions, ours and those of MPICH's composition (its root "
                "reduces its tree children's inputs), run at %g x the copy rate; the leaders' "
                "steps and MPICH's flat algorithms reduce in no simulated time (SMPI's do not), "
                "which favours the flat ones." % frac)
    else:
        reds = "Reductions take no simulated time on either side (SMPI's do not)."
    out += ["Ours: the engine's schedule among one leader per node (bench/scale/leaders.c), "
            "the node's copies as delays at 10 GB/s per process; `rounds` is allreduce as "
            "the engine runs calls larger than one round (a 128 KiB slot split among the "
            "node's processes), `one-step` one leaders' step on the whole call (what the engine "
            "runs for calls of one round; for larger ones a what-if, not an option), `once` its "
            "step once on the whole call by one leader per node, `once-k2` by two (one per "
            "socket: what the engine runs on a node of two NUMA domains, and what `tuning` "
            "names; the two share the node's link). Flat: "
            "MPICH's algorithms over every process (SMPI's), nodes of 16 cores whose loopback "
            "runs at the same 10 GB/s. " + reds + " `mpich:node-aware`: MPICH's CH4 composition (bcast alpha and beta, allreduce "
            "alpha), its algorithm among one process per node and the node's phases as copies "
            "(release_gather's cells of 8 KiB). `tuning` is what the built-in tuning runs there; `loss` its time over the "
            "best option's; `x flat` MPICH's flat default's time over the tuning's.", "",
            "| platform | nodes x ppn | coll | bytes | tuning | s | best option | s | loss | flat default | s | x flat |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    within = total = within_all = total_all = fast = compared = 0
    misses, slow = [], []
    for k in sorted(cells):
        rows = cells[k]
        t = {r["variant"]: float(r["seconds"]) for r in rows if r["seconds"]}
        note = {r["variant"]: r["note"] for r in rows}
        rounds = "ours:rounds" in t or "ours:rounds" in note
        opts = {v: x for v, x in t.items()
                if v.startswith(("flat:", "mpich:")) or (v.startswith("ours") and not (rounds and v.startswith("ours-one-step")))}
        tun = note.get("tuning", "")
        dflt = note.get("mpich-default", "")
        tt, td = t.get(tun), t.get(dflt)
        best = min(opts, key=opts.get) if opts else ""
        loss = tt / opts[best] if tt and best else None
        xf = td / tt if tt and td else None
        if loss is not None and any(v.startswith("flat:") for v in opts):
            total += 1
            within += loss <= 1.05
        # MPICH's node-aware compositions run at every node count
        if loss is not None and any(v.startswith(("flat:", "mpich:")) for v in opts):
            total_all += 1
            within_all += loss <= 1.05
            if loss > 1.05:
                misses.append((loss, k, tun, best))
        if xf is not None:
            compared += 1
            fast += xf >= 1.3
            if xf < 1.3:
                slow.append((xf, k, tun, dflt))
        f = lambda x: "%.6f" % x if x is not None else "-"
        g = lambda x: "%.2f" % x if x is not None else "-"
        out.append("| %s | %d x %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], k[3], size(k[4]), tun, f(tt), best, f(opts.get(best)), g(loss),
            dflt or "-", f(td), g(xf)))
    out += ["", "## Verdict", "",
            "- the tuning's choice within 5%% of the best simulated option, ours and MPICH's: "
            "%d of %d cells (%d of %d where MPICH's flat algorithms were simulated too)"
            % (within_all, total_all, within, total)]
    for loss, k, tun, best in sorted(misses, reverse=True):
        out.append("  - %.2fx: %s %d x %d %s %s: %s, where %s is faster" % (
            loss, k[0], k[1], k[2], k[3], size(k[4]), tun, best))
    out.append("- at least 1.3x MPICH's flat default: %d of %d cells" % (fast, compared))
    for xf, k, tun, dflt in sorted(slow):
        out.append("  - %.2fx: %s %d x %d %s %s (%s against %s)" % (
            xf, k[0], k[1], k[2], k[3], size(k[4]), tun, dflt))
    open(os.path.join(d, "summary.md"), "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--colls":
        colls(sys.argv[2])
    else:
        main(sys.argv[1])
