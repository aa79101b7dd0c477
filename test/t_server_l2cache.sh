#!/bin/bash
# timeout: 240
# The target ranks' L2 cache (--cache-l2) in a cluster: RAID-5, 1 I/O
# node x 3 targets, L1 off so that the I/O node's reads reach the
# targets.  Data written, overwritten in small unaligned pieces (RAID-5
# read-modify-write through the L2) and read twice read back right; the
# re-reads are L2 hits (counters the target ranks log when they stop);
# what a sync covered survives kill -9 of the cluster and a restart; the
# LUN files are opened with O_DIRECT.  Bad --cache-l2 values are refused.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }

# client MAP write|check: 8 MiB of handle 91, then 200 small overwrites,
# each checked by reads; write syncs and saves the model to $MODEL.
client() {
    python3 - "$@" <<'PYEOF'
import os, random, struct, sys
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
mapfile, mode = sys.argv[1], sys.argv[2]
secret, addr, s = P.io_node(mapfile)
def call(op, body):
    status, rbody = P.call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody
def io(pairs):
    return struct.pack("<QII", 91, len(pairs), 0) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)
def read(off, n):
    return call(P.OP["READ"], io([(off, n)]))[24:]  # after struct ipvfs_io_rep
def check_all(m):
    for off in range(0, len(m), 1 << 20):
        assert read(off, 1 << 20) == bytes(m[off:off + (1 << 20)]), ("differs", off)
assert P.hello(s, secret, 9)[0] == 0
rng = random.Random(29)
m = bytearray(8 << 20)
if mode == "reread":
    # 4 MiB in 64 KiB blocks, written, synced, then read twice.
    m = bytearray(rng.randbytes(4 << 20))
    call(P.OP["WRITE"], io([(0, len(m))]) + bytes(m))
    call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
    for _ in range(3):
        for off in range(0, len(m), 65536):
            assert read(off, 65536) == bytes(m[off:off + 65536]), ("reread differs", off)
    sys.exit(0)
if mode == "write":
    for off in range(0, len(m), 1 << 20):
        d = rng.randbytes(1 << 20)
        call(P.OP["WRITE"], io([(off, len(d))]) + d)
        m[off:off + len(d)] = d
    check_all(m)
    check_all(m)
    for _ in range(200):
        off, n = rng.randrange(len(m) - 5000), rng.randrange(1, 5000)
        d = rng.randbytes(n)
        call(P.OP["WRITE"], io([(off, n)]) + d)
        m[off:off + n] = d
        assert read(off & ~4095, 8192) == bytes(m[off & ~4095:(off & ~4095) + 8192]), off
    check_all(m)
    call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
    open(os.environ["MODEL"], "wb").write(bytes(m))
else:
    check_all(bytearray(open(os.environ["MODEL"], "rb").read()))
PYEOF
}

export MODEL=$(mktemp /tmp/ipvfs-l2model.XXXXXX)
ipvfs_test_cleanup() { rm -f "$MODEL"; }

ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 0 --cache-l2 4M
ipvfs_wait_log 'L2 cache of 4 MiB .*policy demote' || ipvfs_fail "no target rank set up its L2"
ipvfs_wait_log 'lun0.img opened with O_DIRECT' || ipvfs_fail "LUN files not opened with O_DIRECT"
client "$IPVFS_MAP" write || ipvfs_fail "data through the L2 differ"
ipvfs_kill_cluster
ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 0 --cache-l2 4M \
    --cache-l2-policy lru
client "$IPVFS_MAP" check || ipvfs_fail "synced data lost by kill -9 with the L2 on"
client "$IPVFS_MAP" check || ipvfs_fail "second check (L2 hits) differs"
ipvfs_stop_cluster
line=$(ipvfs_logs | grep -E 'L2 cache lru: [0-9]+ hits' | head -1)
hits=$(echo "$line" | sed -n 's/.*lru: \([0-9]*\) hits.*/\1/p')
[ "${hits:-0}" -gt 0 ] || ipvfs_fail "no L2 hits on a re-read: '$line'"
echo "ok: $line"

# Exclusive caching: a 1 MiB L1 (16 blocks) over 3 targets with 4 MiB
# demote L2s re-reads a 4 MiB file.  The I/O node's fills carry DPO and
# its clean evictions are demoted: the L2s hold the blocks the L1 lost,
# and every L2 hit gives its block up (hits = dropped: never in both).
ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 1M --cache-l2 4M
ipvfs_wait_log 'its L2 takes DEMOTE' || ipvfs_fail "the I/O node did not see the targets' DEMOTE"
client "$IPVFS_MAP" reread || ipvfs_fail "re-read through L1 and exclusive L2s differs"
# Live, in ipvfs-ctl stats: the same rule per target rank.
ipvfs-ctl stats --json | python3 -c '
import json, sys
l2 = [r["l2"] for r in json.load(sys.stdin)["ranks"] if "l2" in r]
assert len(l2) == 3 and all(x["capacity_bytes"] == 4 << 20 for x in l2), l2
assert all(x["hits"] == x["dropped"] for x in l2), l2
assert sum(x["hits"] for x in l2) >= 64 and sum(x["demotes"] for x in l2) >= 48, l2
' || ipvfs_fail "ipvfs-ctl stats --json: L2 counters wrong: $(ipvfs-ctl stats --json)"
ipvfs-ctl stats | grep -q 'L2 cache: .* demoted' || ipvfs_fail "no L2 line in ipvfs-ctl stats"
ipvfs_stop_cluster
ipvfs_logs | grep -E 'L2 cache demote: [0-9]+ hits' >"$MODEL.l2" || ipvfs_fail "no L2 counters"
python3 - "$MODEL.l2" <<'PYEOF' || ipvfs_fail "not exclusive: $(cat "$MODEL.l2")"
import re, sys
tot = {"hits": 0, "misses": 0, "dropped": 0, "demoted": 0}
for line in open(sys.argv[1]):
    m = re.search(r"(\d+) hits, (\d+) misses, (\d+) dropped \(DPO\), (\d+) demoted", line)
    h, mi, d, de = map(int, m.groups())
    assert h == d, ("an L2 hit kept its block", line)
    for k, v in zip(tot, (h, mi, d, de)):
        tot[k] += v
print("exclusive L2s:", tot)
assert tot["demoted"] >= 48 and tot["hits"] >= 64, tot
PYEOF
rm -f "$MODEL.l2"
echo "ok: exclusive L1/L2"

for bad in 12Q 1000 1T; do
    out=$(mpiexec -n 2 "$IPVFS_SERVER_BIN" --io-nodes 1 --targets-per-io 1 --no-bind \
          --data "$IPVFS_CLUSTER_DIR/bad" --cache-l2 "$bad" 2>&1) && ipvfs_fail "--cache-l2 $bad accepted"
    echo "$out" | grep -q -- '--cache-l2' || ipvfs_fail "--cache-l2 $bad: no clear error: $out"
done
echo "t_server_l2cache: ok"
