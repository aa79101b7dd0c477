#!/bin/bash
# run-patterns.sh: the list I/O, collective I/O and scheduling benchmarks
# (benchmarks/ipvfs-patterns.c) on a cluster started through test/lib.sh.
# Each prints a table and writes it (OUTDIR/NAME.txt, with the command and
# the date), CSV (NAME.csv) and a PNG plot (NAME.png, gnuplot) to OUTDIR.
# A run that fails or reads back wrong data stops the benchmark: no row.
#
#   benchmarks/run-patterns.sh sched|tile|btio [BUILDDIR]
#
#   sched  the Clusterfile synthetic experiment: 4 clients each write, then
#          read, their own contiguous region of one shared file, for every
#          heuristic (first, random, hash) and schedule block b from 4 KiB
#          to 4 MiB; 4 I/O nodes (x 1 target), 32 MiB per client, so
#          that even b = 4 MiB makes 2 requests per client per server.
#          At the paper's 8x8: BENCH_NP=8 BENCH_NIO=8 (BENCH_MIB=64
#          keeps 2 requests per server at b = 4 MiB).
#   tile   mpi-tile-io shape (2x2 tiles of 1024x768 elements of 24 bytes,
#          4 ranks): list I/O versus one request per contiguous piece
#          (hint ipvfs_listio=disable), for each schedule block b in
#          BENCH_TILE_BLOCKS (default "65536 1048576").
#   btio   BTIO-like nested-strided collective write and read (4 ranks,
#          N^3 cells of 40 bytes, N=96: 34 MiB): ipvfs: with our two-phase
#          code (ipvfs_coll=ipvfs, the default), with ROMIO's generic
#          two-phase code (ipvfs_coll=generic, stripe-aligned domains),
#          independent list I/O (romio_cb_write/read=disable), and ufs:
#          (a directory under TMPDIR) with ROMIO's two-phase, in the same
#          run; all with cb_nodes=BENCH_CB_NODES (default 2, the I/O
#          nodes) and cb_config_list=*:* (aggregators on one host).
#
# Environment: BENCH_OUT (OUTDIR, default BUILDDIR/bench-results),
# BENCH_NP (ranks, default 4), BENCH_NIO (I/O nodes: sched 4, else 2),
# BENCH_NT (targets per I/O node, default 1), BENCH_MIB (sched: MiB per
# rank, default 32), BENCH_BLOCKS (sched: list of b), BENCH_REPS (tile,
# default 4), BENCH_N (btio: cells per side, default 96), BENCH_CB_NODES,
# BENCH_TRIALS (sched: default 3, tile and btio: 5).  Each runs every variant
# once per trial, the variants taking turns, so load from elsewhere hits
# them alike; every trial goes to OUTDIR/NAME-trials.csv, the table and
# NAME.csv show the median of the trials.
set -u
what=${1:?usage: run-patterns.sh sched|tile|btio [BUILDDIR]}
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${2:-${IPVFS_BUILDDIR:-.}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
lib=${IPVFS_ROMIO_LIB:-$IPVFS_BUILDDIR/adio/libipvfs-romio.so}
prog=$IPVFS_BUILDDIR/benchmarks/ipvfs-patterns
out=${BENCH_OUT:-$IPVFS_BUILDDIR/bench-results}
np=${BENCH_NP:-4}
nt=${BENCH_NT:-1}
nio=${BENCH_NIO:-$([ "$what" = sched ] && echo 4 || echo 2)}
for f in "$lib" "$prog"; do
    [ -e "$f" ] || { echo "run-patterns.sh: $f is not built" >&2; exit 1; }
done
case $what in sched|tile|btio) ;; *) echo "run-patterns.sh: unknown benchmark $what" >&2; exit 2 ;; esac
mkdir -p "$out" || exit 1
csv=$out/$what.csv
png=$out/$what.png
table=$out/$what.txt
rm -f "$csv" "$png"     # a failed run must not leave an older result behind
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores"
    echo "# command: $(env | grep '^BENCH_' | sort | tr '\n' ' ')benchmarks/run-patterns.sh $what"
    echo "# $np ranks, $nio I/O nodes x $nt targets"
} >"$table"
. "$IPVFS_SRCDIR/test/lib.sh"

ufs_dir=
ipvfs_test_cleanup() {
    [ -z "$ufs_dir" ] || rm -rf "$ufs_dir"
}

