#!/bin/bash
# collective-choice.sh: collective writes and reads (MPI_File_write_at_all,
# read_at_all) three ways side by side in one run, on one cluster started
# through test/lib.sh (2 I/O nodes x 1 target, 4 ranks, cb_nodes=2 with
# cb_config_list=*:*): forced two-phase (romio_cb_write/read=enable),
# forced independent list I/O (=disable), and auto, the default, the
# per-call choice of adio/ad_ipvfs/ad_ipvfs_choice.h.  Goal: auto at least
# 0.95x the better of the other two in every case.
#
#   benchmarks/collective-choice.sh [--quick] [--cases "C1 C2..."] [--trials N] [--out DIR]
#                                   [BUILDDIR]
#
# --cases runs only the named cases (default: all below); --trials N
# takes the median of N trials (default 3, --quick 1).
# Cases (each rank's data checked byte for byte by the programs):
#   tile2x2-32B, tile4x1-32B, tile2x2-1K, tile4x1-1K: mpi-tile-io shapes
#       (ipvfs-patterns ctile), 32 MiB per rank (--quick: 2 MiB), 2 calls
#   narrow-32B: 4 x 1 tiles one 32-byte element wide: 32-byte pieces of
#       the ranks take turns (the case two-phase is for), 2 MiB per rank
#       (--quick: 512 KiB)
#   btio: ipvfs-patterns btio, N = 96 (--quick 32), 40-byte cells
#   ior-strided: ipvfs-ior -c -b 64k -t 64k -s 256 (--quick -s 16): one
#       block per rank per segment, hints through ROMIO_HINTS
# The full sizes make each timed phase last 0.2 s or more on this 2-core
# VM: with the 4x smaller ones of before (50-150 ms), one variant's run
# differed from the next by up to 30%, more than the rule decides on.
# Median of 3 trials (--quick: 1), variants taking turns, their order
# rotated from trial to trial.  Writes
# DIR/collective-choice.csv (case,variant,op,mib_s and, on auto rows,
# vs_best = auto / max(twophase, independent) of the medians, and
# vs_paired, the median over trials of that ratio within each trial),
# -trials.csv, .txt (the command, the table) and .png; DIR defaults to
# benchmarks/results/.
set -u
quick=0
out=
only=
ntrials=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --out) out=$2; shift 2 ;;
    --cases) only=$2; shift 2 ;;
    --trials) ntrials=$2; shift 2 ;;
    *) break ;;
    esac
done
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-$IPVFS_SRCDIR/_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
out=${out:-$IPVFS_SRCDIR/benchmarks/results}
lib=${IPVFS_ROMIO_LIB:-$IPVFS_BUILDDIR/adio/libipvfs-romio.so}
pat=$IPVFS_BUILDDIR/benchmarks/ipvfs-patterns
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
for f in "$lib" "$pat" "$ior"; do
    [ -e "$f" ] || { echo "collective-choice.sh: $f is not built" >&2; exit 1; }
done
mkdir -p "$out" || exit 1
name=collective-choice
csv=$out/$name.csv raw=$out/$name-trials.csv png=$out/$name.png table=$out/$name.txt
rm -f "$csv" "$png"
trials=${ntrials:-$([ $quick = 1 ] && echo 1 || echo 3)}
case $trials in
'' | *[!0-9]* | 0) echo "collective-choice.sh: --trials wants a positive integer" >&2; exit 1 ;;
esac
rows=$([ $quick = 1 ] && echo 256 || echo 1024)
btio_n=$([ $quick = 1 ] && echo 32 || echo 96)
segs=$([ $quick = 1 ] && echo 16 || echo 256)
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores"
    echo "# command: benchmarks/collective-choice.sh $([ $quick = 1 ] && echo --quick)$([ -n "$only" ] && echo " --cases \"$only\"")$([ -n "$ntrials" ] && echo " --trials $ntrials")"
    echo "# 4 ranks, 2 I/O nodes x 1 target, cb_nodes=2, median of $trials trials"
} >"$table"
. "$IPVFS_SRCDIR/test/lib.sh"

hints_dir=$(mktemp -d) || exit 1
ipvfs_test_cleanup() { rm -rf "$hints_dir"; }
for v in twophase independent auto; do
    {
        echo "cb_nodes 2"
        echo "cb_config_list *:*"
        case $v in
        twophase) echo "romio_cb_write enable"; echo "romio_cb_read enable" ;;
        independent) echo "romio_cb_write disable"; echo "romio_cb_read disable" ;;
        esac
    } >"$hints_dir/$v"
done

