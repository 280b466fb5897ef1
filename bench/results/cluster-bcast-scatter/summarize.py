# bench/results/cluster-bcast-scatter: the table of README.md from run*.csv
# (coll_bench's median over calls of the slowest process, column 15, in ms)
import csv, glob, collections, sys
d = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + '/run*.csv')):
    for r in csv.reader(open(f)):
        if not r or r[0].startswith('#') or r[20] != 'ok':
            continue
        d[(int(r[4]), r[0])].append(float(r[14]) / 1000)
trees = ["binomial", "chain", "scatter"]
print("| bytes | " + " | ".join("%s (ms)" % t for t in trees) + " | binomial / scatter | chain / scatter |")
print("|---|" + "---|" * (len(trees) + 2))
for m in sorted({k[0] for k in d}):
    b = {t: min(d[(m, t)]) for t in trees}
    print("| %d KiB | %s | %.2f | %.2f |" % (m // 1024, " | ".join(", ".join("%.1f" % x for x in d[(m, t)]) for t in trees),
          b["binomial"] / b["scatter"], b["chain"] / b["scatter"]))
