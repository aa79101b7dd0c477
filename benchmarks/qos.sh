#!/bin/bash
# qos.sh: the I/O nodes' QoS policies (issue 30, doc/qos.md) on the vPFS
# paper's experiment, scaled down to minutes on one machine.
#
#   benchmarks/qos.sh [--duration S] [--out DIR] [--report-only] [BUILD]
#
# One I/O node x 2 targets whose store saturates at a known rate
# (--store-rate 50 MB/s as the paper's disk, divided by QOS_SCALE), and two
# IOR-like applications writing 1 MiB requests (benchmarks/qos-load.py,
# 8 writers each, one request in flight per writer) with the paper's SLOs:
#   App1 (40 MB/s, 100 ms): 50 MB/s (QOS_APP1_RATE) on and off every
#   DURATION/6 s
#   App2 (20 MB/s, 300 ms): from 20 to 50 MB/s over the run
# (QOS_APP2=FROM:TO, default 20:50: App2's ramp in the paper's MB/s;
# QOS_APP1_RATE and QOS_APP2 below the store's rate give a run that is
# mostly not overloaded, for the latency goal;
# QOS_SCALE=S, default 1: every rate divided by S, every latency bound
# multiplied by S, requests still 1 MiB; QOS_STORE=disk: instead of
# --store-rate, every target an emulated disk, --emulate-disk st318452lw,
# so the store has the internal parallelism of 2 disks behind RAID-0 and
# its rate is what one class alone gets under fifo), run with --qos fifo, dsfq and two-level one after the other on fresh
# clusters (default DURATION 90 s each), then one class alone writing as
# fast as the store serves (QOS_SOLO_S, default 20 s, per policy) for the
# throughput of one class.  Output in DIR (default benchmarks/results),
# named qos-* (qos-app1-R-* when QOS_APP1_RATE=R is not 50):
# qos-windows.csv (per policy, second and application: issue and served
# MB/s, client-side p95 ms, requests, the I/O node's EDF depth),
# qos-solo.csv, qos.txt (the goals' figures, the command, date and load),
# qos-fifo.png, qos-dsfq.png, qos-two-level.png (issue rate, EDF depth,
# p95 per application, as the paper's Figures 3-5, with the store's rate
# and the SLO bounds drawn).  The goals' figures come from
# benchmarks/qos-report.py, which classifies windows by the rates the
# applications were meant to issue (a held-back closed-loop writer issues
# less, so its issue rate would make a saturated window look light), with
# the old count by issue rates beside it.  --report-only: no run; qos.txt
# again from the CSVs of a run with the same settings (its command and
# date lines stay; the plots are left as they are).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
duration=90 out=$srcdir/benchmarks/results report_only=0
while [ $# -gt 0 ]; do
    case $1 in
    --duration) duration=${2:?--duration needs seconds}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --report-only) report_only=1; shift ;;
    -*) echo "qos.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
case $duration in ''|*[!0-9]*) echo "qos.sh: --duration needs whole seconds" >&2; exit 2 ;; esac
[ "$duration" -ge 12 ] || { echo "qos.sh: --duration needs 12 s or more" >&2; exit 2; }
build=$(cd "${1:-$srcdir/_build}" && pwd) || exit 2
scale=${QOS_SCALE:-1} solo=${QOS_SOLO_S:-20} app1=${QOS_APP1_RATE:-50} store=${QOS_STORE:-rate}
app2=${QOS_APP2:-20:50}
case $app2 in *[!0-9:]*|:*|*:|*:*:*|[!0-9]*) echo "qos.sh: QOS_APP2 is FROM:TO in MB/s" >&2; exit 2 ;; esac
case $app2 in *:*) ;; *) echo "qos.sh: QOS_APP2 is FROM:TO in MB/s" >&2; exit 2 ;; esac
case $store in rate|disk) ;; *) echo "qos.sh: QOS_STORE is rate or disk" >&2; exit 2 ;; esac
case $scale in ''|*[!0-9]*|0) echo "qos.sh: QOS_SCALE needs a whole number above 0" >&2; exit 2 ;; esac
# the paper's figures, rates divided and latencies multiplied by the scale
# (a shared machine's scheduling noise is tens of ms: a scale of 5 keeps
# the bounds well above it)
sc() { awk -v v="$1" -v m="$2" -v d="$3" 'BEGIN { printf "%g", v * m / d }'; }
cap=$(sc 50 1 "$scale") r1=$(sc 40 1 "$scale") r2=$(sc 20 1 "$scale")
l1=$(sc 100 "$scale" 1) l2=$(sc 300 "$scale" 1)
i1=$(sc "$app1" 1 "$scale") i2a=$(sc "${app2%:*}" 1 "$scale") i2b=$(sc "${app2#*:}" 1 "$scale")
name=qos
[ "$app1" = 50 ] || name=qos-app1-$app1
[ "$app2" = 20:50 ] || name=$name-app2-${app2/:/-}
[ "$scale" = 1 ] || name=$name-scale$scale
[ "$store" = rate ] || name=$name-disk
store_opt=(--store-rate "$cap" --target-size 512M)
if [ "$store" = disk ]; then
    # 16 writers x 64 MiB each fit; the plots' line is the disks' sum
    store_opt=(--emulate-disk st318452lw --target-size 1G)
    cap=102
