#!/bin/bash
# qos-rebuild.sh: internal work as a QoS class (issue 30, doc/qos.md):
# a rebuild of one RAID-5 member while an application with an SLO writes,
# with the rebuild unpaced and paced by --qos-internal MIN:MAX.
#
#   benchmarks/qos-rebuild.sh [--duration S] [--out DIR] [BUILD]
#
# One I/O node x 4 targets, RAID-5, every target an emulated disk
# (--emulate-disk st318452lw, 51 MB/s), --qos two-level.  The application
# "app" (SLO QOS_REB_RATE MB/s, default 8, p95 QOS_REB_LAT ms, default
# 40) writes 1 MiB requests at its rate from 8 writers
# (benchmarks/qos-load.py) for DURATION s (default 60); 5 s in,
# `ipvfs-ctl rebuild 0 2` rebuilds member 2 in full.  Two runs side by
# side on fresh clusters: "unpaced" (no --qos-internal) and "paced"
# (--qos-internal QOS_REB_INTERNAL, default 2:0: 2 MB/s while the
# application writes, unlimited when it does not).  The rebuild must
# complete in each run (the script waits up to QOS_REB_WAIT s, default
# 600, after the load).  Output in DIR (default benchmarks/results):
# qos-rebuild-windows.csv (run,t,app,issue,served,p95 ms,requests,...),
# qos-rebuild-progress.csv (run,t,done_fraction,rebuild_mbps),
# qos-rebuild.txt (windows within the bound, during the rebuild and in
# all, rebuild time; command, date, load), qos-rebuild.png.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
duration=60 out=$srcdir/benchmarks/results
while [ $# -gt 0 ]; do
    case $1 in
    --duration) duration=${2:?--duration needs seconds}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "qos-rebuild.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
case $duration in ''|*[!0-9]*) echo "qos-rebuild.sh: --duration needs whole seconds" >&2; exit 2 ;; esac
[ "$duration" -ge 15 ] || { echo "qos-rebuild.sh: --duration needs 15 s or more" >&2; exit 2; }
build=$(cd "${1:-$srcdir/_build}" && pwd) || exit 2
rate=${QOS_REB_RATE:-8} lat=${QOS_REB_LAT:-40} internal=${QOS_REB_INTERNAL:-2:0}
wait_max=${QOS_REB_WAIT:-600}
command -v gnuplot >/dev/null || { echo "qos-rebuild.sh: gnuplot is needed" >&2; exit 1; }
IPVFS_SRCDIR=$srcdir IPVFS_BUILDDIR=$build
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$srcdir/test/lib.sh" || exit 1
mkdir -p "$out" || exit 1
name=qos-rebuild
csv=$out/$name-windows.csv prog=$out/$name-progress.csv
echo "policy,t,app,issue_mbps,served_mbps,p95_ms,requests,edf_depth,overloaded,srv_p95_ms" >"$csv"
echo "run,t,done_fraction,rebuild_mbps" >"$prog"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# member 2's rebuild: "DONE TOTAL STATE" of rank 0's volume
member2() {
    ipvfs-ctl status --json 2>/dev/null | python3 -c '
import json, sys
m = json.load(sys.stdin)["ranks"][0]["volume"]["members"][2]
print(m.get("done_bytes", 0), m.get("total_bytes", 0), m["state"])' 2>/dev/null
}

