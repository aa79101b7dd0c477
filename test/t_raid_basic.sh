#!/bin/bash
# timeout: 120
# RAID-5 through the server: the default level follows NT (RAID-5 for
# NT >= 3, RAID-0 below), --raid 1/5 with too few targets fails at start on
# every rank, a fresh volume opens without a resync, `ipvfs-ctl status
# --json` shows the volume (level, members up), data written through ROMIO
# reads back, `ipvfs-ctl scrub` reports 0 mismatches, `ipvfs-ctl rebuild`
# rebuilds a member while status shows the progress, and after a clean
# restart the volume opens from its superblock with everything intact.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
export E2E_NP=2

. "$IPVFS_SRCDIR/test/raid_lib.sh"

# wait_all_up SECONDS: until every member of every volume is up again.
wait_all_up() {
    wait_status "$1" 'assert all(m["state"] == "up" for r in st["ranks"] if "volume" in r
                                for m in r["volume"]["members"])'
}

# -- too few targets for the level: a clear message, every rank exits non-zero
bad=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-raidbad.XXXXXX")
ipvfs_test_cleanup() { rm -rf "$bad"; }
out=$(timeout 60 mpiexec -n 3 "$IPVFS_SERVER_BIN" --data "$bad" --targets-per-io 2 --raid 5 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || ipvfs_fail "--raid 5 over 2 targets: status $rc"
grep -q -- "--raid 5 needs --targets-per-io 3" <<<"$out" || ipvfs_fail "--raid 5 over 2: $out"
out=$(timeout 60 mpiexec -n 2 "$IPVFS_SERVER_BIN" --data "$bad" --targets-per-io 1 --raid 1 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || ipvfs_fail "--raid 1 over 1 target: status $rc"
grep -q -- "--raid 1 needs --targets-per-io 2" <<<"$out" || ipvfs_fail "--raid 1 over 1: $out"
"$IPVFS_SERVER_BIN" --help 2>/dev/null | grep -q "default 5 when" ||
    mpiexec -n 1 "$IPVFS_SERVER_BIN" --help | grep -q "default 5 when" ||
    ipvfs_fail "--help does not document the RAID default"
rm -rf "$bad"

# -- NT = 2: RAID-0 by default, and scrub says why it cannot check anything
ipvfs_start_cluster 1 2 --target-size 32M --no-bind
status_check 'assert st["raid"] == 0 and vol["level"] == 0, st' || ipvfs_fail "1x2 is not RAID-0"
ipvfs-ctl scrub 2>"$IPVFS_CLUSTER_DIR/err" && ipvfs_fail "scrub of RAID-0 succeeded"
grep -q "RAID-0" "$IPVFS_CLUSTER_DIR/err" || ipvfs_fail "scrub of RAID-0: $(cat "$IPVFS_CLUSTER_DIR/err")"
ipvfs_stop_cluster
rm -rf "$IPVFS_CLUSTER_DIR"
unset IPVFS_CLUSTER_DIR

# -- NT = 4: RAID-5 by default; new sparse targets need no resync
ipvfs_start_cluster 1 4 --target-size 64M --no-bind
ipvfs_logs | grep -q "assumed clean, no resync" || ipvfs_fail "the fresh volume was not assumed clean"
ipvfs_logs | grep -q "resyncing all of it" && ipvfs_fail "the fresh volume was resynced"
status_check '
assert st["raid"] == 5 and r0["state"] == "serving", r0
assert vol["level"] == 5 and vol["missing"] == 0, vol
assert [m["index"] for m in vol["members"]] == [0, 1, 2, 3], vol
assert all(m["state"] == "up" and m["url"].startswith("iscsi://") for m in vol["members"]), vol
assert vol["rebuild"] == {"active": False, "done_bytes": 0, "total_bytes": 0}, vol
assert all("volume" not in r for r in st["ranks"][1:]), st' || ipvfs_fail "status --json of 1x4"
ipvfs-ctl status | grep -q "I/O node 0 volume: RAID-5, 4 members" || ipvfs_fail "plain status lacks the volume"

e2e_run 60 e2e_persist write ipvfs:/raid/a 4 || ipvfs_fail "writing /raid/a"
e2e_run 60 e2e_persist verify ipvfs:/raid/a 4 || ipvfs_fail "verifying /raid/a"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub failed: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"

# -- rebuild of member 2 while the data stays readable
ipvfs-ctl rebuild 0 7 2>/dev/null && ipvfs_fail "rebuild of member 7 of 4 succeeded"
ipvfs-ctl rebuild 0 2 || ipvfs_fail "rebuild 0 2"
ipvfs_wait_log "rebuild of member 2 requested" || ipvfs_fail "no rebuild request in the log"
e2e_run 60 e2e_persist verify ipvfs:/raid/a 4 || ipvfs_fail "verifying during the rebuild"
wait_all_up 30 || ipvfs_fail "member 2 was not rebuilt within 30 s"
ipvfs_wait_log "member 2 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
status_check 'assert r0["state"] == "serving" and vol["missing"] == 0, r0' ||
    ipvfs_fail "state after the rebuild"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after the rebuild: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"

# -- clean restart: the volume opens from its superblock, data intact
ipvfs_restart_cluster
[ "$(ipvfs_logs | grep -c "assumed clean")" = 1 ] || ipvfs_fail "a restarted volume was assumed clean"
status_check 'assert vol["level"] == 5 and vol["missing"] == 0, vol' || ipvfs_fail "status after restart"
e2e_run 60 e2e_persist verify ipvfs:/raid/a 4 || ipvfs_fail "verifying after the restart"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after the restart: $out"
ipvfs_stop_cluster
echo "t_raid_basic: ok"
