#!/usr/bin/env python3
# bench/scale/run.sh --colls: bcast, allreduce and allgather at scale in
# SimGrid's SMPI, the engine's hierarchical schedules (leaders.c, one
# leader per node, the node's phases as delays) beside MPICH's flat
# algorithms over every process (flat.c, SMPI's implementations of them).
#
#   colls.py BINDIR OUT_DIR NODES PPN SIZES COLLS FLAT_NODES COPY_GBS TIMEOUT [RED_FRACTION [K]]
#
# BINDIR holds leaders, flat and model_choice (built by run.sh).  For each
# platform (InfiniBand-like, Ethernet-like fat trees), node count and size
# it writes one row per variant to OUT_DIR/colls.csv:
#   ours:<way>    the engine's schedule with that way among the leaders
#                 (bcast's scatter: MPICH's scatter + allgather among them,
#                 SMPI's, then the node's copy out through the slots)
#   mpich:node-aware  MPICH's CH4 composition for bcast and allreduce: its
#                 algorithm among the nodes, the node's phases as copies
#                 (what the built-in tuning runs where it leaves a call to
#                 MPICH across nodes)
#   flat:<algo>   MPICH's flat algorithm (SMPI's), on NODES x PPN processes
#                 (node counts in FLAT_NODES only: it simulates every
#                 process; cells whose buffers would pass 6 GiB are left
#                 out, and so is a cell that takes over TIMEOUT seconds)
# and a tuning row: what the built-in tuning runs there, the engine deciding
# with the constants it takes from such a fabric's ports (200 Gbit/s
# InfiniBand, 25 Gbit/s Ethernet: MPIR_Topo_model_for_link).
# report.py --colls summarises them.  Allreduce: the leaders' step is
# simulated; the node's phases (copy in, reduce one's slice, copy out) are
# added here at COPY_GBS (reductions free, as SMPI's flat algorithms'
# are, unless RED_FRACTION > 0: then the node's reductions, ours and those
# of MPICH's composition, run at RED_FRACTION x COPY_GBS, the cost model's
# ratio being 0.5; the leaders' steps and the flat algorithms still reduce
# for free), and the engine's
# rounds (a slot of 128 KiB split among the node's processes) composed as
# the engine runs them: round r's leaders' step while the node copies in
# and reduces round r+1 and copies out round r-1 (ours:rounds), or the
# step once on the whole call (ours:once), as the cost model picks.
# With K leaders per node (default 2: a node of two sockets, one leader per
# NUMA domain, the engine's default), the step once is also run as the
# engine runs it there (ours:once-k<K>): each leader copies its share of
# each round out, the K leaders of a node step at once through its one
# link, each on its share, and copy their shares back into the slots
# while the node copies each round out; the tuning row names that one.
import csv
import os
import signal
import subprocess
import sys
import time

SLOT = 131072           # MPIDI_TOPO_NET_SLOT
# name, link rate and latency, and what the engine finds in sysfs there
# (Mbit/s, MPIR_TOPO_LINK_*), from which it takes its model's constants
PLATFORMS = [("ib", "200Gbps", "1.5us", 200000, 3), ("eth", "25Gbps", "10us", 25000, 1)]


