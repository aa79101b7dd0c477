#!/bin/bash
# timeout: 240
# A target rank of a RAID-5 server job (1 I/O node x 4 targets) is killed
# with kill -9 during a write stream through ipvfs: (the job runs under
# test/rank-wrapper.sh with -disable-auto-cleanup, so the other ranks
# survive): the I/O node marks the member down, the writes go on without a failure,
# every synced file reads back byte-exact; the target comes back as a
# standalone ipvfs-target on the same portal, IQN and backing file, the I/O
# node reconnects and rebuilds it, status shows it up, scrub reports 0
# mismatches and every file is still byte-exact.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
e2e_require
export E2E_NP=2
export IPVFS_MPIEXEC_FLAGS=-disable-auto-cleanup
export IPVFS_SERVER_WRAPPER=$IPVFS_SRCDIR/test/rank-wrapper.sh
writer_pid= target_pid=
ipvfs_test_cleanup() {
    [ -n "$writer_pid" ] && kill -9 -- "-$writer_pid" 2>/dev/null
    [ -n "$target_pid" ] && kill -9 "$target_pid" 2>/dev/null
    writer_pid= target_pid=
}

ipvfs_start_cluster 1 4 --target-size 64M --no-bind
log=$IPVFS_CLUSTER_DIR/server.log
ipvfs-ctl status --json >"$IPVFS_CLUSTER_DIR/before.json" || ipvfs_fail "status"
# Target 1 of the I/O node is rank 2: its pid, portal and IQN (from member 1's URL).
read -r pid portal iqn < <(python3 - "$IPVFS_CLUSTER_DIR/before.json" <<'PYEOF'
import json, re, sys
st = json.load(open(sys.argv[1]))
t = [r for r in st["ranks"] if r.get("target_index") == 1][0]
url = st["ranks"][0]["volume"]["members"][1]["url"]
m = re.fullmatch(r"iscsi://([^/]+)/([^/]+)/0", url)
print(t["pid"], m.group(1), m.group(2))
PYEOF
) || ipvfs_fail "no target 1 in status"
img=$IPVFS_CLUSTER_DIR/rank-2/lun0.img
[ -f "$img" ] || ipvfs_fail "no backing file $img"

writer_start /k
kill -9 "$pid" || ipvfs_fail "kill -9 $pid"
echo "killed target rank 2 (pid $pid) after $(synced_count) synced files"
writer_finish
status_check '
assert r0["state"] == "degraded", r0
assert st["ranks"][2]["state"] == "unreachable", st["ranks"][2]
assert vol["missing"] == 1 and vol["members"][1]["state"] in ("down", "reconnecting"), vol' ||
    ipvfs_fail "status does not show member 1 down"
ipvfs_wait_log "a rank of the job is gone; serving on" || ipvfs_fail "the survivors were not told"
verify_synced /k degraded
echo "$(synced_count) files written and read back degraded"

# The target comes back outside the job, on the same portal and backing file.
ipvfs-target --portal "$portal" --iqn "$iqn" --lun "$img" >"$IPVFS_CLUSTER_DIR/target.log" 2>&1 &
target_pid=$!
wait_status 120 'assert r0["state"] == "serving" and vol["missing"] == 0, vol' ||
    ipvfs_fail "member 1 was not rebuilt within 120 s: $(tail -n 5 "$IPVFS_CLUSTER_DIR/target.log")"
ipvfs_wait_log "member 1 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after the rebuild: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"
verify_synced /k rebuilt
echo "rebuilt onto the returning target; scrub clean; files intact"
# Rank 2 is gone for good: shutdown reaches the others (and says so).
ipvfs-ctl shutdown >"$IPVFS_CLUSTER_DIR/shutdown.out" 2>&1
echo "shutdown: status $?: $(tr '\n' ' ' <"$IPVFS_CLUSTER_DIR/shutdown.out")"
ipvfs_wait_cluster 60
rc=$?
[ "$rc" != 124 ] || ipvfs_fail "the job did not end within 60 s of the shutdown"
echo "job ended with status $rc"
kill -TERM "$target_pid"
wait "$target_pid" 2>/dev/null
target_pid=
echo "t_raid_kill9: ok"
