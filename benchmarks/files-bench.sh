#!/bin/bash
# files-bench.sh: the files outside MPI against MPI-IO and the local disk,
# in the same run on a 2 I/O node x 1 target cluster (test/lib.sh):
#
#   mpi_read      MPI-IO, one rank, reads the file (16 MiB MPI_File_read_at)
#   mpi_read_b1m  the same with hint ipvfs_schedule_block=1M (ROMIO_HINTS),
#                 the request size cp and the mount use
#   mpi_write     MPI-IO, one rank, writes it (from a local file in cache)
#   cp_out_null   ipvfs-ctl cp ipvfs:/FILE /dev/null
#   cp_out_file   ipvfs-ctl cp ipvfs:/FILE LOCALFILE
#   cp_in         ipvfs-ctl cp LOCALFILE ipvfs:/FILE
#   fuse_seq_read, fuse_seq_write   fio, 1 MiB, psync, on ipvfs-fuse
#   fuse_rand_4k  fio 4 KiB random reads on the mount (BENCH_RAND_S s)
#   local_*       the same fio jobs with O_DIRECT on a file under TMPDIR
#
# Every variant runs once per trial, taking turns; the table and CSV give
# the median MiB/s (2^20 bytes/s) of the trials and the client side's CPU
# seconds per GiB moved (user + system of the command and its children,
# plus ipvfs-fuse's own for the mount rows; the servers are left out: the
# same for every iPVFS row).  Writes OUTDIR/files-bench.{txt,csv,png} and
# files-bench-trials.csv.
#
#   benchmarks/files-bench.sh [BUILDDIR]   (BENCH_SIZE=1G, BENCH_TRIALS=3,
#                                           BENCH_RAND_S=5, BENCH_OUT)
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-$IPVFS_SRCDIR/_build}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
size=${BENCH_SIZE:-1G}
bytes=$(numfmt --from=iec "$size") || exit 2
trials=${BENCH_TRIALS:-3}
rand_s=${BENCH_RAND_S:-5}
out=${BENCH_OUT:-$IPVFS_BUILDDIR/bench-results}
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
fcopy=$IPVFS_BUILDDIR/test/mpi/mpi_fcopy
fusebin=$IPVFS_BUILDDIR/fuse/ipvfs-fuse
for f in "$lib" "$fcopy" "$fusebin"; do
    [ -e "$f" ] || { echo "files-bench.sh: $f is not built" >&2; exit 1; }
done
command -v fio >/dev/null || { echo "files-bench.sh: fio not installed" >&2; exit 1; }
[ -c /dev/fuse ] || { echo "files-bench.sh: /dev/fuse missing" >&2; exit 1; }
mkdir -p "$out" || exit 1
table=$out/files-bench.txt csv=$out/files-bench.csv png=$out/files-bench.png
raw=$out/files-bench-trials.csv
rm -f "$csv" "$png"
. "$IPVFS_SRCDIR/test/lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/files-bench.XXXXXX") || exit 1
mnt=$work/mnt fuse_pid=
ipvfs_test_cleanup() {
    [ -z "$fuse_pid" ] || { fusermount3 -u "$mnt"; wait "$fuse_pid"; }
    rm -rf "$work"
}

# cpu_of PID: user + system clock ticks of a process so far
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# timed CMD...: runs CMD; prints "ELAPSED CPU" (seconds; CPU of CMD and
# its children, plus ipvfs-fuse's while it ran).  Fails when CMD does.
# MPI rows take ELAPSED from mpi_fcopy's own clock (after MPI_Init and the
# open, as an MPI job would time its I/O), so mpiexec's start is left out.
timed() {
    local t0 t1 f0 f1 hz elapsed
    hz=$(getconf CLK_TCK)
    f0=$(cpu_of "$fuse_pid")
    t0=$(date +%s%N)
    /usr/bin/time -o "$work/time.txt" -f '%U %S' "$@" >"$work/cmd.out" 2>>"$work/cmd.err" ||
        { echo "failed: $*" >&2; tail -3 "$work/cmd.err" >&2; return 1; }
    t1=$(date +%s%N)
    f1=$(cpu_of "$fuse_pid")
    elapsed=$(awk '$1 == "bytes" { print $4 }' "$work/cmd.out")
    [ -n "$elapsed" ] || elapsed=$(awk -v e="$(((t1 - t0) / 1000000))" 'BEGIN { print e / 1000 }')
    awk -v e="$elapsed" -v f="$((f1 - f0))" -v hz="$hz" \
        'END { printf "%.3f %.3f\n", e, $1 + $2 + f / hz }' "$work/time.txt"
}

# fio_args NAME FILE RW BS [EXTRA...]: one fio job (psync, one process)
fio_args() {
    local name=$1 file=$2 rw=$3 bs=$4
    shift 4
    echo fio --name="$name" --filename="$file" --rw="$rw" --bs="$bs" --size="$bytes" \
        --ioengine=psync --numjobs=1 --output-format=json --output="$work/$name.json" "$@"
}

# fio_bytes NAME: bytes the last fio job NAME moved
fio_bytes() {
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]
print(j["read"]["io_bytes"] + j["write"]["io_bytes"])' "$work/$1.json"
}