def platform(tmp, name, n, bw, lat, ppn):
    """a fat tree of n hosts; with ppn > 1 each has ppn cores and a
    loopback at the copy rate (flat.c's messages within a node).  lat is
    the one-way latency between the farthest hosts ("1.5us"): each link
    takes its share of the links on that route (2 under one switch, 4
    over two levels), not all of it, which made the fabrics 2-4 times
    slower to answer than their names say (3.2-6.3 us, 21-42 us)"""
    tp = "1;%d;1;1" % n if n <= 32 else "2;32,%d;1,32;1,1" % (n // 32)
    hops = 2 if n <= 32 else 4
    lat = "%gus" % (float(lat[:-2]) / hops)
    cores = ' core="%d" loopback_bw="%s" loopback_lat="0.5us"' % (ppn, COPY_BW) if ppn > 1 else ""
    xml = os.path.join(tmp, "%s-%d-%d.xml" % (name, n, ppn))
    with open(xml, "w") as f:
        f.write("<?xml version='1.0'?>\n"
                '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                '<platform version="4.1">\n'
                '  <cluster id="c" prefix="node" suffix="" radical="0-%d" speed="1Gf"%s '
                'bw="%s" lat="%s" topology="FAT_TREE" topo_parameters="%s" '
                'sharing_policy="SPLITDUPLEX"/>\n</platform>\n' % (n - 1, cores, bw, lat, tp))
    hosts = os.path.join(tmp, "hosts-%d-%d" % (n, ppn))
    with open(hosts, "w") as f:
        for i in range(n):
            f.write(("node%d\n" % i) * ppn)
    return xml, hosts


def smpirun(xml, hosts, np, args, cfg=(), timeout=None):
    cmd = ["smpirun", "-np", str(np), "-platform", xml, "-hostfile", hosts,
           "--cfg=smpi/lat-factor:0:1", "--cfg=smpi/bw-factor:0:1",
           "--cfg=smpi/shared-malloc:local", "--log=root.thres:critical"]
    cmd += ["--cfg=%s" % c for c in cfg] + args
    # (a session of its own: on a timeout smpirun's simulator goes too)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         start_new_session=True)
    try:
        stdout, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None
    # every process prints its own time: the slowest's
    times = [float(x.split(",")[-1]) for x in stdout.split()] if p.returncode == 0 else []
    return max(times) if times else None


def model(tool, line):
    r = subprocess.run([tool], input=line + "\n", capture_output=True, text=True, check=True)
    return r.stdout.strip().split(",")


def mpich_flat(coll, m, p):
    """MPICH 4.0.2's flat selection (its CVARs' defaults), p a power of two"""
    if coll == "allgather":
        tot = m * p
        return "rdb" if tot < 524288 else "ring"
    if coll == "bcast":
        if m < 12288 or p < 8:
            return "binomial_tree"
        return "scatter_rdb_allgather" if m < 524288 else "scatter_LR_allgather"
    return "rdb" if m <= 2048 or m // 8 < p else "rab_rdb"


# MPICH 4.0.2's release_gather reduce (MPIR_CVAR_REDUCE_INTRANODE_TREE_TYPE
# kary, _KVAL 4): a node's root reduces its up to 4 children's inputs, cell
# after cell
RG_KVAL = 4


def node_aware(coll, m, n, ppn, xml1, hosts1, flat, rate, red, timeout):
    """MPICH's CH4 node-aware compositions (bcast alpha and beta, allreduce
    alpha), which the built-in tuning leaves bcast below 64 KiB and
    allreduce above 8 KiB and below 256 KiB to across nodes: MPICH's
    algorithm among one process per node (flat.c on the nodes' leaders,
    chosen as MPICH chooses for that many), the node's shared-memory
    phases (POSIX release_gather, pipelined in cells of 8 KiB) as copies:
    a bcast copies in and out, an allreduce also copies every input in
    before the leaders' step, and its root reduces its tree children's
    inputs at red bytes/s (infinite: free)"""
    algo = mpich_flat(coll, m, n)
    t = smpirun(xml1, hosts1, n, [flat, coll, str(m)], cfg=["smpi/%s:%s" % (coll, algo)],
                timeout=timeout)
    node = m / rate + min(m, 8192) / rate
    if coll == "allreduce":
        node = 2 * node + min(RG_KVAL, ppn - 1) * m / red
    return ("mpich:node-aware", t and t + node, algo + " among the nodes")


FLAT_ALGOS = {"allgather": ["rdb", "bruck", "ring"],
              "bcast": ["binomial_tree", "scatter_rdb_allgather", "scatter_LR_allgather"],
              "allreduce": ["rdb", "rab_rdb"]}


def main():
    global COPY_BW
    bindir, out, nodes, ppn, sizes, colls, flat_nodes, copy_gbs, timeout = sys.argv[1:10]
    red_fraction = float(sys.argv[10]) if len(sys.argv) > 10 else 0.0
    kl = int(sys.argv[11]) if len(sys.argv) > 11 else 2
    nodes = [int(x) for x in nodes.split()]
    flat_nodes = [int(x) for x in flat_nodes.split()]
    sizes = [int(x) for x in sizes.split()]
    colls = colls.split()
    ppn, copy_gbs, timeout = int(ppn), float(copy_gbs), float(timeout)
    COPY_BW = "%gGBps" % copy_gbs
    # SMPI's flat algorithms reduce in no simulated time: so do ours here,
    # or the comparison would charge only one side
    rate, red_gbs = copy_gbs * 1e9, 1e6
    # the node's reductions (the leaders' steps' stay free: MPICH's
    # composition runs SMPI's algorithms among the nodes)
    red = red_fraction * rate if red_fraction > 0 else red_gbs * 1e9
    leaders, flat, tool = (os.path.join(bindir, x) for x in ("leaders", "flat", "model_choice"))
    os.makedirs(out, exist_ok=True)
    f = open(os.path.join(out, "colls.csv"), "w", newline="")
    w = csv.writer(f)
    w.writerow(["platform", "nodes", "ppn", "coll", "bytes", "variant", "seconds", "note"])
    t0 = time.time()
    # node counts outermost: a run cut short has both platforms' smaller ones
    for n in nodes:
        for name, bw, lat, mbps, kind in PLATFORMS:
            B, R, F, M = model(tool, "link %d %d" % (mbps, kind))
            xml1, hosts1 = platform(bindir, name, n, bw, lat, 1)
            xmlp, hostsp = platform(bindir, name, n, bw, lat, ppn)
            xmlk, hostsk = platform(bindir, name, n, bw, lat, kl) if kl > 1 else (xml1, hosts1)

            def lead(*args):
                return smpirun(xml1, hosts1, n, [leaders] + [str(a) for a in args],
                               timeout=timeout)

            for coll in colls:
                for m in sizes:
                    rows = []
                    if coll == "allgather":
                        for way in ("ring", "logstep"):
                            rows.append(("ours:" + way, lead(way, m, ppn, copy_gbs), ""))
                        ch = model(tool, "allgather %d %d %d %s %s" % (n, ppn, m, B, R))[0]
                        rows.append(("tuning", None, "ours:" + ch))
                    elif coll == "bcast":
                        ch, _, chunk = model(tool, "bcast %d %d %s %d %s" % (n, m, B, SLOT, R))
                        rows.append(("ours:chain", lead("chain", m, ppn, copy_gbs, copy_gbs / 2,
                                                        chunk), "chunk %s" % chunk))
                        rows.append(("ours:binomial", lead("binomial", m, ppn, copy_gbs,
                                                           copy_gbs / 2, SLOT), ""))
                        # the leaders' scatter + allgather (recursive doubling:
                        # the node counts are powers of two) on the whole
                        # message, then each node copies it out of its
                        # leader's buffer through the slots
                        t = smpirun(xml1, hosts1, n, [flat, coll, str(m)],
                                    cfg=["smpi/bcast:scatter_rdb_allgather"], timeout=timeout)
                        share = min(SLOT, max(16384, m // 16))  # node_share's chunk
                        rows.append(("ours:scatter", t and t + m / rate + min(m, share) / rate,
                                     "scatter_rdb_allgather among the leaders"))
                        rows.append(node_aware(coll, m, n, ppn, xml1, hosts1, flat, rate, red, timeout))
                        rows.append(("tuning", None, ("ours:" + ch) if m >= 65536 else
                                     "mpich:node-aware"))
                    else:
                        # one round of the whole call, or the engine's rounds
                        cr = max(8, SLOT // ppn // 8 * 8)
                        rounds = -(-m // cr)
                        local_in = lambda x: x / rate + x / red
                        local_out = lambda x: x / rate
                        step = {}
                        for way in ("doubling", "split"):
                            step[way] = lead(way, m, ppn, copy_gbs, red_gbs)
                        one = model(tool, "allreduce %d %d %s %s" % (n, m, B, F))[0]
                        if m <= 2048:
                            one = "doubling"
                        for way in ("doubling", "split"):
                            t = step[way]
                            rows.append(("ours-one-step:" + way,
                                         t and local_in(m) + t + local_out(m), ""))
                        if rounds > 1:
                            # MPICH's iallreduce on the leaders' communicator
                            rway = "split" if cr > 2048 and cr // 8 >= n else "doubling"
                            t = lead(rway, cr, ppn, copy_gbs, red_gbs)
                            tot = t and (local_in(cr) + rounds * max(t, local_in(cr) + local_out(cr))
                                         + local_out(cr))
                            rows.append(("ours:rounds", tot, "%d rounds of %d B, %s" % (rounds, cr, rway)))
                            # the step once: the rounds reduce into the first
                            # leader's buffer (it copies each out), one step
                            # on the whole call (the model's way), then the
                            # leader copies it into the slots a round at a
                            # time and the others copy it out
                            t = step[one]
                            rows.append(("ours:once", t and local_in(m) + m / rate + t + m / rate
                                         + cr / rate, "step " + one))
                            eng = "ours:" + model(tool, "steps %d %d %d %s %s %s %d %s" % (
                                n, m, cr, B, R, F, kl, M))[0]
                            if kl > 1:
                                mk = -(-m // kl)
                                onek = model(tool, "allreduce %d %d %s %s" % (n, mk, B, F))[0]
                                if mk <= 2048:
                                    onek = "doubling"
                                t = smpirun(xmlk, hostsk, n * kl,
                                            [str(a) for a in (leaders, onek, mk, ppn, copy_gbs,
                                                              red_gbs, SLOT, kl)],
                                            timeout=timeout)
                                rows.append(("ours:once-k%d" % kl, t and local_in(m) + mk / rate + t
                                             + m / rate + cr / rate, "step " + onek))
                                if eng == "ours:once":
                                    eng = "ours:once-k%d" % kl
                        else:
                            eng = "ours-one-step:" + one
                        rows.append(node_aware(coll, m, n, ppn, xml1, hosts1, flat, rate, red, timeout))
                        # (the JSON: MPICH's composition between 8 and 256 KiB
                        # below 16 nodes)
                        tuning = eng if m <= 8192 or m >= 262144 or n >= 16 else "mpich:node-aware"
                        rows.append(("tuning", None, tuning))
                    if n in flat_nodes:
                        p = n * ppn
                        need = (m * p if coll == "allgather" else m) * p * 2.1
                        for algo in FLAT_ALGOS[coll]:
                            if need > 6 * (1 << 30):
                                rows.append(("flat:" + algo, None, "left out: buffers over 6 GiB"))
                                continue
                            t = smpirun(xmlp, hostsp, p, [flat, coll, str(m)],
                                        cfg=["smpi/%s:%s" % (coll, algo)], timeout=timeout)
                            rows.append(("flat:" + algo, t, "" if t is not None else "timed out or failed"))
                        rows.append(("mpich-default", None, "flat:" + mpich_flat(coll, m, p)))
                    for v, t, note in rows:
                        w.writerow([name, n, ppn, coll, m, v, "" if t is None else "%.9f" % t, note])
                    f.flush()
                    print("scale: %s %d x %d %s %d B (%d s so far)" % (
                        name, n, ppn, coll, m, time.time() - t0), file=sys.stderr, flush=True)
    f.close()


if __name__ == "__main__":
    main()
