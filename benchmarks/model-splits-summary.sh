#!/bin/bash
# model-splits-summary.sh: the best split of 6 nodes, measured and
# predicted, per link setting: gathers the capacities of
# benchmarks/model-validate.sh (one host, loopback) and of every
# benchmarks/model-validate-hosts.sh run (shaped links) found in DIR.
#
#   benchmarks/model-splits-summary.sh [DIR]     (default benchmarks/results)
#
# Writes DIR/model-splits.csv (setting, config, measured capacity, each
# variant's saturation rate, the shaped links' capacity) and
# DIR/model-splits.png (measured and corrected per configuration, one
# group per setting, the links' capacity as the physical limit), and
# prints each setting's best split, measured and predicted.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$srcdir/benchmarks/results}
python3 - "$dir" <<'PY' || exit 1
import csv, glob, os, re, sys
d = sys.argv[1]
rows = []
def link_cap(cfg, io_bps, t_bps):
    nio, nt = map(int, cfg.split("x"))
    caps = [c for c in (nio * io_bps, nio * nt * t_bps) if c > 0]
    return min(caps) / 65536 if caps else ""
def bps(rate):
    if rate == "none":
        return 0
    m = re.match(r"(\d+)(k|m|g)?bit$", rate)
    return int(m.group(1)) * {None: 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)] / 8
sources = [("loopback 4 ranks", os.path.join(d, "model-validate-sat.csv"), 0, 0)]
# model-hosts-[TAG-]ioIO-tT-sat.csv (a TAG names a variant of the run: c12,
# twelve client ranks)
for f in sorted(glob.glob(os.path.join(d, "model-hosts-*io*-t*-sat.csv"))):
    m = re.search(r"model-hosts-(?:(\w+?)-)?io(\w+)-t(\w+)-sat\.csv$", f)
    tag, io, t = m.groups()
    sources.append(("hosts io %s t %s%s" % (io, t, " " + tag if tag else ""), f, bps(io), bps(t)))
for name, f, io, t in sources:
    if not os.path.exists(f):
        continue
    for r in csv.DictReader(open(f)):
        rows.append([name, r["config"], r["measured_capacity_per_s"], r["lcn2005_sat_per_s"],
                     r["journal_sat_per_s"], r["corrected_sat_per_s"],
                     "%.1f" % link_cap(r["config"], io, t) if (io or t) else ""])
with open(os.path.join(d, "model-splits.csv"), "w") as out:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["setting", "config", "measured_capacity_per_s", "lcn2005_sat_per_s",
                "journal_sat_per_s", "corrected_sat_per_s", "links_capacity_per_s"])
    w.writerows(rows)
for name in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == name]
    best = lambda k: max(rs, key=lambda r: float(r[k]))[1]
    print("%s: measured best %s; corrected picks %s, lcn2005 %s" % (name, best(2), best(5), best(3)))
PY
gnuplot <<GP || { echo "model-splits-summary.sh: gnuplot failed" >&2; exit 1; }
set terminal pngcairo size 900,560
set output '$dir/model-splits.png'
set datafile separator ','
set title 'Capacity of each split of 6 nodes: measured vs corrected model (64 KiB random reads)'
set ylabel 'requests/s'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -20 font ',9'
set key outside bottom center horizontal
set grid y
plot '$dir/model-splits.csv' every ::1 using 3:xticlabels(sprintf("%s\n%s", stringcolumn(1), stringcolumn(2))) title 'measured', \
     '' every ::1 using 6 title 'corrected', \
     '' every ::1 using (\$7 > 0 ? \$7 : 1/0) title 'shaped links full (limit)'
GP
echo "wrote $dir/model-splits.csv and model-splits.png"