# variant NAME: runs it once; prints "BYTES ELAPSED CPU"
variant() {
    local r moved=$bytes
    case $1 in
    mpi_read) r=$(timed mpiexec -n 1 env LD_PRELOAD="$lib" "$fcopy" ipvfs:/b/data -null) ;;
    mpi_read_b1m) r=$(timed mpiexec -n 1 env LD_PRELOAD="$lib" ROMIO_HINTS="$work/hints" "$fcopy" ipvfs:/b/data -null) ;;
    mpi_write) ipvfs-ctl rm /b/mpiw 2>/dev/null
        r=$(timed mpiexec -n 1 env LD_PRELOAD="$lib" "$fcopy" "$work/src.bin" ipvfs:/b/mpiw) ;;
    cp_out_null) r=$(timed ipvfs-ctl cp ipvfs:/b/data /dev/null) ;;
    cp_out_file) rm -f "$work/out.bin"; r=$(timed ipvfs-ctl cp ipvfs:/b/data "$work/out.bin") ;;
    cp_in) r=$(timed ipvfs-ctl cp -f "$work/src.bin" ipvfs:/b/cpin) ;;
    fuse_seq_read) r=$(timed $(fio_args "$1" "$mnt/b/data" read 1M)) ;;
    fuse_seq_write) rm -f "$mnt/b/fiow"; r=$(timed $(fio_args "$1" "$mnt/b/fiow" write 1M --end_fsync=1)) ;;
    fuse_rand_4k) r=$(timed $(fio_args "$1" "$mnt/b/data" randread 4k --time_based --runtime="$rand_s")) ;;
    local_seq_read) r=$(timed $(fio_args "$1" "$work/local.bin" read 1M --direct=1)) ;;
    local_seq_write) rm -f "$work/localw.bin"; r=$(timed $(fio_args "$1" "$work/localw.bin" write 1M --direct=1 --end_fsync=1)) ;;
    local_rand_4k) r=$(timed $(fio_args "$1" "$work/local.bin" randread 4k --direct=1 --time_based --runtime="$rand_s")) ;;
    esac || return 1
    case $1 in fuse_*|local_*) moved=$(fio_bytes "$1") ;; esac
    echo "$moved $r"
}

variants="mpi_read mpi_read_b1m mpi_write cp_out_null cp_out_file cp_in fuse_seq_read fuse_seq_write fuse_rand_4k local_seq_read local_seq_write local_rand_4k"
ipvfs_start_cluster 2 1
echo "ipvfs_schedule_block 1048576" >"$work/hints"
head -c "$bytes" /dev/urandom >"$work/src.bin" || exit 1
cp "$work/src.bin" "$work/local.bin" || exit 1
ipvfs-ctl cp "$work/src.bin" ipvfs:/b/data || ipvfs_fail "staging the file failed"
mkdir "$mnt" && "$fusebin" "$mnt" -f >"$work/fuse.log" 2>&1 &
fuse_pid=$!
for ((i = 0; i < 200; i++)); do mountpoint -q "$mnt" && break; sleep 0.1; done
mountpoint -q "$mnt" || ipvfs_fail "the mount did not appear"

echo "trial,variant,bytes,seconds,cpu_seconds" >"$raw"
for ((t = 1; t <= trials; t++)); do
    for v in $variants; do
        line=$(variant "$v") || ipvfs_fail "variant $v failed"
        echo "$t,$v,${line// /,}" >>"$raw"
        echo "trial $t $v: $line"
    done
done
fusermount3 -u "$mnt" && wait "$fuse_pid"
fuse_pid=
ipvfs_stop_cluster

# Medians per variant: MiB/s and CPU s/GiB.
python3 - "$raw" "$csv" "$variants" <<'PYEOF' >"$work/table"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out = open(sys.argv[2], "w")
out.write("variant,MiBps,cpu_s_per_GiB\n")
med = {}
for v in sys.argv[3].split():
    rs = [r for r in rows if r["variant"] == v]
    mibps = statistics.median(int(r["bytes"]) / 2**20 / float(r["seconds"]) for r in rs)
    cpu = statistics.median(float(r["cpu_seconds"]) / (int(r["bytes"]) / 2**30) for r in rs)
    med[v] = mibps
    out.write(f"{v},{mibps:.1f},{cpu:.2f}\n")
    print(f"{v:16s} {mibps:9.1f} MiB/s {cpu:8.2f} CPU s/GiB")
print(f"cp_out_null / mpi_read     {med['cp_out_null'] / med['mpi_read']:.2f}x")
print(f"cp_in / mpi_write          {med['cp_in'] / med['mpi_write']:.2f}x")
print(f"cp_out_null / mpi_read_b1m {med['cp_out_null'] / med['mpi_read_b1m']:.2f}x")
print(f"fuse_seq_read / mpi_read   {med['fuse_seq_read'] / med['mpi_read']:.2f}x")
print(f"fuse_seq_read / mpi_read_b1m {med['fuse_seq_read'] / med['mpi_read_b1m']:.2f}x")
print(f"fuse_seq_write / mpi_write {med['fuse_seq_write'] / med['mpi_write']:.2f}x")
PYEOF
{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: BENCH_SIZE=$size BENCH_TRIALS=$trials BENCH_RAND_S=$rand_s benchmarks/files-bench.sh"
    echo "# 2 I/O nodes x 1 target (RAID-0), one client process; medians of $trials trials"
    cat "$work/table"
} >"$table"
cat "$table"
if command -v gnuplot >/dev/null; then
    gnuplot -e "set terminal png size 1000,500; set output '$png'; set datafile separator ',';
        set style data histograms; set style fill solid; set ylabel 'MiB/s'; set yrange [0:*];
        set termoption noenhanced; set xtics rotate by -30; set key off; set title 'files outside MPI ($size, medians)';
        plot '$csv' using 2:xtic(1) skip 1" || echo "(gnuplot failed: no $png)"
fi
