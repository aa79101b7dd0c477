#!/bin/bash
# model-validate.sh: the queuing model (ipvfs-model) against the running
# system.  For each configuration of the same total rank count (default
# 1x5, 2x2 and 3x1 of 6 ranks; 3x1, one target per I/O node, is the
# PVFS-like one: each I/O node's "local disk" is its one target), with
# the emulated disk (--emulate-disk st318452lw) and no caches (--cache-l1
# 0, no L2: hit ratios 0, as the model is told):
#   1. benchmarks/model-calibrate.sh measures the parameters on that
#      configuration (model-validate-NIOxNT.params);
#   2. ipvfs-model predicts its saturation rate (corrected variant);
#   3. an open-loop Poisson load (benchmarks/ipvfs-openload, MV_CLIENTS
#      ranks, default 12: a rank with several nonblocking reads in
#      flight stretches them, benchmarks/results/model-validate.md) of
#      random 64 KiB reads of a MV_FILE_MIB (256)
#      file sweeps the rate over MV_POINTS (default 10 30 50 70 80 90 95
#      120 150 200) percent of that prediction, MV_SECONDS (8) each, the
#      first second a warm-up, in MV_TRIALS (3) rounds (each round all
#      points in turn, so that the machine's drift spreads over them);
#      a point's figures are the medians of its trials; the overload
#      points measure the capacity (the highest median achieved rate);
#   4. every variant of the model (lcn2005, journal, corrected) predicts
#      the mean response at each offered rate.
# Output in BENCH_OUT (default BUILDDIR/bench-results), each file named
# after MV_NAME (default model-validate): NAME-trials.csv (every run),
# NAME.csv (one row per point, the medians: measured mean, p50, p95, p99,
# achieved rate, and the three predictions at the median offered rate),
# NAME-sat.csv (per configuration: measured capacity = the highest
# achieved rate, and each variant's saturation rate), NAME-NIOxNT.png
# (measured vs predicted mean response against the rate, the emulated
# disks' capacity marked), NAME-NIOxNT.params (the calibration),
# NAME-NIOxNT.stop.txt (the place and disk counters the sweep's cluster
# logged at stop: the place time under load), NAME.txt (the commands,
# dates and loads of the machine) and NAME-report.txt (the errors against
# the issue's goals: benchmarks/model-validate-report.py).
#
#   benchmarks/model-validate.sh [BUILDDIR]
#
# MV_INFLIGHT: at most this many requests in flight per client rank
# (ipvfs-openload -Q; default none): past saturation the backlog then
# waits in the generator, not in the client library, so that the
# overload points measure the servers' capacity.
# Environment: MV_CONFIGS (default "1x5 2x2 3x1"), MV_CLIENTS, MV_INFLIGHT, MV_POINTS,
# MV_SECONDS, MV_TRIALS, MV_FILE_MIB, BENCH_OUT, MV_NAME, MV_APPEND and
# MV_ANALYSE_ONLY (below), and for benchmarks/model-validate-hosts.sh
# MV_CLIENT_ON, MV_SERVER_ARGS, MV_TITLE, MV_IO_LINK_BPS, MV_T_LINK_BPS,
# MV_READ_PLACES (ipvfs-model --read-places: the servers' READ places
# per target; default 1, what auto gives a target on the I/O node's host),
# MV_IN_ORDER (default 1: ipvfs-model --in-order, the datafile store's
# delivery of the one file's reads in submission order; 0: any order),
# MV_MODEL_CLIENTS (ipvfs-model --clients; default 0: a client process
# keeps several reads in flight; MV_CLIENTS for a client that sends one
# at a time, as the client library did before its accesses ran side by side).
# It runs about 6 minutes per configuration, disk-bound by design (a few
# percent of a core per node).
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$IPVFS_SRCDIR/test/lib.sh"
b=$IPVFS_BUILDDIR
out=${BENCH_OUT:-$b/bench-results}
configs=${MV_CONFIGS:-1x5 2x2 3x1}
clients=${MV_CLIENTS:-12}
# the model's client processes (ipvfs-model --clients): the client ranks,
# each of which runs one batch at a time in today's client library; 0
# once a process keeps several reads in flight
model_clients=${MV_MODEL_CLIENTS:-0}
points=${MV_POINTS:-10 30 50 70 80 90 95 120 150 200}
secs=${MV_SECONDS:-8}
trials=${MV_TRIALS:-3}
mib=${MV_FILE_MIB:-256}
model=$b/tools/ipvfs-model
romio=$b/adio/libipvfs-romio.so
mkdir -p "$out"
name=${MV_NAME:-model-validate}
csv=$out/$name.csv
tcsv=$out/$name-trials.csv
sat=$out/$name-sat.csv
txt=$out/$name.txt
# MV_APPEND=1: add to the trials of an earlier run (one configuration
# per run, to keep each run short); the analysis covers them all.
# MV_ANALYSE_ONLY=1: no measurement, only the analysis of the trials
# there are (the model evaluated anew).
if [ "${MV_ANALYSE_ONLY:-0}" != 1 ]; then
    [ "${MV_APPEND:-0}" = 1 ] && [ -s "$tcsv" ] ||
        echo "config,trial,pct,rate_per_s,offered_per_s,achieved_per_s,mean_ms,p50_ms,p95_ms,p99_ms,lag_max_ms" >"$tcsv"
    [ "${MV_APPEND:-0}" = 1 ] || : >"$txt"
    {
        echo "benchmarks/model-validate.sh $* (MV_CONFIGS='$configs' MV_CLIENTS=$clients MV_INFLIGHT=${MV_INFLIGHT:-} MV_POINTS='$points' MV_SECONDS=$secs MV_TRIALS=$trials MV_FILE_MIB=$mib MV_READ_PLACES=${MV_READ_PLACES:-1} MV_MODEL_CLIENTS=$model_clients${MV_TITLE:+; $MV_TITLE})"
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    } >>"$txt"
fi
# clients' mpiexec, on an emulated host when MV_CLIENT_ON names a command
# prefix that runs there (benchmarks/model-validate-hosts.sh)
climpi() {
    ${MV_CLIENT_ON:-} mpiexec "$@"
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
# the corrected variant knows the client ranks (--clients: each runs one
# request at a time); the papers' variants ignore it
# the reads are of one file, one datafile per I/O node, which its store
# delivers in submission order (ipvfs-model --in-order; MV_IN_ORDER=0: not)
in_order=(--in-order)
[ "${MV_IN_ORDER:-1}" = 0 ] && in_order=()
predict() {   # VARIANT PARAMS NIO RATE: the model's mean (ms), empty past saturation
    "$model" --variant "$1" --params "$2" --nodes 6 --io-nodes "$3" --hit-io 0 --hit-target 0 \
        --clients "$model_clients" --read-places "${MV_READ_PLACES:-1}" "${in_order[@]}" \
        --hit-pvfs 0 --rate-min "$4" --rate-steps 1 --csv | awk -F, 'NR == 2 { print $3 }'
}
saturation() {   # VARIANT PARAMS NIO
    "$model" --variant "$1" --params "$2" --nodes 6 --hit-io 0 --hit-target 0 --hit-pvfs 0 \
        --clients "$model_clients" --read-places "${MV_READ_PLACES:-1}" "${in_order[@]}" \
        --splits --csv | awk -F, -v nio="$3" '$1 == "ipvfs" && $2 == nio { print $4 }'
}

measure() {   # CFG: calibrates, sweeps, appends to the trials CSV
    local cfg=$1 nio=${1%x*} nt=${1#*x} params=$out/$name-$1.params pred_sat tsize trial pct rate res row f
    echo "=== $cfg: calibrating"
    MC_FILE_MIB=$mib "$IPVFS_SRCDIR/benchmarks/model-calibrate.sh" "$nio" "$nt" "$params" "$b" \
        >"$out/$name-$cfg.calibrate.log" 2>&1 ||
        { tail -20 "$out/$name-$cfg.calibrate.log"; ipvfs_fail "calibrating $cfg"; }
    pred_sat=$(saturation corrected "$params" "$nio")
    [ -n "$pred_sat" ] || ipvfs_fail "ipvfs-model gave no saturation for $cfg"
    tsize=$(sed -n 's/.*--target-size \([0-9]*M\).*/\1/p' "$params")
    echo "=== $cfg: predicted saturation $pred_sat/s (corrected), sweeping"
    ipvfs_start_cluster "$nio" "$nt" --target-size "$tsize" --emulate-disk st318452lw --cache-l1 0 \
        ${MV_SERVER_ARGS:-}
    climpi -n 2 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/mv/big \
        -b $((mib / 2))m -t 1m -w -e -k >/dev/null 2>&1 || ipvfs_fail "writing the file"
    for trial in $(seq "$trials"); do
        for pct in $points; do
            rate=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) * int(sys.argv[2]) / 100))" "$pred_sat" "$pct")
            res=$(climpi -n "$clients" env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-openload" \
                -f ipvfs:/mv/big -s 64K -r "$rate" -t "$secs" -W 1 -x "$trial$pct" \
                ${MV_INFLIGHT:+-Q "$MV_INFLIGHT"} 2>&1 |
                grep '^RESULT') || ipvfs_fail "ipvfs-openload at $rate/s"
            row="$cfg,$trial,$pct,$rate"
            for f in offered_per_s achieved_per_s mean_ms p50_ms p95_ms p99_ms lag_max_ms; do
                row="$row,$(field $f <<<"$res")"
            done
            echo "$row" | tee -a "$tcsv"
        done
    done
    ipvfs_stop_cluster
    # what the sweep did to the places and the disks (logged at stop):
    # the place time under load, against the calibration's at a low rate
    grep -h 'READs held a place\|a place freed\|waited for a place\|were answered\|emulated disk st318452lw: [0-9]* ios' \
        "$IPVFS_CLUSTER_DIR"/log/rank-*.log \
        >"$out/$name-$cfg.stop.txt"
    rm -rf "$IPVFS_CLUSTER_DIR"
    unset IPVFS_CLUSTER_DIR
}

