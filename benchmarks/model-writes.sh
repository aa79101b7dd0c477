#!/bin/bash
# model-writes.sh: do the model's read equations say anything about
# writes?  On one configuration (MW_CONFIG, default 2x2) with the
# emulated disk and no L1, an open-loop Poisson load of random 64 KiB
# writes (benchmarks/ipvfs-openload -w) at MW_RATES (default 50 150 300
# 600 1000 requests/s, MW_SECONDS 6 each, the first a warm-up) into a
# MW_FILE_MIB (128) file, against the corrected variant with the
# calibration of benchmarks/model-calibrate.sh given as PARAMS, once as
# the reads' model (h_tc 0: every write pays the disk) and once with the
# targets' write-behind as a cache that absorbs every write (h_tc 1).
# The targets' emulated disks log what they served at stop.
#
#   benchmarks/model-writes.sh PARAMS [BUILDDIR]
#
# Output in BENCH_OUT (default benchmarks/results): model-writes.csv,
# model-writes.png, model-writes.stop.txt, model-writes.txt.
set -u
params=${1:?usage: model-writes.sh PARAMS [BUILDDIR]}
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${2:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$IPVFS_SRCDIR/test/lib.sh"
b=$IPVFS_BUILDDIR
out=${BENCH_OUT:-$IPVFS_SRCDIR/benchmarks/results}
cfg=${MW_CONFIG:-2x2} rates=${MW_RATES:-50 150 300 600 1000} secs=${MW_SECONDS:-6} mib=${MW_FILE_MIB:-128}
nio=${cfg%x*} nt=${cfg#*x}
romio=$b/adio/libipvfs-romio.so
mkdir -p "$out"
csv=$out/model-writes.csv
{
    echo "benchmarks/model-writes.sh $* (MW_CONFIG=$cfg MW_RATES='$rates' MW_SECONDS=$secs MW_FILE_MIB=$mib)"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/model-writes.txt"
predict() {   # H_T RATE
    "$b/tools/ipvfs-model" --variant corrected --params "$params" --nodes 6 --io-nodes "$nio" \
        --hit-io 0 --hit-target "$1" --hit-pvfs 0 --rate-min "$2" --rate-steps 1 --csv |
        awk -F, 'NR == 2 { print $3 }'
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
tsize=$(python3 -c "print(max(64, -(-$mib * 5 // (4 * $nio * $nt))) + 16)")M
ipvfs_start_cluster "$nio" "$nt" --target-size "$tsize" --emulate-disk st318452lw --cache-l1 0
mpiexec -n 2 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/mw/f -b $((mib / 2))m -t 1m \
    -w -e -k >/dev/null 2>&1 || ipvfs_fail "writing the file"
echo "config,rate_per_s,offered_per_s,achieved_per_s,mean_ms,p50_ms,p95_ms,p99_ms,reads_model_ms,writebehind_model_ms" >"$csv"
for r in $rates; do
    res=$(mpiexec -n 4 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-openload" -f ipvfs:/mw/f -w \
        -s 64K -r "$r" -t "$secs" -W 1 2>&1 | grep '^RESULT') || ipvfs_fail "ipvfs-openload -w at $r/s"
    row="$cfg,$r"
    for f in offered_per_s achieved_per_s mean_ms p50_ms p95_ms p99_ms; do
        row="$row,$(field $f <<<"$res")"
    done
    row="$row,$(predict 0 "$(field offered_per_s <<<"$res")"),$(predict 1 "$(field offered_per_s <<<"$res")")"
    echo "$row" | tee -a "$csv"
done
ipvfs_stop_cluster
grep -h 'emulated disk st318452lw: [0-9]* ios\|write-behind' "$IPVFS_CLUSTER_DIR"/log/rank-*.log |
    sort -u >"$out/model-writes.stop.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/model-writes.txt"
gnuplot <<GP || echo "gnuplot failed" >&2
set terminal pngcairo size 800,560
set output '$out/model-writes.png'
set datafile separator ','
set title 'iPVFS $cfg, emulated ST318452LW, 64 KiB random WRITEs, open loop'
set xlabel 'offered rate (requests/s)'
set ylabel 'mean response time (ms)'
set logscale y
set key top left
set grid
set label sprintf('disks written back in sequence: %d x 51 MB/s = %.0f writes/s', $nio * $nt, $nio * $nt * 51e6 / 65536) at graph 0.02, graph 0.62 tc rgb 'gray40'
plot '$csv' every ::1 using 3:5 with linespoints lw 2 pt 7 title 'measured', \\
     '' every ::1 using 3:9 with linespoints dt 2 title 'corrected, every write pays the disk (h_tc 0)', \\
     '' every ::1 using 3:10 with linespoints dt 3 title 'corrected, write-behind absorbs (h_tc 1)'
GP
