#!/usr/bin/env python3
"""model-validate-report.py: the error table of benchmarks/model-validate.sh.

    benchmarks/model-validate-report.py OUTDIR [NAME]

Reads OUTDIR/NAME.csv and NAME-sat.csv (NAME: model-validate) and prints, per
configuration and model variant: the relative error of the predicted mean
response at every point up to 80% utilisation (offered rate over the
measured capacity), the largest of them, the relative error of the
predicted saturation rate against the measured capacity, and whether the
best split (the highest capacity) agrees.  Goals (the issue's): means
within 25% up to 80% utilisation, saturation within 15%, the same best
split."""
import csv
import sys

out = sys.argv[1]
name = sys.argv[2] if len(sys.argv) > 2 else "model-validate"
rows = list(csv.DictReader(open(out + "/" + name + ".csv")))
sat = {r["config"]: r for r in csv.DictReader(open(out + "/" + name + "-sat.csv"))}
variants = ("lcn2005", "journal", "corrected")
print("Mean response: (predicted - measured) / measured at offered/capacity <= 0.8")
for cfg in sat:
    cap = float(sat[cfg]["measured_capacity_per_s"])
    print("\n%s (measured capacity %.1f/s)" % (cfg, cap))
    print("  %6s %9s %9s  %s" % ("util", "rate/s", "meas ms", "  ".join("%10s" % v for v in variants)))
    worst = dict.fromkeys(variants, 0.0)
    for r in rows:
        if r["config"] != cfg:
            continue
        util = float(r["offered_per_s"]) / cap
        if util > 0.8:
            continue
        meas = float(r["mean_ms"])
        errs = []
        for v in variants:
            if r[v + "_ms"]:
                e = (float(r[v + "_ms"]) - meas) / meas
                worst[v] = max(worst[v], abs(e))
                errs.append("%+9.0f%%" % (100 * e))
            else:
                worst[v] = float("inf")
                errs.append("%10s" % "saturated")
        print("  %6.2f %9.1f %9.2f  %s" % (util, float(r["offered_per_s"]), meas, "  ".join(errs)))
    print("  worst |error| up to 80%%: %s" % ", ".join("%s %.0f%%" % (v, 100 * worst[v]) for v in variants))
print("\nSaturation: predicted vs measured capacity")
for cfg, r in sat.items():
    cap = float(r["measured_capacity_per_s"])
    print("  %s: measured %.1f/s; %s; disks %.1f/s" % (cfg, cap, ", ".join(
        "%s %.1f (%+.0f%%)" % (v, float(r[v + "_sat_per_s"]), 100 * (float(r[v + "_sat_per_s"]) - cap) / cap)
        for v in variants), float(r["disks_capacity_per_s"])))
best = max(sat, key=lambda c: float(sat[c]["measured_capacity_per_s"]))
print("\nBest split: measured %s" % best)
for v in variants:
    pick = max(sat, key=lambda c: float(sat[c][v + "_sat_per_s"]))
    print("  %s picks %s: %s" % (v, pick, "agrees" if pick == best else "disagrees"))
