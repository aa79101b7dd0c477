#!/bin/bash
# link-reads.sh: 64 KiB reads through an I/O node whose host link is slow,
# blocking (MPI_File_read_at) against nonblocking (MPI_File_iread_at +
# MPI_Testsome), with the I/O node's L1 cold and warm.  Needs root.
#
#   benchmarks/link-reads.sh [--rounds N] [--rate RATE] [--out DIR] [BUILDDIR]
#
# Why: model runs over shaped links (model-validate-hosts.sh) saw
# nonblocking 64 KiB reads take about twice the link's time, and blamed
# the client's nonblocking path.  This puts the two paths side by side
# on the same file, counting the L1's hits and misses of each phase, so
# that what the time follows can be read off: a miss crosses the I/O
# node's link twice (the target's data comes in over it, then goes out
# to the client), a hit once.
#
# Emulated hosts (test/hosts_lib.sh): node1 runs the I/O node, node2 its
# one target, node3 the client ranks (one).  node1's link is shaped both
# ways to RATE (default 40mbit; tbf with a 4000-byte bucket and a 4 MiB
# queue, as model-validate-hosts.sh), the others are not.  The file is
# 8 MiB, written in 1 MiB pieces.  Per round:
#   cold-nonblocking  cluster restarted (empty L1); ipvfs-openload, 5
#                     reads/s (one in flight at a time, mostly), 6 s
#   cold-blocking     restarted again; ipvfs-ior -z: 128 reads at random
#                     64 KiB-aligned offsets, back to back
#   (warm-up)         ipvfs-ior reads the whole file in order, 64 KiB at
#                     a time: every block in the L1
#   warm-blocking     ipvfs-ior -z again
#   warm-nonblocking  ipvfs-openload again
# The link's limit beside them: iperf3 from node1 to node3 over the same
# shaping, and the time of one 64 KiB reply at that rate.
# Output in DIR (default benchmarks/results): link-reads.csv
# (round,phase,p50_ms,mean_ms,l1_hits,l1_misses; mean_ms empty for
# ipvfs-ior, which reports no mean), link-reads.txt (the command, date,
# load, medians per phase, the link) and link-reads.png.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
rounds=3 rate=40mbit out=$src/benchmarks/results
usage="usage: link-reads.sh [--rounds N] [--rate RATE] [--out DIR] [BUILDDIR]"
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --rate) rate=${2:?--rate needs a rate such as 40mbit}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -*) echo "link-reads.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
    *) break ;;
    esac
done
case $rounds in ''|*[!0-9]*|0) echo "link-reads.sh: --rounds needs a number above 0" >&2; exit 2 ;; esac
cmd="benchmarks/link-reads.sh --rounds $rounds --rate $rate $*"
IPVFS_SRCDIR=$src
IPVFS_BUILDDIR=$(cd "${1:-$src/_build}" && pwd) || exit 2
export IPVFS_SRCDIR IPVFS_BUILDDIR
b=$IPVFS_BUILDDIR romio=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
for f in "$romio" "$b/benchmarks/ipvfs-ior" "$b/benchmarks/ipvfs-openload"; do
    [ -e "$f" ] || { echo "link-reads.sh: $f is not built" >&2; exit 2; }
done
command -v iperf3 >/dev/null || { echo "link-reads.sh: needs iperf3" >&2; exit 2; }
. "$src/test/lib.sh" || exit 1
. "$src/test/hosts_lib.sh" || exit 1
. "$src/test/multihost_lib.sh" || exit 1
rate_bits=$(_hosts_rate_bits "$rate") || { echo "link-reads.sh: bad rate '$rate'" >&2; exit 2; }
hosts_require
mkdir -p "$out" || exit 2

