#!/bin/bash
# transport-before-after.sh: benchmarks/transport.sh on two builds, taking
# turns, and the ratio of every row (issue 14: today's main against a
# branch in the same run).
#
#   benchmarks/transport-before-after.sh [--runs N] [--full] [--out DIR] BUILD_A BUILD_B
#
# BUILD_A is the baseline.  Both are measured with this tree's ipvfs-ior
# and memcpy-bw (TRANSPORT_BENCH_DIR, default BUILD_B/benchmarks), so that
# only servers and client library differ.  N runs per build (default 2),
# --quick ones unless --full, taking turns (A B, B A, A B...).  Output in DIR
# (default benchmarks/results): transport-before-after.csv (case, layout,
# op, block, a_mib_s, b_mib_s, b_over_a, medians over the runs, and the
# same for each row's fraction of its bound, which takes out much of the
# load that changes between runs: the limits are measured in every run;
# then each build's CPU seconds per GiB and the p99 latency of one call,
# medians too), transport-before-after.txt (the table, the commands, the
# date, the load), transport-before-after-runs.csv (every phase of every
# run: build a/b, run, then transport.sh's trial columns) and
# transport-before-after.png (MiB/s of both builds).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
runs=2 quick=--quick out=$srcdir/benchmarks/results
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --full) quick=; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "transport-before-after.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: transport-before-after.sh [--runs N] [--full] [--out DIR] BUILD_A BUILD_B" >&2; exit 2; }
case $runs in ''|*[!0-9]*|0) echo "transport-before-after.sh: --runs needs a number above 0" >&2; exit 2 ;; esac
a=$(cd "$1" && pwd) && b=$(cd "$2" && pwd) || exit 2
export TRANSPORT_BENCH_DIR=${TRANSPORT_BENCH_DIR:-$b/benchmarks}
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-transport-ba.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" || exit 1
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 1; r <= runs; r++)); do
    # which build goes first alternates, as in compare-builds.sh
    order="a b"; ((r % 2)) || order="b a"
    for l in $order; do
        build=$a; [ $l = b ] && build=$b
        echo "run $r: $l ($build)"
        # shellcheck disable=SC2086
        "$srcdir/benchmarks/transport.sh" $quick --out "$work/$l$r" "$build" >"$work/$l$r.log" 2>&1 ||
            { tail -n 20 "$work/$l$r.log" >&2; echo "transport-before-after.sh: run $r on $build failed" >&2; exit 1; }
    done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# every run's every phase, for the spread behind the medians
for l in a b; do
    for ((r = 1; r <= runs; r++)); do
        awk -F, -v OFS=, -v l=$l -v r=$r -v first=$([ $l$r = a1 ] && echo 1) \
            'NR == 1 { if (first) print "build,run," $0; next } { print l, r, $0 }' \
            "$work/$l$r/transport-trials.csv"
    done
done >"$out/transport-before-after-runs.csv"
python3 - "$work" "$runs" "$out/transport-before-after.csv" <<'EOF'
import csv, statistics, sys
work, runs, dest = sys.argv[1], int(sys.argv[2]), sys.argv[3]
vals, keys = {}, []
for l in "ab":
    for r in range(1, runs + 1):
        for row in csv.DictReader(open(f"{work}/{l}{r}/transport.csv")):
            k = (row["case"], row["layout"], row["op"], row["block"])
            if k not in keys:
                keys.append(k)
            vals.setdefault((l,) + k, []).append(float(row["mib_s"]))
            vals.setdefault(("f", l) + k, []).append(float(row["fraction"]))
            vals.setdefault(("c", l) + k, []).append(float(row["cpu_s_per_gib"]))
            vals.setdefault(("p", l) + k, []).append(float(row["p99_us"]))
med = lambda k: statistics.median(vals.get(k, [0]))
with open(dest, "w") as f:
    f.write("case,layout,op,block,a_mib_s,b_mib_s,b_over_a,a_fraction,b_fraction,b_over_a_fraction,"
            "a_cpu_s_per_gib,b_cpu_s_per_gib,a_p99_us,b_p99_us\n")
    for k in keys:
        x, y = med(("a",) + k), med(("b",) + k)
        fx, fy = med(("f", "a") + k), med(("f", "b") + k)
        f.write("%s,%s,%s,%s,%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.1f,%.1f\n"
                % (k + (x, y, y / x if x else 0, fx, fy, fy / fx if fx else 0,
                        med(("c", "a") + k), med(("c", "b") + k),
                        med(("p", "a") + k), med(("p", "b") + k))))
EOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load before $load0, after $load1"
    echo "# command: benchmarks/transport-before-after.sh --runs $runs ${quick:---full} $a $b"
    echo "# a = $a (baseline), b = $b; benchmark programs from $TRANSPORT_BENCH_DIR"
    echo "# each: benchmarks/transport.sh $quick; median of $runs runs per build, builds taking turns"
    column -t -s, "$out/transport-before-after.csv"
} >"$out/transport-before-after.txt"
if command -v gnuplot >/dev/null; then
    grep -E '^(seq|shared|rand),' "$out/transport-before-after.csv" >"$work/plot.csv"
    gnuplot <<EOF || echo "transport-before-after.sh: gnuplot failed; no plot" >&2
set terminal png size 1200,550
set output "$out/transport-before-after.png"
set datafile separator ","
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "MiB/s (median of $runs runs)"
set xtics rotate by -30
set key top left
set title "transport.sh $quick: a = $a, b = $b"
plot "$work/plot.csv" using 5:xtic(sprintf("%s %s %s %s", strcol(1), strcol(2), strcol(3), strcol(4))) title "a (baseline)", \
     "" using 6 title "b"
EOF
fi
cat "$out/transport-before-after.txt"
