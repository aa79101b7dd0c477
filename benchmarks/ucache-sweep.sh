#!/bin/bash
# ucache-sweep.sh: cumulative hit ratio against L1 size per L2 policy, live
# and simulated, on the same ipvfs-ior workload.  One RAID-5 I/O node x 3
# targets (O_DIRECT LUNs), L2 UCS_L2 per target; 2 ranks write a
# UCS_WS-byte file in 1 MiB calls (synced), then read it UCS_PASSES
# times in 64 KiB calls (each rank its half, in order: two interleaved
# sequential streams).
#   live       for each L1 size in UCS_LIVE_L1 and each policy in
#              UCS_POLICIES, a fresh cluster with --trace: hit ratios over
#              the read passes from ipvfs-ctl stats --json (L1 hits / L1
#              lookups; cumulative = (L1 + L2 hits) / L1 lookups), and the
#              same from the live replay of its trace (ipvfs-cachesim
#              --trace: equal when the simulator models the servers right)
#   simulated  the requests of one of those traces played through
#              ipvfs-cachesim's model (--replay requests, 1 I/O node x 3
#              targets) for every L1 size in UCS_SIM_L1 and policy, counted
#              over the read passes (the write phase warms the caches)
# Output in OUTDIR: ucache-sweep.csv (kind,l1_mb,l2_policy,l1_hit,
# cumulative_hit), ucache-sweep.txt (command, date), ucache-sweep.png.
#
#   benchmarks/ucache-sweep.sh [BUILDDIR]
#
# Environment: BENCH_OUT (default BUILDDIR/bench-results), UCS_L2 (default
# 4M), UCS_WS (default 24m), UCS_PASSES (default 3), UCS_LIVE_L1 (default
# "8M 16M 24M"), UCS_SIM_L1 (default "4 8 12 16 20 24 28 32", MiB),
# UCS_POLICIES (default "lru demote demote-mq").
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
out=${BENCH_OUT:-$IPVFS_BUILDDIR/bench-results}
l2=${UCS_L2:-4M}
ws=${UCS_WS:-24m}
passes=${UCS_PASSES:-3}
live_l1=${UCS_LIVE_L1:-8M 16M 24M}
sim_l1=${UCS_SIM_L1:-4 8 12 16 20 24 28 32}
policies=${UCS_POLICIES:-lru demote demote-mq}
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
ior_bin=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
[ -x "$ior_bin" ] || ipvfs_fail "$ior_bin is not built"
work=$(mktemp -d /tmp/ucache-sweep.XXXXXX) || exit 1
ipvfs_test_cleanup() { rm -rf "$work"; }
mkdir -p "$out"
csv=$out/ucache-sweep.csv
echo "kind,l1_mb,l2_policy,l1_hit,cumulative_hit" >"$csv"
block=$(python3 -c 'import sys; u = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
s = sys.argv[1].lower(); print((int(s[:-1]) * u[s[-1]] if s[-1] in u else int(s)) // 2)' "$ws")

ior() {
    timeout -k 5 300 mpiexec -n 2 env LD_PRELOAD="$E2E_ROMIO_LIB" "$ior_bin" "$@" >/dev/null ||
        ipvfs_fail "ipvfs-ior $*"
}

# counters: "L1_HITS L1_LOOKUPS L2_HITS" now.
counters() {
    ipvfs-ctl stats --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"]
l1 = [x["l1"] for x in r if "l1" in x][0]
print(l1["hits"], l1["hits"] + l1["misses"] + l1["bypasses"], sum(x["l2"]["hits"] for x in r if "l2" in x))'
}

# live L1 POLICY: one cluster; appends a live and a replay row; leaves the
# read passes' requests in $work/reads.L1.POLICY.
live() {
    local l1=$1 p=$2 c0 c1 n0 t=$work/trace.$1.$2
    ipvfs_start_cluster 1 3 --target-size 256M --no-bind --cache-l1 "$l1" --cache-l2 "$l2" \
        --cache-l2-policy "$p" --readahead 0 --trace "$t"
    ior -f ipvfs:/sweep/f -b "$block" -t 1m -w -e -k
    c0=$(counters)
    for _ in $(seq "$passes"); do ior -f ipvfs:/sweep/f -b "$block" -t 64k -r -k; done
    c1=$(counters)
    ipvfs_stop_cluster
    rm -rf "$IPVFS_CLUSTER_DIR"
    unset IPVFS_CLUSTER_DIR
    # The read passes start at the first READ request line (a request's
    # events follow its line); the replay of the lines before it is taken
    # off the whole run's, as the live counters at c0 are.
    n0=$(grep -n '^[0-9]* [0-9]* [0-9]* [0-9]* r$' "$t.io0" | head -1 | cut -d: -f1)
    [ -n "$n0" ] || ipvfs_fail "no read in $t.io0"
    head -n "$((n0 - 1))" "$t.io0" >"$t.head"
    grep '^[0-9]' "$t.head" >"$work/writes.$l1.$p"
    grep '^[0-9]' "$t.io0" >"$work/all.$l1.$p"
    python3 - "$l1" "$p" "$c0" "$c1" \
        <(ipvfs-cachesim --trace "$t.head" --json) <(ipvfs-cachesim --trace "$t.io0" --json) \
        >>"$csv" <<'PY' || ipvfs_fail "replay of $t"
import json, sys
l1, p, c0, c1, fa, fb = sys.argv[1:]
a, b = [list(map(int, s.split())) for s in (c0, c1)]
h, n, h2 = [y - x for x, y in zip(a, b)]
mb = int(l1[:-1])
print("live,%d,%s,%.4f,%.4f" % (mb, p, h / n, (h + h2) / n))
ra, rb = json.load(open(fa)), json.load(open(fb))
def d(k, lvl):
    return rb[lvl][k] - ra[lvl][k]
rh, rn = d("hits", "l1"), d("hits", "l1") + d("misses", "l1") + d("bypasses", "l1")
print("replay,%d,%s,%.4f,%.4f" % (mb, p, rh / rn, (rh + d("hits", "l2")) / rn))
PY
}

for l1 in $live_l1; do
    for p in $policies; do live "$l1" "$p"; done
done

# The simulator's model over the requests of the first live run: the
# write phase warms the caches (as live), the read passes are counted (the
# counts after the write phase taken off those of the whole run).
first=$(ls "$work"/all.* | head -1)
first=${first#"$work"/all.}
sim() {
    ipvfs-cachesim --trace "$1" --replay requests --servers 4 --targets 3 --l1 "${2}M" \
        --l2 "$l2" --pvfs 4M --l2-policy "$3" --json
}
for l1 in $sim_l1; do
    for p in $policies; do
        python3 - "$l1" "$p" <(sim "$work/writes.$first" "$l1" "$p") \
            <(sim "$work/all.$first" "$l1" "$p") >>"$csv" <<'PY' || ipvfs_fail "simulating $first"
import json, sys
l1, p, fa, fb = sys.argv[1:]
a, b = json.load(open(fa)), json.load(open(fb))
n = b["accesses"] - a["accesses"]
h1 = b["ucache"]["l1_hits"] - a["ucache"]["l1_hits"]
h2 = b["ucache"]["l2_hits"] - a["ucache"]["l2_hits"]
print("sim,%s,%s,%.4f,%.4f" % (l1, p, h1 / n, (h1 + h2) / n))
PY
    done
done

{
    echo "benchmarks/ucache-sweep.sh $*   ($(date -u '+%Y-%m-%d %H:%M UTC'); 1 RAID-5 I/O node x 3 targets;"
    echo "L2 $l2 per target; ipvfs-ior 2 ranks, $ws written in 1 MiB calls, read $passes times in 64 KiB calls;"
    echo "live L1 $live_l1; policies $policies)"
    column -s, -t "$csv"
} >"$out/ucache-sweep.txt"
cat "$out/ucache-sweep.txt"

gnuplot <<GP
set terminal pngcairo size 900,500 font ",10"
set output "$out/ucache-sweep.png"
set datafile separator ","
set key outside right
set grid
set yrange [-0.02:1.05]
set xlabel "L1 of the I/O node (MiB); L2 $l2 x 3 targets"
set ylabel "cumulative hit ratio (read passes)"
set title "uCache: hit ratio vs L1 size per L2 policy, ipvfs-ior re-read of $ws"
plot for [p in "$policies"] "< grep '^sim,[0-9]*,".p.",' $csv" using 2:5 \
        with linespoints title "sim ".p, \
     for [p in "$policies"] "< grep '^live,[0-9]*,".p.",' $csv" using 2:5 \
        with points pointsize 2 pointtype 7 title "live ".p, \
     for [p in "$policies"] "< grep '^replay,[0-9]*,".p.",' $csv" using 2:5 \
        with points pointsize 2.5 pointtype 6 title "replay of live ".p
GP