shape() { hosts_shape node1 "$rate" 4000 4194304; }
restart() {
    ipvfs_restart_cluster
    shape
}
cli() {
    "$HOSTS_NETNS_SSH" node3 env PATH="$PATH" IPVFS_MAP="$IPVFS_MAP" mpiexec -n 1 \
        env LD_PRELOAD="$romio" "$@" 2>&1
}
ior() {   # ARGS...: ipvfs-ior's RESULT line
    cli "$b/benchmarks/ipvfs-ior" -f ipvfs:/linkreads -b 8m -t 64k -k "$@" | grep '^RESULT' ||
        ipvfs_fail "ipvfs-ior $* failed"
}
openload() {
    cli "$b/benchmarks/ipvfs-openload" -f ipvfs:/linkreads -s 64K -S 8M -r 5 -t 6 -W 1 |
        grep '^RESULT' || ipvfs_fail "ipvfs-openload failed"
}
l1() {   # "HITS MISSES" of the I/O node's L1 so far
    ipvfs_ctl stats | sed -n 's/.*(\([0-9]*\) hits, \([0-9]*\) misses,.*/\1 \2/p'
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
# phase ROUND NAME CMD...: one CSV row
phase() {
    local rnd=$1 name=$2 h0 m0 h1 m1 res p50 mean
    shift 2
    read -r h0 m0 < <(l1)
    res=$("$@") || exit 1
    read -r h1 m1 < <(l1)
    p50=$(field p50_ms "$res") mean=$(field mean_ms "$res")
    [ -n "$p50" ] || p50=$(awk -v u="$(field p50_us "$res")" 'BEGIN { printf "%.3f", u / 1000 }')
    echo "$rnd,$name,$p50,$mean,$((h1 - h0)),$((m1 - m0))" >>"$csv"
}

hosts_up 3
mh_servers_on node1 node1:1,node2:1
ipvfs_start_cluster 1 1 --no-bind
shape
ior -w >/dev/null
link_mbs=$(hosts_iperf_mibs node1 node3) || exit 1
csv=$out/link-reads.csv
echo "round,phase,p50_ms,mean_ms,l1_hits,l1_misses" >"$csv"
for r in $(seq 1 "$rounds"); do
    restart
    phase "$r" cold-nonblocking openload
    restart
    phase "$r" cold-blocking ior -r -z
    ior -r >/dev/null
    phase "$r" warm-blocking ior -r -z
    phase "$r" warm-nonblocking openload
done
ipvfs_stop_cluster >/dev/null

phases="cold-blocking cold-nonblocking warm-blocking warm-nonblocking"
med() { grep ",$1," "$csv" | cut -d, -f"$2" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
sum() { grep ",$1," "$csv" | cut -d, -f"$2" | awk '{ s += $1 } END { print s + 0 }'; }
reply_ms=$(awk -v m="$link_mbs" 'BEGIN { printf "%.1f", 65536 / (m * 1048576) * 1000 }')
{
    echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# command: $cmd"
    echo "# build: $b; node1's link shaped to $rate ($((rate_bits / 1000000)) Mbit/s) both ways"
    echo "# link: iperf3 node1 -> node3 $link_mbs MiB/s: one 64 KiB reply takes $reply_ms ms, a miss crosses the link twice"
    printf '%-18s %8s %8s %10s %10s\n' phase p50_ms mean_ms l1_hits l1_misses
    for p in $phases; do
        printf '%-18s %8s %8s %10s %10s\n' "$p" "$(med "$p" 3)" "$(med "$p" 4)" "$(sum "$p" 5)" "$(sum "$p" 6)"
    done
    echo "# p50 and mean: medians over $rounds rounds; hits and misses: all rounds"
} | tee "$out/link-reads.txt"
if command -v gnuplot >/dev/null; then
    for p in $phases; do echo "$p $(med "$p" 3)"; done >"$IPVFS_CLUSTER_DIR/plot.dat"
    gnuplot <<GP || echo "link-reads.sh: gnuplot failed" >&2
set terminal png size 800,480
set output "$out/link-reads.png"
set title "64 KiB reads through an I/O node on a $rate link (median p50 of $rounds rounds)"
set ylabel "ms"
set style data histograms
set style fill solid 0.8
set key below
set yrange [0:*]
plot "$IPVFS_CLUSTER_DIR/plot.dat" using 2:xtic(1) title "p50", \
     $reply_ms with lines lw 2 title "one 64 KiB reply at the link's iperf3 rate", \
     2 * $reply_ms with lines lw 2 dt 2 title "twice that (a miss)"
GP
fi
