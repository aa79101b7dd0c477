#!/bin/bash
# timeout: 200
# Server-side READ ordering (enum ipvfs_read_order): 4 ranks, 2 I/O nodes
# x 1 target (one READ in the store per node at a time).  With the servers
# stopped, each rank posts one 128 KiB read (a 64 KiB READ to each node),
# highest rank first; the first READ to arrive starts at once, the other
# three wait and arrive in descending client order.  From the per-client
# counters reads_waited and last_wait_seq of `ipvfs-ctl stats --json`:
#   first:  the waiting READs are served in datafile-offset order, here
#           ascending client ids (arrival order would be descending);
#   hash:   at node s a round robin starting at client s: node 0 serves
#           0 1 2, node 1 serves 1 2 0;
#   random: three READs waited at each node and were served;
#   first with --read-places 2 (two READs in the store per node): the
#           first two to arrive start at once, the other two wait and are
#           served in offset order, clients 0 then 1.
# A fresh cluster per schedule, so that the round robin starts at s.  The
# I/O nodes' L1 cache is off: the schedule orders the READs that go to the
# targets, and the data just written would otherwise be served from the L1
# out of that order (doc/caches.md: the L1 and the READ order).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
[ -x "$E2E_PROGS/e2e_nonblock" ] || { echo "skip: e2e_nonblock is not built"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is needed to read the counters"; exit 77; }
[ "$E2E_NP" = 4 ] || { echo "skip: the expected orders are for 4 ranks"; exit 77; }

pids=
ipvfs_test_cleanup() {
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -CONT $pids 2>/dev/null
}

for run in first hash random first:2; do
    sched=${run%:*} places=1
    [ "$run" = "$sched" ] || places=${run#*:}
    echo "--- schedule $sched, --read-places $places"
    IPVFS_CLUSTER_DIR=
    ipvfs_start_cluster 2 1 --cache-l1 0 --read-places "$places"
    pids=$(ipvfs_serving_pids) || ipvfs_fail "no serving pids"
    stats=$IPVFS_CLUSTER_DIR/stats
    e2e_run 90 e2e_nonblock order "ipvfs:/order/$sched" "$pids" "$stats" "$sched" ||
        ipvfs_fail "e2e_nonblock order failed ($sched)"
    python3 - "$stats" "$sched" "$places" <<'PY' || ipvfs_fail "READ order ($sched, --read-places $places)"
import json, sys
prefix, sched, places = sys.argv[1], sys.argv[2], int(sys.argv[3])
nwait = 4 - places  # of the 4 READs at each node, the first `places` start at once
snaps = [json.load(open("%s.%d.json" % (prefix, i))) for i in range(2)]
ionodes = [r["rank"] for r in snaps[0]["ranks"] if r["role"] in ("metadata", "io")]

def clients(snap, rank):
    r = [x for x in snap["ranks"] if x["rank"] == rank][0]
    return {c["client_id"]: c for c in r.get("clients", [])}

ok = True
for s, rank in enumerate(sorted(ionodes)):
    a, b = clients(snaps[0], rank), clients(snaps[1], rank)
    waited = [(c["last_wait_seq"], cid) for cid, c in b.items()
              if c["reads_waited"] > a.get(cid, {"reads_waited": 0})["reads_waited"]]
    order = [cid for _, cid in sorted(waited)]
    waiting = list(range(nwait))  # arrival is highest rank first
    expect = None  # random: any order
    if sched == "first":
        expect = waiting
    elif sched == "hash":
        expect = [c for c in [(s + j) % 4 for j in range(4)] if c in waiting]
    print("I/O node %d (rank %d): waiting READs served in client order %s, expected %s"
          % (s, rank, order, expect if expect is not None else "any %d of them" % nwait))
    if len(order) != nwait or (expect is not None and order != expect):
        ok = False
sys.exit(0 if ok else 1)
PY
    pids=
    ipvfs_stop_cluster
    rm -rf "$IPVFS_CLUSTER_DIR"
done
echo "PASS t_e2e_readorder"
