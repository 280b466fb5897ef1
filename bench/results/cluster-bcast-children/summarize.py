import csv, glob, collections, sys
d = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + '/run*.csv')):
    for r in csv.reader(open(f)):
        if not r or r[0].startswith('#') or r[20] != 'ok':
            continue
        lib, shape, rate = r[0].split('-')
        d[(shape, rate, int(r[4]), lib)].append(float(r[14]) / 1000)
print("| nodes x ppn | NIC | bytes | chunks | all at once (ms) | one child after the other (ms) | speedup (best of each) |")
print("|---|---|---|---|---|---|---|")
for shape, rate, m in sorted({k[:3] for k in d}, key=lambda k: (k[0], -int(k[1][:-4]), k[2])):
    o, n = d[(shape, rate, m, 'old')], d[(shape, rate, m, 'new')]
    print("| %s | %s | %d KiB | %d | %s | %s | %.2f |" % (shape.replace('x', ' x '), rate.replace('mbit', ' Mbit/s'), m // 1024,
          -(-m // 131072), ", ".join("%.1f" % x for x in o), ", ".join("%.1f" % x for x in n), min(o) / min(n)))
