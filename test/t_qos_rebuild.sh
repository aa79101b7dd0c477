#!/bin/bash
# timeout: 60
# Internal work as a QoS class (--qos-internal, doc/qos.md) on 1 I/O node
# x 4 targets, RAID-5: with --qos-internal 1:2 and no application I/O, a
# rebuild of member 2 advances at most 2 MB/s of the member (measured
# from `ipvfs-ctl status --json` over 2 s or more, a little slack for the
# first stripe), not at memory speed; `ipvfs-ctl qos status --json` shows
# the class "internal" with its least rate and the sweep's MB/s, and the
# default policy, two-level, at fifo's unbounded depth (no class has an
# SLO).  The cluster stops mid-rebuild (the sweep is cancelled cleanly).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

# "MS DONE STATE" of member 2 of rank 0's volume
member2() {
    ipvfs-ctl status --json | python3 -c '
import json, sys, time
m = json.load(sys.stdin)["ranks"][0]["volume"]["members"][2]
print(int(time.monotonic() * 1000), m.get("done_bytes", 0), m["state"])'
}

ipvfs_start_cluster 1 4 --raid 5 --target-size 64M --no-bind --qos-internal 1:2
ipvfs-ctl rebuild 0 2 >/dev/null || ipvfs_fail "rebuild 0 2"
# from the first progress on, for 2 s at least
deadline=$((SECONDS + 20))
while :; do
    read -r t0 d0 state <<<"$(member2)" || ipvfs_fail "status --json"
    # down and reconnecting first (the member is replaced), then rebuilding
    [ "$state" != up ] || ipvfs_fail "member 2 is up again at once (64 MiB rebuilt unpaced?)"
    [ "$state" = rebuilding ] && [ "$d0" -gt 0 ] && break
    [ $SECONDS -lt $deadline ] || ipvfs_fail "no rebuild progress in 20 s"
done
while :; do
    read -r t1 d1 state <<<"$(member2)" || ipvfs_fail "status --json"
    [ $((t1 - t0)) -ge 2000 ] && break
    [ $SECONDS -lt $deadline ] || ipvfs_fail "status did not come back in time"
done
[ "$state" = rebuilding ] || ipvfs_fail "member 2 is $state after 2 s at 2 MB/s"
python3 - "$t0" "$d0" "$t1" "$d1" <<'PYEOF' || ipvfs_fail "the rebuild was not paced"
import sys
t0, d0, t1, d1 = map(int, sys.argv[1:])
mbps = (d1 - d0) / 1e6 / ((t1 - t0) / 1000)
print("rebuild at %.2f MB/s over %.1f s" % (mbps, (t1 - t0) / 1000))
# one stripe of slack: 2 MB/s, plus a 64 KiB chunk over the interval
assert 0 < mbps <= 2.0 + 65536 / 1e6 / ((t1 - t0) / 1000) + 0.1, mbps
PYEOF
ipvfs-ctl qos status --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["io_nodes"][0]
# the default policy, and no class with an SLO: unbounded (0) as fifo
assert d["policy"] == "two-level" and d["edf_depth"] == 0, d
c = {x["name"]: x for x in d["classes"]}
i = c["internal"]
assert i["rate_mbps"] == 1, i
assert 0 < i["served_mbps"] <= 2.2, i' ||
    ipvfs_fail "qos status: not two-level at an unbounded depth (the default without SLOs), or internal not paced"
ipvfs_stop_cluster
echo "t_qos_rebuild: passed"
