#!/bin/bash
# timeout: 240
# RAID-5 rebuild and scrub through the server (1 I/O node x 4 targets):
# - `ipvfs-ctl rebuild 0 2` runs in the background and `ipvfs-ctl status
#   --json` shows it: member 2 rebuilding with 0 < done_bytes < total_bytes;
# - while it runs, `ipvfs-ctl rebuild 0 1` is refused (EBUSY, "still
#   rebuilding"): member 2 is not yet redundant, taking member 1 out too
#   would leave stripes that neither rebuild could recompute;
# - scrub finds real damage: with the cluster stopped, one chunk of member
#   1's backing file is overwritten with random bytes; after the restart
#   scrub reports at least one mismatch and exits non-zero; rebuilding
#   member 1 repairs it and scrub reports 0; the file data stays intact;
# - after a rebuild the L1 still absorbs first writes into new blocks (the
#   returning member's room is asked again).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
export E2E_NP=2

. "$IPVFS_SRCDIR/test/raid_lib.sh"

# Large enough members that a rebuild lasts a few seconds here.
ipvfs_start_cluster 1 4 --target-size 256M --no-bind
e2e_run 60 e2e_persist write ipvfs:/rb/a 4 || ipvfs_fail "writing /rb/a"

# -- rebuild progress is visible, and a second rebuild is refused meanwhile
ipvfs-ctl rebuild 0 2 || ipvfs_fail "rebuild 0 2"
seen=
for ((i = 0; i < 300; i++)); do
    if status_check '
m = vol["members"][2]
assert m["state"] == "rebuilding", m
assert 0 < m["done_bytes"] < m["total_bytes"], m
assert vol["rebuild"]["active"] and 0 < vol["rebuild"]["done_bytes"] < vol["rebuild"]["total_bytes"], vol
' 2>/dev/null; then
        seen=1
        break
    fi
    sleep 0.05
done
[ -n "$seen" ] || ipvfs_fail "no rebuild progress of member 2 seen in status --json: $(cat "$IPVFS_CLUSTER_DIR/status.json")"
ipvfs-ctl status | grep -q "rebuilding [0-9.]*%" || ipvfs_fail "plain status lacks the rebuild progress"
if ipvfs-ctl rebuild 0 1 2>"$IPVFS_CLUSTER_DIR/err"; then
    ipvfs_fail "a rebuild of member 1 was accepted while member 2 rebuilds"
fi
grep -q "cannot rebuild member 1: another member is missing or still rebuilding" \
    "$IPVFS_CLUSTER_DIR/err" || ipvfs_fail "second rebuild refused unclearly: $(cat "$IPVFS_CLUSTER_DIR/err")"
status_check 'assert vol["members"][1]["state"] == "up", vol' ||
    ipvfs_fail "the refused rebuild touched member 1"
wait_vol_up 120 || ipvfs_fail "member 2 was not rebuilt within 120 s"
ipvfs_wait_log "member 2 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after the rebuild: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub said: $out"

# -- the rebuilt member's target is asked for its room again when it logs
#    in: the L1 goes on absorbing first writes into new blocks (it had to
#    write them through, a volume's whole life long, once a member was
#    replaced: 30 ms instead of 2 per 1 MiB on emulated disks)
absorbed() { ipvfs-ctl stats | sed -n 's/.* \([0-9][0-9]*\) writes absorbed.*/\1/p'; }
a0=$(absorbed)
e2e_run 60 e2e_persist write ipvfs:/rb/new 6 || ipvfs_fail "writing /rb/new after the rebuild"
a1=$(absorbed)
[ -n "$a0" ] && [ "${a1:-0}" -gt "$a0" ] ||
    ipvfs_fail "no first write absorbed by the L1 after the rebuild ($a0 -> ${a1:-none}): $(ipvfs-ctl stats)"
e2e_run 60 e2e_persist verify ipvfs:/rb/new 6 || ipvfs_fail "verifying /rb/new"

# -- scrub finds a corrupted chunk; rebuilding that member repairs it
ipvfs_stop_cluster
corrupt_chunk 2   # member 1 (rank 0 is the I/O node)
ipvfs_start_cluster 1 4 --target-size 256M --no-bind
out=$(ipvfs-ctl scrub) && ipvfs_fail "scrub of a corrupted member exited 0: $out"
python3 - "$out" <<'PYEOF' || ipvfs_fail "scrub did not find the corruption: $out"
import re, sys
m = re.fullmatch(r"I/O node 0: (\d+) mismatches, 0 stripes skipped", sys.argv[1])
assert m and int(m.group(1)) >= 1, sys.argv[1]
PYEOF
ipvfs-ctl rebuild 0 1 || ipvfs_fail "rebuild 0 1"
wait_vol_up 120 || ipvfs_fail "member 1 was not rebuilt within 120 s"
out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub after repairing: $out"
[ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub after repair: $out"
e2e_run 60 e2e_persist verify ipvfs:/rb/a 4 || ipvfs_fail "verifying /rb/a after the repair"
ipvfs_stop_cluster
echo "t_raid_rebuild: ok"
