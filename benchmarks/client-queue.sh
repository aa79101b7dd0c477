#!/bin/bash
# client-queue.sh: how many nonblocking reads one client process gets to
# the servers at once.  Until the request engine ran a process's batches
# side by side (adio/client/xfer_engine.h), a rank's second
# MPI_File_iread_at left only once its first was answered; this measures
# one rank against four, and with --baseline a build from before beside
# this one.
#
#   benchmarks/client-queue.sh [--loads "R1 R2 ..."] [--handles H]
#                              [--shape NIOxNT] [--baseline BUILDDIR0]
#                              [--out DIR] [BUILDDIR]
#
# One host: 1 I/O node x 2 targets (--shape: NIO x NT), the targets' LUNs on the emulated
# disk (--emulate-disk st318452lw: one io at a time, ~6 ms a 64 KiB
# read), the L1 off, so that the servers' capacity is the disks'
# (1 x 2: about 2 / 5.8 ms = 345 reads/s, printed from the targets' logs).  A
# 128 MiB file, then per load (default "120 240 360" reads/s in all) and
# per client count (1 and 4 ranks, alternating; with --baseline each
# right after the same run with BUILDDIR0's client library and
# ipvfs-openload, against BUILDDIR's servers), ipvfs-openload for 5 s (1 s
# warm-up) at random 64 KiB-aligned offsets, each on a cluster of its
# own.  Each rank opens the file H times (default 8, ipvfs-openload's -H)
# and posts on the handle with the fewest in flight: --handles 1 shows what
# a program that keeps one handle gets past ad_ipvfs's window per open
# file (adio/ad_ipvfs/ad_ipvfs.h, ADIOI_IPVFS_NB_PIECES).  Output in DIR (default benchmarks/results): client-queue.csv
# (setting,offered_per_s,achieved_per_s,mean_ms,p95_ms,inflight_max: the
# setting is the rank count, "base-" before it for the baseline),
# client-queue.txt (the command, date, load, the table, the disks' mean
# service and the capacity it gives) and client-queue.png.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
loads="120 240 360" out=$src/benchmarks/results base='' handles=8 nio=1 nt=2
usage="usage: client-queue.sh [--loads \"R1 R2 ...\"] [--handles H] [--shape NIOxNT] [--baseline BUILDDIR0] [--out DIR] [BUILDDIR]"
while [ $# -gt 0 ]; do
    case $1 in
    --loads) loads=${2:?--loads needs rates}; shift 2 ;;
    --handles) handles=${2:?--handles needs a count}; shift 2 ;;
    --shape)
        case ${2:-} in
        *x*) nio=${2%%x*} nt=${2#*x} ;;
        *) echo "client-queue.sh: --shape: '${2:-}' is not NIOxNT, e.g. 2x4" >&2; exit 2 ;;
        esac
        shift 2 ;;
    --baseline) base=$(cd "${2:?--baseline needs a build directory}" && pwd) || exit 2; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "client-queue.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
    *) break ;;
    esac
done
for l in $loads; do
    case $l in ''|*[!0-9]*|0) echo "client-queue.sh: --loads: '$l' is not a rate above 0" >&2; exit 2 ;; esac
done
for v in "$handles" "$nio" "$nt"; do
    case $v in ''|*[!0-9]*|0) echo "client-queue.sh: --handles $handles --shape ${nio}x$nt: '$v' is not a count above 0 ($usage)" >&2; exit 2 ;; esac
done
cmd="benchmarks/client-queue.sh --loads \"$loads\" --handles $handles --shape ${nio}x$nt${base:+ --baseline $base} $*"
IPVFS_SRCDIR=$src
IPVFS_BUILDDIR=$(cd "${1:-$src/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
new=$IPVFS_BUILDDIR
for d in $new $base; do
    for f in "$d/adio/libipvfs-romio.so" "$d/benchmarks/ipvfs-ior" "$d/benchmarks/ipvfs-openload"; do
        [ -e "$f" ] || { echo "client-queue.sh: $f is not built" >&2; exit 2; }
    done
done
. "$src/test/lib.sh" || exit 1
. "$src/benchmarks/sweep_plot.sh" || exit 1
mkdir -p "$out" || exit 2
start() {
    ipvfs_start_cluster "$nio" "$nt" --target-size 200M --cache-l1 0 --emulate-disk st318452lw
}
# run BUILDDIR SETTING RANKS LOAD: one ipvfs-openload run with that
# build's client library (the servers are always BUILDDIR's), a row of the
# CSV
run() {
    local d=$1 res
    start
    res=$(mpiexec -n "$3" env LD_PRELOAD="$d/adio/libipvfs-romio.so" "$d/benchmarks/ipvfs-openload" \
        -f ipvfs:/cq -s 64K -r "$4" -t 5 -W 1 -x "$4" -H "$handles" 2>&1 | grep '^RESULT') ||
        ipvfs_fail "ipvfs-openload at $4/s from $3 ranks ($d)"
    sweep_row "$2" "$res" offered_per_s achieved_per_s mean_ms p95_ms inflight_max >>"$csv"
    ipvfs_stop_cluster >/dev/null
}

# one file written by this build serves every run: the clusters share
# the state directory
start
mpiexec -n 2 env LD_PRELOAD="$new/adio/libipvfs-romio.so" "$new/benchmarks/ipvfs-ior" -f ipvfs:/cq \
    -b 64m -t 1m -w -k 2>&1 | grep -q '^RESULT' || ipvfs_fail "writing the file"
ipvfs_stop_cluster >/dev/null
csv=$out/client-queue.csv
echo "setting,offered_per_s,achieved_per_s,mean_ms,p95_ms,inflight_max" >"$csv"
for l in $loads; do
    for n in 1 4; do
        [ -z "$base" ] || run "$base" "base-$n" "$n" "$l"
        run "$new" "$n" "$n" "$l"
    done
done

read -r svc cap <<<"$(sweep_disks $((nio * nt)))"
{
    echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: $cmd"
    echo "# build: $new${base:+, baseline $base}; $nio I/O node(s) x $nt targets, emulated disks, L1 off, 64 KiB random reads, $handles handles a rank"
    echo "# the disks: mean service ${svc:-?} ms, so the servers' capacity is about ${cap:-?} reads/s"
    column -t -s, "$csv"
    echo "highest achieved: 1 rank $(sweep_best "$csv" 1)/s, 4 ranks $(sweep_best "$csv" 4)/s (servers ${cap:-?}/s)"
    [ -z "$base" ] || echo "baseline: 1 rank $(sweep_best "$csv" base-1)/s, 4 ranks $(sweep_best "$csv" base-4)/s"
} | tee "$out/client-queue.txt"
set -- 1 "1 rank" 4 "4 ranks"
[ -z "$base" ] || set -- base-1 "1 rank, baseline" "$@" base-4 "4 ranks, baseline"
sweep_plot "$csv" "$out/client-queue.png" \
    "nonblocking 64 KiB reads from 1 and 4 client processes, $handles handles each ($nio x $nt, emulated disks, L1 off)" \
    "${cap:-0}" "servers ($((nio * nt)) disks)" "$@"
