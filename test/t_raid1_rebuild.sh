#!/bin/bash
# timeout: 240
# RAID-1 rebuild and scrub through the server (1 I/O node x 3 targets, three
# copies):
# - `ipvfs-ctl rebuild 0 2` copies a current member over member 2 while a
#   file reads back; the targets serve the rebuild in runs of stripes (at
#   most a quarter of the commands one per 64 KiB chunk would take: each
#   member reads, and the rebuilt one writes, up to 1 MiB a command), and
#   scrub then finds the three copies equal;
# - scrub counts disagreeing stripes one by one inside its runs: one
#   chunk of member 1 overwritten with the cluster stopped is exactly one
#   mismatch; rebuilding member 1 repairs it from another copy, scrub
#   reports 0 and the file is intact.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
export E2E_NP=2

. "$IPVFS_SRCDIR/test/raid_lib.sh"

# Commands the targets served so far.
served() {
    ipvfs_ctl stats --json | python3 -c '
import json, sys
print(sum(r.get("requests", 0) for r in json.load(sys.stdin)["ranks"] if r.get("role") == "target"))'
}

scrub_says() {
    local out
    out=$(ipvfs-ctl scrub)
    [ "$out" = "I/O node 0: $1 mismatches, 0 stripes skipped" ] ||
        ipvfs_fail "scrub $2 said: $out (want $1 mismatches)"
}

ipvfs_start_cluster 1 3 --raid 1 --target-size 256M --no-bind
e2e_run 60 e2e_persist write ipvfs:/r1/a 4 || ipvfs_fail "writing /r1/a"
status_check 'assert vol["level"] == 1 and len(vol["members"]) == 3, vol' ||
    ipvfs_fail "not a RAID-1 volume of 3 members"

# -- a rebuild of member 2, in runs
c0=$(served)
ipvfs-ctl rebuild 0 2 || ipvfs_fail "rebuild 0 2"
e2e_run 60 e2e_persist verify ipvfs:/r1/a 4 || ipvfs_fail "verifying /r1/a during the rebuild"
wait_vol_up 120 || ipvfs_fail "member 2 was not rebuilt within 120 s"
ipvfs_wait_log "member 2 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
c1=$(served)
# One command per chunk would be a read and a write per 64 KiB of the member.
chunks=$(((256 << 20) / (64 << 10)))
echo "rebuild of a 256 MiB member: $((c1 - c0)) target commands (one per chunk: $((2 * chunks)))"
[ $((c1 - c0)) -le $((2 * chunks / 4)) ] ||
    ipvfs_fail "the rebuild took $((c1 - c0)) commands, not runs of stripes"
scrub_says 0 "after the rebuild"
e2e_run 60 e2e_persist verify ipvfs:/r1/a 4 || ipvfs_fail "verifying /r1/a after the rebuild"

# -- one corrupted chunk is one mismatch; rebuilding its member repairs it
ipvfs_stop_cluster
# member 1 (rank 0 is the I/O node); the data start at 64 KiB, so the
# 64 KiB at 200 MiB are exactly one chunk
corrupt_chunk 2
ipvfs_start_cluster 1 3 --raid 1 --target-size 256M --no-bind
scrub_says 1 "of the corrupted member"
ipvfs-ctl rebuild 0 1 || ipvfs_fail "rebuild 0 1"
wait_vol_up 120 || ipvfs_fail "member 1 was not rebuilt within 120 s"
scrub_says 0 "after repairing"
e2e_run 60 e2e_persist verify ipvfs:/r1/a 4 || ipvfs_fail "verifying /r1/a after the repair"
ipvfs_stop_cluster
echo "t_raid1_rebuild: ok"
