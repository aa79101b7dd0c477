#!/bin/bash
# read-places.sh: random 64 KiB reads through I/O nodes on slow host links,
# with `--read-places 1` against 2 (what auto gives a target on another
# host, as here).  Needs root.
#
#   benchmarks/read-places.sh [--rate RATE] [--loads "R1 R2 ..."] [--out DIR] [BUILDDIR]
#
# Why: a READ keeps its place in the I/O node's store until its data has
# come in from the target, so over a slow link the target's disk idles
# while the READ before crosses the link; a second place per target
# lets the two overlap (doc/launching.md, --read-places).
#
# Emulated hosts (test/hosts_lib.sh): node1 runs the I/O node, node2 its
# one target, node3 the four client ranks.  node1's link is shaped both
# ways to RATE (default 40mbit; tbf with a 4000-byte bucket and a 4 MiB
# queue, as model-validate-hosts.sh), so that every READ's data crosses
# it twice (the L1 is off: in from the target, out to the client).  A
# 256 MiB file, then per load (default "20 40 60 80 100" reads/s in all)
# and per setting, ipvfs-openload for 6 s (1 s warm-up) at random 64
# KiB-aligned offsets; the settings alternate at each load, each on a
# cluster started for it.  The link's limit beside them: iperf3 from
# node1 to node3, as 64 KiB reads per second one direction carries.
# Output in DIR (default benchmarks/results): read-places-link.csv
# (places,offered_per_s,achieved_per_s,mean_ms,p50_ms,p95_ms),
# read-places-link.txt (the command, date, load, the table and each
# setting's highest achieved rate) and read-places-link.png.  (On one
# host, with the targets near, more places bought nothing beyond the
# noise: benchmarks/results/read-places.md.)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
rate=40mbit loads="20 40 60 80 100" out=$src/benchmarks/results
usage="usage: read-places.sh [--rate RATE] [--loads \"R1 R2 ...\"] [--out DIR] [BUILDDIR]"
while [ $# -gt 0 ]; do
    case $1 in
    --rate) rate=${2:?--rate needs a rate such as 40mbit}; shift 2 ;;
    --loads) loads=${2:?--loads needs rates}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "read-places.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
    *) break ;;
    esac
done
for l in $loads; do
    case $l in ''|*[!0-9]*|0) echo "read-places.sh: --loads: '$l' is not a rate above 0" >&2; exit 2 ;; esac
done
cmd="benchmarks/read-places.sh --rate $rate --loads \"$loads\" $*"
IPVFS_SRCDIR=$src
IPVFS_BUILDDIR=$(cd "${1:-$src/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
b=$IPVFS_BUILDDIR romio=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
for f in "$romio" "$b/benchmarks/ipvfs-ior" "$b/benchmarks/ipvfs-openload"; do
    [ -e "$f" ] || { echo "read-places.sh: $f is not built" >&2; exit 2; }
done
command -v iperf3 >/dev/null || { echo "read-places.sh: needs iperf3" >&2; exit 2; }
. "$src/test/lib.sh" || exit 1
. "$src/test/hosts_lib.sh" || exit 1
. "$src/test/multihost_lib.sh" || exit 1
. "$src/benchmarks/sweep_plot.sh" || exit 1
_hosts_rate_bits "$rate" >/dev/null || { echo "read-places.sh: bad rate '$rate'" >&2; exit 2; }
hosts_require
mkdir -p "$out" || exit 2

shape() { hosts_shape node1 "$rate" 4000 4194304; }
cli() {   # N PROG ARGS...: N client ranks on node3
    local n=$1
    shift
    "$HOSTS_NETNS_SSH" node3 env PATH="$PATH" IPVFS_MAP="$IPVFS_MAP" mpiexec -n "$n" \
        env LD_PRELOAD="$romio" "$@" 2>&1
}

hosts_up 3
mh_servers_on node1 node1:1,node2:1
ipvfs_start_cluster 1 1 --no-bind --target-size 400M --cache-l1 0
cli 2 "$b/benchmarks/ipvfs-ior" -f ipvfs:/places -b 128m -t 1m -w -k | grep -q '^RESULT' ||
    ipvfs_fail "writing the file"
shape
link_mbs=$(hosts_iperf_mibs node1 node3) || exit 1
ipvfs_stop_cluster >/dev/null
csv=$out/read-places-link.csv
echo "places,offered_per_s,achieved_per_s,mean_ms,p50_ms,p95_ms" >"$csv"
for l in $loads; do
    for p in 1 2; do
        ipvfs_start_cluster 1 1 --no-bind --target-size 400M --cache-l1 0 --read-places "$p"
        shape
        res=$(cli 4 "$b/benchmarks/ipvfs-openload" -f ipvfs:/places -s 64K -r "$l" -t 6 -W 1 \
            -x "$l" | grep '^RESULT') || ipvfs_fail "ipvfs-openload at $l/s, --read-places $p"
        sweep_row "$p" "$res" offered_per_s achieved_per_s mean_ms p50_ms p95_ms >>"$csv"
        ipvfs_stop_cluster >/dev/null
    done
done

limit=$(awk -v m="$link_mbs" 'BEGIN { printf "%.1f", m * 1048576 / 65536 }')
{
    echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: $cmd"
    echo "# build: $b; 1 I/O node x 1 target, L1 off; node1's link $rate both ways"
    echo "# link: iperf3 node1 -> node3 $link_mbs MiB/s = $limit reads of 64 KiB per second"
    column -t -s, "$csv"
    echo "highest achieved: --read-places 1 $(sweep_best "$csv" 1)/s, --read-places 2 $(sweep_best "$csv" 2)/s (link $limit/s)"
} | tee "$out/read-places-link.txt"
sweep_plot "$csv" "$out/read-places-link.png" \
    "random 64 KiB reads, 1 I/O node x 1 target on a $rate link (L1 off)" \
    "$limit" "link (iperf3)" 1 "--read-places 1" 2 "--read-places 2"
