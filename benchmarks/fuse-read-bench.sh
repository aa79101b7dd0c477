#!/bin/bash
# fuse-read-bench.sh: the mount's read path, a baseline ipvfs-fuse beside
# this build's, in the same run on one 2 I/O node x 1 target cluster (this
# build's servers; the read path's wire calls are the same in both), with
# MPI-IO of one rank as the yardstick:
#
#   mpi_read             MPI-IO, one rank, reads the file (mpi_fcopy -null)
#   base_seq, new_seq    fio 1 MiB sequential read on the mount (psync),
#                        readahead as a root mount gets it
#   base_seq_ra128, new_seq_ra128
#                        the same with the bdi's read_ahead_kb set to 128
#                        after mounting: what a user's (non-root) mount has
#   base_rand4k, new_rand4k   fio 4 KiB random reads (BENCH_RAND_S s)
#
# Variants take turns in every trial; medians of MiB/s and of CPU seconds
# per GiB (the command's and its ipvfs-fuse's; servers left out).  Writes
# OUTDIR/fuse-read-bench.{txt,csv,png} and fuse-read-bench-trials.csv.
#
#   benchmarks/fuse-read-bench.sh BASE_BUILDDIR [BUILDDIR]
#       (BENCH_SIZE=512M, BENCH_TRIALS=3, BENCH_RAND_S=3, BENCH_OUT)
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
base_fuse=$(cd "${1:?usage: fuse-read-bench.sh BASE_BUILDDIR [BUILDDIR]}" && pwd)/fuse/ipvfs-fuse
IPVFS_BUILDDIR=$(cd "${2:-$IPVFS_SRCDIR/_build}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
size=${BENCH_SIZE:-512M}
bytes=$(numfmt --from=iec "$size") || exit 2
trials=${BENCH_TRIALS:-3}
rand_s=${BENCH_RAND_S:-3}
out=${BENCH_OUT:-$IPVFS_BUILDDIR/bench-results}
new_fuse=$IPVFS_BUILDDIR/fuse/ipvfs-fuse
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
fcopy=$IPVFS_BUILDDIR/test/mpi/mpi_fcopy
for f in "$base_fuse" "$new_fuse" "$lib" "$fcopy"; do
    [ -x "$f" ] || [ -e "$f" ] || { echo "fuse-read-bench.sh: $f is not built" >&2; exit 1; }
done
command -v fio >/dev/null || { echo "fuse-read-bench.sh: fio not installed" >&2; exit 1; }
mkdir -p "$out" || exit 1
csv=$out/fuse-read-bench.csv raw=$out/fuse-read-bench-trials.csv
table=$out/fuse-read-bench.txt png=$out/fuse-read-bench.png
. "$IPVFS_SRCDIR/test/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/fuse-read-bench.XXXXXX") || exit 1
mnt=$work/mnt fuse_pid=
ipvfs_test_cleanup() {
    [ -z "$fuse_pid" ] || { fusermount3 -u "$mnt"; wait "$fuse_pid"; }
    rm -rf "$work"
}

# mount BIN [RA_KB]: mounts BIN at $mnt (fuse_pid: ipvfs-fuse itself)
mount_with() {
    local i dev
    "$1" "$mnt" -f >>"$work/fuse.log" 2>&1 &
    fuse_pid=$!
    for ((i = 0; i < 200; i++)); do mountpoint -q "$mnt" && break; sleep 0.1; done
    mountpoint -q "$mnt" || ipvfs_fail "the mount of $1 did not appear"
    dev=$(mountpoint -d "$mnt")
    stat "$mnt/b/data" >/dev/null || ipvfs_fail "no file on the mount"   # INIT done
    [ -z "${2:-}" ] || echo "$2" >"/sys/class/bdi/$dev/read_ahead_kb" ||
        ipvfs_fail "cannot set read_ahead_kb (root only)"
}
unmount() { fusermount3 -u "$mnt" && wait "$fuse_pid"; fuse_pid=; }
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# timed CMD...: "BYTES SECONDS CPU" of one run (fio's bytes, or the size)
timed() {
    local t0 t1 f0 f1 e hz=$(getconf CLK_TCK) moved=$bytes
    f0=$(cpu_of "${fuse_pid:-self}")
    t0=$(date +%s%N)
    /usr/bin/time -o "$work/time.txt" -f '%U %S' "$@" >"$work/cmd.out" 2>>"$work/cmd.err" ||
        { echo "failed: $*" >&2; tail -3 "$work/cmd.err" >&2; return 1; }
    t1=$(date +%s%N)
    f1=$(cpu_of "${fuse_pid:-self}")
    [ -z "$fuse_pid" ] && f1=$f0
    [ ! -s "$work/fio.json" ] || moved=$(python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["read"]["io_bytes"])' "$work/fio.json")
    rm -f "$work/fio.json"
    # mpi_fcopy times its own I/O (after MPI_Init and the open, as a job would)
    e=$(awk '$1 == "bytes" { print $4 }' "$work/cmd.out")
    [ -n "$e" ] || e=$(awk -v e="$(((t1 - t0) / 1000000))" 'BEGIN { print e / 1000 }')
    awk -v m="$moved" -v e="$e" -v f="$((f1 - f0))" -v hz="$hz" \
        'END { printf "%s %.3f %.3f\n", m, e, $1 + $2 + f / hz }' "$work/time.txt"
}
fio_read() {   # RW BS [EXTRA...]
    local rw=$1 bs=$2
    shift 2
    timed fio --name=r --filename="$mnt/b/data" --rw="$rw" --bs="$bs" --size="$bytes" \
        --ioengine=psync --output-format=json --output="$work/fio.json" "$@"
}

