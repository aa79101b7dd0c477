#!/bin/bash
# A target host crashes (its link down and every process on it killed at
# once, test/hosts_lib.sh) under a stream of MPI-IO writes from another
# host, and the volume is made whole again on a spare LUN of a third host:
#
#   node1: rank 0 (metadata + I/O node 0, RAID-5 over 3 targets)
#   node2, node3, node4: one target rank each      node5: the clients
#
# The server job runs as doc/redundancy.md says for host failures (mpiexec
# -disable-auto-cleanup).  node3 dies mid-stream: nothing tells the I/O
# node but silence, so it must find the member dead by its own liveness
# check (NOP-Out after 1 s, down at 5 s) and go on degraded; no write of
# the stream fails.  Then a standalone ipvfs-target serving a spare LUN
# starts on node5, `ipvfs-ctl rebuild 0 1 URL` rebuilds member 1 onto it,
# the volume has no member missing, scrub finds parity right, and every
# file synced before, during and after reads back byte-exact.
# timeout: 240
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/multihost_lib.sh"
e2e_require
hosts_require
export E2E_NP=2 WRITER_PACE=0.5
SPARE_IQN=iqn.2026-11.org.ipvfs.test:spare
writer_pid=
ipvfs_test_cleanup() {
    [ -n "$writer_pid" ] && kill -9 -- "-$writer_pid" 2>/dev/null
    writer_pid=
}

hosts_up 5
MH_SERVER_FLAGS=-disable-auto-cleanup mh_servers_on node1 node1:1,node2:1,node3:1,node4:1
mh_clients_on node5 node5:2
ipvfs_start_cluster 1 3 --target-size 256M --no-bind
status_check 'assert vol["level"] == 5 and vol["missing"] == 0, vol' || ipvfs_fail "not RAID-5"
# --read-places auto: every target is on another host than its I/O node,
# so each gets two READ places
ipvfs_logs | grep -q 'I/O node 0: RAID-5 .*, 6 READs in the store at once' ||
    ipvfs_fail "the I/O node did not take 2 READ places for each of its 3 remote targets"

writer_start /tc
hosts_crash node3
crashed=$(date +%s.%N)
echo "node3 (target 1, rank 2) crashed at $(date -d "@$crashed" +%T.%N)"
wait_status 30 '
assert r0["state"] == "degraded", r0
assert vol["members"][1]["state"] == "down", vol["members"][1]' ||
    ipvfs_fail "the I/O node did not go degraded after the target host crashed"
# Its own liveness check, not a command's 30 s limit, found the member
# dead: the I/O node logged it within the 5 s of silence it allows (and a
# second for the loop's tick).
line=$(ipvfs_logs | grep -m1 -E 'iraid: member 1 .* failed: silent for')
[ -n "$line" ] || ipvfs_fail "no 'member 1 failed: silent for' in the I/O node's log"
echo "$line"
python3 - "$crashed" "$line" <<'PYEOF' || ipvfs_fail "member 1 was marked down too late"
import datetime, sys
crashed = float(sys.argv[1])
stamp = sys.argv[2].split()[0].rstrip("Z")
at = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.timezone.utc).timestamp()
print("marked down %.1f s after the crash" % (at - crashed))
sys.exit(0 if at - crashed < 7.0 else 1)
PYEOF
writer_finish
echo "the write stream went on: $(synced_count) files synced, none failed"

# The spare: a LUN of a standalone target on node5, as large as a member.
mh_on node5 ipvfs-target --portal "$(hosts_addr node5):3260" --iqn "$SPARE_IQN" --lun mem:256M \
    >"$IPVFS_CLUSTER_DIR/spare.log" 2>&1 &
for ((i = 0; i < 100; i++)); do
    grep -qs listening "$IPVFS_CLUSTER_DIR/spare.log" && break
    sleep 0.1
done
grep -qs listening "$IPVFS_CLUSTER_DIR/spare.log" || ipvfs_fail "the spare target did not start"
ipvfs_ctl rebuild 0 1 "iscsi://$(hosts_addr node5):3260/$SPARE_IQN/0" ||
    ipvfs_fail "rebuild onto the spare on node5 was refused"
wait_status 120 '
assert vol["missing"] == 0, vol
assert "'"$(hosts_addr node5)"'" in vol["members"][1]["url"], vol["members"][1]
assert r0["state"] == "serving", r0' || ipvfs_fail "the rebuild onto node5 did not complete"
echo "member 1 rebuilt onto node5's spare LUN"
ipvfs_ctl scrub || ipvfs_fail "scrub after the rebuild found parity mismatches"
verify_synced /tc "after the rebuild"
echo "scrub clean; all $(synced_count) synced files byte-exact"

# node3 is gone for good: the stop names it, the others stop.
out=$(timeout 150 "$HOSTS_NETNS_SSH" node1 "$IPVFS_CTL_BIN" shutdown 2>&1)
echo "shutdown: $out"
echo "$out" | grep -q 'rank 2\|2 (' || ipvfs_fail "the shutdown does not name the lost rank 2: $out"
ipvfs_wait_cluster 90
echo "PASS"
