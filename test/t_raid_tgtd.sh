#!/bin/bash
# timeout: 300
# A RAID-5 server job (1 I/O node x 4 members) whose member 3 is an
# external tgtd LUN (--member 0:3=URL; target rank 4 runs as a spare):
#  1. tgtd is killed with kill -9 during a write stream through ipvfs:
#     (real mpiexec): the writes go on degraded, none fails, every synced
#     file reads back byte-exact, status shows member 3 down.
#  2. One more file is written and the cluster is shut down cleanly at
#     once (within the write-intent bits' linger), still degraded: the next
#     start, tgtd still dead, must open the volume without
#     --start-dirty-degraded (the clean close cleared the bits) and every
#     file is intact.
#  3. tgtd comes back on the same portal and backing file: reconnect,
#     rebuild (status shows it up), scrub 0 mismatches, files intact.
#  4. `ipvfs-ctl rebuild 0 3 URL`: a malformed URL and a LUN smaller than a
#     member are refused with a clear error (member 3 stays up); a LUN of
#     the right size is taken, rebuilt, scrubbed clean, files intact.
#  5. Medium errors on member 3: with the cluster stopped, that LUN loses
#     everything past its first 64K (zeros) and tgtd serves it again
#     through test/faultfs, which fails each read of those sectors with EIO
#     until they are written, like a disk's bad sectors (tgtd answers CHECK
#     CONDITION, MEDIUM ERROR; the target still answers).  Every file still
#     reads back byte-exact, served from the other members, and the I/O
#     node logs each stripe read it served around member 3 and writes those
#     rows back to member 3 (md's read repair); reading the files again
#     then meets no read error.  Skipped (not the rest) without /dev/fuse.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
. "$IPVFS_SRCDIR/benchmarks/iraid-targets.sh"
e2e_require
command -v tgtd >/dev/null && command -v tgtadm >/dev/null || { echo "skip: tgtd not installed"; exit 77; }
export E2E_NP=2
tdir=$(mktemp -d /tmp/ipvfs-tgtd.XXXXXX) || ipvfs_fail "mktemp"
writer_pid=
faultfs_mnt=
ipvfs_test_cleanup() {
    [ -n "$writer_pid" ] && kill -9 -- "-$writer_pid" 2>/dev/null
    writer_pid=
    iraid_targets_stop
    # after tgtd, which holds the file open
    [ -n "$faultfs_mnt" ] && fusermount3 -u "$faultfs_mnt"
    faultfs_mnt=
    rm -rf "$tdir"
}

scrub_clean() {
    local out
    out=$(ipvfs-ctl scrub) || ipvfs_fail "scrub ($1): $out"
    [ "$out" = "I/O node 0: 0 mismatches, 0 stripes skipped" ] || ipvfs_fail "scrub ($1) said: $out"
}

iraid_targets_start "$tdir" 1 64 || ipvfs_fail "cannot start tgtd"
ext=${IRAID_URLS[0]}
ipvfs_start_cluster 1 4 --target-size 64M --no-bind --member "0:3=$ext"
status_check "assert vol['members'][3]['url'] == '$ext' and vol['missing'] == 0, vol" ||
    ipvfs_fail "member 3 is not the tgtd LUN"

# --- 1. kill -9 tgtd during a write stream
writer_start /x
iraid_target_kill 0
echo "killed tgtd after $(synced_count) synced files"
writer_finish
status_check '
assert r0["state"] == "degraded", r0
assert vol["missing"] == 1 and vol["members"][3]["state"] in ("down", "reconnecting"), vol' ||
    ipvfs_fail "status does not show member 3 down"
verify_synced /x degraded
echo "$(synced_count) files written and read back degraded"

# --- 2. clean shutdown right after a degraded write; restart still degraded
n=$(($(synced_count) + 100))
e2e_run 60 e2e_persist write "ipvfs:/x/$n" "$n" >/dev/null || ipvfs_fail "writing /x/$n"
echo "$n" >>"$IPVFS_CLUSTER_DIR/synced"
ipvfs_restart_cluster
ipvfs_logs | grep -q "refusing to start" && ipvfs_fail "the restart complained of a dirty volume"
status_check '
assert r0["state"] == "degraded" and vol["dirty_regions"] == 0, vol' ||
    ipvfs_fail "restart: not degraded, or dirty regions"
verify_synced /x "after a clean degraded restart"
echo "clean shutdown while degraded: restarted without --start-dirty-degraded, files intact"

# --- 3. tgtd back on the same portal and backing file
iraid_target_restart 0 || ipvfs_fail "cannot restart tgtd"
wait_status 120 'assert r0["state"] == "serving" and vol["missing"] == 0, vol' ||
    ipvfs_fail "member 3 was not rebuilt within 120 s"
ipvfs_wait_log "member 3 .*rebuilding -> up" || ipvfs_fail "no rebuild completion in the log"
scrub_clean "after the rebuild onto tgtd"
verify_synced /x "rebuilt onto tgtd"
echo "rebuilt onto the restarted tgtd; scrub clean; files intact"