variant() {
    local bin=$new_fuse ra= r
    case $1 in base_*) bin=$base_fuse ;; esac
    case $1 in *_ra128) ra=128 ;; esac
    case $1 in
    mpi_read) timed mpiexec -n 1 env LD_PRELOAD="$lib" "$fcopy" ipvfs:/b/data -null; return ;;
    esac
    mount_with "$bin" $ra
    case $1 in
    *_rand4k) r=$(fio_read randread 4k --time_based --runtime="$rand_s") ;;
    *) r=$(fio_read read 1M) ;;
    esac
    unmount
    [ -n "$r" ] && echo "$r"
}

variants="mpi_read base_seq new_seq base_seq_ra128 new_seq_ra128 base_rand4k new_rand4k"
ipvfs_start_cluster 2 1
mkdir "$mnt" || exit 1
head -c "$bytes" /dev/urandom >"$work/src.bin" || exit 1
ipvfs-ctl cp "$work/src.bin" ipvfs:/b/data || ipvfs_fail "staging the file failed"
rm -f "$work/src.bin"
echo "trial,variant,bytes,seconds,cpu_seconds" >"$raw"
for ((t = 1; t <= trials; t++)); do
    for v in $variants; do
        line=$(variant "$v") || ipvfs_fail "variant $v failed"
        echo "$t,$v,${line// /,}" >>"$raw"
        echo "trial $t $v: $line"
    done
done
ipvfs_stop_cluster

python3 - "$raw" "$csv" "$variants" <<'PYEOF' >"$work/table"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out = open(sys.argv[2], "w")
out.write("variant,MiBps,cpu_s_per_GiB\n")
med = {}
for v in sys.argv[3].split():
    rs = [r for r in rows if r["variant"] == v]
    med[v] = statistics.median(int(r["bytes"]) / 2**20 / float(r["seconds"]) for r in rs)
    cpu = statistics.median(float(r["cpu_seconds"]) / (int(r["bytes"]) / 2**30) for r in rs)
    out.write(f"{v},{med[v]:.1f},{cpu:.2f}\n")
    print(f"{v:16s} {med[v]:9.1f} MiB/s {cpu:8.2f} CPU s/GiB")
for v in ("base_seq", "new_seq", "base_seq_ra128", "new_seq_ra128"):
    print(f"{v} / mpi_read  {med[v] / med['mpi_read']:.2f}x")
print(f"new_rand4k / base_rand4k  {med['new_rand4k'] / med['base_rand4k']:.2f}x")
PYEOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: BENCH_SIZE=$size BENCH_TRIALS=$trials BENCH_RAND_S=$rand_s benchmarks/fuse-read-bench.sh $1 ${2:-}"
    echo "# base: $base_fuse; new: $new_fuse; 2 I/O nodes x 1 target; medians of $trials trials"
    cat "$work/table"
} >"$table"
cat "$table"
gnuplot -e "set terminal png size 900,450; set output '$png'; set datafile separator ',';
    set style data histograms; set style fill solid; set ylabel 'MiB/s'; set yrange [0:*];
    set termoption noenhanced; set xtics rotate by -30; set key off;
    set title 'ipvfs-fuse reads, baseline vs new ($size, medians)';
    plot '$csv' using 2:xtic(1) skip 1" || echo "(gnuplot failed: no $png)"
