#!/bin/bash
# timeout: 240
# Sequential read-ahead at the I/O node (--readahead, issue 14), on one
# I/O node x 2 targets (RAID-0) with a 16 MiB L1 and --readahead 2M,
# talking the protocol directly (test/ipvfs_proto.py); every read is
# checked against the bytes written:
# - a 24 MiB datafile read sequentially (after a restart, so the L1 is
#   cold) is mostly served by prefetched blocks (l1 readahead_hits);
# - 4 KiB random reads prefetch little (readahead_blocks bounded);
# - a seek resets the window: two sequential reads after it prefetch at
#   most the first window (128 KiB), not the 2 MiB grown before it;
# - READ flags naming a window of 0 (the hint ipvfs_readahead=0) prefetch
#   nothing, a window of 1M prefetches again;
# - a window over 1 GiB or an unknown READ flag is refused (EINVAL) and
#   the connection goes on serving;
# - writes into blocks a sequential reader just had prefetched (the
#   prefetch racing the write) are read back exact, never stale;
# - 8 sequential READs sent at once: those that start while others wait
#   for a place read nothing ahead (issue 27);
# - with --cache-l1 0 the I/O node says at start that read-ahead is off.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

client() {
    python3 - "$@" <<'PYEOF'
import errno, json, os, random, struct, subprocess, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, mode = sys.argv[1], sys.argv[2]
secret, addr, s = P.io_node(mapfile)
RA_SET, RA_SHIFT = P.D["IPVFS_READ_RA_SET"], P.D["IPVFS_READ_RA_SHIFT"]
MIB, SIZE = 1 << 20, 24 << 20
def call(op, body, want=0):
    status, rbody = P.call(s, op, body)
    assert status == want, (op, status, rbody)
    return rbody
def io(handle, pairs, flags=0):
    return struct.pack("<QII", handle, len(pairs), flags) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)
def write(handle, off, data):
    call(P.OP["WRITE"], io(handle, [(off, len(data))]) + data)
def read(handle, off, n, flags=0):
    return call(P.OP["READ"], io(handle, [(off, n)], flags))[24:]
def l1(field):
    d = json.loads(subprocess.check_output(["ipvfs-ctl", "stats", "--json"]))
    return [r for r in d["ranks"] if "l1" in r][0]["l1"][field]
def data(h):
    return random.Random(h).randbytes(SIZE)
assert P.hello(s, secret, 9)[0] == 0
files = (91, 92, 93, 94, 95)
if mode == "write":
    for h in files:
        d = data(h)
        for off in range(0, SIZE, MIB):
            write(h, off, d[off:off + MIB])
    call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
    sys.exit(0)
# cold L1 (restarted): sequential 256 KiB reads of 91
d = data(91)
b0, h0 = l1("readahead_blocks"), l1("readahead_hits")
e0, m0 = l1("evictions"), l1("demotes")
for off in range(0, SIZE, 256 << 10):
    assert read(91, off, 256 << 10) == d[off:off + (256 << 10)], ("sequential read differs", off)
b1, h1 = l1("readahead_blocks"), l1("readahead_hits")
e1, m1, res = l1("evictions"), l1("demotes"), l1("resident_bytes")
print("sequential 24 MiB: %d blocks prefetched, %d read; %d evictions, %d demoted, %d KiB left"
      % (b1 - b0, h1 - h0, e1 - e0, m1 - m0, res >> 10))
assert h1 - h0 >= SIZE // 65536 * 3 // 4, "too few readahead hits"
# 256 KiB reads are a stream: each prefetched block leaves the L1 once
# read to its end (drop-behind), so 24 MiB through a 16 MiB L1 evict and
# demote nothing, and only the window ahead stays
assert e1 == e0 and m1 == m0, "a stream's blocks were evicted or demoted"
assert res <= 4 << 20, "a stream's blocks stayed in the L1"
# random 4 KiB reads of 92: little or no prefetch
d, rng = data(92), random.Random(5)
for _ in range(150):
    off = rng.randrange(SIZE - 4096) // 4096 * 4096
    assert read(92, off, 4096) == d[off:off + 4096], ("random read differs", off)
b2 = l1("readahead_blocks")
print("150 random reads: %d blocks prefetched" % (b2 - b1))
assert b2 - b1 <= 48, "random reads prefetch"
# a seek resets the window: 8 MiB sequential (window grows to 2 MiB), then
# at 16 MiB two sequential 64 KiB reads
d = data(93)
for off in range(0, 8 * MIB, MIB):
    assert read(93, off, MIB) == d[off:off + MIB]
