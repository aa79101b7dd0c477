#!/bin/bash
# ucache-live.sh: uCache live, side by side in one run: cache off vs
# inclusive vs exclusive at the same total memory, re-reading a working
# set of 1.5x the I/O node's L1 (L1 + all L2 >= working set).  One RAID-5
# I/O node x 3 targets, each configuration on a fresh cluster (test/lib.sh),
# configurations taking turns in each trial:
#   off        --cache-l1 0, --cache-l2 64K (one block: the LUN files are
#              opened with O_DIRECT, so the kernel's page cache is no hidden
#              cache; the one block is all but no L2)
#   inclusive  --cache-l1 L1, --cache-l2 L2 --cache-l2-policy lru
#   exclusive  --cache-l1 L1, --cache-l2 L2 --cache-l2-policy demote (the
#              I/O node's fills carry DPO, its clean evictions are demoted)
# A protocol client (test/ipvfs_proto.py) writes the working set in 1 MiB
# pieces, syncs, then reads it PASSES times in 64 KiB reads, checking the
# bytes; the first pass warms the caches, the rest are timed (read MiB/s).
# Hit ratios are over the timed passes (ipvfs-ctl stats before and after):
# L1 = L1 hits / L1 lookups, cumulative = (L1 hits + L2 hits) / L1
# lookups; l2_hits is the L2 hits of all targets over the timed passes.  Server CPU
# seconds per GiB read (utime + stime of every serving process over the
# timed passes), and split: the I/O node (rank 0, with the metadata
# service), the three targets, and the protocol client.  Output in OUTDIR: ucache-live-trials.csv, ucache-live.csv
# (medians), ucache-live.txt (table, command, date), ucache-live.png.
#
#   benchmarks/ucache-live.sh [BUILDDIR]
#
# Environment: BENCH_OUT (default BUILDDIR/bench-results), BENCH_TRIALS
# (default 2), UCL_L1 (default 16M), UCL_L2 (per target, default 4M),
# UCL_PASSES (default 5).  The working set is 1.5 x UCL_L1.  UCL_L2_ALL
# (a size per target, e.g. 12M) adds inclusive-all: an inclusive L2 that
# holds the whole working set, served from target memory like exclusive
# but with no DPO drops and no DEMOTE traffic (what DEMOTE costs).
# UCL_DISK_RIOPS=N (root, cgroup v1 blkio) caps the target ranks' reads of
# the disk under the cluster directory at N per second (blkio.throttle.
# read_iops_device): a slower disk, like the paper's, for the same run;
# without it the disk is this machine's (fio: 64 KiB O_DIRECT random
# reads ~120 us, comparable to the whole request path, so an L2 hit saves
# little).  The .txt says which.
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
out=${BENCH_OUT:-$IPVFS_BUILDDIR/bench-results}
trials=${BENCH_TRIALS:-2}
l1=${UCL_L1:-16M}
l2=${UCL_L2:-4M}
passes=${UCL_PASSES:-5}
. "$IPVFS_SRCDIR/test/lib.sh"
mkdir -p "$out"
fifo=$(mktemp -u /tmp/ucache-live.XXXXXX)
ipvfs_test_cleanup() { rm -f "$fifo.to" "$fifo.from"; [ -d "$blkio" ] && rmdir "$blkio" 2>/dev/null; :; }
trials_csv=$out/ucache-live-trials.csv
echo "trial,config,read_MiBps,server_cpu_s_per_GiB,l1_hit,l2_hits,cumulative_hit,ionode_cpu_s_per_GiB,targets_cpu_s_per_GiB,client_cpu_s_per_GiB" >"$trials_csv"
l1_bytes=$(python3 -c 'import sys; u = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
s = sys.argv[1]; print(int(s[:-1]) * u[s[-1]] if s[-1] in u else int(s))' "$l1")
export UCL_WS=$((l1_bytes * 3 / 2)) UCL_PASSES=$passes

cpu_ticks() {
    local t=0 p
    for p in "$@"; do
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

# client MAP: writes, syncs, warms, then prints "SECONDS BYTES" of the
# timed passes after a line "timed" (the caller samples CPU around it).
client_py=$(cat <<'PYEOF'
import os, random, struct, sys, time
sys.path.insert(0, os.environ["IPVFS_SRCDIR"] + "/test")
import ipvfs_proto as P
secret, ranks = P.read_map(sys.argv[1])
addr = [r[:2] for r in ranks.values() if r[2] & 2][0]
s = P.connect(addr, timeout=30)
def call(op, body):
    status, rbody = P.call(s, op, body)
    assert status == 0, (op, status, rbody)
    return rbody
def io(pairs):
    return struct.pack("<QII", 5, len(pairs), 0) + b"".join(struct.pack("<QQ", o, l) for o, l in pairs)
assert P.hello(s, secret, 9)[0] == 0
ws, passes = int(os.environ["UCL_WS"]), int(os.environ["UCL_PASSES"])
m = random.Random(7).randbytes(ws)
for off in range(0, ws, 1 << 20):
    call(P.OP["WRITE"], io([(off, 1 << 20)]) + m[off:off + (1 << 20)])
call(P.OP["DF_SYNC"], struct.pack("<QQ", 0, 0))
def one_pass():
    for off in range(0, ws, 65536):
        if call(P.OP["READ"], io([(off, 65536)]))[24:] != m[off:off + 65536]:
            sys.exit("data differ at %d" % off)
one_pass()
print("timed", flush=True)
sys.stdin.readline()
t0 = time.monotonic()
for _ in range(passes - 1):
    one_pass()
print("%.6f %d" % (time.monotonic() - t0, (passes - 1) * ws), flush=True)
sys.stdin.readline()
PYEOF
)
# Run in the background only: exec makes the job the client itself, so
# that its CPU time can be read from /proc/$!/stat.
client() { exec python3 -c "$client_py" "$@"; }

# counters: "L1_HITS L1_LOOKUPS L2_HITS" of the cluster now (ipvfs-ctl stats).
counters() {
    "$IPVFS_CTL_BIN" stats --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"]
l1 = [x["l1"] for x in r if "l1" in x][0]
print(l1["hits"], l1["hits"] + l1["misses"] + l1["bypasses"], sum(x["l2"]["hits"] for x in r if "l2" in x))'
}

# throttle_targets PID...: the targets' reads of the cluster's disk at
# UCL_DISK_RIOPS per second (a blkio cgroup of their own).
blkio=/sys/fs/cgroup/blkio/ipvfs-ucache-live
throttle_targets() {
    local dev p
    dev=$(findmnt -no MAJ:MIN -T "$IPVFS_CLUSTER_DIR") || return 1
    # a partition is throttled through its disk
    [ -e "/sys/dev/block/$dev/partition" ] && dev=$(cat "/sys/dev/block/$dev/../dev")
    mkdir -p "$blkio" || return 1
    echo "${dev// /} $UCL_DISK_RIOPS" >"$blkio/blkio.throttle.read_iops_device" || return 1
    for p in "$@"; do
        echo "$p" >"$blkio/cgroup.procs" || return 1
    done
}

one() {
    local trial=$1 config=$2 pids t0 t1 i0 i1 k0 k1 c0 c1 res line cpid
    shift 2
    ipvfs_start_cluster 1 3 --target-size 256M --no-bind --readahead 0 "$@"
    pids=$(ipvfs_serving_pids)
    [ -n "${UCL_DISK_RIOPS:-}" ] && { throttle_targets ${pids#* } || ipvfs_fail "blkio throttle"; }
    # The client waits on a pipe between its untimed and timed parts.
    rm -f "$fifo.to" "$fifo.from"
    mkfifo "$fifo.to" "$fifo.from" || ipvfs_fail "mkfifo"
    client "$IPVFS_MAP" <"$fifo.to" >"$fifo.from" &
    cpid=$!
    exec 7>"$fifo.to" 8<"$fifo.from"
    read -r line <&8; [ "$line" = timed ] || ipvfs_fail "client ($config): $line"
    c0=$(counters)
    # shellcheck disable=SC2086
    t0=$(cpu_ticks $pids)
    # shellcheck disable=SC2086
    i0=$(cpu_ticks ${pids%% *})
    k0=$(cpu_ticks "$cpid")
    echo go >&7
    read -r res <&8 || ipvfs_fail "client ($config) ended early"
    # shellcheck disable=SC2086
    t1=$(cpu_ticks $pids)
    # shellcheck disable=SC2086
    i1=$(cpu_ticks ${pids%% *})
    k1=$(cpu_ticks "$cpid")
    c1=$(counters)
    echo done >&7
    exec 7>&- 8<&-
    wait "$cpid" || ipvfs_fail "client ($config) failed"
    ipvfs_stop_cluster
    # The next configuration starts on fresh data and logs.
    rm -rf "$IPVFS_CLUSTER_DIR"
    unset IPVFS_CLUSTER_DIR
    echo "$res $c0 $c1 $((t1 - t0)) $((i1 - i0)) $((k1 - k0))" |
        awk -v t="$trial" -v c="$config" -v hz="$(getconf CLK_TCK)" '
        { sec = $1; bytes = $2; h = $6 - $3; n = $7 - $4; l2 = $8 - $5; tk = $9; io = $10
          cl = $11; g = bytes / 2^30
          printf "%s,%s,%.1f,%.3f,%.3f,%d,%.3f,%.3f,%.3f,%.3f\n", t, c, bytes / 2^20 / sec,
                 tk / hz / g, (n ? h / n : 0), l2, (n ? (h + l2) / n : 0), io / hz / g,
                 (tk - io) / hz / g, cl / hz / g }' >>"$trials_csv"
}

for t in $(seq "$trials"); do
    one "$t" off --cache-l1 0 --cache-l2 64K --cache-l2-policy lru
    one "$t" inclusive --cache-l1 "$l1" --cache-l2 "$l2" --cache-l2-policy lru
    one "$t" exclusive --cache-l1 "$l1" --cache-l2 "$l2" --cache-l2-policy demote
    [ -z "${UCL_L2_ALL:-}" ] ||
        one "$t" inclusive-all --cache-l1 "$l1" --cache-l2 "$UCL_L2_ALL" --cache-l2-policy lru
done

python3 - "$trials_csv" "$out/ucache-live" "$*" "$l1" "$l2" "$UCL_WS" "$passes" <<'PY'
import csv, datetime, os, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out, args, l1, l2, ws, passes = sys.argv[2:8]
cols = ("read_MiBps", "server_cpu_s_per_GiB", "l1_hit", "l2_hits", "cumulative_hit",
        "ionode_cpu_s_per_GiB", "targets_cpu_s_per_GiB", "client_cpu_s_per_GiB")
med = {c: [statistics.median(float(r[k]) for r in rows if r["config"] == c) for k in cols]
       for c in dict.fromkeys(r["config"] for r in rows)}
with open(out + ".csv", "w") as f:
    f.write("config," + ",".join(cols) + "\n")
    for c, v in med.items():
        f.write("%s,%.1f,%.3f,%.3f,%d,%.3f,%.3f,%.3f,%.3f\n" % (c, *v))
with open(out + ".txt", "w") as f:
    f.write("%sbenchmarks/ucache-live.sh %s   (%s; 1 RAID-5 I/O node x 3 targets, O_DIRECT LUNs%s; "
            "L1 %s, L2 %s per target; working set %d MiB re-read %s times in 64 KiB reads, "
            "first pass untimed; median of %d trials)\n" % (
                "".join("%s=%s " % (k, os.environ[k]) for k in ("BENCH_TRIALS", "UCL_L2_ALL", "UCL_DISK_RIOPS")
                        if os.environ.get(k)),
                args or "_build", datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                " on a disk throttled to %s reads/s" % os.environ["UCL_DISK_RIOPS"]
                if os.environ.get("UCL_DISK_RIOPS") else "", l1, l2,
                int(ws) >> 20, passes, len(rows) // len(med)))
    f.write("config        read_MiBps  server_cpu_s/GiB  l1_hit  l2_hits  cumulative_hit  "
            "(cpu s/GiB: I/O node  targets  client)\n")
    for c, v in med.items():
        f.write("%-13s %9.1f  %16.3f  %6.3f  %7d  %14.3f  %20.3f  %7.3f  %6.3f\n" % (c, *v))
    f.write("exclusive/inclusive read bandwidth: %.2fx\n" % (med["exclusive"][0] / med["inclusive"][0]))
print(open(out + ".txt").read())
PY

gnuplot <<GP
set terminal pngcairo size 800,450 font ",10"
set output "$out/ucache-live.png"
set datafile separator ","
set multiplot layout 1,2 title "uCache live: re-read of 1.5 x L1 (L1 $l1, L2 $l2 x 3 targets)"
set style data histograms
set style fill solid 0.8
set key off
set yrange [0:*]
set ylabel "read MiB/s (median)"
plot "< tail -n +2 $out/ucache-live.csv" using 2:xtic(1)
set yrange [0:1]
set ylabel "cumulative hit ratio"
plot "< tail -n +2 $out/ucache-live.csv" using 6:xtic(1)
unset multiplot
GP