# run CASE VARIANT: "WRITE READ" MiB/s of one run; fails without a row on
# a failed run or wrong data.
run() {
    local c=$1 v=$2 output tile
    local mpi=(timeout -k 5 300 mpiexec -n 4 env LD_PRELOAD="$lib" ROMIO_HINTS="$hints_dir/$v")
    case $c in
    tile2x2-32B) tile=2:$rows:$rows:32:2 ;;
    tile4x1-32B) tile=4:$((rows * 2)):$((rows / 2)):32:2 ;;
    tile2x2-1K) tile=2:$((rows / 8)):$((rows / 4)):1024:2 ;;
    tile4x1-1K) tile=4:$((rows / 4)):$((rows / 8)):1024:2 ;;
    narrow-32B) tile=4:$((rows * 64)):1:32:1 ;;
    esac
    case $c in
    tile* | narrow*) output=$("${mpi[@]}" "$pat" ctile "ipvfs:/bench/$c" "$tile") ;;
    btio) output=$("${mpi[@]}" "$pat" btio "ipvfs:/bench/$c" "$btio_n") ;;
    ior-strided) output=$("${mpi[@]}" "$ior" -f "ipvfs:/bench/$c" -c -v -k -b 64k -t 64k \
        -s "$segs") ;;
    esac || { echo "collective-choice.sh: $c $v failed" >&2; return 1; }
    local wr rd
    wr=$(grep '^RESULT.* op=write ' <<<"$output" | sed -n 's/.* MiBps=\([^ ]*\).*/\1/p')
    rd=$(grep '^RESULT.* op=read ' <<<"$output" | sed -n 's/.* MiBps=\([^ ]*\).*/\1/p')
    [ -n "$wr" ] && [ -n "$rd" ] || { echo "collective-choice.sh: $c $v: no RESULT" >&2; return 1; }
    echo "$wr $rd"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

cases=${only:-tile2x2-32B tile4x1-32B tile2x2-1K tile4x1-1K narrow-32B btio ior-strided}
variants="twophase independent auto"
ipvfs_start_cluster 2 1
echo "trial,case,variant,write_mib_s,read_mib_s" >"$raw"
for c in $cases; do   # untimed first write of each file: later runs overwrite
    run "$c" independent >/dev/null || ipvfs_fail "warm-up of $c failed"
done
# rotate(T): the variants in trial T's order.  Each variant runs after
# each other one in turn: a run pays for what the one before it left
# behind (the I/O nodes' L1 writing back its writes in the background),
# which in a fixed order always fell on the same variant.
rotate() {
    local -a v=($variants)
    local k=$(( ($1 - 1) % ${#v[@]} )) i
    for ((i = 0; i < ${#v[@]}; i++)); do
        echo "${v[(k + i) % ${#v[@]}]}"
    done
}
for t in $(seq "$trials"); do
    for c in $cases; do
        for v in $(rotate "$t"); do
            r=$(run "$c" "$v") || ipvfs_fail "$c $v failed: no row"
            echo "$t,$c,$v,${r% *},${r#* }" >>"$raw"
        done
    done
done
ipvfs_stop_cluster

# paired_ratios CASE COLUMN: per trial, auto / max(twophase, independent)
# of that trial's runs, which ran minutes apart at most: on a host whose
# load swings from trial to trial their median (vs_paired) is steadier
# than the ratio of the medians (vs_best).
paired_ratios() {
    awk -F, -v c="$1" -v k="$2" '$2 == c { v[$1 "," $3] = $k; t[$1] = 1 }
        END { for (i in t) { b = v[i ",twophase"] + 0
                  if (v[i ",independent"] + 0 > b) b = v[i ",independent"] + 0
                  if (b > 0) printf "%.2f\n", v[i ",auto"] / b } }' "$raw"
}

echo "case,variant,op,mib_s,vs_best,vs_paired" >"$csv"
printf '%-12s %-6s %10s %12s %10s %8s %7s\n' case op twophase independent auto vs_best \
    vs_paired | tee -a "$table"
for c in $cases; do
    for op in write read; do
        col=$([ $op = write ] && echo 4 || echo 5)
        declare -A m=()
        for v in $variants; do
            m[$v]=$(awk -F, -v c="$c" -v v="$v" -v k="$col" '$2 == c && $3 == v { print $k }' \
                "$raw" | median)
        done
        best=$(awk -v a="${m[twophase]}" -v b="${m[independent]}" \
            'BEGIN { x = a + 0; if (b + 0 > x) x = b + 0; print x }')
        ratio=$(awk -v a="${m[auto]}" -v b="$best" \
            'BEGIN { r = 0; if (b + 0 > 0) r = a / b; printf "%.2f", r }')
        paired=$(paired_ratios "$c" "$col" | median)
        for v in $variants; do
            echo "$c,$v,$op,${m[$v]},$([ $v = auto ] && echo "$ratio,$paired" || echo ,)" >>"$csv"
        done
        echo "$c ${m[twophase]} ${m[independent]} ${m[auto]}" >>"$hints_dir/$op.dat"
        printf '%-12s %-6s %10s %12s %10s %8s %7s\n' "$c" "$op" "${m[twophase]}" \
            "${m[independent]}" "${m[auto]}" "$ratio" "$paired" | tee -a "$table"
        unset m
    done
done
if command -v gnuplot >/dev/null; then
    gnuplot -e "set terminal png size 1200,500; set output '$png';
        set style data histograms; set style histogram clustered; set style fill solid 0.8;
        set ylabel 'MiB/s'; set yrange [0:*]; set xtics rotate by -30; set key top right;
        set multiplot layout 1,2;
        do for [op in 'write read'] {
            set title 'collective '.op.' (median of $trials, 4 ranks, 2 I/O nodes)';
            f = '$hints_dir/'.op.'.dat';
            plot f u 2:xtic(1) t 'two-phase', f u 3 t 'independent', f u 4 t 'auto'
        };
        unset multiplot" || echo "(gnuplot failed: no $png)"
fi
rm -rf "$hints_dir"
echo "wrote $csv $png $table"
