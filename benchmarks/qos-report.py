#!/usr/bin/env python3
"""qos-report.py: the goals' figures of a benchmarks/qos.sh run, from its
CSVs (issue 30, doc/qos.md).

  qos-report.py WINDOWS_CSV SOLO_CSV --store rate|disk --cap MBPS
                --duration S --slo NAME:RATE:LATENCY ... --load APP ...

--load APP is qos-load.py's NAME:CLASS:THREADS:PATTERN, as the run was
given it: the report takes each application's intended rate in a window
(what qos-load.py meant it to issue, averaged over the window) from the
same rate function qos-load.py paced it by.

Windows are classified two ways:
  by the intended rates (the verdict the goals use): "light" when the
  applications' intended rates add up to at most 90% of the store's
  rate in it and in the ceil(largest bound in s) windows before it (a
  request answered in it may have waited that long behind the backlog
  of a saturated window before), "saturated" when every application intends to issue and together
  they intend at least the store's rate;
  by the clients' issue rates (the old verdict, kept for comparison):
  the same thresholds on what the writers issued.  A writer has one
  request in flight and issues the next when it is both due and the
  previous one is answered (IOR), so a writer held back issues less: a
  saturated window then reads as a light one.

Shares under saturation are compared with the weighted max-min fair
shares of what the store served in each window (weights the SLO rates,
each application at most what it intends): the SLO ratio when every application intends more
than its share, else the one below its share gets what it intends and
the other the rest.  The first window (start-up) is left out."""
import argparse
import csv
import importlib.util
import math
import os
import sys

LIGHT = 0.9


