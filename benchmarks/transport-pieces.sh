#!/bin/bash
# transport-pieces.sh: which piece size a large access should be cut into,
# now that a connection carries several requests at once (issue 14).
# Runs benchmarks/transport.sh --quick with 1 MiB transfers on one build,
# with the schedule block (the piece size, hint ipvfs_schedule_block given
# through a ROMIO_HINTS file) at 64 KiB, 256 KiB (the default) and 1 MiB,
# pieces taking turns in each round, and the baseline build (BASE) in the
# same round.
#
#   benchmarks/transport-pieces.sh [--rounds N] [--out DIR] BASE_BUILD BUILD
#
# Output in DIR (default benchmarks/results): transport-pieces.csv (build,
# piece, round, then transport.sh's columns case..p99_us) and
# transport-pieces.png (seq raid0/raid5 read and write MiB/s and CPU s per
# GiB by piece, medians over the rounds).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
rounds=2 out=$srcdir/benchmarks/results
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "transport-pieces.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: transport-pieces.sh [--rounds N] [--out DIR] BASE_BUILD BUILD" >&2; exit 2; }
case $rounds in ''|*[!0-9]*|0) echo "transport-pieces.sh: --rounds needs a number above 0" >&2; exit 2 ;; esac
base=$(cd "$1" && pwd) && build=$(cd "$2" && pwd) || exit 2
command -v gnuplot >/dev/null || { echo "transport-pieces.sh: gnuplot is needed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-pieces.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" || exit 1
export TRANSPORT_BLOCKS=1M TRANSPORT_BENCH_DIR=${TRANSPORT_BENCH_DIR:-$build/benchmarks}
csv=$out/transport-pieces.csv
echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >"$work/head"
echo "# command: benchmarks/transport-pieces.sh --rounds $rounds $base $build" >>"$work/head"
echo "build,piece,round,case,layout,op,block,mib_s,cpu_s_per_gib,client_cpu_s_per_gib,ionode_cpu_s_per_gib,target_cpu_s_per_gib,p50_us,p99_us" >"$work/rows"
for ((r = 1; r <= rounds; r++)); do
    for run in base:64K build:64K build:256K build:1M; do
        which=${run%%:*} piece=${run#*:}
        dir=$build; [ "$which" = base ] && dir=$base
        printf 'ipvfs_schedule_block %s\n' "$piece" >"$work/hints"
        echo "round $r: $which, pieces of $piece"
        ROMIO_HINTS=$work/hints "$srcdir/benchmarks/transport.sh" --quick --out "$work/$which-$piece-$r" \
            "$dir" >"$work/$which-$piece-$r.log" 2>&1 ||
            { tail -n 20 "$work/$which-$piece-$r.log" >&2; echo "transport-pieces.sh: a run failed" >&2; exit 1; }
        grep -E '^(seq|shared|rand),' "$work/$which-$piece-$r/transport.csv" | cut -d, -f1-11 |
            sed "s/^/$which,$piece,$r,/" >>"$work/rows"
    done
done
cat "$work/head" "$work/rows" >"$csv"
python3 - "$work/rows" "$work/plot.dat" <<'PYEOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
order = [("base", "64K"), ("build", "64K"), ("build", "256K"), ("build", "1M")]
with open(sys.argv[2], "w") as f:
    f.write("# label seq0w seq0r seq5w seq5r cpu0w cpu0r\n")
    for b, p in order:
        def med(layout, op, col="mib_s"):
            xs = [float(r[col]) for r in rows if r["build"] == b and r["piece"] == p and
                  r["case"] == "seq" and r["layout"] == layout and r["op"] == op]
            return statistics.median(xs) if xs else 0
        f.write('"%s %s" %.1f %.1f %.1f %.1f %.2f %.2f\n' % (
            "main" if b == "base" else "tagged", p, med("raid0", "write"), med("raid0", "read"),
            med("raid5", "write"), med("raid5", "read"),
            med("raid0", "write", "cpu_s_per_gib"), med("raid0", "read", "cpu_s_per_gib")))
PYEOF
gnuplot <<EOF
set terminal png size 1000,500
set output "$out/transport-pieces.png"
set multiplot layout 1,2 title "sequential 1 MiB transfers, 4 ranks, by piece size (median of $rounds rounds)"
set style data histograms
set style fill solid 0.8
set key top left
set ylabel "MiB/s"
set xtics rotate by -20
plot "$work/plot.dat" using 2:xtic(1) title "raid0 write", '' using 3 title "raid0 read", \
     '' using 4 title "raid5 write", '' using 5 title "raid5 read"
set ylabel "CPU s per GiB (all hops)"
plot "$work/plot.dat" using 6:xtic(1) title "raid0 write", '' using 7 title "raid0 read"
unset multiplot
EOF
echo "wrote $csv and $out/transport-pieces.png"
