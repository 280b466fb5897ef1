#!/usr/bin/env python3
# Summary of a bench/cluster-suite.sh run: which sizes are network-bound (the
# time of MPICH's default and of mpich-topo's default both grow by 1.7x or
# more when the NICs run at half the rate), and, for those only, how every
# algorithm and peer compares with MPICH 4.0.2's default selection.
#
#   cluster_report.py DIR      reads DIR/bench.csv, writes DIR/summary.md
import csv
import os
import sys

GROWTH = 1.7    # time at half the rate over time at the rate: network-bound


def size(b):
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return "%d %s" % (b // f, unit)
    return "%d B" % b


def rate(kbit):
    return "%g Gbit/s" % (kbit / 1e6) if kbit >= 1000000 else "%g Mbit/s" % (kbit / 1e3)


def main(d):
    rows = list(csv.DictReader(open(os.path.join(d, "bench.csv"))))
    # (rate, label, coll, placement, nodes, ppn, bytes, alg) -> median us
    t = {}
    net = {}
    for r in rows:
        if not r["status"].startswith("ok") or r["errors"] != "0":
            continue
        k = (int(r["rate_kbit"]), r["label"], r["collective"], r["placement"],
             int(r["nodes"]), int(r["ppn"]), int(r["bytes"]), r["algorithm"])
        t[k] = float(r["med_us"])
        if r["node_net_bytes"] and r["node_net_bound"]:
            net[k] = (float(r["node_net_bytes"]), float(r["node_net_bound"]))
    kbits = sorted({k[0] for k in t})
    full = [k for k in kbits if k // 2 in kbits]    # rates with a half-rate run
    cases = sorted({k[2:7] for k in t})
    ours = sorted({k[7] for k in t if k[7].startswith("topo_")})
    stock = sorted({k[7] for k in t if k[1] == "mpich" and k[7] != "default"
                    and not k[7].startswith("topo_")})
    # the peer's two columns: Open MPI 5.0.7's default (han) and tuned
    # alone, or 4.1.4's default and coll_han raised (cluster-suite.sh --ompi)
    labels = {k[1] for k in t}
    if "openmpi5" in labels or "openmpi5-tuned" in labels:
        peers = (("openmpi5", "Open MPI 5 default (han)"), ("openmpi5-tuned", "Open MPI 5 tuned"))
    else:
        peers = (("openmpi", "Open MPI"), ("openmpi-han", "coll_han"))
    out = ["# Emulated cluster: multi-node collectives", ""]
    meta = os.path.join(d, "meta.txt")
    cores = "?"
    if os.path.exists(meta):
        lines = open(meta).read().splitlines()
        out += ["```"] + lines + ["```", ""]
        cores = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("cores:")), cores)
    out += ["Times are the median over calls of the slowest process. Ratios are "
            "MPICH 4.0.2's default time over the other's: above 1 the other is "
            "faster; mpich-topo's default is compared with MPICH's default "
            "measured the same way, alone in its launch, the others with "
            "MPICH's default in their launch (the time shown). A time is "
            "network-bound at a rate when it grows by %.1fx or more at half "
            "the rate; `xG` after a time or ratio is that growth. A ratio "
            "counts only where both times grew by %.1fx or more (network-bound); "
            "others are CPU-bound here (%s cores), shown in brackets and used for "
            "nothing. "
            "`ours best` is the fastest of our algorithms forced; `stock best` "
            "the fastest of MPICH's forced; `busiest NIC` what mpich-topo's "
            "default made the busiest node send, over the least it must; "
            "`wire us` the time that least takes at the NIC's rate (bcast: "
            "at least the message once, from the root's node), and "
            "`headroom` MPICH's default time over it: the most any algorithm "
            "could gain on it while the network alone sets the time." % (GROWTH, GROWTH, cores), ""]
    verdict = []
    against = []
    for kb in full:
        for coll in sorted({c[0] for c in cases}):
            out += ["## %s at %s per NIC" % (coll, rate(kb)), ""]
            out += ["| nodes x ppn | placement | size | MPICH default us | mpich-topo default "
                    "| ours best | stock best | %s | %s | busiest NIC | wire us | headroom |"
                    % (peers[0][1], peers[1][1]),
                    "|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for c in cases:
                if c[0] != coll:
                    continue
                _, pl, n, ppn, b = c

                def g(label, alg, k=kb):
                    return t.get((k, label, coll, pl, n, ppn, b, alg))

                def grow(label, alg):
                    a, h = g(label, alg), g(label, alg, kb // 2)
                    return h / a if a and h else None

                base = g("mpich", "default")
                if base is None:
                    continue
                gb = grow("mpich", "default")

                def cell(label, alg, name=""):
                    v, gv = g(label, alg), grow(label, alg)
                    if v is None or v <= 0:
                        return "-", None
                    bound = gb is not None and gv is not None and min(gb, gv) >= GROWTH
                    r = "%.2f" % (base / v)
                    return "%s%s %s" % (name, r if bound else "(%s)" % r,
                                        "x%.1f" % gv if gv else ""), (base / v if bound else None)

                def best(label, algs):
                    vs = [(g(label, a), a) for a in algs if g(label, a)]
                    if not vs:
                        return "-", None
                    a = min(vs)[1]
                    return cell(label, a, a + " ")

                # mpich-topo's default against MPICH's, each in a launch
                # of its own (as launched, not beside other algorithms)
                alone = g("mpich-alone", "default")
                if alone is not None:
                    saved = base, gb
                    base, gb = alone, grow("mpich-alone", "default")
                    topo, vt = cell("mpich-topo", "default")
                    base, gb = saved
                else:
                    topo, vt = cell("mpich-topo", "default")
                nb = net.get((kb, "mpich-topo", coll, pl, n, ppn, b, "default"))
                # bits over bits per ms: us; a bcast's root node sends the
                # message at least once in every call, whoever the root
                least = max(nb[1], b) if nb and coll == "bcast" else nb[1] if nb else 0
                wire = least * 8 * 1000 / kb if least > 0 else None
                out.append("| %d x %d | %s | %s | %.0f %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    n, ppn, pl, size(b), base, "x%.1f" % gb if gb else "", topo,
                    best("mpich", ours)[0], best("mpich", stock)[0],
                    cell(peers[0][0], "default")[0], cell(peers[1][0], "default")[0],
                    "%.2f" % (nb[0] / nb[1]) if nb and nb[1] > 0 else "-",
                    "%.0f" % wire if wire else "-", "%.2f" % (base / wire) if wire else "-"))
                for a in ours:
                    v = cell("mpich", a)[1]
                    if v is not None:
                        verdict.append((coll, a, kb, n, ppn, pl, b, v))
                if vt is not None:
                    verdict.append((coll, "mpich-topo default", kb, n, ppn, pl, b, vt))
                # mpich-topo's default against each peer column, where both
                # times are network-bound
                mt, gt = g("mpich-topo", "default"), grow("mpich-topo", "default")
                for label, _ in peers:
                    pv, gp = g(label, "default"), grow(label, "default")
                    if mt and pv and gt and gp and min(gt, gp) >= GROWTH:
                        against.append((coll, label, kb, n, ppn, pl, b, pv / mt))
            out.append("")
    out += ["## Network-bound cells: ratio to MPICH's default", ""]
    if not verdict:
        out += ["None: no time grew by %.1fx at half the rate." % GROWTH, ""]
    for key in sorted({(v[0], v[3], v[4], v[1]) for v in verdict}):
        vs = [v for v in verdict if (v[0], v[3], v[4], v[1]) == key]
        r = sorted(v[7] for v in vs)
        out.append("- %s, %d x %d, %s: %d cells, %.2f to %.2f (median %.2f); sizes %s" % (
            key[0], key[1], key[2], key[3], len(vs), r[0], r[-1], r[len(r) // 2],
            ", ".join(size(b) for b in sorted({v[6] for v in vs}))))
    if against:
        out += ["", "## Network-bound cells: mpich-topo's default against the peer", "",
                "The peer's time over mpich-topo's default (above 1 ours is faster), "
                "where both grew by %.1fx or more at half the rate." % GROWTH, ""]
        names = dict(peers)
        for key in sorted({(v[0], v[3], v[4], v[1]) for v in against}):
            vs = [v for v in against if (v[0], v[3], v[4], v[1]) == key]
            r = sorted(v[7] for v in vs)
            out.append("- %s, %d x %d, against %s: %d cells, %.2f to %.2f (median %.2f); below 0.95: %s" % (
                key[0], key[1], key[2], names[key[3]], len(vs), r[0], r[-1], r[len(r) // 2],
                ", ".join("%s %s %s %.2f" % (size(v[6]), v[5], rate(v[2]), v[7])
                          for v in sorted(vs, key=lambda v: (v[6], v[5], v[2])) if v[7] < 0.95) or "none"))
    open(os.path.join(d, "summary.md"), "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
