#!/bin/bash
# l1-ior.sh: IOR write then read of a file smaller than the I/O nodes' L1,
# cache off (--cache-l1 0) against on (--cache-l1 SIZE), side by side in
# one run: the two configurations take turns in each trial, each on a fresh
# cluster (default 2 I/O nodes x 2 targets, RAID-0) started through
# test/lib.sh.
#
#   benchmarks/l1-ior.sh [BUILDDIR]
#
# Per run: ipvfs-ior (4 ranks, L1IOR_BLOCK per rank, L1IOR_XFER transfers) write
# with fsync then read, the servers' CPU time (utime + stime of every
# serving process, from /proc, over the whole run) per GiB moved, and the
# L1 hit ratio from ipvfs-ctl stats --json.  A verifying run (every byte
# checked) follows each configuration's first trial.  Output in OUTDIR:
# NAME-trials.csv (every run), NAME.csv (medians), NAME.txt (table,
# command, date), NAME.png (bars); NAME is L1IOR_NAME (default l1-ior).
#
# Environment: BENCH_OUT (OUTDIR, default BUILDDIR/bench-results),
# BENCH_TRIALS (default 3), L1IOR_BLOCK (per rank, default 8m: 32 MiB in
# all, 16 MiB per I/O node), L1IOR_XFER (default 1m), L1IOR_CACHE (default
# 64M, the default L1), L1IOR_NIO and L1IOR_NT (default 2 and 2; 1 and 3
# is one RAID-5 I/O node, where 64 KiB writes are partial stripes),
# L1IOR_RANDOM=1 (each transfer at a random aligned offset of the rank's
# block, ipvfs-ior -z; the read phase reads the same offsets),
# L1IOR_SERVER_OPTS (more server options for both configurations; the
# RAID-5 figures use "--cache-l2 16M", which opens the targets' LUN files
# with O_DIRECT, so that reads of old data and parity reach the disk as
# they would without a page cache under the targets).  The
# stats after each run also give the RAID-5 stripe writes by mode
# (full-stripe vs read-modify-write + reconstruct-write) in the CSVs.
#
# RAID-5 figures in benchmarks/results/ (one I/O node x 3 targets):
#   L1IOR_NIO=1 L1IOR_NT=3 L1IOR_XFER=64k L1IOR_BLOCK=24m L1IOR_CACHE=128M \
#       L1IOR_SERVER_OPTS="--cache-l2 16M" L1IOR_NAME=l1-ior-raid5-64k
#   L1IOR_NIO=1 L1IOR_NT=3 L1IOR_XFER=4k L1IOR_BLOCK=8m L1IOR_RANDOM=1 \
#       L1IOR_SERVER_OPTS="--cache-l2 16M" L1IOR_NAME=l1-ior-raid5-4k-random
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
out=${BENCH_OUT:-$IPVFS_BUILDDIR/bench-results}
trials=${BENCH_TRIALS:-3}
block=${L1IOR_BLOCK:-8m}
cache=${L1IOR_CACHE:-64M}
xfer=${L1IOR_XFER:-1m}
nio=${L1IOR_NIO:-2}
nt=${L1IOR_NT:-2}
name=${L1IOR_NAME:-l1-ior}
random=${L1IOR_RANDOM:-0}
server_opts=${L1IOR_SERVER_OPTS:-}
zflag=
[ "$random" = 1 ] && zflag=-z
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
for f in "$lib" "$ior"; do
    [ -e "$f" ] || { echo "l1-ior.sh: $f is not built" >&2; exit 1; }
done
. "$IPVFS_SRCDIR/test/lib.sh"
mkdir -p "$out"
trials_csv=$out/$name-trials.csv
echo "trial,config,op,MiBps,server_cpu_s_per_GiB,l1_hit_ratio,full_stripe_writes,partial_stripe_writes" >"$trials_csv"

run_ior() {
    # shellcheck disable=SC2086
    timeout -k 5 300 mpiexec -n 4 env LD_PRELOAD="$lib" "$ior" -f ipvfs:/bench/l1ior -b "$block" \
        -t "$xfer" -w -r -e $zflag "$@"
}

