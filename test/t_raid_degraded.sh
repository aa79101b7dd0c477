#!/bin/bash
# timeout: 120
# A target rank of a RAID-5 server job (1 I/O node x 4 targets) stops
# answering (SIGSTOP: a hung node) during a write stream: after the iSCSI
# timeout the I/O node marks the member down, `ipvfs-ctl status` reports
# the rank DEGRADED with the member down, writes go on, every file reads
# back byte-exact (parity reconstruction); the target comes back (SIGCONT),
# is rebuilt in the background, status shows it up again, scrub reports 0
# mismatches and every file is still byte-exact.
#
# Why not kill -9 the target: Hydra (MPICH 4.0.2) SIGKILLs every other
# rank of the job as soon as it reaps a rank killed by a signal, even with
# -disable-auto-cleanup, so no survivor is left to be degraded.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
e2e_require
export E2E_NP=2
# The I/O node waits 5 s for a hung target before it goes degraded.  The
# clients' limit here is 3 s of silence: the write across the hang succeeds
# only because the I/O node sends keepalives while it waits (PROGRESS in
# common/proto.h); a slow request must never look like a dead server.
export IPVFS_TIMEOUT_MS=3000

stopped=
ipvfs_test_cleanup() {
    [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
    stopped=
}

write_file() { e2e_run 60 e2e_persist write "ipvfs:/deg/$1" "$1" >/dev/null || ipvfs_fail "writing /deg/$1"; }
verify_files() {
    local n
    for n in "$@"; do
        e2e_run 60 e2e_persist verify "ipvfs:/deg/$n" "$n" >/dev/null ||
            ipvfs_fail "/deg/$n differs ($phase)"
    done
}

ipvfs_start_cluster 1 4 --target-size 64M --no-bind
write_file 1
write_file 2

# target 1 (rank 2) hangs while file 3 is being written
stopped=$(python3 -c 'import json,sys; print([r["pid"] for r in json.load(open(sys.argv[1]))["ranks"]
          if r.get("target_index") == 1][0])' <(ipvfs-ctl status --json)) || ipvfs_fail "no target pid"
write_file 3 &
writer=$!
sleep 0.2
kill -STOP "$stopped"
wait "$writer" || ipvfs_fail "the write across the target's hang failed"
# File 3 may have been written and synced before the SIGSTOP landed; file 4
# (2 MiB over every member, then a sync that flushes every member) cannot
# complete until the I/O node has given up on member 1 and marked it down.
write_file 4
phase="degraded"
status_check '
assert r0["state"] == "degraded", r0
assert st["ranks"][2]["state"] == "unreachable", st["ranks"][2]
assert vol["missing"] == 1 and vol["members"][1]["state"] in ("down", "reconnecting"), vol
assert all(m["state"] == "up" for i, m in enumerate(vol["members"]) if i != 1), vol' ||
    ipvfs_fail "status does not show the member down"
echo "member 1 down, rank 0 degraded"
write_file 5
verify_files 1 2 3 4 5
echo "degraded writes and reads ok"
out=$(ipvfs-ctl scrub) || ipvfs_fail "degraded scrub: $out"
grep -qE "^I/O node 0: 0 mismatches, [1-9][0-9]* stripes skipped$" <<<"$out" ||
    ipvfs_fail "degraded scrub said: $out"

# the target answers again: reconnect, rebuild, clean
echo "degraded scrub: $out"
kill -CONT "$stopped"
stopped=
phase="rebuilt"
wait_status 60 'assert r0["state"] == "serving" and vol["missing"] == 0, vol' ||
    ipvfs_fail "member 1 was not rebuilt within 60 s"
ipvfs_wait_log "member 1 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after the rebuild: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"
verify_files 1 2 3 4 5
ipvfs_stop_cluster
echo "t_raid_degraded: ok"
