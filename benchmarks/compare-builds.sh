#!/bin/bash
# compare-builds.sh: two builds of iPVFS side by side in one run, each
# benchmark taking turns between them so that load from elsewhere hits
# both alike.  For checking that a change keeps (or improves) the figures.
#
#   benchmarks/compare-builds.sh [--trials N] [--out DIR] [--name NAME] BUILD_A BUILD_B
#
# BUILD_A is the baseline (e.g. a worktree of main before the change, built
# with scripts/build.sh), BUILD_B the candidate.  The scripts of this source
# tree drive both builds: only the binaries differ.  Per trial and build:
#   ior    benchmarks/run-ior.sh (4 ranks, 1 MiB transfers, 2 x 2 RAID-0):
#          ipvfs write (with fsync) and read MiB/s
#   tile   benchmarks/run-patterns.sh tile, one trial: list I/O and
#          piecewise at b = 64 KiB, write and read MiB/s
#   btio   benchmarks/run-patterns.sh btio, one trial: our two-phase and
#          independent list I/O, write and read MiB/s
#   firstwrite  benchmarks/first-write.sh: the tile pattern's first write
#          on a fresh cluster and its rewrite, MiB/s (with the sync), and
#          the MiB the targets received in each (metrics *_target_MiB)
# Output (DIR, default benchmarks/results): NAME-trials.csv (every trial),
# NAME.csv (medians: case,metric,a_MiBps,b_MiBps,b_over_a), NAME.txt (the
# table, the command and the date) and NAME.png (gnuplot bars, when
# gnuplot is installed).  NAME defaults to compare-builds.
# Environment: COMPARE_CASES (default "ior tile btio"), and every variable
# the two scripts take (IOR_BLOCK, BENCH_REPS, ...).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
trials=3 out=$srcdir/benchmarks/results name=compare-builds
while [ $# -gt 0 ]; do
    case $1 in
    --trials) trials=${2:?--trials needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --name) name=${2:?--name needs a value}; shift 2 ;;
    -*) echo "compare-builds.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: compare-builds.sh [--trials N] [--out DIR] [--name NAME] BUILD_A BUILD_B" >&2; exit 2; }
build_a=$(cd "$1" && pwd) && build_b=$(cd "$2" && pwd) || exit 2
for b in "$build_a" "$build_b"; do
    [ -x "$b/benchmarks/ipvfs-ior" ] && [ -x "$b/benchmarks/ipvfs-patterns" ] ||
        { echo "compare-builds.sh: $b is not a built tree (scripts/build.sh)" >&2; exit 2; }
done
mkdir -p "$out" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-compare.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trials_csv=$out/$name-trials.csv
echo "trial,build,case,metric,MiBps" >"$trials_csv"

# row TRIAL BUILD CASE METRIC VALUE
row() { echo "$1,$2,$3,$4,$5" >>"$trials_csv"; }

# run_ior TRIAL LABEL BUILD
run_ior() {
    local o op v
    # The ufs: floor of run-ior.sh is its own check, not this comparison.
    o=$(IOR_MIN_WRITE_RATIO=0 "$srcdir/benchmarks/run-ior.sh" "$3" 2>&1) ||
        { echo "$o" | tail -n 20 >&2; return 1; }
    for op in write read; do
        v=$(sed -n "s/^RATIO op=$op ipvfs_MiBps=\([0-9.]*\).*/\1/p" <<<"$o")
        [ -n "$v" ] || { echo "run-ior.sh printed no $op figure" >&2; return 1; }
        row "$1" "$2" ior "$op" "$v"
    done
}

