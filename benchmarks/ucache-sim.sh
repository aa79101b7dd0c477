#!/bin/bash
# ucache-sim.sh: the journal paper's Tables 2-4 with ipvfs-cachesim, and
# hit ratio against L1 size per L2 policy.
#
#   benchmarks/ucache-sim.sh [BUILDDIR]
#
# 1. For each synthetic workload (cello92, httpd, db2) at the paper's two
#    server counts (6 and 12; db2 39 and 48 for the paper's 40 and 50, see
#    tools/cachesim/cachesim.h) and its cache sizes, every L2 policy (lru =
#    inclusive baseline, mq, demote, demote-mq) beside PVFS and the paper's
#    figures: OUTDIR/ucache-sim.csv and the table in OUTDIR/ucache-sim.md.
# 2. Cumulative hit ratio against L1 size per policy, L2 fixed at the
#    paper's size and PVFS given the same total memory ((L1 + 2 L2) / 3 per
#    server): OUTDIR/ucache-sim-l1.csv and OUTDIR/ucache-sim.png (gnuplot).
# Deterministic (seed 1): the same build gives the same numbers.  The
# simulator is single-threaded; the whole run takes about a minute.
#
# Environment: BENCH_OUT (OUTDIR, default BUILDDIR/bench-results),
# BENCH_SEED (default 1).
set -eu
builddir=$(cd "${1:-_build}" && pwd)
sim=$builddir/tools/ipvfs-cachesim
out=${BENCH_OUT:-$builddir/bench-results}
seed=${BENCH_SEED:-1}
[ -x "$sim" ] || { echo "ucache-sim.sh: $sim is not built" >&2; exit 1; }
command -v python3 >/dev/null || { echo "ucache-sim.sh: python3 is needed" >&2; exit 1; }
mkdir -p "$out"
policies="lru mq demote demote-mq"

# run WORKLOAD POLICY [options...]: one CSV row from the simulator's JSON.
run() {
    local w=$1 p=$2
    shift 2
    "$sim" --workload "$w" --l2-policy "$p" --seed "$seed" --json "$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
u, q = d["ucache"], d["paper"] or {}
mb = 1 << 20
print(",".join(str(x) for x in (d["workload"], d["servers"], d["l1_bytes"] // mb, d["l2_bytes"] // mb,
      d["pvfs_bytes"] // mb, d["l2_policy"], d["accesses"], "%.4f" % d["pvfs"]["hit"],
      "%.4f" % u["l1"], "%.4f" % u["l2"], "%.4f" % u["cumulative"],
      q.get("servers", ""), q.get("pvfs", ""), q.get("l1", ""), q.get("l2", ""), q.get("cumulative", ""))))'
}

csv=$out/ucache-sim.csv
echo "workload,servers,l1_mb,l2_mb,pvfs_mb,l2_policy,accesses,pvfs_hit,l1,l2,cumulative,paper_servers,paper_pvfs,paper_l1,paper_l2,paper_cumulative" >"$csv"
for w in cello92 httpd db2; do
    case $w in db2) counts="39 48" ;; *) counts="6 12" ;; esac
    for s in $counts; do
        for p in $policies; do run "$w" "$p" --servers "$s" >>"$csv"; done
    done
done

l1csv=$out/ucache-sim-l1.csv
echo "workload,servers,l1_mb,l2_mb,pvfs_mb,l2_policy,accesses,pvfs_hit,l1,l2,cumulative" >"$l1csv"
for w in cello92 httpd db2; do
    case $w in
    db2) l2=64 sizes="64 128 256 384 512" ;;
    *)   l2=12 sizes="8 16 24 36 48" ;;
    esac
    for l1 in $sizes; do
        pvfs=$(( (l1 + 2 * l2) * 1024 / 3 ))
        for p in $policies; do
            run "$w" "$p" --l1 "${l1}M" --l2 "${l2}M" --pvfs "${pvfs}K" | cut -d, -f1-11 >>"$l1csv"
        done
    done
done

python3 - "$csv" "$out/ucache-sim.md" "$*" "$(dirname "$0")/ucache-sim-notes.md" <<'PY'
import csv, sys, datetime
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    f.write("# uCache simulation: the paper's Tables 2-4 beside ours\n\n")
    f.write("Made by `benchmarks/ucache-sim.sh %s` on %s (ipvfs-cachesim, seed 1;\n"
            "raw rows in ucache-sim.csv, the L1 sweep in ucache-sim-l1.csv and\n"
            "ucache-sim.png).  Hit ratios per 64 KiB block access: PVFS = one LRU per\n"
            "server; uCache L1 = I/O node hits / accesses, L2 = target hits / L1\n"
            "misses, cumulative = (L1 + L2 hits) / accesses; same total memory.\n\n"
            % (sys.argv[3] or "_build", datetime.date.today()))
    f.write("| workload | servers | L1/L2 vs PVFS MB | L2 policy | PVFS | L1 | L2 | cumulative | cum. - PVFS | paper: PVFS | L1 | L2 | cumulative |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write("| %s | %s%s | %s/%s vs %s | %s | %s | %s | %s | **%s** | %+.4f | %s | %s | %s | %s |\n" % (
            r["workload"], r["servers"],
            " (paper %s)" % r["paper_servers"] if r["paper_servers"] != r["servers"] else "",
            r["l1_mb"], r["l2_mb"], r["pvfs_mb"], r["l2_policy"], r["pvfs_hit"], r["l1"], r["l2"],
            r["cumulative"], float(r["cumulative"]) - float(r["pvfs_hit"]),
            r["paper_pvfs"], r["paper_l1"], r["paper_l2"], r["paper_cumulative"]))
    f.write(open(sys.argv[4]).read())
PY

gnuplot <<GP
set terminal pngcairo size 1500,480 font ",10"
set output "$out/ucache-sim.png"
set datafile separator ","
set key bottom right
set grid
set xlabel "L1 per I/O node (MiB); L2 fixed, PVFS = same total memory"
set ylabel "cumulative hit ratio"
set multiplot layout 1,3 title "ipvfs-cachesim: hit ratio vs L1 size per L2 policy (seed $seed)"
do for [w in "cello92 httpd db2"] {
    set title w
    plot for [p in "lru mq demote demote-mq"] "$l1csv" using (strcol(1) eq w && strcol(6) eq p ? \$3 : 1/0):11 with linespoints title p, \
         "$l1csv" using (strcol(1) eq w && strcol(6) eq "lru" ? \$3 : 1/0):8 with linespoints dashtype 2 lc rgb "black" title "PVFS"
}
unset multiplot
GP
echo "wrote $csv, $l1csv, $out/ucache-sim.md, $out/ucache-sim.png"
