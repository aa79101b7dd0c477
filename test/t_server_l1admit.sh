#!/bin/bash
# timeout: 120
# The I/O node's L1 admits the fills of small reads' misses
# (cache/cache.h, admission), counted live (ipvfs-ctl stats --json): on a
# RAID-0 I/O node (1 x 2 targets) with a 4 MiB L1 (64 blocks) and no
# read-ahead, a datafile written in 1 MiB WRITEs (streams: not cached)
# is read in 4 KiB READs.  A block's first small read goes around the L1
# (a bypass), its second fills the block (a miss), its third hits; a
# 64 KiB read of a whole block fills at once.  Blocks each read twice and
# never again make fills that yield no hits: after an epoch of 256 fills
# only one in 16 of the next such blocks fills.  Every byte read is
# checked; the I/O node logs the counters when it stops.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

ipvfs_start_cluster 1 2 --raid 0 --target-size 64M --no-bind --cache-l1 4M --readahead 0
python3 - "$IPVFS_MAP" <<'PYEOF' || ipvfs_fail "the L1's admission is not as cache/cache.h says"
import json, os, random, struct, subprocess, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
secret, addr, s = P.io_node(sys.argv[1])
B = 64 << 10
def io(pairs):
    return struct.pack("<QII", 81, len(pairs), 0) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)
def l1():
    d = json.loads(subprocess.check_output(["ipvfs-ctl", "stats", "--json"]))
    return [r for r in d["ranks"] if "l1" in r][0]["l1"]
def read(off, n):
    got = P.call_ok(s, P.OP["READ"], io([(off, n)]))[24:]    # after struct ipvfs_io_rep
    assert got == m[off:off + n], ("read differs", off, n)
def step(off, n):
    a = l1()
    read(off, n)
    b = l1()
    return tuple(b[k] - a[k] for k in ("bypasses", "misses", "hits"))
assert P.hello(s, secret, 9)[0] == 0
m = random.Random(5).randbytes(24 << 20)
for off in range(0, len(m), 1 << 20):
    P.call_ok(s, P.OP["WRITE"], io([(off, 1 << 20)]) + m[off:off + (1 << 20)])
# (bypasses, misses, hits) of one READ
assert step(0, 4096) == (1, 0, 0), "a first small miss fills"
assert step(8192, 4096) == (0, 1, 0), "a second small miss does not fill"
assert step(16384, 4096) == (0, 0, 1), "no hit after the fill"
assert step(5 * B, B) == (0, 1, 0), "a whole block's miss does not fill"
assert step(5 * B + 100, 200) == (0, 0, 1)
def twice(blocks):
    """Reads two 4 KiB pieces of each block; the counters' growth."""
    a = l1()
    for b in blocks:
        read(b * B, 4096)
        read(b * B + 32768, 4096)
    b = l1()
    return tuple(b[k] - a[k] for k in ("bypasses", "misses", "hits"))
# 255 more blocks read twice: the epoch's 256 fills, 1 hit on them
assert twice(range(10, 265)) == (255, 255, 0)
# the gate is shut: 64 more blocks read twice fill 4
d = twice(range(300, 364))
assert d == (124, 4, 0), d
PYEOF
ipvfs_stop_cluster
ipvfs_logs | grep -q "L1 admission of small reads' fills: 260 filled (1 hits on them), 320 first misses and 60 low-yield ones read around" ||
    ipvfs_fail "admission counters at stop: $(ipvfs_logs | grep 'L1 admission')"
echo "t_server_l1admit: ok"