fi
command -v gnuplot >/dev/null || { echo "qos.sh: gnuplot is needed" >&2; exit 1; }
IPVFS_SRCDIR=$srcdir IPVFS_BUILDDIR=$build
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$srcdir/test/lib.sh" || exit 1
mkdir -p "$out" || exit 1
csv=$out/$name-windows.csv solo_csv=$out/$name-solo.csv
period=$((duration / 6))
if [ "$report_only" = 1 ]; then
    # a run's CSVs, given the same settings: the report and plots again
    for f in "$csv" "$solo_csv" "$out/$name.txt"; do
        [ -f "$f" ] || { echo "qos.sh: --report-only: no $f" >&2; exit 1; }
    done
    policies=()
else
    echo "policy,t,app,issue_mbps,served_mbps,p95_ms,requests,edf_depth,overloaded,srv_p95_ms" >"$csv"
    echo "policy,t,app,issue_mbps,served_mbps,p95_ms,requests,edf_depth,overloaded,srv_p95_ms" >"$solo_csv"
    policies=(fifo dsfq two-level)
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for policy in "${policies[@]}"; do
    echo "policy $policy: $duration s"
    ipvfs_start_cluster 1 2 --raid 0 --no-bind --qos "$policy" "${store_opt[@]}"
    ipvfs-ctl qos set app1 --rate "$r1" --latency "$l1" >/dev/null || ipvfs_fail "qos set app1"
    ipvfs-ctl qos set app2 --rate "$r2" --latency "$l2" >/dev/null || ipvfs_fail "qos set app2"
    python3 "$srcdir/benchmarks/qos-load.py" "$IPVFS_MAP" "$policy" "$duration" "$csv" \
        "App1:app1:8:onoff:$i1:$period" "App2:app2:8:ramp:$i2a:$i2b" ||
        ipvfs_fail "qos-load.py ($policy)"
    python3 "$srcdir/benchmarks/qos-load.py" "$IPVFS_MAP" "$policy" "$solo" "$solo_csv" \
        "Solo:app1:8:closed" || ipvfs_fail "qos-load.py solo ($policy)"
    ipvfs-ctl qos status
    ipvfs_stop_cluster
    unset IPVFS_CLUSTER_DIR
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 "$srcdir/benchmarks/qos-report.py" "$csv" "$solo_csv" --store "$store" --cap "$cap" \
    --duration "$duration" --slo "App1:$r1:$l1" --slo "App2:$r2:$l2" \
    --load "App1:app1:8:onoff:$i1:$period" --load "App2:app2:8:ramp:$i2a:$i2b" \
    --conformance-csv "$out/$name-conformance.csv" >"$out/$name.txt.new" ||
    ipvfs_fail "qos-report.py"
if [ "$report_only" = 1 ]; then
    # the run's own command and date stay; say when the report was made
    grep -E '^(command|date):' "$out/$name.txt" >>"$out/$name.txt.new"
    echo "report: recomputed from the CSVs by qos-report.py on $(date -u '+%Y-%m-%d %H:%M UTC') (benchmarks/qos.sh --report-only)" >>"$out/$name.txt.new"
else
    {
        echo "command: QOS_STORE=$store QOS_SCALE=$scale QOS_SOLO_S=$solo QOS_APP1_RATE=$app1 QOS_APP2=$app2 benchmarks/qos.sh --duration $duration${1:+ $1}"
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before/after: $load0 / $load1 ($(nproc) CPUs, shared)"
    } >>"$out/$name.txt.new"
fi
mv "$out/$name.txt.new" "$out/$name.txt" || exit 1
cat "$out/$name.txt"

for policy in "${policies[@]}"; do
    grep "^$policy,.*,App1," "$csv" >"$out/.qos-a1.dat"
    grep "^$policy,.*,App2," "$csv" >"$out/.qos-a2.dat"
    gnuplot <<GP || ipvfs_fail "gnuplot ($policy)"
set terminal png size 900,900
set output "$out/$name-$policy.png"
set datafile separator ","
set multiplot layout 3,1 title "--qos $policy: store $cap MB/s; App1 ($r1 MB/s, $l1 ms) on-off at $i1 MB/s; App2 ($r2 MB/s, $l2 ms) $i2a to $i2b MB/s"
set ylabel "issue MB/s"
plot "$out/.qos-a1.dat" using 2:4 with lines title "App1", "$out/.qos-a2.dat" using 2:4 with lines title "App2", $cap with lines dt 2 title "store rate"
set ylabel "EDF depth"
plot "$out/.qos-a1.dat" using 2:8 with steps title "depth (0: unbounded)"
set ylabel "p95 ms"
set xlabel "s"
set logscale y
plot "$out/.qos-a1.dat" using 2:(\$6 > 0 ? \$6 : 1/0) with points pt 7 ps 0.5 title "App1", "$out/.qos-a2.dat" using 2:(\$6 > 0 ? \$6 : 1/0) with points pt 5 ps 0.5 title "App2", $l1 with lines dt 2 title "$l1 ms", $l2 with lines dt 3 title "$l2 ms"
unset multiplot
GP
done
rm -f "$out/.qos-a1.dat" "$out/.qos-a2.dat"
