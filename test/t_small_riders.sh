#!/bin/bash
# timeout: 180
# READs that ride along (backend/server/readq.h): 4 x 1 tiles (4 ranks,
# 2 I/O nodes x 2 targets, the documented launch and defaults) of 32 KiB
# rows, so that two ranks' rows interleave on each I/O node's datafile and
# each rank's list READs go to one I/O node.  Read three times, every byte
# checked by ipvfs-patterns:
# - READs of one rank took the places while the other rank's READs of the
#   rows between theirs rode along (the I/O nodes log how many at close);
# - the rows of both went to the targets in shared commands: fewer than
#   20 per MiB read (one a row would be 32; with the places alone,
#   22-32 were seen).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
pat=$IPVFS_BUILDDIR/benchmarks/ipvfs-patterns
romio=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
[ -x "$pat" ] && [ -e "$romio" ] || { echo "skip: ipvfs-patterns is not built"; exit 77; }
rows=512

tile() {
    timeout -k 5 120 mpiexec -n 4 env LD_PRELOAD="$romio" "$pat" "$1" ipvfs:/rows "4:$rows:1024:32" 2>&1
}
served() {
    ipvfs_ctl stats --json | python3 -c '
import json, sys
print(sum(r.get("requests", 0) for r in json.load(sys.stdin)["ranks"] if r.get("role") == "target"))'
}

ipvfs_start_cluster 2 2 --target-size 512M
out=$(tile wtile) || ipvfs_fail "writing 32 KiB rows: $out"
c0=$(served)
for i in 1 2 3; do
    out=$(tile rtile) || ipvfs_fail "reading 32 KiB rows ($i): $out"
done
c1=$(served)
ipvfs_stop_cluster
mib=$((3 * 4 * rows * 32 / 1024))
n=$(((c1 - c0) / mib))
rode=$(ipvfs_logs | sed -n 's/.*I\/O node [0-9]*: \([0-9]*\) READs rode along.*/\1/p' |
    awk '{ s += $1 } END { print s + 0 }')
echo "32 KiB rows of 4 x 1 tiles: $rode READs rode along, $n target commands per MiB read"
[ "$rode" -gt 0 ] || ipvfs_fail "no READ rode along with its neighbour's"
[ "$n" -lt 20 ] || ipvfs_fail "the interleaved rows were read in $n commands per MiB"
echo "t_small_riders: ok"
