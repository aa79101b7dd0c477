#!/bin/bash
# readahead.sh: the I/O nodes' sequential read-ahead (issue 14) against a
# baseline build, side by side in one run.
#
#   benchmarks/readahead.sh [--trials N] [--out DIR] BASE_BUILD [BUILD]
#
# Three configurations take turns in every trial, each on a fresh cluster
# (2 I/O nodes x 2 targets, RAID-0, the default 64M L1, started as the
# doc/launching.md documents through test/lib.sh):
#   base     BASE_BUILD's servers and client library (today's main)
#   ra-off   BUILD (default _build of this tree) with --readahead 0
#   ra-on    BUILD with its default --readahead
# Each trial: 4 ranks of BUILD's ipvfs-ior write a file per process of
# RA_BLOCK each (default 64m: 256 MiB, twice the two I/O nodes' L1s, so
# every read starts cold) and RA_RAND each (default 16m) for the random
# reads (untimed), then read the first sequentially with 1 MiB transfers
# and the second with 4 KiB reads at random offsets (p50/p99 of one call).
# CPU: the client ranks' (getrusage in ipvfs-ior) plus the serving
# processes' of I/O nodes and targets (utime + stime from /proc, before
# and after), per GiB read.  Turns (several short runs, each
# configuration's next to the others') keep the load of a shared machine
# from favouring one.  Output in DIR (default benchmarks/results):
# readahead-trials.csv, readahead.csv (medians; case,config,mib_s,
# cpu_s_per_gib,p50_us,p99_us), readahead.txt (table, command, date, load)
# and readahead.png.
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
trials=5 out=$srcdir/benchmarks/results
while [ $# -gt 0 ]; do
    case $1 in
    --trials) trials=${2:?--trials needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "readahead.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: readahead.sh [--trials N] [--out DIR] BASE_BUILD [BUILD]" >&2; exit 2; }
case $trials in ''|*[!0-9]*|0) echo "readahead.sh: --trials needs a number above 0" >&2; exit 2 ;; esac
base=$(cd "$1" && pwd) && build=$(cd "${2:-$srcdir/_build}" && pwd) || exit 2
block=${RA_BLOCK:-64m} rand=${RA_RAND:-16m} np=4
ior=$build/benchmarks/ipvfs-ior
for f in "$ior" "$base/adio/libipvfs-romio.so" "$build/adio/libipvfs-romio.so"; do
    [ -e "$f" ] || { echo "readahead.sh: $f is not built" >&2; exit 1; }
done
IPVFS_SRCDIR=$srcdir IPVFS_BUILDDIR=$build
export IPVFS_SRCDIR IPVFS_BUILDDIR
. "$srcdir/test/lib.sh" || exit 1
mkdir -p "$out" || exit 1
trials_csv=$out/readahead-trials.csv
echo "trial,case,config,mib_s,client_cpu_s,server_cpu_s,gib,p50_us,p99_us" >"$trials_csv"

# serving_pids: every rank's serving process (ipvfs-ctl status --json).
serving_pids() {
    "$IPVFS_CTL_BIN" status --json | python3 -c '
import json, sys
print(" ".join(str(r["pid"]) for r in json.load(sys.stdin)["ranks"]))'
}

# cpu_of PIDS...: their utime + stime, in seconds.
cpu_of() {
    local tck sum=0 p
    tck=$(getconf CLK_TCK)
    for p in "$@"; do
        sum=$((sum + $(sed 's/.*) //' "/proc/$p/stat" | awk '{ print $12 + $13 }')))
    done
    awk -v s="$sum" -v t="$tck" 'BEGIN { printf "%.3f", s / t }'
}

ior_run() {
    timeout -k 5 300 mpiexec -n $np env LD_PRELOAD="$lib" "$ior" "$@" 2>&1
}

