#!/bin/bash
# The L2's fallback when the backing file system refuses O_DIRECT: a LUN
# file on a tmpfs (older kernels refuse O_DIRECT there) or, where tmpfs
# takes it (Linux 6.6 on), on a ramfs (which never does), both mounted by
# the test, makes ipvfs-target with --cache-l2 say so in its log, name
# the file, and serve buffered: written blocks read back exact, and the
# second read of them is an L2 hit (counters logged at shutdown).  Needs
# root for the mount; skips otherwise.
set -u
b=${IPVFS_BUILDDIR:?run through test/run-suite.sh}
work=$(mktemp -d /tmp/ipvfs-tl2nd.XXXXXX)
mnt=$work/mnt
pid=
mounted=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    [ -z "$mounted" ] || umount "$mnt" || echo "cleanup: cannot unmount $mnt" >&2
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$work/log" 2>/dev/null; exit 1; }
command -v iscsi-inq >/dev/null || { echo "skip: libiscsi-bin missing"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }
target=$(command -v ipvfs-target) || fail "ipvfs-target not on PATH"
bio=$b/test/iscsi_blockio
iqn=iqn.2026-01.org.ipvfs:l2nd

# refuses_direct DIR: whether opening a new file in DIR with O_DIRECT fails.
refuses_direct() {
    python3 -c '
import os, sys
try:
    os.close(os.open(sys.argv[1] + "/probe", os.O_RDWR | os.O_CREAT | os.O_DIRECT))
except OSError:
    sys.exit(0)
sys.exit(1)' "$1"
    local rc=$?
    rm -f "$1/probe"
    return $rc
}

mkdir "$mnt" || fail "mkdir"
fs=
for kind in tmpfs ramfs; do
    mount -t "$kind" -o size=32m "$kind" "$mnt" 2>/dev/null || {
        echo "skip: cannot mount a $kind (needs root)"
        exit 77
    }
    mounted=1
    if refuses_direct "$mnt"; then
        fs=$kind
        break
    fi
    umount "$mnt" || fail "cannot unmount the $kind"
    mounted=
done
[ -n "$fs" ] || { echo "skip: neither tmpfs nor ramfs refuses O_DIRECT here"; exit 77; }
echo "backing file system that refuses O_DIRECT: $fs"

"$target" --portal 127.0.0.1:0 --iqn $iqn --lun "$mnt/f.img:16M" --cache-l2 1M \
    --cache-l2-policy lru >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out")
[ -n "$port" ] || fail "no 'listening on' line"
url="iscsi://127.0.0.1:$port/$iqn/0"
grep -q "the file system of $mnt/f.img refuses O_DIRECT (.*): falling back to buffered" \
    "$work/log" || fail "the log does not say that O_DIRECT was refused"
grep -q 'opened with O_DIRECT' "$work/log" && fail "the log says O_DIRECT although it was refused"

head -c 131072 /dev/urandom >"$work/a"
"$bio" "$url" write 0 256 <"$work/a" || fail "write"
for i in 1 2; do
    "$bio" "$url" read 0 256 >"$work/got" || fail "read $i"
    cmp -s "$work/got" "$work/a" || fail "read $i: wrong data"
done
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
line=$(grep 'L2 cache .*hits' "$work/log")
# first read: 2 blocks missed and kept; second: 2 hits
echo "$line" | grep -q 'lru: 2 hits, 2 misses' || fail "L2 counters: $line"
echo "ok: $fs refused O_DIRECT, the L2 works buffered ($line)"
