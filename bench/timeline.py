#!/usr/bin/env python3
# The timeline of one engine call per process, recorded with
# MPIR_CVAR_TOPO_TIMELINE=PREFIX (and MPIR_CVAR_TOPO_TIMELINE_CALL=N, the
# N-th call of each collective that the engine runs on each communicator,
# 2 by default): when each chunk or
# round was copied in, received, sent, reduced and copied out, on every
# process, to see where a call's time goes.
#
#   bench/timeline.py PREFIX [--context ID] [--collective NAME] [--csv]
#
# Reads PREFIX.<rank> (one file per process), prints for each recorded call
# (communicator: context id and the process that is its rank 0; collective):
#   - per process: its node, local index and role, when it began and ended
#     and how long it waited before its first step;
#   - per chunk (round): when each step was done, by the first and by the
#     last process that did it (microseconds from the first process' begin).
# Times are each process' clock: comparable between processes of one
# machine (bench/cluster.sh's emulated nodes), within a node elsewhere.
# --csv prints the merged events instead (context,first,collective,bytes,
# rank,node,local,leader,t_us,event,a,b, each call sorted by time; first is
# the MPI_COMM_WORLD rank of the communicator's rank 0).
#
# Events: begin, end (a: events lost past 16384); in (a process's data for
# chunk/round a is in the node segment), recv (a leader received chunk a),
# sent (a leader's sends of chunk a completed), child (bcast: a leader
# with fewer chunks than children posted chunk a to its child b, one child
# after the other, each once the previous child's send completed), ring (allgather: ring step b
# of round a done), leaders (topo_multileader's leader step of round a),
# grouped (two-level reduction: this process's part of its group's partial
# of round a, and for a group leader its whole group's), reduced (this
# process's slice of round a), net_start/net (allreduce: a
# leader's network step of round a started/finished), out (this process
# copied chunk/round a out).
import argparse
import collections
import glob
import sys


def load(prefix):
    rows = []
    for path in sorted(glob.glob(glob.escape(prefix) + ".*")):
        with open(path) as f:
            for line in f:
                v = line.rstrip("\n").split(",")
                if len(v) != 12:
                    continue
                rows.append({"context": int(v[0]), "first": int(v[1]), "coll": v[2],
                             "bytes": int(v[3]), "rank": int(v[4]), "node": int(v[5]),
                             "local": int(v[6]), "leader": int(v[7]), "t": float(v[8]),
                             "event": v[9], "a": int(v[10]), "b": int(v[11])})
    return rows


def report(key, ev, out):
    context, first, coll, nbytes = key
    t0 = min(e["t"] for e in ev if e["event"] == "begin")
    procs = sorted({(e["rank"], e["node"], e["local"], e["leader"]) for e in ev})
    nodes = len({p[1] for p in procs})
    out.write("%s of %d bytes per process, communicator context %d (rank 0: process %d): "
              "%d processes on %d nodes\n" % (coll, nbytes, context, first, len(procs), nodes))
    out.write("(us from the first process' begin)\n\n")
    out.write("%-6s %-5s %-6s %-7s %10s %10s %12s %7s\n"
              % ("rank", "node", "local", "role", "begin", "end", "first step", "steps"))
    for rank, node, local, leader in procs:
        mine = sorted((e for e in ev if e["rank"] == rank), key=lambda e: e["t"])
        begin = min(e["t"] for e in mine if e["event"] == "begin") - t0
        end = max(e["t"] for e in mine if e["event"] == "end") - t0
        steps = [e for e in mine if e["event"] not in ("begin", "end")]
        first = steps[0]["t"] - t0 if steps else end
        lost = max((e["a"] for e in mine if e["event"] == "end"), default=0)
        out.write("%-6d %-5d %-6d %-7s %10.1f %10.1f %12.1f %7d%s\n"
                  % (rank, node, local, "leader" if leader else "-", begin, end, first,
                     len(steps), " (%d lost)" % lost if lost else ""))
    # per chunk: each step's first and last time over processes
    cols = []
    cell = collections.defaultdict(list)
    for e in sorted(ev, key=lambda e: e["t"]):
        if e["event"] in ("begin", "end"):
            continue
        col = e["event"] + (str(e["b"]) if e["b"] else "")
        if col not in cols:
            cols.append(col)
        cell[(e["a"], col)].append(e["t"] - t0)
    chunks = sorted({a for a, _ in cell})
    out.write("\nper chunk/round: first-last time each step was done (processes)\n")
    out.write("%-6s" % "chunk" + "".join(" %22s" % c for c in cols) + "\n")
    for a in chunks:
        line = "%-6d" % a
        for c in cols:
            t = cell.get((a, c))
            line += " %22s" % ("%.0f-%.0f (%d)" % (min(t), max(t), len(t)) if t else "")
        out.write(line + "\n")
    out.write("\n")


def main():
    ap = argparse.ArgumentParser(description="engine call timeline (MPIR_CVAR_TOPO_TIMELINE)")
    ap.add_argument("prefix")
    ap.add_argument("--context", type=int)
    ap.add_argument("--collective", help="bcast, allgather, allgather_multileader, "
                    "allreduce or reduce")
    ap.add_argument("--csv", action="store_true")
    args = ap.parse_args()
    rows = load(args.prefix)
    if not rows:
        sys.exit("timeline.py: no events in %s.*" % args.prefix)
    calls = collections.OrderedDict()
    for e in rows:
        if ((args.context is None or e["context"] == args.context) and
                (args.collective is None or e["coll"] == args.collective)):
            calls.setdefault((e["context"], e["first"], e["coll"], e["bytes"]), []).append(e)
    if not calls:
        sys.exit("timeline.py: no call in %s.* matches" % args.prefix)
    if args.csv:
        print("context,first,collective,bytes,rank,node,local,leader,t_us,event,a,b")
        for key, ev in calls.items():
            t0 = min(e["t"] for e in ev if e["event"] == "begin")
            for e in sorted(ev, key=lambda e: e["t"]):
                print("%d,%d,%s,%d,%d,%d,%d,%d,%.1f,%s,%d,%d"
                      % (key + (e["rank"], e["node"], e["local"], e["leader"], e["t"] - t0,
                                e["event"], e["a"], e["b"])))
        return
    for key, ev in calls.items():
        report(key, ev, sys.stdout)


if __name__ == "__main__":
    main()
