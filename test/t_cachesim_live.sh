#!/bin/bash
# timeout: 300
# ipvfs-cachesim agrees with the live system (issue 13): a RAID-5 I/O node
# (1 x 3 targets) with both caches (8 MiB L1, 8 MiB exclusive L2 per
# target, which holds all of its blocks of the file: it evicts nothing)
# and --trace runs ipvfs-ior through ROMIO: a 12 MiB file (1.5 x
# L1) written in 96 KiB calls (partial blocks: absorbed and through
# writes), read in 64 KiB calls, partly rewritten in 3000-byte calls (the
# store's read-modify-write reads of old sectors, M events), read again,
# in 4 KiB calls at random places (misses that fill only when admitted,
# cache/cache.h) and in 64 KiB ones, then removed; also read in 1 MiB calls,
# streams the L1 does not fill (B events).  The trace, replayed live
# (ipvfs-cachesim --trace, version 3), gives L1 and L2 hit ratios within 2
# percentage points of the live counters (ipvfs-ctl stats --json, over the
# same run); the same trace replayed with the inclusive L2 policy does not
# (so the comparison can tell a wrong model).  A trace whose completions do
# not fit the replay is refused with its line.
# Why an L2 that evicts nothing: with eviction, what stays depends on the
# order in which a target applies RAID-5's read-modify-write member reads
# (kept: no DPO) and the L1's DEMOTEs, and that order is not in the I/O
# node's trace (iRAID issues the member reads); 2 MiB L2s, which evict,
# replayed up to 4 points off in 1 run of 4 (an open item of issue 13's
# replay, not a tolerance to widen).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
IOR=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$IOR" ] || { echo "skip: $IOR is not built"; exit 77; }
work=$(mktemp -d /tmp/ipvfs-simlive.XXXXXX) || exit 1
ipvfs_test_cleanup() { rm -rf "$work"; }

ior() {
    timeout -k 5 120 mpiexec -n 2 env LD_PRELOAD="$E2E_ROMIO_LIB" "$IOR" "$@" >/dev/null ||
        ipvfs_fail "ipvfs-ior $*"
}

# counters: "L1_HITS L1_MISSES L1_BYPASSES L2_HITS L2_MISSES" now.
counters() {
    ipvfs-ctl stats --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"]
l1 = [x["l1"] for x in r if "l1" in x][0]
l2 = [x["l2"] for x in r if "l2" in x]
print(l1["hits"], l1["misses"], l1["bypasses"], sum(x["hits"] for x in l2),
      sum(x["misses"] for x in l2))' || ipvfs_fail "ipvfs-ctl stats --json"
}

ipvfs_start_cluster 1 3 --target-size 128M --no-bind --cache-l1 8M --cache-l2 8M \
    --cache-l2-policy demote --readahead 0 --trace "$work/trace"
ipvfs_wait_log 'tracing READ/WRITE to' || ipvfs_fail "the I/O node does not trace"
c0=$(counters)
ior -f ipvfs:/simlive/a -b 6m -t 96k -w -e -k
ior -f ipvfs:/simlive/a -b 6m -t 64k -r -k
ior -f ipvfs:/simlive/a -b 768000 -t 3000 -w -e -k
ior -f ipvfs:/simlive/a -b 6m -t 64k -r -k
ior -f ipvfs:/simlive/a -b 6m -t 4k -r -z -k
ior -f ipvfs:/simlive/a -b 6m -t 1m -r -k
ior -f ipvfs:/simlive/a -b 6m -t 64k -r -z
c1=$(counters)
ipvfs_stop_cluster
trace=$work/trace.io0
grep -q '^B ' "$trace" || ipvfs_fail "1 MiB reads left no stream read (B) in the trace"
head -1 "$trace" | grep -q '^#ipvfs-trace 3 io=0 raid=5 members=3 chunk=65536 l1=8388608 l2=8388608 l2_policy=demote ra=0$' ||
    ipvfs_fail "trace header: $(head -1 "$trace")"
grep -q '^R ' "$trace" && grep -q '^W ' "$trace" && grep -q '^V ' "$trace" &&
    grep -q '^M ' "$trace" || ipvfs_fail "the trace lacks read, write, fill or old-bytes read events"
ipvfs-cachesim --trace "$trace" --json >"$work/live.json" || ipvfs_fail "live replay failed"
ipvfs-cachesim --trace "$trace" --l2-policy lru --json >"$work/lru.json" ||
    ipvfs_fail "replay with an inclusive L2 failed"

