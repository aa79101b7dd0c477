#!/usr/bin/env python3
"""model-hops-report.py: where a read's time goes, hop by hop, measured
against the corrected model (benchmarks/model-places.sh's rows, on hosts
with benchmarks/model-validate-hosts.sh MVH_PLACES).

    model-hops-report.py PLACES.csv PARAMS_PREFIX MODEL CLIENTS LINK_BPS [MODEL_OPTION ...]

PARAMS_PREFIX-NIOxNT.params: each configuration's calibration;
PLACES.csv's MP_NAME-tc.csv beside it, when there, the mean bytes queued
on the I/O nodes' shaped links (sendR: what I/O node rank R sends, to the
clients; recvR: what it receives, from its targets and the clients);
LINK_BPS, those links' rate in bytes/s.  MODEL_OPTIONs go to ipvfs-model
(e.g. --read-places 2).  For each rate run without an in-flight cap:

  mean       the client's mean response (ipvfs-openload)
  server     the I/O node's time from a READ's request to its reply
  outside    mean - server: the client's queue, the request's way in and
             the reply's way out
  place, wait, disk   a READ's time in its place, its wait for one (per
             READ, those that did not wait counted as 0), the disk's
             service
  q_send, q_recv      the mean wait of a byte on the I/O nodes' sending and
             receiving links (mean backlog / LINK_BPS: Little's law)
and the model's T, W_iRAID, W_ionet - T_ionet (its queue on the sending
link), W_reqin (a request's wait on the receiving link) and W_client at
the same offered rate."""
import csv
import os
import subprocess
import sys


def model(binary, params, clients, nio, rate, extra):
    out = subprocess.run([binary, "--variant", "corrected", "--params", params, "--nodes", "6",
                          "--clients", clients, "--io-nodes", str(nio), "--hit-io", "0",
                          "--hit-target", "0", "--hit-pvfs", "0", "--rate-min", str(rate),
                          "--rate-steps", "1", "--csv"] + extra,
                         check=True, capture_output=True, text=True).stdout.splitlines()
    row = dict(zip(out[0].split(","), out[1].split(",")))
    return {k: float(row[k]) if row[k] else float("inf")
            for k in ("ipvfs_ms", "ipvfs_iraid_ms", "ipvfs_ionet_ms", "ipvfs_reqin_ms",
                      "ipvfs_client_ms")}


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    places, prefix, binary, clients, bps = sys.argv[1:6]
    extra = sys.argv[6:]
    bps = float(bps)
    rows = list(csv.DictReader(open(places)))
    tcf = places[:-4] + "-tc.csv"
    tc = {}
    if os.path.exists(tcf):
        for r in csv.DictReader(open(tcf)):
            key = (r["config"], r["rate_per_s"], r["queue"][:4])
            tc.setdefault(key, []).append(float(r["backlog_bytes"]) / bps * 1e3)
    print("%-4s %6s %6s | %7s %7s %7s %6s %6s %5s %6s %6s | %7s %7s %6s %6s %6s %6s" % (
        "cfg", "rate", "achvd", "mean", "server", "outside", "place", "wait", "disk", "q_send",
        "q_recv", "T", "W_iRAID", "q_send", "q_recv", "W_cl", "err"))
    for r in rows:
        if r["inflight_cap"] != "0":
            continue
        cfg, off = r["config"], float(r["offered_per_s"])
        nio = int(cfg.split("x")[0])
        mean, server = float(r["mean_ms"]), float(r["server_ms"])
        placed = float(r["placed"]) or 1
        wait = float(r["wait_ms"]) * float(r["waited"]) / placed
        q = {k: (sum(v) / len(v) if v else float("nan"))
             for k in ("send", "recv") for v in [tc.get((cfg, r["rate_per_s"], k), [])]}
        m = model(binary, "%s-%s.params" % (prefix, cfg), clients, nio, off, extra)
        t_ionet = 65536 / bps * 1e3
        print("%-4s %6.1f %6.1f | %7.2f %7.2f %7.2f %6.2f %6.2f %5.2f %6.2f %6.2f | %7.2f %7.2f %6.2f %6.2f %6.2f %+5.0f%%" % (
            cfg, off, float(r["achieved_per_s"]), mean, server, mean - server, float(r["place_ms"]),
            wait, float(r["disk_ms"]), q["send"], q["recv"], m["ipvfs_ms"], m["ipvfs_iraid_ms"],
            m["ipvfs_ionet_ms"] - t_ionet, m["ipvfs_reqin_ms"], m["ipvfs_client_ms"], (m["ipvfs_ms"] / mean - 1) * 100))


if __name__ == "__main__":
    main()
