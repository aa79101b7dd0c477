#!/bin/bash
# ipvfs-cachesim: the three synthetic workloads with the paper's
# configurations print the JSON fields doc/caches.md names, and uCache's
# cumulative hit ratio beats PVFS's on each (and the inclusive L2 baseline
# does not beat the exclusive default); a workload written out with
# --emit-trace and replayed with --trace gives the same counts; malformed
# traces, sizes, policies and configurations are refused with a clear
# error; hand-checked version-2 (live) traces replay to exact L1 and L2
# counts, and events that do not fit the replay are refused with their
# line.  The workloads run at their full default lengths (about a second
# each).
# timeout: 120
set -u
command -v python3 >/dev/null || { echo "skip: python3 is needed to read the JSON"; exit 77; }
sim=$(command -v ipvfs-cachesim) || { echo "FAIL: ipvfs-cachesim not on PATH"; exit 1; }
work=$(mktemp -d /tmp/ipvfs-cachesim.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# field FILE EXPR: a value of the JSON object in FILE (EXPR indexes d).
field() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

for w in cello92 httpd db2; do
    "$sim" --workload "$w" --json >"$work/$w.json" 2>"$work/err" || fail "$w: $(cat "$work/err")"
    cat "$work/$w.json"
    python3 - "$work/$w.json" "$w" <<'PY' || fail "$w: JSON check failed"
import json, sys
d = json.load(open(sys.argv[1]))
w = sys.argv[2]
for k in ("hit",):
    assert 0 <= d["pvfs"][k] <= 1, k
for k in ("l1", "l2", "cumulative"):
    assert 0 <= d["ucache"][k] <= 1, k
u, p = d["ucache"], d["pvfs"]
assert d["accesses"] > 100000, "too short a run"
assert u["l1_hits"] + u["l2_reads"] == d["accesses"], "every L1 miss reads L2"
cum = (u["l1_hits"] + u["l2_hits"]) / d["accesses"]
assert abs(cum - u["cumulative"]) < 1e-3, "cumulative is not (L1 + L2 hits) / accesses"
assert u["cumulative"] > p["hit"], "uCache %.4f does not beat PVFS %.4f" % (u["cumulative"], p["hit"])
conf = {"cello92": (6, 24, 12, 16), "httpd": (6, 24, 12, 16), "db2": (39, 256, 64, 128)}[w]
mb = 1 << 20
assert (d["servers"], d["l1_bytes"] // mb, d["l2_bytes"] // mb, d["pvfs_bytes"] // mb) == conf, "config"
assert d["targets_per_io"] == 2 and d["io_nodes"] == d["servers"] // 3
assert d["paper"] is not None and d["paper"]["servers"] in (6, 40)
PY
    # The inclusive baseline wastes L2 on copies of L1: it must not win.
    "$sim" --workload "$w" --json --l2-policy lru >"$work/$w-lru.json" || fail "$w with lru"
    inc=$(field "$work/$w-lru.json" 'd["ucache"]["cumulative"]')
    exc=$(field "$work/$w.json" 'd["ucache"]["cumulative"]')
    python3 -c "import sys; sys.exit(0 if $inc < $exc else 1)" ||
        fail "$w: inclusive L2 $inc is not below the exclusive default $exc"
done

# Replay: the requests a workload played, as a trace, give the same counts.
"$sim" --workload cello92 --requests 20000 --json --emit-trace "$work/cello.trace" \
    >"$work/gen.json" || fail "--emit-trace"
[ "$(wc -l <"$work/cello.trace")" -eq 20000 ] || fail "the trace does not have 20000 lines"
"$sim" --trace "$work/cello.trace" --json >"$work/replay.json" || fail "--trace"
for k in 'd["accesses"]' 'd["pvfs"]["hits"]' 'd["ucache"]["l1_hits"]' 'd["ucache"]["l2_hits"]'; do
    [ "$(field "$work/gen.json" "$k")" = "$(field "$work/replay.json" "$k")" ] ||
        fail "replay differs in $k"
done

# A hand-written trace: comments, blank lines, a 3-block access, a write.
printf '# client file offset length op\n\n0 7 0 196608 r\n1 7 65536 10 w  # one block\n' \
    >"$work/small.trace"
"$sim" --trace "$work/small.trace" --json >"$work/small.json" || fail "small trace"
[ "$(field "$work/small.json" 'd["accesses"]')" = 4 ] || fail "small trace: not 4 accesses"
[ "$(field "$work/small.json" 'd["pvfs"]["hits"]')" = 1 ] || fail "small trace: not 1 PVFS hit"

# refused: each with exit status and a message
refused() {
    local want=$1 pattern=$2
    shift 2
    "$sim" "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    [ $rc -eq "$want" ] || fail "$* exited $rc, not $want"
    grep -q -- "$pattern" "$work/err" || fail "$*: no message matching '$pattern': $(cat "$work/err")"
}
printf '0 1 0 65536 r\n0 1 0 65536 x\n' >"$work/bad1.trace"
refused 1 "line 2: expected" --trace "$work/bad1.trace"
printf '0 1 0 0 r\n' >"$work/bad2.trace"
refused 1 "line 1: expected" --trace "$work/bad2.trace"
printf '0 16777216 0 1 r\n' >"$work/bad3.trace"
refused 1 "line 1: expected" --trace "$work/bad3.trace"
printf '0 1 -5 1 r\n' >"$work/bad4.trace"
refused 1 "line 1: expected" --trace "$work/bad4.trace"
printf '0 1 0 1 r extra\n' >"$work/bad5.trace"
refused 1 "line 1: expected" --trace "$work/bad5.trace"
printf '0 1 1125899906842620 5 r\n' >"$work/bad6.trace"
refused 1 "line 1: expected" --trace "$work/bad6.trace"
refused 1 "No such file" --trace "$work/missing.trace"
refused 2 "expected bytes" --workload httpd --l1 12Q
refused 2 "expected bytes" --workload httpd --l2 99999999999999999999999
refused 1 "L1 of 1024 bytes" --workload httpd --l1 1K
refused 1 "PVFS cache of" --workload httpd --pvfs 1024T
refused 1 "blocks in all: at most" --workload httpd --pvfs 1T
refused 2 "lru, demote, mq or demote-mq" --workload httpd --l2-policy arc
refused 2 "cello92, httpd or db2" --workload tpcc
refused 1 "at least one I/O node" --workload httpd --servers 2
refused 2 "usage" --workload httpd --trace "$work/small.trace"
refused 2 "usage"

# A hand-checked version-2 trace (a live I/O node's, cachesim.h): RAID-5
# over 3 members, an L1 of 2 blocks (6 slots: 0 is taken first), L2s of 2
# blocks, exclusive.  Reads of volume blocks 0, 1, 2 miss both levels (2
# evicts 0, demoted to member 0); 0 again misses L1 (evicts 1, demoted to
# member 1) and hits L2; 2 hits L1.  A 4 KiB write into block 0 is
# absorbed; its write-back (block 0 alone: half a stripe) reads the other
# half (reconstruct-write: block 1 on member 1, an L2 hit, kept: no DPO);
# block 1 read then misses L1 (evicts 2, demoted) and hits L2.  L1: 1 hit,
# 5 misses; L2: 3 hits, 3 misses; 3 demotions.
cat >"$work/v2.trace" <<'EOF2'
#ipvfs-trace 2 io=0 raid=5 members=3 chunk=65536 l1=131072 l2=131072 l2_policy=demote ra=0
0 5 0 65536 r
R 0 65536
V 0 1
R 65536 65536
V 1 1
R 131072 65536
V 0 1
R 0 65536
V 1 1
R 131072 65536
W 0 4096 0
S 1 0
C 1 1
R 65536 65536
V 0 1
EOF2
"$sim" --trace "$work/v2.trace" --json >"$work/v2.json" || fail "the version-2 trace"
[ "$(field "$work/v2.json" '(d["l1"]["hits"], d["l1"]["misses"], d["l1"]["bypasses"], d["l1"]["demotions"], d["l1"]["writes_absorbed"], d["l2"]["hits"], d["l2"]["misses"])')" = "(1, 5, 0, 3, 1, 3, 3)" ] ||
    fail "version-2 trace: counts $(cat "$work/v2.json")"
# The same requests through the model, and the events checked.
"$sim" --trace "$work/v2.trace" --replay requests --json >"$work/v2r.json" || fail "--replay requests"
[ "$(field "$work/v2r.json" 'd["accesses"]')" = 1 ] || fail "--replay requests: not 1 access"
sed 's/^V 0 1$/V 4 1/' "$work/v2.trace" >"$work/v2bad.trace"
refused 1 "line 4: 'V 4 1' is no valid event" --trace "$work/v2bad.trace"
sed 's/^S 1 0$/S 1 1/' "$work/v2.trace" >"$work/v2bad.trace"
refused 1 "line 13:" --trace "$work/v2bad.trace"
refused 2 "live or requests" --trace "$work/v2.trace" --replay sometimes
# Read-ahead fills (P): blocks 0 and 1 come in (two L2 misses), then a read
# of block 0 hits L1.
printf '%s\nP 0 131072\nV 0 1\nV 1 1\nR 0 65536\n' "$(head -1 "$work/v2.trace")" >"$work/v2p.trace"
"$sim" --trace "$work/v2p.trace" --json >"$work/v2p.json" || fail "read-ahead events"
[ "$(field "$work/v2p.json" '(d["l1"]["hits"], d["l1"]["misses"], d["l1"]["prefetches"], d["l2"]["hits"], d["l2"]["misses"])')" = "(1, 0, 2, 0, 2)" ] ||
    fail "read-ahead events: $(cat "$work/v2p.json")"
echo "ok"
