#!/bin/bash
# timeout: 180
# A dirty block that the L1 evicts before its write-behind unit is whole
# goes out with the dirty blocks next to it, not alone: on one I/O node
# over 3 targets (RAID-5) with an 8 MiB L1 and no read-ahead, datafile A
# (8 blocks), B (24 blocks) and C (16 MiB) are written in 64 KiB WRITEs
# and synced, so that A and B fill one write-behind unit (32 blocks) and
# C starts the next; then A and C are rewritten (no block map change, so
# no background commit) and synced.  The unit of A stays partial (B is
# not rewritten), so A's blocks reach the LRU end dirty, pushed out by C:
# they must go out as one run of whole stripes (at most a partial stripe
# at each end), where one by one each was a reconstruct-write
# (ipvfs-ctl stats --json: iraid counters; 8 with wb_around writing the
# block alone, 0 with it).  Then D (4 MiB) is written in 1 MiB WRITEs: a
# stream of whole stripes, which passes the L1 by (l1cache.h: nothing
# absorbed or taken in) and reads nothing first.  Everything reads back
# right and scrub finds parity right.
# 8 MiB, not 4: on a loaded host the write-behinds of C's units complete
# late, more than 3/4 of a 4 MiB L1 was dirty, and the high-watermark pass
# wrote C's half-filled unit as runs ending mid-stripe (8-18 partial-stripe
# writes in 1 of 5 runs beside `stress-ng --cpu 2`; 0 in 12 with 8 MiB,
# and still 8 when evicted blocks go out alone).
# Talks the protocol directly (test/ipvfs_proto.py).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

# client MAP MODE: layout (A, B, C, sync), rewrite (A, C, sync), stream
# (D, sync) or check.
client() {
    python3 - "$@" <<'PYEOF'
import os, random, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, mode = sys.argv[1], sys.argv[2]
secret, addr, s = P.io_node(mapfile)
def call(op, body):
    return P.call_ok(s, op, body)
def io(handle, off, n):
    return struct.pack("<QII", handle, 1, 0) + struct.pack("<QQ", off, n)
def write(handle, off, data):
    # 64 KiB WRITEs: a stream's (128 KiB or more) whole stripes would pass
    # the L1 by (l1cache.h), and nothing would be evicted dirty
    for o in range(0, len(data), 1 << 16):
        piece = data[o:o + (1 << 16)]
        call(P.OP["WRITE"], io(handle, off + o, len(piece)) + piece)
def content(handle, n, gen):
    return random.Random(handle * 10 + gen).randbytes(n)
assert P.hello(s, secret, 9)[0] == 0
size = {61: 8 << 16, 62: 24 << 16, 63: 16 << 20}
if mode == "layout":
    for h in (61, 62, 63):
        write(h, 0, content(h, size[h], 0))
elif mode == "rewrite":
    for h in (61, 63):
        write(h, 0, content(h, size[h], 1))
elif mode == "stream":
    d = content(64, 4 << 20, 0)
    for o in range(0, len(d), 1 << 20):
        call(P.OP["WRITE"], io(64, o, 1 << 20) + d[o:o + (1 << 20)])
else:
    size[64] = 4 << 20
    for h, gen in ((61, 1), (62, 0), (63, 1), (64, 0)):
        want = content(h, size[h], gen)
        for o in range(0, size[h], 1 << 20):
            n = min(1 << 20, size[h] - o)
            got = call(P.OP["READ"], io(h, o, n))[24:]  # after struct ipvfs_io_rep
            assert got == want[o:o + n], ("differs", h, o)
if mode != "check":
    call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
PYEOF
}

# ctr SECTION FIELD: a counter of the I/O node from ipvfs-ctl stats --json.
ctr() {
    ipvfs-ctl stats --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print([r for r in d["ranks"] if "l1" in r][0][sys.argv[1]][sys.argv[2]])' "$1" "$2"
}

# partial: stripes written after reading first, so far.
partial() { echo $(($(ctr iraid rmw_writes) + $(ctr iraid reconstruct_writes))); }

ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 8M --readahead 0
ipvfs_wait_log "L1 keeps first writes into new blocks" 10 ||
    ipvfs_fail "the L1 does not keep first writes although the targets have room"
client "$IPVFS_MAP" layout || ipvfs_fail "writing A, B and C"
p0=$(partial) ev0=$(ctr l1 evictions)
client "$IPVFS_MAP" rewrite || ipvfs_fail "rewriting A and C"
p1=$(partial) ev1=$(ctr l1 evictions) dirty=$(ctr l1 dirty_bytes)
echo "rewrite: $((p1 - p0)) partial-stripe writes, $((ev1 - ev0)) evictions"
[ "$dirty" = 0 ] || ipvfs_fail "$dirty bytes dirty after a sync"
[ $((ev1 - ev0)) -gt 0 ] || ipvfs_fail "16 MiB through a 4 MiB L1 evicted nothing"
# A's 8 blocks (and any of C's in that unit) go out as runs: at most two
# partial stripes each, where block by block they made 8 (measured).
[ $((p1 - p0)) -le 4 ] ||
    ipvfs_fail "$((p1 - p0)) partial-stripe writes: evicted dirty blocks went out one by one"
p2=$(partial) a2=$(ctr l1 writes_absorbed) u2=$(ctr l1 write_updates)
client "$IPVFS_MAP" stream || ipvfs_fail "writing D"
p3=$(partial) a3=$(ctr l1 writes_absorbed) u3=$(ctr l1 write_updates)
echo "stream: $((p3 - p2)) partial-stripe writes, $((a3 - a2)) absorbed, $((u3 - u2)) blocks taken"
[ $((p3 - p2)) = 0 ] || ipvfs_fail "a stream of whole stripes read before writing"
[ "$a3" = "$a2" ] && [ "$u3" = "$u2" ] || ipvfs_fail "a stream of whole stripes went into the L1"
client "$IPVFS_MAP" check || ipvfs_fail "data read back wrong after the write-backs"
ipvfs-ctl scrub || ipvfs_fail "scrub found parity that disagrees after write-backs"
ipvfs_stop_cluster
echo "evicted dirty blocks written back in runs: ok"