# cpu_ticks PIDS: utime + stime of the processes, in clock ticks.
cpu_ticks() {
    local t=0 p
    for p in "$@"; do
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

# one TRIAL CONFIG CACHE: a fresh cluster, the timed run, rows to the CSV.
one() {
    local trial=$1 config=$2 size=$3 res pids ticks0 ticks1 hit bytes
    # shellcheck disable=SC2086
    ipvfs_start_cluster "$nio" "$nt" --target-size 1G --cache-l1 "$size" $server_opts
    pids=$(ipvfs_serving_pids)
    # shellcheck disable=SC2086
    ticks0=$(cpu_ticks $pids)
    res=$(run_ior) || ipvfs_fail "ipvfs-ior failed ($config): $res"
    # shellcheck disable=SC2086
    ticks1=$(cpu_ticks $pids)
    read -r hit fsw psw < <(ipvfs-ctl stats --json | python3 -c '
import json, sys
r = [r for r in json.load(sys.stdin)["ranks"] if "l1" in r]
l = [x["l1"] for x in r]
h = sum(x["hits"] for x in l); n = h + sum(x["misses"] + x["bypasses"] for x in l)
w = [x["iraid"] for x in r]
print("%.3f %d %d" % (h / n if n else 0, sum(x["full_stripe_writes"] for x in w),
                      sum(x["rmw_writes"] + x["reconstruct_writes"] for x in w)))')
    if [ "$trial" = 1 ]; then
        run_ior -v >/dev/null || ipvfs_fail "verification failed ($config)"
    fi
    ipvfs_stop_cluster
    bytes=$(echo "$res" | sed -n 's/^RESULT op=write .* bytes=\([0-9]*\).*/\1/p')
    for op in write read; do
        local bw
        bw=$(echo "$res" | sed -n "s/^RESULT op=$op .*MiBps=\([0-9.]*\).*/\1/p")
        awk -v t="$trial" -v c="$config" -v op="$op" -v bw="$bw" -v tk=$((ticks1 - ticks0)) \
            -v hz="$(getconf CLK_TCK)" -v b="${bytes:-0}" -v h="$hit" -v f="$fsw" -v p="$psw" \
            'BEGIN { printf "%s,%s,%s,%s,%.3f,%s,%s,%s\n", t, c, op, bw, (b > 0 ? tk / hz / (2 * b / 2^30) : 0), h, f, p }' \
            >>"$trials_csv"
    done
}

for t in $(seq "$trials"); do
    one "$t" off 0
    one "$t" on "$cache"
done

# The command as given, with the environment that shaped it.
cmdline="$(env | grep -E '^(L1IOR_[A-Z_]*|BENCH_TRIALS)=' | sort | sed 's/=\(.*\)/="\1"/' |
    tr '\n' ' ')benchmarks/l1-ior.sh ${*:-_build}"
python3 - "$trials_csv" "$out/$name" "$cmdline" "$block" "$cache" "$xfer" "$nio x $nt" "$random" \
    "$server_opts" <<'PY'
import csv, statistics, sys, datetime
rows = list(csv.DictReader(open(sys.argv[1])))
out, args, block, cache, xfer, shape, rnd, sopts = sys.argv[2:10]
med = {}
for cfg in ("off", "on"):
    for op in ("write", "read"):
        r = [x for x in rows if x["config"] == cfg and x["op"] == op]
        med[cfg, op] = tuple(statistics.median(float(x[k]) for x in r) for k in (
            "MiBps", "server_cpu_s_per_GiB", "l1_hit_ratio", "full_stripe_writes",
            "partial_stripe_writes"))
with open(out + ".csv", "w") as f:
    f.write("config,op,MiBps,server_cpu_s_per_GiB,l1_hit_ratio,full_stripe_writes,"
            "partial_stripe_writes\n")
    for (cfg, op), v in med.items():
        f.write("%s,%s,%.1f,%.3f,%.3f,%d,%d\n" % (cfg, op, *v))
with open(out + ".txt", "w") as f:
    f.write("%s%s   (%s; 4 ranks x %s, %s %s transfers, %s (I/O nodes x "
            "targets), --cache-l1 0 vs %s%s; median of %d trials)\n" % (
                "", args,
                datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), block,
                "random" if rnd == "1" else "sequential", xfer, shape, cache,
                ", both with " + sopts if sopts else "", len(rows) // 4))
    f.write("config  op      MiBps  server_cpu_s/GiB(write+read run)  l1_hit_ratio  "
            "RAID-5 stripe writes: full  partial(rmw+rcw)\n")
    for (cfg, op), v in med.items():
        f.write("%-7s %-6s %7.1f  %8.3f  %.3f  %6d  %6d\n" % (cfg, op, *v))
    for op in ("write", "read"):
        f.write("on/off %s: %.2fx\n" % (op, med["on", op][0] / med["off", op][0]))
print(open(out + ".txt").read())
PY

gnuplot <<GP
set terminal pngcairo size 700,450 font ",10"
set output "$out/$name.png"
set datafile separator ","
set style data histograms
set style histogram clustered
set style fill solid 0.8
set ylabel "MiB/s (median)"
set yrange [0:*]
set title "IOR ($nio x $nt, $xfer $([ "$random" = 1 ] && echo random) transfers) write then read, file < L1: --cache-l1 0 vs $cache"
set key top left
plot "< grep ',write,' $out/$name.csv" using 3:xtic(1) title "write", \
     "< grep ',read,' $out/$name.csv" using 3 title "read"
GP