# run_prog PATTERN FILE N HINTS...: RESULT lines on stdout.  The program
# prints them only after checking the data; a failed run (its exit status,
# not grep's) or a missing write or read line makes run_prog fail, and its
# callers (line=$(run_prog ...) runs in a subshell) stop the benchmark.
run_prog() {
    local output
    output=$(timeout -k 5 300 mpiexec -n "$np" env LD_PRELOAD="$lib" "$prog" "$@") || {
        echo "ipvfs-patterns $* failed" >&2
        return 1
    }
    grep -q '^RESULT .* op=write ' <<<"$output" && grep -q '^RESULT .* op=read ' <<<"$output" || {
        echo "ipvfs-patterns $*: no write and read RESULT lines" >&2
        return 1
    }
    grep '^RESULT' <<<"$output"
}

# row FORMAT ARGS...: a table line on stdout and in $table.
row() {
    printf "$@" | tee -a "$table"
}

trials=${BENCH_TRIALS:-$([ "$what" = sched ] && echo 3 || echo 5)}
raw=$out/$what-trials.csv

# median < numbers, one a line
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# medians VARIANT [COLUMN...]: medians of VARIANT's trials in $raw, of the
# given CSV columns (default 3 4: write and read)
medians() {
    local v=$1 c out=
    shift
    [ $# -gt 0 ] || set -- 3 4
    for c in "$@"; do
        out+="$(awk -F, -v v="$v" -v c="$c" '$2 == v { print $c }' "$raw" | median) "
    done
    echo "${out% }"
}

# field NAME < RESULT line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }

# trial_row TRIAL VARIANT LINES [write_data]: appends the trial's row to
# $raw: write and read MiB/s from run_prog's RESULT lines, then, asked
# for, the write figure before the sync.
trial_row() {
    local wr rd wd=
    wr=$(grep 'op=write' <<<"$3" | field MiBps)
    rd=$(grep 'op=read' <<<"$3" | field MiBps)
    [ $# -lt 4 ] || wd=,$(grep 'op=write' <<<"$3" | field data_MiBps)
    echo "$1,$2,$wr,$rd$wd" >>"$raw"
}

plot() {    # plot TITLE XLABEL LOGX? ; reads $csv columns set below
    command -v gnuplot >/dev/null || { echo "(gnuplot not found: no $png)"; return 0; }
    gnuplot -e "set terminal png size 900,500; set output '$png'; set datafile separator ',';
        set key outside; set ylabel 'MiB/s'; set yrange [0:*]; $1" || echo "(gnuplot failed: no $png)"
}

bench_sched() {
    local mib=${BENCH_MIB:-32} blocks=${BENCH_BLOCKS:-"4096 16384 65536 262144 1048576 4194304"}
    local s b t v line wr rd variants=
    for b in $blocks; do
        for s in first random hash; do
            variants+=" $s-$b"
        done
    done
    ipvfs_start_cluster "$nio" "$nt"
    echo "trial,variant,write_MiBps,read_MiBps" >"$raw"
    # One file for all: written once untimed first, so that every timed
    # run overwrites (a first write allocates blocks and is slower).
    run_prog sched ipvfs:/bench/sched "$mib" ipvfs_schedule_block=1048576 >/dev/null ||
        ipvfs_fail "sched warm-up run failed"
    for t in $(seq "$trials"); do
        for v in $variants; do
            line=$(run_prog sched ipvfs:/bench/sched "$mib" ipvfs_io_schedule=${v%-*} \
                ipvfs_schedule_block=${v#*-}) || ipvfs_fail "sched run failed: no row"
            trial_row "$t" "$v" "$line"
        done
    done
    ipvfs_stop_cluster
    echo "heuristic,block,write_MiBps,read_MiBps" >"$csv"
    row '%-8s %10s %12s %12s   (median of %s trials, %s MiB per client)\n' heuristic b \
        write_MiBps read_MiBps "$trials" "$mib"
    for v in $variants; do
        read -r wr rd < <(medians "$v")
        row '%-8s %10s %12s %12s\n' "${v%-*}" "${v#*-}" "$wr" "$rd"
        echo "${v%-*},${v#*-},$wr,$rd" >>"$csv"
    done
    plot "set logscale x 2; set format x '%.0b%B'; set key inside top left;
        set xlabel 'schedule block b (bytes)'; set multiplot layout 1,2;
        set title 'write'; plot for [h in 'first random hash'] '< grep ^'.h.', $csv' u 2:3 w lp t h;
        set title 'read'; plot for [h in 'first random hash'] '< grep ^'.h.', $csv' u 2:4 w lp t h;
        unset multiplot"
}

bench_tile() {
    local reps=${BENCH_REPS:-4} blocks=${BENCH_TILE_BLOCKS:-"65536 1048576"} b mode v t line wr rd
    local variants=
    for b in $blocks; do
        variants+=" listio-b$b piecewise-b$b"
    done
    ipvfs_start_cluster "$nio" "$nt"
    echo "trial,mode,write_MiBps,read_MiBps,write_data_MiBps" >"$raw"
    for t in $(seq "$trials"); do
        for v in $variants; do
            mode=${v%-b*}
            b=${v##*-b}
            line=$(run_prog tile "ipvfs:/bench/tile-$mode" "$reps" ipvfs_schedule_block=$b \
                ipvfs_listio=$([ $mode = listio ] && echo enable || echo disable)) ||
                ipvfs_fail "tile run failed: no row"
            trial_row "$t" "$v" "$line" write_data
        done
    done
    ipvfs_stop_cluster
    # write: through MPI_File_sync (durable); write_data: until the last
    # write returned (data at the servers, before the sync)
    echo "mode,write_MiBps,read_MiBps,write_data_MiBps" >"$csv"
    row '%-18s %12s %16s %12s   (median of %s trials, %s reps)\n' mode write_MiBps \
        write_data_MiBps read_MiBps "$trials" "$reps"
    for v in $variants; do
        read -r wr rd wd < <(medians "$v" 3 4 5)
        row '%-18s %12s %16s %12s\n' "$v" "$wr" "$wd" "$rd"
        echo "$v,$wr,$rd,$wd" >>"$csv"
    done
    awk -F, 'NR > 1 && $1 ~ /^listio/ { w = $2; r = $3; d = $4; b = substr($1, 9) }
        NR > 1 && $1 ~ /^piecewise/ && $2 > 0 && $3 > 0 && $4 > 0 {
        printf "b=%s list I/O / piecewise: write %.1fx (before the sync %.1fx), read %.1fx\n",
            b, w / $2, d / $4, r / $3 }' "$csv" | tee -a "$table"
    plot "set style data histograms; set style fill solid; set title 'mpi-tile-io 2x2, 4 ranks';
        set xtics rotate by -20; plot '$csv' every ::1 u 2:xtic(1) t 'write', '' every ::1 u 3 t 'read'"
}

bench_btio() {
    local n=${BENCH_N:-96} cb=${BENCH_CB_NODES:-2} name file line wr rd
    local -a hints
    ipvfs_start_cluster "$nio" "$nt"
    ufs_dir=$(mktemp -d "${TMPDIR:-/tmp}/ipvfs-btio-ufs.XXXXXX") || exit 1
    local t variants="ipvfs-coll-ours ipvfs-coll-generic ipvfs-independent ufs-coll-generic"
    echo "trial,variant,write_MiBps,read_MiBps" >"$raw"
    for t in $(seq "$trials"); do
        for name in $variants; do
            file=ipvfs:/bench/btio-$name
            hints=(romio_cb_write=enable romio_cb_read=enable cb_nodes=$cb "cb_config_list=*:*")
            case $name in
            ipvfs-coll-ours) hints+=(ipvfs_coll=ipvfs) ;;
            ipvfs-coll-generic) hints+=(ipvfs_coll=generic) ;;
            ipvfs-independent) hints=(romio_cb_write=disable romio_cb_read=disable) ;;
            ufs-coll-generic) file=ufs:$ufs_dir/btio ;;
            esac
            line=$(run_prog btio "$file" "$n" "${hints[@]}") ||
                ipvfs_fail "btio run failed: no row"
            trial_row "$t" "$name" "$line"
        done
    done
    ipvfs_stop_cluster
    echo "variant,write_MiBps,read_MiBps" >"$csv"
    row '%-22s %12s %12s   (median of %s trials)\n' variant write_MiBps read_MiBps "$trials"
    for name in $variants; do
        read -r wr rd < <(medians "$name")
        row '%-22s %12s %12s\n' "$name" "$wr" "$rd"
        echo "$name,$wr,$rd" >>"$csv"
    done
    awk -F, 'NR == 2 { w = $2; r = $3 } NR == 3 && $2 > 0 && $3 > 0 {
        printf "ours / generic two-phase on ipvfs: write %.2fx, read %.2fx\n", w / $2, r / $3 }' \
        "$csv" | tee -a "$table"
    plot "set style data histograms; set style fill solid; set title 'BTIO-like, N=$n';
        set xtics rotate by -20; plot '$csv' every ::1 u 2:xtic(1) t 'write', '' every ::1 u 3 t 'read'"
}

"bench_$what"
echo "CSV: $csv"
[ -f "$png" ] && echo "PNG: $png"
exit 0