# analyse CFG: the medians of each point's trials, the model at the
# median offered rate (the ipvfs-model of this build, so that a changed
# variant can be checked against the same measurements: MV_ANALYSE_ONLY)
analyse() {
    local cfg=$1 nio=${1%x*} nt=${1#*x} params=$out/$name-$1.params best=0 row off ach v dmean
    python3 - "$tcsv" "$cfg" <<'PY' >"$out/.mv-medians"
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["config"] == sys.argv[2]]
pcts = sorted({int(r["pct"]) for r in rows})
for p in pcts:
    rs = [r for r in rows if int(r["pct"]) == p]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    print(",".join([sys.argv[2], str(p), rs[0]["rate_per_s"]] +
                   ["%.4f" % med(k) for k in ("offered_per_s", "achieved_per_s", "mean_ms", "p50_ms",
                                              "p95_ms", "p99_ms", "lag_max_ms")]))
PY
    while IFS= read -r row; do
        off=$(cut -d, -f4 <<<"$row") ach=$(cut -d, -f5 <<<"$row")
        for v in lcn2005 journal corrected; do
            row="$row,$(predict "$v" "$params" "$nio" "$off")"
        done
        echo "$row" >>"$csv"
        best=$(python3 -c "import sys; print(max(float(sys.argv[1]), float(sys.argv[2])))" "$best" "$ach")
    done <"$out/.mv-medians"
    rm -f "$out/.mv-medians"
    dmean=$(sed -n 's/.*service mean \([0-9.]*\) ms.*/\1/p' "$params")
    echo "$cfg,$best,$(saturation lcn2005 "$params" "$nio"),$(saturation journal "$params" "$nio"),$(saturation corrected "$params" "$nio"),$(python3 -c "import sys; print('%.1f' % (int(sys.argv[1]) * int(sys.argv[2]) * 1e3 / float(sys.argv[3])))" "$nio" "$nt" "$dmean"),$dmean" >>"$sat"
}

