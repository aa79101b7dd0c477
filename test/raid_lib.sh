# Helpers of the server-level RAID tests (test/t_raid_*.sh); source after
# test/lib.sh and test/mpi/e2e_lib.sh.
#
#   status_check PYTHON       assertions on `ipvfs-ctl status --json`, with
#                             st (all), ranks (its ranks), r0 (rank 0) and
#                             vol (rank 0's volume)
#   wait_status SECONDS PYTHON   the same, retried until it holds
#   wait_vol_up SECONDS       until rank 0's volume has every member up
#   corrupt_chunk RANK        with the cluster stopped: 64 KiB of random bytes
#                             200 MiB into target rank RANK's LUN file (one
#                             chunk of the data: far from what the tests
#                             write, where no write-intent bit makes the
#                             next start resync it away)
#   writer DIR &              writes ipvfs:DIR/N for N = 1, 2, ... until
#                             killed (WRITER_PACE=S: S seconds between
#                             files, to bound what a long test writes); each N whose write+sync succeeded is
#                             listed in $IPVFS_CLUSTER_DIR/synced, the
#                             others in .../failed
#   wait_synced N             until N files are synced (60 s at most)
#   verify_synced DIR WHEN    every synced file reads back byte-exact
#   writer_start DIR          writer DIR in its own process group, its pid
#                             in $writer_pid (the test's cleanup kills
#                             -$writer_pid); returns once 2 files are synced
#   writer_finish             after a failure caused meanwhile: 3 more files
#                             are synced, the writer is stopped, and no
#                             write failed

# A hung rank makes ipvfs-ctl wait out its limit and exit 1, with that rank
# "unreachable" in the JSON: the assertions judge.
status_check() {
    ipvfs_ctl status --json >"$IPVFS_CLUSTER_DIR/status.json"
    python3 - "$IPVFS_CLUSTER_DIR/status.json" "$1" <<'PYEOF'
import json, sys
st = json.load(open(sys.argv[1]))
ranks = st["ranks"]
r0 = ranks[0]
vol = r0.get("volume")
exec(sys.argv[2])
PYEOF
}

wait_status() {
    local limit=$1 cond=$2 i
    for ((i = 0; i < limit * 5; i++)); do
        status_check "$cond" 2>/dev/null && return 0
        sleep 0.2
    done
    status_check "$cond"
}

wait_vol_up() {
    wait_status "$1" 'assert vol["missing"] == 0 and all(m["state"] == "up" for m in vol["members"])'
}

corrupt_chunk() {
    local img=$IPVFS_CLUSTER_DIR/rank-$1/lun0.img
    [ -f "$img" ] || ipvfs_fail "no backing file $img"
    dd if=/dev/urandom of="$img" bs=64K seek=3200 count=1 conv=notrunc status=none ||
        ipvfs_fail "cannot corrupt $img"
}

writer() {
    local dir=$1 n
    for ((n = 1; ; n++)); do
        if e2e_run 60 e2e_persist write "ipvfs:$dir/$n" "$n" >"$IPVFS_CLUSTER_DIR/writer.out" 2>&1; then
            echo "$n" >>"$IPVFS_CLUSTER_DIR/synced"
        else
            echo "$n" >>"$IPVFS_CLUSTER_DIR/failed"
            sed "s/^/file $n: /" "$IPVFS_CLUSTER_DIR/writer.out" >>"$IPVFS_CLUSTER_DIR/failed.out"
        fi
        [ -z "${WRITER_PACE:-}" ] || sleep "$WRITER_PACE"
    done
}

synced_count() { [ -f "$IPVFS_CLUSTER_DIR/synced" ] && wc -l <"$IPVFS_CLUSTER_DIR/synced" || echo 0; }

wait_synced() {
    local want=$1 i
    for ((i = 0; i < 600; i++)); do
        [ "$(synced_count)" -ge "$want" ] && return 0
        sleep 0.1
    done
    return 1
}

verify_synced() {
    local dir=$1 when=$2 n
    while read -r n; do
        e2e_run 60 e2e_persist verify "ipvfs:$dir/$n" "$n" >/dev/null ||
            ipvfs_fail "$dir/$n differs ($when)"
    done <"$IPVFS_CLUSTER_DIR/synced"
}

# set -m: the writer leads its own process group, so that one kill also
# ends the e2e run it has going.
writer_start() {
    set -m
    writer "$1" &
    writer_pid=$!
    set +m
    wait_synced 2 || ipvfs_fail "the writer synced nothing within 60 s"
}

writer_finish() {
    local before
    before=$(synced_count)
    wait_synced $((before + 3)) || ipvfs_fail "the writes did not go on after the kill"
    kill -9 -- "-$writer_pid" 2>/dev/null
    wait "$writer_pid" 2>/dev/null
    writer_pid=
    [ ! -s "$IPVFS_CLUSTER_DIR/failed" ] || ipvfs_fail "writes failed: $(tr '\n' ' ' <"$IPVFS_CLUSTER_DIR/failed"); the first errors:
$(grep -m 5 -i 'error\|fail' "$IPVFS_CLUSTER_DIR/failed.out")"
}
