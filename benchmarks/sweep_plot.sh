# shellcheck shell=bash
# Settings of an open-loop sweep side by side (bash; source it):
# benchmarks/read-places.sh, client-queue.sh and local-places.sh.  The
# CSV's columns are setting,offered_per_s,achieved_per_s,mean_ms,...
#
#   sweep_row SETTING RESULT FIELD...
#       a CSV row: SETTING, then each FIELD's value in RESULT (a line
#       `RESULT ... FIELD=VALUE ...` of ipvfs-openload)
#   sweep_disks N
#       "MEAN_MS CAPACITY": the emulated disks' mean service time over
#       every run of the clusters (each target logs it at stop) and the
#       reads per second N such disks serve; empty without a log line
#   sweep_best CSV SETTING
#       the highest achieved rate of that setting
#   sweep_plot CSV PNG TITLE LIMIT LIMIT_LABEL S1 LABEL1 [S2 LABEL2 ...]
#       a PNG of achieved rate (the limit as a dashed line) and mean
#       response (log scale) against offered load, one line per setting;
#       nothing without gnuplot, a message when gnuplot fails

sweep_row() {
    local row=$1 res=$2 f
    shift 2
    for f in "$@"; do
        row="$row,$(sed -n "s/.* $f=\([^ ]*\).*/\1/p" <<<"$res")"
    done
    echo "$row"
}

sweep_disks() {
    ipvfs_logs | sed -n 's/.*emulated disk st318452lw: \([0-9]*\) ios, service mean \([0-9.]*\) ms.*/\1 \2/p' |
        awk -v d="$1" '{ n += $1; s += $1 * $2 } END { if (n) printf "%.3f %.0f\n", s / n, d * 1000 * n / s }'
}

sweep_best() {
    awk -F, -v s="$2" '$1 == s && $3 > m { m = $3 } END { print m + 0 }' "$1"
}

sweep_plot() {
    local csv=$1 png=$2 title=$3 limit=$4 limit_label=$5 dir k=0 rates='' means=''
    command -v gnuplot >/dev/null || return 0
    dir=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-sweep.XXXXXX") || return 1
    shift 5
    while [ $# -ge 2 ]; do
        awk -F, -v s="$1" '$1 == s { print $2, $3, $4 }' "$csv" >"$dir/$k.dat"
        rates="$rates\"$dir/$k.dat\" using 1:2 with linespoints title \"$2\", "
        means="$means\"$dir/$k.dat\" using 1:3 with linespoints title \"$2\", "
        k=$((k + 1))
        shift 2
    done
    gnuplot <<GP || echo "sweep_plot: gnuplot failed for $png" >&2
set terminal png size 900,480
set output "$png"
set multiplot layout 1,2 title "$title"
set key below
set xlabel "offered reads/s"
set ylabel "achieved reads/s"
set yrange [0:*]
plot $rates $limit with lines dt 2 title "$limit_label"
set ylabel "mean response ms"
set logscale y
set yrange [*:*]
plot ${means%, }
unset multiplot
GP
    rm -rf "$dir"
}
