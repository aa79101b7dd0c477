#!/usr/bin/env python3
"""model-split-report.py: the best split, measured with error bars against
the corrected model.

    model-split-report.py PLACES.csv PARAMS MODEL CLIENTS [OUT_PREFIX [MODEL_OPTION ...]]

PARAMS: one params file for every split, or CFG=FILE[,CFG=FILE...] (e.g.
1x5=a.params,2x2=b.params,3x1=c.params): each split predicted with its
own calibration (the disk's mean under each split's cluster differs by
up to 7%); a measured split that has none is an error.

PLACES.csv: benchmarks/model-places.sh's rows of several configurations,
taken in interleaved rounds; every row run with an in-flight cap (R:Q,
an overload point) is one measurement of its configuration's capacity
(the achieved rate).  Per configuration: the mean capacity, its sample
standard deviation, the range and a 95% confidence interval of the mean
(Student's t); then the measured best split, whether the runner-up's
interval overlaps it (Welch's t on the difference of the two means), and
the corrected model's saturation rates (ipvfs-model MODEL --variant
corrected --params PARAMS --clients CLIENTS [MODEL_OPTION ...]) and its
best split.  With OUT_PREFIX: OUT_PREFIX.csv and OUT_PREFIX.png (the
capacities with their intervals beside the model's)."""
import csv
import math
import statistics
import subprocess
import sys

# two-sided 95% Student's t by degrees of freedom (1..30; then 1.96)
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(df):
    return T95[min(max(int(df), 1), 30) - 1] if df < 31 else 1.96


def saturations(binary, params, clients, extra):
    run = subprocess.run([binary, "--variant", "corrected", "--params", params, "--nodes", "6",
                          "--clients", clients, "--hit-io", "0", "--hit-target", "0",
                          "--hit-pvfs", "0", "--splits", "--csv"] + extra,
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("model-split-report.py: %s --params %s failed: %s" % (
            binary, params, run.stderr.strip().splitlines()[-1] if run.stderr.strip() else
            "exit status %d" % run.returncode))
    out = run.stdout.splitlines()
    return {"%sx%s" % (f[1], f[2]): float(f[3])
            for f in (line.split(",") for line in out[1:]) if f[0] == "ipvfs"}


def saturations_per_config(binary, params, clients, extra):
    """PARAMS as one file, or CFG=FILE[,CFG=FILE...]: the model's saturation
    of each split, each from its own file where given."""
    if "=" not in params:
        return saturations(binary, params, clients, extra), {}
    files = {}
    for item in params.split(","):
        cfg, _, path = item.partition("=")
        if not cfg or not path or "x" not in cfg:
            sys.exit("model-split-report.py: bad PARAMS item '%s' (CFG=FILE, CFG as 2x2)" % item)
        files[cfg] = path
    sat = {}
    for cfg, path in files.items():
        one = saturations(binary, path, clients, extra)
        if cfg not in one:
            sys.exit("model-split-report.py: %s is no split of 6 ranks" % cfg)
        sat[cfg] = one[cfg]
    return sat, files


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    places, params, binary, clients = sys.argv[1:5]
    prefix = sys.argv[5] if len(sys.argv) > 5 else None
    if prefix and prefix.startswith("-"):
        sys.exit("model-split-report.py: OUT_PREFIX '%s' looks like an option: the model's options "
                 "come after OUT_PREFIX" % prefix)
    extra = sys.argv[6:]
    caps = {}
    for r in csv.DictReader(open(places)):
        if r["inflight_cap"] != "0":
            caps.setdefault(r["config"], []).append(float(r["achieved_per_s"]))
    if not caps:
        sys.exit("model-split-report.py: no capped (R:Q) rows in %s" % places)
    sat, files = saturations_per_config(binary, params, clients, extra)
    missing = [c for c in caps if files and c not in files]
    if missing:
        sys.exit("model-split-report.py: no params for %s in %s" % (" ".join(sorted(missing)), params))
    for c in sorted(files):
        print("  model for %s: %s" % (c, files[c]))
    stat = {}
    print("capacity (requests/s) per split: n, mean +- sd, [min, max], 95% CI of the mean; model")
    for c in sorted(caps):
        v = caps[c]
        m = statistics.mean(v)
        sd = statistics.stdev(v) if len(v) > 1 else float("nan")
        half = t95(len(v) - 1) * sd / math.sqrt(len(v)) if len(v) > 1 else float("nan")
        stat[c] = (len(v), m, sd, min(v), max(v), half)
        print("  %s: n %d, %.1f +- %.1f, [%.1f, %.1f], CI +-%.1f; model %.1f (%+.0f%%)" % (
            c, len(v), m, sd, min(v), max(v), half, sat.get(c, float("nan")),
            (sat.get(c, float("nan")) / m - 1) * 100))
    order = sorted(stat, key=lambda c: -stat[c][1])
    best = order[0]
    line = "measured best %s" % best
    if len(order) > 1:
        a, b = stat[best], stat[order[1]]
        se = math.sqrt(a[2] ** 2 / a[0] + b[2] ** 2 / b[0])
        df = se ** 4 / ((a[2] ** 2 / a[0]) ** 2 / (a[0] - 1) + (b[2] ** 2 / b[0]) ** 2 / (b[0] - 1)) \
            if a[0] > 1 and b[0] > 1 and se > 0 else 1
        diff = a[1] - b[1]
        line += ", %.1f/s (%.1f%%) above %s, 95%% CI of the difference +-%.1f: %s" % (
            diff, diff / b[1] * 100, order[1], t95(df) * se,
            "separated" if diff > t95(df) * se else "not separated")
    mbest = max((c for c in sat if c in stat), key=lambda c: sat[c])
    print(line)
    print("model's best %s: %s" % (mbest, "agrees" if mbest == best else "disagrees"))
    if not prefix:
        return
    with open(prefix + ".csv", "w") as f:
        f.write("config,n,mean_per_s,sd_per_s,min_per_s,max_per_s,ci95_per_s,model_per_s\n")
        for c in sorted(stat):
            f.write("%s,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n" % ((c,) + stat[c] + (sat.get(c, 0),)))
    gp = """set terminal pngcairo size 800,560
set output '%s.png'
set datafile separator ','
set title 'Capacity per split of 6 ranks: measured (mean, 95%% CI, n rounds) vs corrected model'
set ylabel 'requests/s'
set yrange [0:*]
set xrange [-0.5:2.5]
set boxwidth 0.35
set style fill solid 0.4
set grid ytics
set key below
plot '%s.csv' every ::1 using ($0-0.2):3:xtic(1) with boxes lc rgb 'steelblue' title 'measured mean', \\
     '' every ::1 using ($0-0.2):3:7 with yerrorbars lc rgb 'black' pt 0 title '95%% CI', \\
     '' every ::1 using ($0-0.2):5 with points pt 1 lc rgb 'gray30' title 'min / max', \\
     '' every ::1 using ($0-0.2):6 with points pt 1 lc rgb 'gray30' notitle, \\
     '' every ::1 using ($0+0.2):8 with boxes lc rgb 'dark-orange' title 'corrected model'
""" % (prefix, prefix)
    subprocess.run(["gnuplot"], input=gp, text=True, check=True)


if __name__ == "__main__":
    main()
