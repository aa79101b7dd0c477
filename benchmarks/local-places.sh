#!/bin/bash
# local-places.sh: READ places for targets on the I/O node's own host:
# `--read-places 1` (what auto gives them) against 2, on disks that take
# milliseconds.
#
#   benchmarks/local-places.sh [--loads "R1 R2 ..."] [--out DIR] [BUILDDIR]
#
# Why: a READ keeps its place in the I/O node's store until its data has
# come in from the target, so with one place per target the disk idles
# from the end of one READ until the next arrives (the completion going
# up, the I/O node's turn, the command coming down), which a loaded
# machine stretches; a second place lets the next READ wait at the target
# instead.  read-places.sh measures the same over slow host links.
#
# One host: 1 I/O node x 2 targets, the targets' LUNs on the emulated disk
# (--emulate-disk st318452lw: one io at a time, ~6 ms a 64 KiB read), the
# L1 off.  A 128 MiB file, then per load (default "120 240 360" reads/s in
# all) and per setting (1 and 2 places, alternating, each on a cluster of
# its own), ipvfs-openload from 4 ranks for 5 s (1 s warm-up) at random
# 64 KiB-aligned offsets.  Output in DIR (default benchmarks/results):
# local-places.csv (places,offered_per_s,achieved_per_s,mean_ms,p95_ms,
# inflight_max), local-places.txt (the command, date, load, the table, the
# disks' mean service and the capacity it gives) and local-places.png.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
loads="120 240 360" out=$src/benchmarks/results
usage="usage: local-places.sh [--loads \"R1 R2 ...\"] [--out DIR] [BUILDDIR]"
while [ $# -gt 0 ]; do
    case $1 in
    --loads) loads=${2:?--loads needs rates}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "local-places.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
    *) break ;;
    esac
done
for l in $loads; do
    case $l in ''|*[!0-9]*|0) echo "local-places.sh: --loads: '$l' is not a rate above 0" >&2; exit 2 ;; esac
done
cmd="benchmarks/local-places.sh --loads \"$loads\" $*"
IPVFS_SRCDIR=$src
IPVFS_BUILDDIR=$(cd "${1:-$src/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
b=$IPVFS_BUILDDIR romio=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
for f in "$romio" "$b/benchmarks/ipvfs-ior" "$b/benchmarks/ipvfs-openload"; do
    [ -e "$f" ] || { echo "local-places.sh: $f is not built" >&2; exit 2; }
done
. "$src/test/lib.sh" || exit 1
. "$src/benchmarks/sweep_plot.sh" || exit 1
mkdir -p "$out" || exit 2
start() {
    ipvfs_start_cluster 1 2 --target-size 200M --cache-l1 0 --emulate-disk st318452lw "$@"
}

start
mpiexec -n 2 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-ior" -f ipvfs:/lp -b 64m -t 1m -w -k \
    2>&1 | grep -q '^RESULT' || ipvfs_fail "writing the file"
ipvfs_stop_cluster >/dev/null
csv=$out/local-places.csv
echo "places,offered_per_s,achieved_per_s,mean_ms,p95_ms,inflight_max" >"$csv"
for l in $loads; do
    for p in 1 2; do
        start --read-places "$p"
        res=$(mpiexec -n 4 env LD_PRELOAD="$romio" "$b/benchmarks/ipvfs-openload" -f ipvfs:/lp \
            -s 64K -r "$l" -t 5 -W 1 -x "$l" 2>&1 | grep '^RESULT') ||
            ipvfs_fail "ipvfs-openload at $l/s with $p places"
        sweep_row "$p" "$res" offered_per_s achieved_per_s mean_ms p95_ms inflight_max >>"$csv"
        ipvfs_stop_cluster >/dev/null
    done
done

read -r svc cap <<<"$(sweep_disks 2)"
{
    echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: $cmd"
    echo "# build: $b; 1 I/O node x 2 targets on its host, emulated disks, L1 off, 4 ranks, 64 KiB random reads"
    echo "# the disks: mean service ${svc:-?} ms, so their capacity is about ${cap:-?} reads/s"
    column -t -s, "$csv"
    echo "highest achieved: 1 place $(sweep_best "$csv" 1)/s, 2 places $(sweep_best "$csv" 2)/s (disks ${cap:-?}/s)"
} | tee "$out/local-places.txt"
sweep_plot "$csv" "$out/local-places.png" \
    "random 64 KiB reads, 1 I/O node x 2 local targets (emulated disks, L1 off, 4 ranks)" \
    "${cap:-0}" "disks (2)" 1 "--read-places 1" 2 "--read-places 2"
