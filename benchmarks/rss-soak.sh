#!/bin/bash
# rss-soak.sh: server memory under a long open/write/read/close loop.
#
#   benchmarks/rss-soak.sh [BUILDDIR] [SECONDS]       (default 300 s)
#
# Starts a 2 I/O node x 2 target cluster, then until SECONDS have passed
# runs rounds of 4 MPI ranks that each create a file, write 8 MiB in 1 MiB
# transfers, read it back verified, close and delete it.  After every round
# it samples every server rank's private resident memory (RssAnon: heap,
# stacks, buffers: what a leak grows) and, apart, its file-backed resident
# pages (RssFile: a target maps its backing file for reads, so the page
# cache of the blocks written shows there; it is bounded by the target
# size and the kernel reclaims it) and prints a line; at the end a table of
# first (after warm-up: a fifth of the run) and last sample per rank.  Exit 1 when a round
# fails or when any rank's RssAnon grew by more than RSS_SLACK_KIB (default
# 8192) between the first and the last sample, plus, for an I/O node, the
# most its L1 cache may hold (its 64 KiB slots: capacity x 9/8 + 4 blocks,
# backend/dfstore/l1cache.h), which fills during the soak; or when any
# rank's last RssAnon is above its cache (the L1's slots; a target's L2,
# --cache-l2 RSS_L2, default 16M, which opens the LUN files with
# O_DIRECT: its capacity) plus RSS_BASE_KIB (default 65536: the constant
# doc/caches.md states).
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-.}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
duration=${2:-300}
slack=${RSS_SLACK_KIB:-8192}
base=${RSS_BASE_KIB:-65536}
l2=${RSS_L2:-16M}
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
ior=$IPVFS_BUILDDIR/benchmarks/ipvfs-ior
. "$IPVFS_SRCDIR/test/lib.sh"

ipvfs_start_cluster 2 2 --cache-l2 "$l2"
pids=$(ipvfs-ctl status --json | python3 -c '
import json, sys
print(" ".join(str(r["pid"]) for r in json.load(sys.stdin)["ranks"]))')
[ -n "$pids" ] || ipvfs_fail "no server pids in status"

# rss_of PID FIELD: FIELD (RssAnon, RssFile) of PID in KiB.
rss_of() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
sample() { local s="" p; for p in $pids; do s="$s $(rss_of "$p" "$1")"; done; echo "$s"; }

start=$(date +%s)
round=0
first=
last=
first_file=
last_file=
echo "round seconds anon_kib(per rank:$pids) | file_kib(same ranks)"
while [ $(( $(date +%s) - start )) -lt "$duration" ]; do
    round=$((round + 1))
    timeout -k 5 120 mpiexec -n 4 env LD_PRELOAD="$lib" "$ior" -f ipvfs:/soak/f$((round % 3)) \
        -b 2m -t 1m -s 4 -w -r -v >/dev/null || ipvfs_fail "round $round failed"
    last=$(sample RssAnon)
    last_file=$(sample RssFile)
    # The first rounds fill caches, pools and the allocator's free lists
    # (a 600 s soak: the targets' RssAnon rose from 15 to 45 MiB over the
    # first two minutes, then stayed flat to the byte); growth counts
    # from the first round that ends after a fifth of the run (and at
    # least 3 rounds), where a leak keeps growing and a warm-up does not.
    if [ -z "$first" ] && [ "$round" -ge 3 ] && [ $(( ($(date +%s) - start) * 5 )) -ge "$duration" ]; then
        first=$last first_file=$last_file
    fi
    echo "$round $(( $(date +%s) - start ))$last |$last_file"
done
[ -n "$first" ] || ipvfs_fail "too few rounds ($round) to judge"
echo "rank_pid anon_first_kib anon_last_kib anon_growth_kib file_first_kib file_last_kib cache_kib"
bad=0
read -ra a_first <<<"$first"
read -ra a_last <<<"$last"
read -ra f_first <<<"$first_file"
read -ra f_last <<<"$last_file"
# l1_kib: per rank (in pid order) the KiB its cache may take: an I/O
# node's L1 slots, a target's L2 blocks.
l1_kib=$(ipvfs-ctl stats --json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["ranks"]:
    c = r.get("l1", {}).get("capacity_bytes", 0)
    print((c * 9 // 8 + 4 * 65536) // 1024 if c else r.get("l2", {}).get("capacity_bytes", 0) // 1024)')
read -ra a_l1 <<<"$(echo $l1_kib)"
i=0
for p in $pids; do
    growth=$((a_last[i] - a_first[i]))
    echo "$p ${a_first[i]} ${a_last[i]} $growth ${f_first[i]} ${f_last[i]} ${a_l1[i]:-0}"
    [ "$growth" -le $((slack + ${a_l1[i]:-0})) ] || bad=1
    [ "${a_last[i]}" -le $((base + ${a_l1[i]:-0})) ] || bad=1
    i=$((i + 1))
done
ipvfs_stop_cluster
[ "$bad" -eq 0 ] || {
    echo "rss-soak: a rank's RssAnon grew by more than $slack KiB (+ its L1), or is above its cache + $base KiB"
    exit 1
}
echo "rss-soak: $round rounds in ${duration}s, every rank's RssAnon grew by $slack KiB at most (+ its L1)" \
    "and stays within its cache + $base KiB"