if [ "${MV_ANALYSE_ONLY:-0}" != 1 ]; then
    for cfg in $configs; do
        measure "$cfg"
    done
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$txt"
fi
# every configuration measured so far (MV_APPEND runs add up)
configs=$(awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$tcsv")
echo "config,pct,rate_per_s,offered_per_s,achieved_per_s,mean_ms,p50_ms,p95_ms,p99_ms,lag_max_ms,lcn2005_ms,journal_ms,corrected_ms" >"$csv"
echo "config,measured_capacity_per_s,lcn2005_sat_per_s,journal_sat_per_s,corrected_sat_per_s,disks_capacity_per_s,disk_mean_ms" >"$sat"
for cfg in $configs; do
    analyse "$cfg"
done
python3 "$IPVFS_SRCDIR/benchmarks/model-validate-report.py" "$out" "$name" >"$out/$name-report.txt"
cat "$out/$name-report.txt"

# One figure per configuration: measured and predicted mean response
# against the offered rate, with the emulated disks' capacity (every disk
# busy all the time: NIO NT / E(T_disk)) as the physical limit.
for cfg in $configs; do
    cap=$(awk -F, -v c="$cfg" '$1 == c { print $6 }' "$sat")
    gnuplot <<GP || echo "gnuplot failed for $cfg" >&2
set terminal pngcairo size 800,560
set output '$out/$name-$cfg.png'
set datafile separator ','
set title 'iPVFS $cfg (6 ranks), emulated ST318452LW, 64 KiB random reads, open loop${MV_TITLE:+, $MV_TITLE}'
set xlabel 'offered rate (requests/s)'
set ylabel 'mean response time (ms)'
set logscale y
set key top left
set grid
set arrow from $cap, graph 0 to $cap, graph 1 nohead dt 2 lc rgb 'gray40'
set label 'disks busy 100%' at $cap, graph 0.95 right offset -0.5,0 tc rgb 'gray40'
$(if [ -n "${MV_IO_LINK_BPS:-}${MV_T_LINK_BPS:-}" ]; then
    link=$(python3 -c "
import sys
nio, nt = map(int, sys.argv[1].split('x'))
caps = [nio * int(sys.argv[2]), nio * nt * int(sys.argv[3])]
print('%.1f' % (min(c for c in caps if c > 0) / 65536))" "$cfg" "${MV_IO_LINK_BPS:-0}" "${MV_T_LINK_BPS:-0}")
    echo "set arrow from $link, graph 0 to $link, graph 1 nohead dt 3 lc rgb 'dark-red'"
    echo "set label 'shaped links full' at $link, graph 0.88 right offset -0.5,0 tc rgb 'dark-red'"
fi)
plot '< grep "^$cfg," $csv' using 4:6 with linespoints lw 2 pt 7 title 'measured', \\
     '' using 4:11 with linespoints dt 3 title 'lcn2005 (paper)', \\
     '' using 4:12 with linespoints dt 4 title 'journal (paper)', \\
     '' using 4:13 with linespoints lw 2 dt 2 title 'corrected'
GP
done
echo "results in $out: $name.csv, $name-sat.csv, $name-*.png, $name.txt"