# compare LIVE_JSON: "L1 L2" hit ratios of the replay minus the live ones.
compare() {
    python3 - "$1" "$c0" "$c1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a, b = [list(map(int, s.split())) for s in sys.argv[2:4]]
h1, m1, b1, h2, m2 = [y - x for x, y in zip(a, b)]
live1, live2 = h1 / (h1 + m1 + b1), h2 / (h2 + m2)
print("%.4f %.4f" % (d["l1"]["hit"] - live1, d["l2"]["hit"] - live2))
print("live: L1 %.4f (%d hits, %d misses, %d bypasses), L2 %.4f (%d hits, %d misses); "
      "%s replay: L1 %.4f (%d/%d/%d), L2 %.4f (%d/%d)" % (
          live1, h1, m1, b1, live2, h2, m2, d["l2_policy"], d["l1"]["hit"], d["l1"]["hits"],
          d["l1"]["misses"], d["l1"]["bypasses"], d["l2"]["hit"], d["l2"]["hits"],
          d["l2"]["misses"]), file=sys.stderr)
PY
}
within() {  # within DIFFS: both differences below 0.02
    echo "$1" | awk '{ exit !($1 < 0.02 && $1 > -0.02 && $2 < 0.02 && $2 > -0.02) }'
}
diff_demote=$(compare "$work/live.json") || ipvfs_fail "comparing the replay"
within "$diff_demote" || ipvfs_fail "replay and live differ by more than 2 points: $diff_demote"
diff_lru=$(compare "$work/lru.json") || ipvfs_fail "comparing the lru replay"
within "$diff_lru" && ipvfs_fail "an inclusive L2 replays like the exclusive one ($diff_lru): the check cannot tell"

# Streams on RAID-0, whose large writes go past the L1 (U events): 1 MiB
# writes, 96 KiB rewrites of part of it (absorbed and through W events),
# 64 KiB and 1 MiB reads; the L2s (4 MiB each) hold all of it again.
work0=$work/r0
mkdir -p "$work0"
rm -rf "$IPVFS_CLUSTER_DIR"    # a second cluster gets a directory of its own
unset IPVFS_CLUSTER_DIR
ipvfs_start_cluster 1 2 --raid 0 --target-size 64M --no-bind --cache-l1 4M \
    --cache-l2 4M --cache-l2-policy demote --readahead 0 --trace "$work0/trace"
ipvfs_wait_log 'tracing READ/WRITE to' || ipvfs_fail "the RAID-0 I/O node does not trace"
c0=$(counters)
ior -f ipvfs:/simlive/b -b 3m -t 1m -w -e -k
ior -f ipvfs:/simlive/b -b 1536k -t 96k -w -e -k
ior -f ipvfs:/simlive/b -b 3m -t 64k -r -k
ior -f ipvfs:/simlive/b -b 3m -t 1m -r -z
c1=$(counters)
ipvfs_stop_cluster
grep -q '^U ' "$work0/trace.io0" && grep -q '^W ' "$work0/trace.io0" ||
    ipvfs_fail "the RAID-0 trace lacks stream (U) or other (W) writes"
ipvfs-cachesim --trace "$work0/trace.io0" --json >"$work0/live.json" ||
    ipvfs_fail "live replay of the RAID-0 trace failed"
diff0=$(compare "$work0/live.json") || ipvfs_fail "comparing the RAID-0 replay"
within "$diff0" || ipvfs_fail "RAID-0: replay and live differ by more than 2 points: $diff0"

# A completion of a slot the replay has not in flight: refused, with its line.
{ head -1 "$trace"; echo "V 3 1"; } >"$work/bad.trace"
out=$(ipvfs-cachesim --trace "$work/bad.trace" 2>&1) && ipvfs_fail "a diverged trace accepted"
echo "$out" | grep -q 'line 2:' || ipvfs_fail "no line named: $out"
printf '#ipvfs-trace 2 io=0 raid=7 members=3 chunk=65536 l1=0 l2=0 l2_policy=lru ra=0\n' >"$work/bad2.trace"
out=$(ipvfs-cachesim --trace "$work/bad2.trace" 2>&1) && ipvfs_fail "RAID-7 accepted"
echo "$out" | grep -q 'RAID-7' || ipvfs_fail "no clear error for RAID-7: $out"
# A trace recorded with read-ahead: the replay does not model its pool.
head -1 "$trace" | sed 's/ ra=0$/ ra=4194304/' >"$work/bad3.trace"
out=$(ipvfs-cachesim --trace "$work/bad3.trace" 2>&1) && ipvfs_fail "a read-ahead trace accepted"
echo "$out" | grep -q 'record with --readahead 0' || ipvfs_fail "no clear error for read-ahead: $out"
echo "t_cachesim_live: ok"
