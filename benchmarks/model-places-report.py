#!/usr/bin/env python3
"""model-places-report.py: benchmarks/model-places.sh's rows against the
corrected model, end to end and inside the I/O node.

    model-places-report.py PLACES.csv PARAMS MODEL CLIENTS [OUT_PREFIX]

For each configuration in PLACES.csv (no hits, 6 ranks) and each rate
run without an in-flight cap: the measured mean response and the I/O
nodes' time from request to reply (server_ms) against the model's mean
(ipvfs-model MODEL --variant corrected --params PARAMS --clients
CLIENTS, the client ranks model-places.sh ran: ipvfs_ms) and
its W_iRAID (ipvfs_iraid_ms), at the offered rate; the utilisation is
the offered rate over the configuration's measured capacity, the
highest achieved rate of its rows (an overload row with a cap, R:Q,
measures it).  Then the saturation rates and the best split.  Prints
the table; with OUT_PREFIX also writes OUT_PREFIX.csv (one row per
point) and OUT_PREFIX.png (gnuplot: per configuration, measured and
predicted, end to end and in the I/O node, against the rate)."""
import csv
import subprocess
import sys


def model(binary, params, clients, nio, rate):
    out = subprocess.run([binary, "--variant", "corrected", "--params", params, "--nodes", "6",
                          "--clients", clients,
                          "--io-nodes", str(nio), "--hit-io", "0", "--hit-target", "0",
                          "--hit-pvfs", "0", "--rate-min", str(rate), "--rate-steps", "1", "--csv"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    row = dict(zip(out[0].split(","), out[1].split(",")))
    val = lambda k: float(row[k]) if row[k] else float("inf")
    return val("ipvfs_ms"), val("ipvfs_iraid_ms")


def saturations(binary, params, clients):
    out = subprocess.run([binary, "--variant", "corrected", "--params", params, "--nodes", "6",
                          "--clients", clients,
                          "--hit-io", "0", "--hit-target", "0", "--hit-pvfs", "0", "--splits",
                          "--csv"], check=True, capture_output=True, text=True).stdout.splitlines()
    sat = {}
    for line in out[1:]:
        f = line.split(",")
        if f[0] == "ipvfs":
            sat["%sx%s" % (f[1], f[2])] = float(f[3])
    return sat


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    places, params, binary, clients = sys.argv[1:5]
    prefix = sys.argv[5] if len(sys.argv) == 6 else None
    rows = list(csv.DictReader(open(places)))
    sat = saturations(binary, params, clients)
    configs = list(dict.fromkeys(r["config"] for r in rows))
    cap = {c: max(float(r["achieved_per_s"]) for r in rows if r["config"] == c) for c in configs}
    out = []
    print("Mean response and the I/O node's time: (predicted - measured) / measured")
    for c in configs:
        nio = int(c.split("x")[0])
        print("\n%s (measured capacity %.1f/s, model %.1f/s, %+.0f%%)" % (
            c, cap[c], sat[c], (sat[c] / cap[c] - 1) * 100))
        print("    util  rate/s  meas ms  model ms   err | server ms  W_iRAID ms   err")
        for r in sorted((r for r in rows if r["config"] == c and r["inflight_cap"] == "0"),
                        key=lambda r: float(r["offered_per_s"])):
            off = float(r["offered_per_s"])
            if float(r["achieved_per_s"]) < 0.95 * off:
                continue            # past saturation: no mean to compare
            mean, server = float(r["mean_ms"]), float(r["server_ms"])
            tot, iraid = model(binary, params, clients, nio, off)
            util = off / cap[c]
            print("    %4.2f  %6.1f  %7.2f  %8.2f  %+4.0f%% | %9.2f  %10.2f  %+4.0f%%" % (
                util, off, mean, tot, (tot / mean - 1) * 100, server, iraid,
                (iraid / server - 1) * 100))
            out.append((c, off, util, mean, tot, server, iraid))
    best_m = max(configs, key=lambda c: cap[c])
    best_p = max(sat, key=lambda c: sat[c])
    print("\nBest split: measured %s (%s), model %s (%s): %s" % (
        best_m, ", ".join("%s %.1f" % (c, cap[c]) for c in configs), best_p,
        ", ".join("%s %.1f" % (c, sat[c]) for c in configs),
        "agrees" if best_m == best_p else "disagrees"))
    if not prefix:
        return
    with open(prefix + ".csv", "w") as f:
        f.write("config,offered_per_s,util,mean_ms,model_ms,server_ms,model_iraid_ms\n")
        for o in out:
            f.write("%s,%.2f,%.3f,%.4f,%.4f,%.4f,%.4f\n" % o)
    plots = []
    for i, c in enumerate(configs):
        src = "'< grep ^%s, %s.csv'" % (c, prefix)
        plots.append("%s using 2:4 with linespoints lw 2 pt 7 lc %d title '%s measured'" % (src, i + 1, c))
        plots.append("'' using 2:5 with lines lw 2 dt 2 lc %d title '%s model'" % (i + 1, c))
        plots.append("'' using 2:6 with linespoints pt 4 lc %d title '%s I/O node measured'" % (i + 1, c))
        plots.append("'' using 2:7 with lines dt 3 lc %d title '%s W_iRAID model'" % (i + 1, c))
    gp = """set terminal pngcairo size 900,600
set output '%s.png'
set datafile separator ','
set termoption noenhanced
set title 'Mean response: measured (client and I/O node) vs corrected model, 64 KiB random reads'
set xlabel 'offered rate (requests/s)'
set ylabel 'ms'
set key top left
set grid
%s
plot %s
""" % (prefix, "\n".join("set arrow from %.1f, graph 0 to %.1f, graph 1 nohead dt 2 lc %d" % (
        cap[c], cap[c], i + 1) for i, c in enumerate(configs)), ", \\\n     ".join(plots))
    subprocess.run(["gnuplot"], input=gp, text=True, check=True)


if __name__ == "__main__":
    main()