for run in unpaced paced; do
    extra=()
    [ "$run" = unpaced ] || extra=(--qos-internal "$internal")
    echo "run $run: $duration s"
    ipvfs_start_cluster 1 4 --raid 5 --target-size 256M --no-bind --qos two-level \
        --emulate-disk st318452lw "${extra[@]}"
    ipvfs-ctl qos set app --rate "$rate" --latency "$lat" >/dev/null || ipvfs_fail "qos set app"
    python3 "$srcdir/benchmarks/qos-load.py" "$IPVFS_MAP" "$run" "$duration" "$csv" \
        "App:app:8:ramp:$rate:$rate" &
    load_pid=$!
    # the load's t = 0 is one second after it starts
    t0=$(($(date +%s%N) / 1000000 + 1000))
    sleep 6
    ipvfs-ctl rebuild 0 2 >/dev/null || ipvfs_fail "rebuild 0 2 ($run)"
    start_ms=$(($(date +%s%N) / 1000000)) end_ms= last_done=0 last_ms=$start_ms
    while :; do
        now_ms=$(($(date +%s%N) / 1000000))
        read -r done total state <<<"$(member2)"
        if [ "${state:-}" = up ]; then
            end_ms=$now_ms
            echo "$run,$(awk -v t="$now_ms" -v z="$t0" 'BEGIN{printf "%.1f", (t-z)/1000}'),1,0" >>"$prog"
            break
        fi
        if [ -n "${total:-}" ] && [ "$total" -gt 0 ]; then
            awk -v r="$run" -v t="$now_ms" -v z="$t0" -v d="$done" -v n="$total" \
                -v pd="$last_done" -v pt="$last_ms" 'BEGIN {
                printf "%s,%.1f,%.4f,%.2f\n", r, (t - z) / 1000, d / n,
                    (t > pt ? (d - pd) / 1e6 / ((t - pt) / 1000) : 0) }' >>"$prog"
            last_done=$done last_ms=$now_ms
        fi
        [ $((now_ms - start_ms)) -lt $(((duration + wait_max) * 1000)) ] || break
        sleep 1
    done
    wait "$load_pid" || ipvfs_fail "qos-load.py ($run)"
    [ -n "$end_ms" ] || ipvfs_fail "the rebuild of member 2 did not complete ($run)"
    echo "$run,$(((end_ms - start_ms)))" >>"$out/.$name-times"
    ipvfs-ctl qos status
    ipvfs_stop_cluster
    unset IPVFS_CLUSTER_DIR
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$csv" "$prog" "$out/.$name-times" "$lat" "$rate" >"$out/$name.txt" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
prog = list(csv.DictReader(open(sys.argv[2])))
times = dict(l.strip().split(",") for l in open(sys.argv[3]) if l.strip())
bound, rate = float(sys.argv[4]), float(sys.argv[5])
print("app: SLO %g MB/s, p95 within %g ms; emulated disks of 51 MB/s (the physical limit)" % (rate, bound))
print("%-8s %14s %18s %10s" % ("run", "windows met", "met while rebuild", "rebuild s"))
for run in ("unpaced", "paced"):
    p = [r for r in prog if r["run"] == run]
    t_end = max(float(r["t"]) for r in p) if p else 0
    t_start = 5.0
    w = [r for r in rows if r["policy"] == run and int(r["t"]) > 0 and int(r["requests"]) > 0]
    met = [r for r in w if float(r["p95_ms"]) <= bound]
    wr = [r for r in w if t_start <= int(r["t"]) < t_end]
    wr_met = [r for r in wr if float(r["p95_ms"]) <= bound]
    served = sum(float(r["served_mbps"]) for r in w) / max(len(w), 1)
    print("%-8s %5d/%-4d %3.0f%% %8d/%-4d %3.0f%% %10.1f  (app served %.1f MB/s)" % (
        run, len(met), len(w), 100.0 * len(met) / max(len(w), 1), len(wr_met), len(wr),
        100.0 * len(wr_met) / max(len(wr), 1), int(times.get(run, 0)) / 1000, served))
PYEOF
rm -f "$out/.$name-times"
cat "$out/$name.txt"
{
    echo "command: QOS_REB_RATE=$rate QOS_REB_LAT=$lat QOS_REB_INTERNAL=$internal benchmarks/qos-rebuild.sh --duration $duration${1:+ $1}"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), load before/after: $load0 / $load1 ($(nproc) CPUs, shared)"
} >>"$out/$name.txt"

for run in unpaced paced; do
    grep "^$run,.*,App," "$csv" >"$out/.$name-$run.dat"
    grep "^$run," "$prog" >"$out/.$name-$run-prog.dat"
done
gnuplot <<GP || ipvfs_fail "gnuplot"
set terminal png size 900,700
set output "$out/$name.png"
set datafile separator ","
set multiplot layout 2,1 title "RAID-5 rebuild of one member (4 emulated 51 MB/s disks) while app ($rate MB/s, $lat ms) writes; paced: --qos-internal $internal"
set ylabel "app p95 ms"
set logscale y
plot "$out/.$name-unpaced.dat" using 2:(\$6 > 0 ? \$6 : 1/0) with points pt 7 ps 0.6 title "unpaced", "$out/.$name-paced.dat" using 2:(\$6 > 0 ? \$6 : 1/0) with points pt 5 ps 0.6 title "paced", $lat with lines dt 2 title "bound $lat ms"
unset logscale y
set ylabel "rebuild done"
set xlabel "s"
set yrange [0:1.05]
plot "$out/.$name-unpaced-prog.dat" using 2:3 with lines title "unpaced", "$out/.$name-paced-prog.dat" using 2:3 with lines title "paced"
unset multiplot
GP
rm -f "$out"/.$name-*.dat
