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

An application *conforms* in a window when its intended rate is at most
its SLO rate in it and in the same settling windows before it (the
requests answered in it were issued then): the latency bound is promised
for load that conforms to the class's throughput agreement (vPFS;
doc/qos.md "Who yields").  An application over its rate with THREADS
closed-loop writers that is held back (served under 90% of what it intends)
keeps every writer's request in flight, so by Little's law its mean
latency is THREADS x 1 MiB / its served rate; at its share of the store
(the SLO rates' ratio) that is a lower bound, and when it is above the
bound no scheduler that keeps the shares can meet the bound.  The report
splits each application's windows within its bound by conforming / over
its rate, gives that Little's-law figure, the paper's own comparison
(the windows of each application within the tightest bound: "App1
appears 10 times more than App2 within periods compliant to 100ms"), and
the 5x goal over the conforming saturated windows of the application
with the tightest bound.  --conformance-csv PATH writes the per-window figures:
policy,t,app,intended_mbps,slo_mbps,conforming,issue_mbps,served_mbps,
p95_ms,bound_ms,met,writers,little_ms (little_ms: THREADS x 1 MiB /
served, the mean latency with every writer in flight; empty when
nothing was served).

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
MIB_MB = (1 << 20) / 1e6


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
    ap.add_argument("--conformance-csv", help="per window: conforming, Little's law")
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
    pattern, writers = {}, {}
    for spec in a.load:
        name, _cls, n, *pat = spec.split(":")
        pattern[name] = pat
        writers[name] = int(n)
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
    met_all, met_sat, light_pct, ratio, met_conf, conf_rows, split = {}, {}, {}, {}, {}, [], {}
    tight = min(slo, key=lambda x: slo[x][1])
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
            # conforming: within its SLO rate in the window and in the
            # settling windows before it (what was answered in it was
            # issued then)
            conf = {t for t in ts if all(
                intended(rate_at, pattern[x], u, a.duration) <= slo[x][0] * 1.001
                for u in range(max(t - settle, 0), t + 1))}
            wc = [t for t in w if t in conf]
            wn = [t for t in w if t not in conf]
            met_conf[(pol, x)] = (len([t for t in wc if t in ok]), len(wc),
                                  len([t for t in wc if t in ok and t in sat_i]),
                                  len([t for t in wc if t in sat_i]))
            little = {}
            for t in ts:
                served_t = float(by_t[t][x]["served_mbps"])
                little[t] = writers[x] * MIB_MB / served_t * 1000 if served_t > 0 else None
                r = by_t[t][x]
                conf_rows.append((pol, t, x, want[t][x], slo[x][0], int(t in conf),
                                  float(r["issue_mbps"]), served_t, float(r["p95_ms"]), bound,
                                  int(t in ok) if t in w else "", writers[x], little[t]))
            # held back (served less than 90% of what it intends) and over
            # its rate: every writer in flight
            hw = [t for t in wn if little[t] is not None and
                  float(by_t[t][x]["served_mbps"]) < 0.9 * want[t][x]]
            held = sorted(little[t] for t in hw)
            hp95 = sorted(float(by_t[t][x]["p95_ms"]) for t in hw)
            split[(pol, x)] = (len([t for t in wc if t in ok]), len(wc),
                               len([t for t in wn if t in ok]), len(wn),
                               held[len(held) // 2] if held else None, len(held),
                               hp95[len(hp95) // 2] if hp95 else None)
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
    print("conforming (intended rate <= SLO rate in the window and the settling windows"
          " before it) vs over its rate;")
    print("Little: %s x 1 MiB / served, the mean latency of a held-back application (every"
          % "/".join("%s %d" % (x, writers[x]) for x in apps))
    print("writer in flight), median over its held-back windows over its rate")
    for pol in policies:
        for x in apps:
            mc, nc, mn, nn, lit, nh, hp = split[(pol, x)]
            print("%-10s %-5s within %g ms: conforming %d of %d, over its rate %d of %d%s" % (
                pol, x, slo[x][1], mc, nc, mn, nn,
                "; held back in %d: Little %.0f ms, p95 %.0f ms (medians)" % (nh, lit, hp)
                if lit else ""))
    # the bound at the share: a held-back application over its rate
    # served its share of the store (the SLO rates' ratio) has every
    # writer in flight, mean latency writers x 1 MiB / share
    wsum = sum(slo[x][0] for x in apps)
    for x in apps:
        share = cap * slo[x][0] / wsum
        lb = writers[x] * MIB_MB / share * 1000
        print("%s at its share of the store (%.1f of %.0f MB/s) with all %d writers in flight:"
              " mean latency >= %.0f ms (bound %g ms%s)" % (
                  x, share, cap, writers[x], lb, slo[x][1],
                  ": unreachable while the shares hold" if lb > slo[x][1] else ""))
    for pol in policies:
        # the paper's own comparison (its Figure 5): windows of each
        # application within the tightest bound, in all windows and in
        # those where both were served
        within = {x: {int(r["t"]) for r in rows if r["policy"] == pol and r["app"] == x and
                      int(r["t"]) > 0 and int(r["requests"]) > 0} for x in apps}
        both = set.intersection(*within.values())
        good = {x: {int(r["t"]) for r in rows if r["policy"] == pol and r["app"] == x and
                    int(r["t"]) in within[x] and float(r["p95_ms"]) <= slo[tight][1]}
                for x in apps}
        print("%-10s windows within %g ms (%s's bound; the paper's comparison): %s; while"
              " both are served (%d): %s" % (
                  pol, slo[tight][1], tight, ", ".join("%s %d" % (x, len(good[x])) for x in apps),
                  len(both), ", ".join("%s %d" % (x, len(good[x] & both)) for x in apps)))
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
        # the goal is about a saturated store (a light one keeps every
        # bound with any policy), for the load the bound is owed to
        pc, nc, pcs, ncs = met_conf[("two-level", tight)]
        fc, nfc, fcs, nfcs = met_conf[("fifo", tight)]
        print("  %s within its bound in >= 5x fifo's windows, its conforming saturated windows:"
              " %s (%d of %d vs %d of %d; all its conforming windows %d of %d vs %d of %d)" % (
                  tight, "n/a, it never conforms" if not nc else
                  "n/a, no saturated window where it conforms" if not ncs else
                  "met" if pcs >= 5 * max(fcs, 1) else
                  # fifo keeps more than a fifth: 5x is more than there are
                  "every window, %.1fx (5x fifo's would be more windows than there are)"
                  % (pcs / fcs) if pcs == ncs and 5 * fcs > ncs else "NOT met",
                  pcs, ncs, fcs, nfcs, pc, nc, fc, nfc))
        f, p = met_all[("fifo", tight)], met_all[("two-level", tight)]
        if "two-level" in ratio:
            print("  (all its windows, over its rate too: %d vs %d, %s)" % (
                p, f, "5x" if p >= 5 * max(f, 1) else "not 5x"))
        else:
            print("  (all its windows, no saturated window: %d vs %d)" % (p, f))
        r = alone("two-level") / alone("fifo") if alone("fifo") else 0
        print("  one class alone within 5%% of fifo: %s (%.1f%%)" % (
            "met" if r >= 0.95 else "NOT met", 100 * r))
    if a.conformance_csv:
        with open(a.conformance_csv, "w") as f:
            f.write("policy,t,app,intended_mbps,slo_mbps,conforming,issue_mbps,served_mbps,"
                    "p95_ms,bound_ms,met,writers,little_ms\n")
            for r in conf_rows:
                f.write("%s,%d,%s,%.2f,%g,%d,%.2f,%.2f,%.1f,%g,%s,%d,%s\n" % (
                    r[:12] + ("" if r[12] is None else "%.0f" % r[12],)))


if __name__ == "__main__":
    main(sys.argv[1:])
