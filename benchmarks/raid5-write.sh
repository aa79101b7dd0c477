#!/bin/bash
# raid5-write.sh: iRAID sequential write, RAID-5 against RAID-0, for two
# builds side by side (issue 14: RAID-5 large writes without the penalty).
#
#   benchmarks/raid5-write.sh [--trials N] [--out DIR] BUILD_A BUILD_B
#
# BUILD_A is the baseline.  Each trial runs iraid-bench (1 MiB writes of
# whole stripes, 8 in flight, 64 KiB chunks, SECONDS per figure) of both
# builds in turn on the same loopback tgtd targets: RAID-0 over 2 and 3
# members, RAID-5 over 3 (2 data members, as RAID-0 Nt=2).  Output in DIR
# (default benchmarks/results): raid5-write.csv (build,level,nt,trial,
# seq_write_mib_s,seq_read_mib_s), raid5-write.txt (medians, the ratio
# RAID-5 Nt=3 / RAID-0 Nt=2 per build, the command, the date) and
# raid5-write.png (gnuplot).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
trials=3 out=$src/benchmarks/results secs=${RAID5_WRITE_SECS:-2}
while [ $# -gt 0 ]; do
    case $1 in
    --trials) trials=${2:?--trials needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "raid5-write.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: raid5-write.sh [--trials N] [--out DIR] BUILD_A BUILD_B" >&2; exit 2; }
case $trials in ''|*[!0-9]*|0) echo "raid5-write.sh: --trials needs a number above 0" >&2; exit 2 ;; esac
cmd="benchmarks/raid5-write.sh --trials $trials $*"
for b in "$1" "$2"; do
    [ -x "$b/benchmarks/iraid-bench" ] || { echo "raid5-write.sh: $b/benchmarks/iraid-bench not built" >&2; exit 2; }
done
. "$src/benchmarks/iraid-targets.sh"
dir=$(mktemp -d /tmp/ipvfs-raid5write.XXXXXX)
cleanup() { iraid_targets_stop; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$out" || exit 2
iraid_targets_start "$dir" 3 64 || exit $?
csv=$out/raid5-write.csv
echo "build,level,nt,trial,seq_write_mib_s,seq_read_mib_s" >"$csv"
for t in $(seq 1 "$trials"); do
    for ab in a b; do
        [ $ab = a ] && b=$1 || b=$2
        for lv in "0 2" "0 3" "5 3"; do
            read -r lvl nt <<<"$lv"
            line=$("$b/benchmarks/iraid-bench" "$lvl" 65536 "$secs" "${IRAID_URLS[@]:0:$nt}" 2>>"$dir/bench.log") ||
                { tail -n 5 "$dir/bench.log"; echo "raid5-write.sh: RAID-$lvl Nt=$nt failed" >&2; exit 1; }
            read -r _ _ w r _ <<<"$line"
            echo "$ab,${lv% *},${lv#* },$t,$w,$r" >>"$csv"
        done
    done
done
med() { grep "^$1,$2,$3," "$csv" | cut -d, -f5 | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
{
    echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: $cmd"
    echo "# A = $1, B = $2; iraid-bench 1 MiB whole-stripe writes, 8 in flight, median of $trials"
    printf '%-10s %12s %12s %8s\n' case A_MiB_s B_MiB_s B/A
    for lv in "0 2" "0 3" "5 3"; do
        a=$(med a ${lv% *} ${lv#* }) b=$(med b ${lv% *} ${lv#* })
        printf '%-10s %12s %12s %8s\n' "raid${lv% *}-nt${lv#* }" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}')"
    done
    for ab in a b; do
        printf 'build %s: RAID-5 Nt=3 / RAID-0 Nt=2 write = %s\n' $ab \
            "$(awk -v f="$(med $ab 5 3)" -v z="$(med $ab 0 2)" 'BEGIN {printf "%.2f", f / z}')"
    done
} | tee "$out/raid5-write.txt"
if command -v gnuplot >/dev/null; then
    for lv in "0 2" "0 3" "5 3"; do
        echo "raid${lv% *}-nt${lv#* } $(med a ${lv% *} ${lv#* }) $(med b ${lv% *} ${lv#* })"
    done >"$dir/plot.dat"
    gnuplot <<GP
set terminal png size 800,480
set output "$out/raid5-write.png"
set title "iRAID sequential 1 MiB write (median of $trials): A baseline, B candidate"
set ylabel "MiB/s"
set style data histograms
set style fill solid 0.8
set yrange [0:*]
plot "$dir/plot.dat" using 2:xtic(1) title "A", "" using 3 title "B"
GP
fi