b3 = l1("readahead_blocks")
for off in (16 * MIB, 16 * MIB + 65536):
    assert read(93, off, 65536) == d[off:off + 65536]
b4 = l1("readahead_blocks")
print("after a seek: %d blocks prefetched (before it %d)" % (b4 - b3, b3 - b2))
assert b3 - b2 >= 32 and b4 - b3 <= 2, "the seek did not reset the window"
# window 0 in the READ (hint ipvfs_readahead=0): no read-ahead; 1M: some
d = data(94)
for off in range(0, 8 * MIB, 256 << 10):
    assert read(94, off, 256 << 10, RA_SET) == d[off:off + (256 << 10)]
b5 = l1("readahead_blocks")
print("window 0: %d blocks prefetched" % (b5 - b4))
assert b5 == b4, "a window of 0 still reads ahead"
for off in range(8 * MIB, 16 * MIB, 256 << 10):
    assert read(94, off, 256 << 10, RA_SET | (16 << RA_SHIFT)) == d[off:off + (256 << 10)]
b6 = l1("readahead_blocks")
print("window 1M: %d blocks prefetched" % (b6 - b5))
assert 0 < b6 - b5 <= 8 * MIB // 65536 + 16
# malformed: over 1 GiB, an unknown flag bit; the connection still serves
for bad in (RA_SET | (16385 << RA_SHIFT), 0x8):
    st, body = P.call(s, P.OP["READ"], io(94, [(0, 4096)], bad))
    assert st == errno.EINVAL and b"READ flags" in body, (bad, st, body)
assert read(94, 0, 4096) == d[:4096]
# writes racing prefetches: read on, then overwrite blocks just ahead
d, rng = bytearray(data(95)), random.Random(7)
for off in range(0, SIZE - 4 * MIB, 256 << 10):
    assert read(95, off, 256 << 10) == d[off:off + (256 << 10)], ("race read", off)
    w = off + (256 << 10) + rng.randrange(3 * MIB)
    new = rng.randbytes(rng.choice((512, 4096, 65536, 100000)))
    write(95, w, new)
    d[w:w + len(new)] = new
for off in range(0, SIZE, MIB):
    assert read(95, off, MIB) == d[off:off + MIB], ("stale bytes after a racing write", off)
print("wasted %d of %d prefetched" % (l1("readahead_wasted"), l1("readahead_blocks")))
# 8 sequential 256 KiB READs sent in one write (2 places): the 2 that find a
# place free may read ahead (the second opens a 128 KiB window: 2
# blocks), the 6 that start while others still wait do not (the store is
# busy with reads a client waits for), so the window never grows
class Burst:
    """Collects requests, to send them in one write."""
    data = b""
    def sendall(self, b):
        self.data += b
d, b7, burst = data(93), l1("readahead_blocks"), Burst()
for k in range(8):
    P.send(burst, P.OP["READ"], io(93, [(12 * MIB + k * (256 << 10), 256 << 10)]), req_id=500 + k)
s.sendall(burst.data)
got = {}
while len(got) < 8:
    op, st, rid, body = P.reply(s)
    if op == P.PROGRESS and not body:
        continue
    assert st == 0, (rid, st, body)
    got[rid] = body[24:]
for k in range(8):
    off = 12 * MIB + k * (256 << 10)
    assert got[500 + k] == d[off:off + (256 << 10)], ("pipelined read differs", k)
b8 = l1("readahead_blocks")
print("8 READs at once: %d blocks prefetched" % (b8 - b7))
assert b8 - b7 <= 4, "READs that waited for a place read ahead"
PYEOF
}

ipvfs_start_cluster 1 2 --target-size 256M --no-bind --cache-l1 16M --readahead 2M
client "$IPVFS_MAP" write || ipvfs_fail "writing the datafiles"
ipvfs_restart_cluster
client "$IPVFS_MAP" check || ipvfs_fail "read-ahead"
ipvfs_stop_cluster

ipvfs_start_cluster 1 2 --target-size 64M --no-bind --cache-l1 0 --readahead 2M
ipvfs_wait_log "readahead .* ignored: read-ahead fills the L1 cache, and --cache-l1 is 0" ||
    ipvfs_fail "no word at start that read-ahead has no L1"
ipvfs_stop_cluster
echo "PASS"