# run_pattern TRIAL LABEL BUILD WHAT MODE...: one trial of run-patterns.sh
# WHAT; the rows of the named modes (first column of WHAT.csv).
run_pattern() {
    local trial=$1 label=$2 build=$3 what=$4 d=$work/$4-$1-$2 mode line
    shift 4
    mkdir -p "$d"
    BENCH_OUT=$d BENCH_TRIALS=1 BENCH_TILE_BLOCKS=${BENCH_TILE_BLOCKS:-65536} \
        "$srcdir/benchmarks/run-patterns.sh" "$what" "$build" >"$d/log" 2>&1 ||
        { tail -n 20 "$d/log" >&2; return 1; }
    for mode in "$@"; do
        line=$(grep "^$mode," "$d/$what.csv") || { echo "no row $mode in $what.csv" >&2; return 1; }
        IFS=, read -r _ w r _ <<<"$line"
        row "$trial" "$label" "$what-$mode" write "$w"
        row "$trial" "$label" "$what-$mode" read "$r"
    done
}

# run_firstwrite TRIAL LABEL BUILD
run_firstwrite() {
    local o k v
    o=$("$srcdir/benchmarks/first-write.sh" "$3" 2>&1) || { echo "$o" | tail -n 20 >&2; return 1; }
    for k in first rewrite first_target rewrite_target; do
        v=$(sed -n "s/^FIRSTWRITE.* ${k}_Mi[Bp]*[a-z]*=\([0-9.]*\).*/\1/p" <<<"$o")
        [ -n "$v" ] || { echo "first-write.sh printed no $k figure" >&2; return 1; }
        row "$1" "$2" firstwrite "$k" "$v"
    done
}

run_case() {
    case $1 in
    ior) run_ior "$2" "$3" "$4" ;;
    tile) run_pattern "$2" "$3" "$4" tile listio-b65536 piecewise-b65536 ;;
    btio) run_pattern "$2" "$3" "$4" btio ipvfs-coll-ours ipvfs-independent ;;
    firstwrite) run_firstwrite "$2" "$3" "$4" ;;
    *) echo "compare-builds.sh: unknown case $1" >&2; return 1 ;;
    esac
}

for ((t = 1; t <= trials; t++)); do
    for c in ${COMPARE_CASES:-ior tile btio}; do
        # The builds take turns, and which goes first alternates by trial.
        if ((t % 2)); then order="a b"; else order="b a"; fi
        for l in $order; do
            b=$build_a; [ "$l" = b ] && b=$build_b
            echo "trial $t: $c on $l ($b)"
            run_case "$c" "$t" "$l" "$b" || { echo "compare-builds.sh: $c on $b failed" >&2; exit 1; }
        done
    done
done

# Medians per case, metric and build.
python3 - "$trials_csv" "$out/$name.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = []
vals = {}
for r in rows:
    k = (r["case"], r["metric"])
    if k not in keys:
        keys.append(k)
    vals.setdefault(k + (r["build"],), []).append(float(r["MiBps"]))
with open(sys.argv[2], "w") as f:
    f.write("case,metric,a_MiBps,b_MiBps,b_over_a\n")
    for k in keys:
        a = statistics.median(vals[k + ("a",)])
        b = statistics.median(vals[k + ("b",)])
        f.write(f"{k[0]},{k[1]},{a:.1f},{b:.1f},{b / a if a else 0:.3f}\n")
EOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: benchmarks/compare-builds.sh --trials $trials $*"
    echo "# a = $build_a"
    echo "# b = $build_b"
    echo "# median of $trials trials per build, builds taking turns"
    column -t -s, "$out/$name.csv"
} >"$out/$name.txt"
cat "$out/$name.txt"
if command -v gnuplot >/dev/null; then
    gnuplot <<EOF || echo "compare-builds.sh: gnuplot failed; no plot" >&2
set terminal png size 1000,500
set output "$out/$name.png"
set datafile separator ","
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "MiB/s (median of $trials)"
set title "iPVFS: build a (baseline) vs build b"
set xtics rotate by -30
set key top left
plot "$out/$name.csv" using 3:xticlabels(stringcolumn(1)."/".stringcolumn(2)) skip 1 title "a", \
     "" using 4 skip 1 title "b"
EOF
fi
