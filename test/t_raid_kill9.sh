#!/bin/bash
# timeout: 240
# The serving process of a target rank of a RAID-5 server job (1 I/O node x
# 4 targets, the plain launch of doc/launching.md) is killed with kill -9 during a write
# stream through ipvfs:.  The rank's supervisor logs the exit and restarts
# it on the same portal and backing file; meanwhile the I/O node marks the
# member down and the writes go on without a failure.  The I/O node logs in
# again and resyncs the member from the write-intent bitmap (only the
# regions written since it went down: fewer stripes than the member holds,
# never a full rebuild), status shows it up with the rank's restart and
# last exit cause, scrub reports 0 mismatches, every synced file reads back
# byte-exact.  Then `ipvfs-ctl rebuild 0 1` (asked for: a full rebuild)
# rebuilds every stripe, and the cluster stops cleanly.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
e2e_require
export E2E_NP=2
writer_pid=
ipvfs_test_cleanup() {
    [ -n "$writer_pid" ] && kill -9 -- "-$writer_pid" 2>/dev/null
    writer_pid=
}

ipvfs_start_cluster 1 4 --target-size 64M --no-bind
ipvfs-ctl status --json >"$IPVFS_CLUSTER_DIR/before.json" || ipvfs_fail "status"
# Target 1 of the I/O node is rank 2: its serving process and supervisor.
read -r pid sup < <(python3 - "$IPVFS_CLUSTER_DIR/before.json" <<'PYEOF'
import json, sys
st = json.load(open(sys.argv[1]))
t = [r for r in st["ranks"] if r.get("target_index") == 1][0]
assert t["rank"] == 2 and t["restarts"] == 0 and t["last_exit"] == "", t
print(t["pid"], t["supervisor_pid"])
PYEOF
) || ipvfs_fail "no target 1 in status"
[ "$pid" != "$sup" ] || ipvfs_fail "the serving process is the supervisor"

writer_start /k
kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
echo "killed target rank 2 (pid $pid) after $(synced_count) synced files"
writer_finish
ipvfs_wait_log "target0.1\] error: supervisor: serving process $pid killed by SIGKILL" ||
    ipvfs_fail "the supervisor did not log the exit"
verify_synced /k degraded
echo "$(synced_count) files written and read back while the member was out"

# The supervisor restarts the target on the same portal and backing file;
# the I/O node logs in again and rebuilds the member.
wait_status 120 '
t = st["ranks"][2]
assert t["state"] == "serving" and t["restarts"] == 1, t
assert t["last_exit"] == "killed by SIGKILL", t
assert t["pid"] != '"$pid"' and t["supervisor_pid"] == '"$sup"', t
assert r0["state"] == "serving" and vol["missing"] == 0, vol' ||
    ipvfs_fail "the target did not come back and get rebuilt within 120 s"
ipvfs_wait_log "member 1 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
ipvfs_wait_log "member 1 .* is current again: resynced from the bitmap" ||
    ipvfs_fail "the returning member was not resynced from the bitmap"
line=$(ipvfs_logs | grep -o "resyncing member 1 .* from the write-intent bitmap: [0-9]* of [0-9]* stripes" | tail -1)
[[ $line =~ bitmap:\ ([0-9]+)\ of\ ([0-9]+)\ stripes ]] || ipvfs_fail "no bitmap resync in the log"
[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] ||
    ipvfs_fail "the bitmap resync covered ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} stripes"
ipvfs_logs | grep -q "rebuilding member 1 " && ipvfs_fail "a full rebuild ran: $(ipvfs_logs | grep 'rebuilding member 1 ')"
echo "resynced ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} stripes from the bitmap"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after the rebuild: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"
verify_synced /k rebuilt
echo "resynced the returning target; scrub clean; files intact"

# Asked for, a rebuild is a full one: the bitmap is only for a member that
# proves what it missed.
ipvfs-ctl rebuild 0 1 >/dev/null || ipvfs_fail "rebuild 0 1"
ipvfs_wait_log "rebuilding member 1 .* from stripe 0 of" || ipvfs_fail "no full rebuild"
ipvfs_wait_log "member 1 .* is current again: rebuilt in full" || ipvfs_fail "the full rebuild did not end"
verify_synced /k "after the full rebuild"
ipvfs_stop_cluster
echo "t_raid_kill9: ok"