# phase TRIAL CASE CONFIG IOR_ARGS...: one timed read, with the servers' CPU.
phase() {
    local trial=$1 case=$2 config=$3 o s0 s1 line
    shift 3
    s0=$(cpu_of $pids)
    o=$(ior_run "$@") || ipvfs_fail "ipvfs-ior $* failed: $(echo "$o" | tail -n 5)"
    s1=$(cpu_of $pids)
    line=$(grep '^RESULT' <<<"$o")
    grep -q ' errors=0 ' <<<"$line" || ipvfs_fail "ipvfs-ior $* reported errors: $line"
    python3 - "$line" "$trial,$case,$config" "$s0" "$s1" >>"$trials_csv" <<'EOF'
import sys
kv = dict(f.split("=", 1) for f in sys.argv[1].split() if "=" in f)
print("%s,%s,%s,%.3f,%.6f,%s,%s" % (sys.argv[2], kv["MiBps"], kv["cpu_s"],
      float(sys.argv[4]) - float(sys.argv[3]), int(kv["bytes"]) / 2**30, kv["p50_us"], kv["p99_us"]))
EOF
    echo "  $case $config: $(sed 's/.*MiBps=\([0-9.]*\).*/\1/' <<<"$line") MiB/s"
}

# one TRIAL CONFIG: a fresh cluster of the configuration, its two reads.
one() {
    local trial=$1 config=$2 b=$build opts=()
    case $config in
    base) b=$base ;;
    ra-off) opts=(--readahead 0) ;;
    esac
    IPVFS_SERVER_BIN=$b/backend/ipvfs-server IPVFS_CTL_BIN=$b/tools/ipvfs-ctl
    lib=$b/adio/libipvfs-romio.so
    ipvfs_start_cluster 2 2 --raid 0 --target-size 1G "${opts[@]}"
    pids=$(serving_pids)
    ior_run -f ipvfs:/ra-seq -b "$block" -t 1m -F -w -e -k >/dev/null ||
        ipvfs_fail "writing the sequential files failed"
    ior_run -f ipvfs:/ra-rand -b "$rand" -t 1m -F -w -e -k >/dev/null ||
        ipvfs_fail "writing the random read files failed"
    phase "$trial" seq "$config" -f ipvfs:/ra-seq -b "$block" -t 1m -F -r
    phase "$trial" rand "$config" -f ipvfs:/ra-rand -b "$rand" -t 4k -F -r -z
    ipvfs_stop_cluster
    unset IPVFS_CLUSTER_DIR
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
configs=(base ra-off ra-on)
for ((t = 1; t <= trials; t++)); do
    echo "trial $t"
    # the order rotates, so no configuration always follows the same one
    for ((k = 0; k < 3; k++)); do one "$t" "${configs[(k + t) % 3]}"; done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$trials_csv" "$out/readahead.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    f.write("case,config,mib_s,cpu_s_per_gib,client_cpu_s_per_gib,server_cpu_s_per_gib,p50_us,p99_us,trials\n")
    for case in ("seq", "rand"):
        for config in ("base", "ra-off", "ra-on"):
            rs = [r for r in rows if r["case"] == case and r["config"] == config]
            med = lambda g: statistics.median(g(r) for r in rs)
            cl = med(lambda r: float(r["client_cpu_s"]) / float(r["gib"]))
            sv = med(lambda r: float(r["server_cpu_s"]) / float(r["gib"]))
            f.write("%s,%s,%.1f,%.2f,%.2f,%.2f,%.1f,%.1f,%d\n" % (
                case, config, med(lambda r: float(r["mib_s"])),
                med(lambda r: (float(r["client_cpu_s"]) + float(r["server_cpu_s"])) / float(r["gib"])),
                cl, sv, med(lambda r: float(r["p50_us"])), med(lambda r: float(r["p99_us"])), len(rs)))
EOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load before $load0, after $load1"
    echo "# command: benchmarks/readahead.sh --trials $trials --out $out $base $build" \
        "(RA_BLOCK=$block RA_RAND=$rand)"
    echo "# base = $base, ra-off/ra-on = $build with --readahead 0 / default; medians of $trials"
    column -t -s, "$out/readahead.csv"
} >"$out/readahead.txt"
if command -v gnuplot >/dev/null; then
    gnuplot <<EOF || echo "readahead.sh: gnuplot failed; no plot" >&2
set terminal png size 1000,500
set output "$out/readahead.png"
set datafile separator ","
set multiplot layout 1,2 title "readahead.sh: 2 I/O nodes x 2 targets RAID-0, 4 ranks, medians of $trials"
set style data histograms
set style fill solid 0.8 border -1
set key off
set yrange [0:*]
set title "sequential 1 MiB reads (MiB/s)"
plot "< grep ^seq, $out/readahead.csv" using 3:xtic(2)
set title "4 KiB random reads: p99 of one call (us)"
plot "< grep ^rand, $out/readahead.csv" using 8:xtic(2)
unset multiplot
EOF
fi
cat "$out/readahead.txt"
