#!/bin/bash
# ipvfs-target serving a block device: a loop device over a sparse file.
# Checks the capacity against the device size (BLKGETSIZE64), reads data
# written to the device beforehand, writes through the target and finds
# the bytes on the device after SYNCHRONIZE CACHE, unmaps a range (when
# the device can zero ranges; else UNMAP must be refused), and runs
# iscsi-test-cu's READ(16), WRITE(16), READ CAPACITY(16), UNMAP and
# WRITE SAME(16) tests on it (this libiscsi has no SYNCHRONIZE CACHE suite;
# the write check above issues SYNCHRONIZE CACHE(16)).
# Needs root and loop devices; skips without them.
# timeout: 180
set -u
srcdir=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${IPVFS_BUILDDIR:-$srcdir/_build}
target=$(command -v ipvfs-target || echo "$builddir/backend/ipvfs-target")
blockio=$builddir/test/iscsi_blockio
for p in losetup blockdev iscsi-test-cu iscsi-readcapacity16; do
    command -v $p >/dev/null || { echo "$p not installed"; exit 77; }
done
[ -x "$target" ] && [ -x "$blockio" ] || { echo "build ipvfs-target and test/iscsi_blockio first"; exit 1; }
[ -e /dev/loop-control ] || { echo "no /dev/loop-control: loop devices unavailable here"; exit 77; }

work=$(mktemp -d /tmp/ipvfs-tblk.XXXXXX)
pid= dev=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    [ -n "$dev" ] && losetup -d "$dev"
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$work/err" 2>/dev/null; exit 1; }

truncate -s 64M "$work/backing" || fail "creating the backing file"
dev=$(losetup -f --show "$work/backing" 2>"$work/losetup.err") || {
    dev=; echo "cannot attach a loop device: $(cat "$work/losetup.err")"; exit 77; }
echo "loop device $dev"
size=$(blockdev --getsize64 "$dev") || fail "blockdev --getsize64 $dev"

# Data put on the device before the target opens it.
head -c 1048576 /dev/urandom >"$work/pre" || fail "random data"
dd if="$work/pre" of="$dev" bs=1M seek=2 conv=fsync status=none || fail "writing $dev"

iqn=iqn.2026-01.org.ipvfs:blockdev
"$target" --portal 127.0.0.1:0 --iqn "$iqn" --lun "$dev" >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 50); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out")
[ -n "$port" ] || fail "ipvfs-target did not start on $dev"
url=iscsi://127.0.0.1:$port/$iqn/0

# Capacity: the device size, not st_size (0 for a block device).
iscsi-readcapacity16 "$url" >"$work/cap" || fail "READ CAPACITY(16)"
blocks=$(sed -n 's/^RETURNED LOGICAL BLOCK ADDRESS:\([0-9]*\)$/\1/p' "$work/cap")
[ -n "$blocks" ] || { cat "$work/cap"; fail "no capacity in the READ CAPACITY(16) output"; }
[ $(((blocks + 1) * 512)) -eq "$size" ] ||
    fail "capacity $(((blocks + 1) * 512)) bytes, device holds $size"
echo "capacity: $((blocks + 1)) blocks = $size bytes: OK"

# Reads return what the device holds.
"$blockio" "$url" read 4096 2048 >"$work/pre.back" || fail "reading through the target"
cmp "$work/pre" "$work/pre.back" || fail "data read through the target differs from the device's"
echo "read of data written to the device: OK"

# Writes reach the device once SYNCHRONIZE CACHE returned (read with
# O_DIRECT: from the loop device, not from the target's page cache).
head -c 1048576 /dev/urandom >"$work/new" || fail "random data"
"$blockio" "$url" write 10240 2048 <"$work/new" || fail "writing through the target"
"$blockio" "$url" read 10240 2048 >"$work/new.back" || fail "reading back through the target"
cmp "$work/new" "$work/new.back" || fail "data read back differs from data written"
dd if="$dev" of="$work/new.dev" bs=1M skip=5 count=1 iflag=direct status=none || fail "reading $dev"
cmp "$work/new" "$work/new.dev" || fail "data written through the target is not on the device"
echo "write, read back and on the device: OK"

# UNMAP: offered only when the device zeroes ranges, and then reads zeros.
zeroes=$(cat "/sys/block/${dev#/dev/}/queue/write_zeroes_max_bytes" 2>/dev/null || echo 0)
if [ "${zeroes:-0}" -gt 0 ]; then
    "$blockio" "$url" unmap 10240 1024 || fail "UNMAP on a device that zeroes ranges"
    "$blockio" "$url" read 10240 2048 >"$work/unmapped" || fail "reading an unmapped range"
    head -c 524288 /dev/zero >"$work/zeros"
    tail -c 524288 "$work/new" >>"$work/zeros"
    cmp "$work/zeros" "$work/unmapped" || fail "unmapped blocks do not read as zeros"
    echo "UNMAP (device zeroes ranges): OK"
else
    "$blockio" "$url" unmap 10240 1024 2>/dev/null && fail "UNMAP accepted on a device that cannot zero ranges"
    echo "UNMAP refused (device cannot zero ranges): OK"
fi

(cd "$work" && timeout 150 iscsi-test-cu --dataloss \
    -t SCSI.Read16,SCSI.Write16,SCSI.ReadCapacity16,SCSI.Unmap,SCSI.WriteSame16 \
    "$url" >"$work/cu.out" 2>&1)
grep -A6 '^Run Summary' "$work/cu.out"
grep -q '^Run Summary' "$work/cu.out" || { tail -20 "$work/cu.out"; fail "iscsi-test-cu did not finish"; }
awk '$1 == "tests" && $5 != 0 { bad = 1 } END { exit bad }' "$work/cu.out" ||
    { grep -B3 FAILED "$work/cu.out" | tail -30; fail "iscsi-test-cu tests failed"; }

kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
echo "block device LUN: OK"