def load_rate_fn():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qos-load.py")
    spec = importlib.util.spec_from_file_location("qos_load", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.rate_at


def intended(rate_at, pattern, w, duration, steps=20):
    """The mean rate qos-load.py meant to issue in window [w, w + 1)."""
    return sum(rate_at(pattern, w + (k + 0.5) / steps, duration) for k in range(steps)) / steps


def fair(want, weight, cap):
    """Weighted max-min fair shares of cap (each at most what it wants)."""
    give, left, active = {a: 0.0 for a in want}, cap, [a for a in want if want[a] > 0]
    while active and left > 1e-9:
        wsum = sum(weight[a] for a in active)
        capped = [a for a in active if want[a] - give[a] <= left * weight[a] / wsum]
        if not capped:
            for a in active:
                give[a] += left * weight[a] / wsum
            break
        for a in capped:
            left -= want[a] - give[a]
            give[a] = want[a]
        active = [a for a in active if a not in capped]
    return give


def parse_args(argv):
    ap = argparse.ArgumentParser(description="qos.sh's goals from its CSVs")
    ap.add_argument("windows_csv")
    ap.add_argument("solo_csv")
    ap.add_argument("--store", choices=("rate", "disk"), required=True)
    ap.add_argument("--cap", type=float, required=True,
                    help="the store's rate, MB/s (disk: replaced by fifo's one class alone)")
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--slo", action="append", required=True, help="NAME:RATE:LATENCY")
    ap.add_argument("--load", action="append", required=True,
                    help="qos-load.py's NAME:CLASS:THREADS:PATTERN")
    return ap.parse_args(argv)


def main(argv):
    a = parse_args(argv)
    rate_at = load_rate_fn()
    rows = list(csv.DictReader(open(a.windows_csv)))
    solo = list(csv.DictReader(open(a.solo_csv)))
    slo = {}
    for s in a.slo:
        name, rate, lat = s.split(":")
        slo[name] = (float(rate), float(lat))
    pattern = {}
    for spec in a.load:
        name, _cls, _n, *pat = spec.split(":")
        pattern[name] = pat
    apps = sorted(pattern)
    cap = a.cap
    if a.store == "disk":
        # the store's rate: what one class alone got under fifo
        w = [float(r["served_mbps"]) for r in solo if r["policy"] == "fifo" and int(r["t"]) > 0]
        cap = sum(w) / max(len(w), 1)
        print("store: 2 emulated st318452lw disks (51 MB/s each) behind RAID-0")
    print("store rate (the physical limit here): %.0f MB/s" % cap)
    print("light window: the intended rates add up to <= %d%% of the store in it and in the"
          % (100 * LIGHT))
    print("ceil(largest bound in s) windows before it (their backlog); saturated: every")
    print("application intends to issue and together intend >= the store; (issue): the same by")
    print("the clients' issue rates, one window (the old verdict; held-back writers issue less)")
    print("%-10s %-5s %7s %5s %5s %17s %17s" % ("policy", "app", "windows", "met", "met%",
                                              "light met (int.)", "light met (issue)"))
    policies = [p for p in ("fifo", "dsfq", "two-level") if any(r["policy"] == p for r in rows)]
    met_all, met_sat, light_pct, ratio = {}, {}, {}, {}
    for pol in policies:
        by_t = {}
        for r in rows:
            if r["policy"] == pol:
                by_t.setdefault(int(r["t"]), {})[r["app"]] = r
        ts = sorted(t for t in by_t if t > 0 and all(x in by_t[t] for x in apps))
        want = {t: {x: intended(rate_at, pattern[x], t, a.duration) for x in apps} for t in ts}
        # a request answered in window t may have been issued up to the
        # largest bound earlier, behind the backlog of a saturated window
        # before: light windows follow settle light ones
        settle = max(1, math.ceil(max(v[1] for v in slo.values()) / 1000))
        light_i = {t for t in ts if all(
            sum(intended(rate_at, pattern[x], u, a.duration) for x in apps) <= LIGHT * cap
            for u in range(max(t - settle, 0), t + 1))}
        sat_i = {t for t in ts if all(want[t][x] > 0 for x in apps) and
                 sum(want[t].values()) >= cap}
        issue = {t: sum(float(by_t[t][x]["issue_mbps"]) for x in apps) for t in ts}
        light_s = {t for t in ts if issue[t] <= LIGHT * cap}
        sat_s = {t for t in ts if all(int(by_t[t][x]["requests"]) > 0 for x in apps) and
                 issue[t] >= cap}
        for x in apps:
            bound = slo[x][1]
            w = [t for t in ts if int(by_t[t][x]["requests"]) > 0]
            ok = {t for t in w if float(by_t[t][x]["p95_ms"]) <= bound}
            li = [t for t in w if t in light_i]
            ls = [t for t in w if t in light_s]
            met_all[(pol, x)] = len(ok)
            met_sat[(pol, x)] = (len([t for t in w if t in sat_i and t in ok]),
                                 len([t for t in w if t in sat_i]))
            light_pct[(pol, x)] = (len([t for t in li if t in ok]), len(li))
            print("%-10s %-5s %7d %5d %4.0f%% %6d of %-4d%3.0f%% %6d of %-4d%3.0f%%" % (
                pol, x, len(w), len(ok), 100.0 * len(ok) / max(len(w), 1),
                len([t for t in li if t in ok]), len(li),
                100.0 * len([t for t in li if t in ok]) / max(len(li), 1),
                len([t for t in ls if t in ok]), len(ls),
                100.0 * len([t for t in ls if t in ok]) / max(len(ls), 1)))
        if len(apps) == 2:
            x1, x2 = apps
            weight = {x: slo[x][0] for x in apps}
            served = {x: sum(float(by_t[t][x]["served_mbps"]) for t in sat_i) for x in apps}
            target = {x: 0.0 for x in apps}
            for t in sat_i:
                # what the store served in the window, divided fairly
                g = fair(want[t], weight,
                         sum(float(by_t[t][x]["served_mbps"]) for x in apps))
                for x in apps:
                    target[x] += g[x]
            got = served[x1] / served[x2] if served[x2] else float("nan")
            exp = target[x1] / target[x2] if target[x2] else float("nan")
            if sat_i:
                ratio[pol] = (got, exp)
            s1 = sum(float(by_t[t][x1]["served_mbps"]) for t in sat_s)
            s2 = sum(float(by_t[t][x2]["served_mbps"]) for t in sat_s)
            if not sat_i:
                print("%-10s saturated windows 0" % pol)
            else:
                print("%-10s saturated windows %d: served %s/%s = %.2f, fair %.2f (%+.0f%%; SLO ratio"
                      " %.2f); %s served %.0f%% and %s %.0f%% of what they intended" % (
                          pol, len(sat_i), x1, x2, got, exp,
                          100.0 * (got / exp - 1) if exp else 0, weight[x1] / weight[x2], x1,
                          100.0 * served[x1] / max(sum(want[t][x1] for t in sat_i), 1e-9), x2,
                          100.0 * served[x2] / max(sum(want[t][x2] for t in sat_i), 1e-9)))
            print("%-10s   (issue) saturated windows %d%s" % (
                pol, len(sat_s), ": served %s/%s = %.2f" % (x1, x2, s1 / s2) if s2 else ""))
    tight = min(slo, key=lambda x: slo[x][1])
    for pol in policies[1:]:
        f, p = met_all[("fifo", tight)], met_all[(pol, tight)]
        fs, ps = met_sat[("fifo", tight)], met_sat[(pol, tight)]
        print("%s windows within %g ms: %s %d vs fifo %d%s; saturated: %d of %d vs fifo %d of %d"
              % (tight, slo[tight][1], pol, p, f, " (%.1fx)" % (p / f) if f else "", ps[0], ps[1],
                 fs[0], fs[1]))

    def alone(pol):
        w = [float(r["served_mbps"]) for r in solo if r["policy"] == pol and int(r["t"]) > 0]
        return sum(w) / max(len(w), 1)
    for pol in policies:
        print("one class alone, %s: %.1f MB/s served (%.1f%% of fifo)" % (
            pol, alone(pol), 100.0 * alone(pol) / alone("fifo") if alone("fifo") else 0))
    if "two-level" in policies and "fifo" in policies:
        print("goals, two-level, windows by intended rates:")
        for x in apps:
            m, n = light_pct[("two-level", x)]
            print("  %s p95 within %g ms in >= 90%% of light windows: %s (%d of %d)" % (
                x, slo[x][1], "n/a" if not n else "met" if m >= 0.9 * n else "NOT met", m, n))
        if "two-level" in ratio:
            got, exp = ratio["two-level"]
            print("  shares under saturation within 10%% of fair: %s (%.2f vs %.2f)" % (
                "n/a" if exp != exp else "met" if abs(got / exp - 1) <= 0.1 else "NOT met",
                got, exp))
        else:
            print("  shares under saturation within 10% of fair: n/a (no saturated window)")
        f, p = met_all[("fifo", tight)], met_all[("two-level", tight)]
        if "two-level" in ratio:
            print("  %s within its bound in >= 5x fifo's windows: %s (%d vs %d)" % (
                tight, "met" if p >= 5 * max(f, 1) else "NOT met", p, f))
        else:
            print("  %s within its bound in >= 5x fifo's windows: n/a (no saturated window;"
                  " %d vs %d)" % (tight, p, f))
        r = alone("two-level") / alone("fifo") if alone("fifo") else 0
        print("  one class alone within 5%% of fifo: %s (%.1f%%)" % (
            "met" if r >= 0.95 else "NOT met", 100 * r))


if __name__ == "__main__":
    main(sys.argv[1:])
