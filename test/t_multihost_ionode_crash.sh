#!/bin/bash
# An I/O node host crashes (link down, every process on it killed at once):
#
#   node1: rank 0 (metadata + I/O node 0) and its target
#   node2: I/O node 1 and its target        node3: the clients
#
# Files striped over both I/O nodes are written and synced first.  After
# node2 dies, a client that reads or writes such a file gets an error
# that names the lost rank and its address, within the documented limits
# (a connect: 3 s; a server that sends nothing: 8 s), never a hang; the
# metadata rank still answers.  Then the job is restarted on the same
# hosts with the same --data (node2 back up, as after a reboot): every
# synced byte is back, and new writes work.
# timeout: 240
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/multihost_lib.sh"
e2e_require
hosts_require
export E2E_NP=2

hosts_up 3
MH_SERVER_FLAGS=-disable-auto-cleanup mh_servers_on node1 node1:2,node2:2
mh_clients_on node3 node3:2
ipvfs_start_cluster 2 1 --target-size 256M --no-bind
for n in 1 2 3; do
    e2e_run 60 e2e_persist write "ipvfs:/ic/$n" "$n" >/dev/null || ipvfs_fail "writing /ic/$n"
done
# map lines: rank R ROLE IO TARGET HOST PORT ISCSI_PORT PID; role 2: I/O node
read -r io1_rank io1_addr < <(awk '$1 == "rank" && $3 == 2 && $4 == 1 { print $2, $6 ":" $7 }' "$IPVFS_MAP")
[ -n "${io1_addr:-}" ] || ipvfs_fail "no I/O node 1 in the map"

# A client in the middle of a long write when node2 dies (its link
# shaped to 50 Mbit/s so that 128 MiB take ~20 s): it must fail once the
# server has been silent for 8 s, not hang.
hosts_shape node3 50mbit
setsid timeout -k 5 90 "$HOSTS_NETNS_SSH" node3 mpiexec $E2E_MPIEXEC_FLAGS -n 2 \
    env LD_PRELOAD="$E2E_ROMIO_LIB" "$IPVFS_BUILDDIR/benchmarks/ipvfs-ior" -f ipvfs:/ic/stream \
    -b 64m -t 1m -F -w >"$IPVFS_CLUSTER_DIR/stream.out" 2>&1 &
stream=$!
for ((i = 0; i < 300; i++)); do
    # the stream is under way once both I/O nodes have served some writes
    ipvfs_ctl stats --json 2>/dev/null | python3 -c '
import json, sys
st = json.load(sys.stdin)
sys.exit(0 if all(r.get("bytes_in", 0) > 4 << 20 for r in st["ranks"] if r["role"] != "target") else 1)
' 2>/dev/null && break
    sleep 0.1
done
hosts_crash node2
crashed=$(date +%s%N)
echo "node2 (I/O node 1, rank $io1_rank at $io1_addr) crashed during a write stream"
wait "$stream"
rc=$?
took=$((($(date +%s%N) - crashed) / 1000000))
[ "$rc" != 124 ] && [ "$rc" != 137 ] || ipvfs_fail "the write stream hung after node2 crashed"
[ "$rc" != 0 ] && ! grep -q 'errors=0' "$IPVFS_CLUSTER_DIR/stream.out" ||
    ipvfs_fail "the write stream did not fail: $(cat "$IPVFS_CLUSTER_DIR/stream.out")"
grep -q "server rank $io1_rank at $io1_addr" "$IPVFS_CLUSTER_DIR/stream.out" ||
    ipvfs_fail "the stream's error does not name rank $io1_rank: $(cat "$IPVFS_CLUSTER_DIR/stream.out")"
# each call gives up after 8 s without an answer; the program's error
# path (close, abort) makes up to two more such calls
((took < 40000)) || ipvfs_fail "the stream took $took ms to fail"
echo "the write stream failed $took ms after the crash: $(grep -m1 -o 'ipvfs: .*' "$IPVFS_CLUSTER_DIR/stream.out")"
hosts_unshape node3

# A read and a write of files striped over both I/O nodes: errors naming
# the rank, in bounded time.
for op in verify write; do
    start=$(date +%s%N)
    out=$(e2e_run 60 e2e_persist "$op" ipvfs:/ic/1 1 2>&1)
    rc=$?
    took=$((($(date +%s%N) - start) / 1000000))
    [ "$rc" != 124 ] && [ "$rc" != 137 ] || ipvfs_fail "$op hung for 60 s after node2 crashed"
    [ "$rc" != 0 ] || ipvfs_fail "$op of a file on the lost I/O node succeeded"
    echo "$out" | grep -q "server rank $io1_rank at $io1_addr" ||
        ipvfs_fail "the $op error does not name rank $io1_rank at $io1_addr: $out"
    ((took < 40000)) || ipvfs_fail "$op took $took ms to fail"
    echo "$op failed after $took ms: $(echo "$out" | grep -m1 -o "ipvfs: .*")"
done
# One call, one limit: a stat needs I/O node 1 for the size.
start=$(date +%s%N)
out=$(mh_on node3 env IPVFS_MAP="$IPVFS_MAP" ipvfs-ctl stat ipvfs:/ic/2 2>&1) &&
    ipvfs_fail "stat of a file on the lost I/O node worked: $out"
took=$((($(date +%s%N) - start) / 1000000))
echo "$out" | grep -q "server rank $io1_rank at $io1_addr" ||
    ipvfs_fail "the stat error does not name rank $io1_rank at $io1_addr: $out"
((took >= 7500 && took < 10000)) || ipvfs_fail "stat took $took ms to fail, not the 8 s limit"
echo "stat failed after $took ms (limit 8 s): $out"
status_check '
assert ranks[0]["state"] == "serving", ranks[0]
assert ranks[2]["state"] == "unreachable" and ranks[3]["state"] == "unreachable", ranks[2:]
' || ipvfs_fail "status after the crash: $(cat "$IPVFS_CLUSTER_DIR/status.json")"
echo "status: metadata rank serving, ranks 2 and 3 unreachable"

# node2 comes back; the job is started again on the same hosts and --data.
ipvfs_kill_cluster
hosts_link node2 up
ipvfs_start_cluster 2 1 --target-size 256M --no-bind
for n in 1 2 3; do
    e2e_run 60 e2e_persist verify "ipvfs:/ic/$n" "$n" >/dev/null ||
        ipvfs_fail "/ic/$n differs after the restart"
done
e2e_run 60 e2e_persist write ipvfs:/ic/4 4 >/dev/null || ipvfs_fail "writing after the restart"
e2e_run 60 e2e_persist verify ipvfs:/ic/4 4 >/dev/null || ipvfs_fail "/ic/4 differs"
echo "restarted on node1+node2 with the same --data: every synced file byte-exact"
ipvfs_stop_cluster
echo "PASS"