# --- 4. replacement LUNs
out=$(ipvfs-ctl rebuild 0 3 "iscsi://127.0.0.1/nolun" 2>&1) && ipvfs_fail "a malformed URL was taken"
grep -q "is not iscsi://" <<<"$out" || ipvfs_fail "malformed URL: unclear error: $out"
iraid_tgtd_one "$tdir" 1 8 || ipvfs_fail "cannot start the small tgtd"
out=$(ipvfs-ctl rebuild 0 3 "${IRAID_URLS[1]}" 2>&1) && ipvfs_fail "an 8 MiB LUN was taken"
grep -q "a member needs [0-9]* bytes" <<<"$out" || ipvfs_fail "small LUN: unclear error: $out"
echo "refused: $out"
status_check "assert vol['missing'] == 0 and vol['members'][3]['url'] == '$ext', vol" ||
    ipvfs_fail "a refused replacement changed the volume"
iraid_tgtd_one "$tdir" 2 64 || ipvfs_fail "cannot start the replacement tgtd"
repl=${IRAID_URLS[2]}
ipvfs-ctl rebuild 0 3 "$repl" || ipvfs_fail "rebuild onto $repl"
wait_status 120 "assert vol['missing'] == 0 and vol['members'][3]['url'] == '$repl', vol" ||
    ipvfs_fail "the replacement was not rebuilt within 120 s"
scrub_clean "after the rebuild onto the replacement"
verify_synced /x "rebuilt onto the replacement"
echo "rebuilt onto a replacement LUN; scrub clean; files intact"

# --- 5. read errors of a live member (medium errors through test/faultfs)
# faultfs_serve: tgtd 2 again on its backing file, all of it past the first
# 64K lost (zeros) and failing reads until written; checks the fixture.
faultfs_serve() {
    local img=${IRAID_FILES[2]} raw=$tdir/member2.raw size
    size=$(stat -c %s "$img") || ipvfs_fail "stat $img"
    iraid_target_kill 2
    mv "$img" "$raw" && : >"$img" || ipvfs_fail "cannot move $img aside"
    truncate -s 64K "$raw" && truncate -s "$size" "$raw" || ipvfs_fail "truncate $raw"
    "$IPVFS_BUILDDIR/test/faultfs" "$raw" "$img" --bad "64K:$((size - 65536))" ||
        ipvfs_fail "faultfs did not mount"
    faultfs_mnt=$img
    [ "$(stat -c %s "$img")" = "$size" ] || ipvfs_fail "faultfs: wrong size"
    dd if="$img" bs=64K count=1 2>/dev/null | cmp -s - <(head -c 64K "$raw") ||
        ipvfs_fail "faultfs: the first 64K do not read back"
    dd if="$img" of=/dev/null bs=512 skip=128 count=1 2>/dev/null &&
        ipvfs_fail "faultfs: a read of the first bad sector succeeded"
    dd if="$img" of=/dev/null bs=512 skip=$((size / 512 - 1)) count=1 2>/dev/null &&
        ipvfs_fail "faultfs: a read of the last bad sector succeeded"
    iraid_target_restart 2 || ipvfs_fail "cannot restart tgtd on faultfs"
}

medium_errors() {
    local repairs rewrites
    ipvfs_stop_cluster
    faultfs_serve
    ipvfs_start_cluster 1 4 --target-size 64M --no-bind --member "0:3=$repl"
    verify_synced /x "member 3 failing reads"
    ipvfs_wait_log 'member 3 \(.*\) failed a read' ||
        ipvfs_fail "no read was served around member 3's read errors"
    # tgtd's pread failed with EIO; it answers CHECK CONDITION, sense key
    # MEDIUM ERROR, ASC/ASCQ 11h/00h (unrecovered read error)
    grep -q "io error .*Input/output error" "$tdir/tgtd2.log" ||
        ipvfs_fail "tgtd met no read error of faultfs"
    ipvfs_logs | grep -q "$repl read lba [0-9]*: check condition, sense MEDIUM ERROR ascq 0x1100" ||
        ipvfs_fail "member 3's failed reads were not a CHECK CONDITION, unrecovered read error"
    repairs=$(ipvfs_logs | grep -c "member 3 (.*) failed a read")
    status_check 'assert vol["missing"] == 0, vol' || ipvfs_fail "member 3 did not stay up"
    echo "$repairs stripe reads served around member 3's medium errors; files intact"
    # each of those reads wrote its rows back to member 3, which clears
    # faultfs' bad sectors: reading every file again meets no read error
    # (after a restart, so that the reads reach member 3, not a cache)
    ipvfs_wait_log 'rows member 3 \(.*\) failed to read were written back to it' ||
        ipvfs_fail "the rows member 3 failed to read were not written back"
    rewrites=$(ipvfs_logs | grep -c "rows member 3 (.*) failed to read were written back")
    [ "$rewrites" = "$repairs" ] || ipvfs_fail "$repairs reads repaired, $rewrites rewritten"
    ipvfs_restart_cluster
    verify_synced /x "after the rewrites"
    [ "$(ipvfs_logs | grep -c "member 3 (.*) failed a read")" = "$repairs" ] ||
        ipvfs_fail "member 3 failed reads again after its rows were written back"
    status_check 'assert vol["missing"] == 0, vol' || ipvfs_fail "member 3 did not stay up"
    echo "$rewrites repaired reads written back to member 3; read again without an error"
}

if [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
    medium_errors
else
    echo "step 5 skipped: no /dev/fuse or no fusermount3, so no faultfs for medium errors"
fi
ipvfs_stop_cluster
echo "t_raid_tgtd: ok"
