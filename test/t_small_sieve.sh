#!/bin/bash
# timeout: 180
# Which READs the I/O node sieves (backend/server/ionode.c): 2 x 2 tiles
# (4 ranks, 2 I/O nodes x 2 targets) of 8 KiB rows, written then read
# through the documented launch, every byte checked by ipvfs-patterns:
# - with --cache-l1 0 each rank's READ of close 8 KiB pieces is read as its
#   covering span, the targets serve few commands per MiB (one a piece
#   would be 128 per MiB);
# - with the L1 (the default) the same read is not sieved: the L1 hands
#   each piece out of the blocks the writes left in it (hits), and nothing
#   reaches the targets;
# - 32 KiB rows with --cache-l1 0 are not sieved either (pieces of half a
#   block: the span would read the neighbour's half for nothing), and read
#   back byte-exact;
# - 4 x 1 tiles one 32-byte element wide (the ranks' 32-byte pieces take
#   turns) are sieved with the L1 too: per piece, the L1 would be a hit
#   each (16384 here; they read at 3 MiB/s so), sieved there are none.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
pat=$IPVFS_BUILDDIR/benchmarks/ipvfs-patterns
romio=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
[ -x "$pat" ] && [ -e "$romio" ] || { echo "skip: ipvfs-patterns is not built"; exit 77; }

# tile FILE OP ROWS ELEM [ACROSS WIDTH]: ipvfs-patterns' tile OP (wtile,
# rtile) of ACROSS x (4 / ACROSS) tiles (default 2 x 2), ROWS rows a rank
# of WIDTH (default 1024) elements of ELEM bytes
tile() {
    timeout -k 5 120 mpiexec -n 4 env LD_PRELOAD="$romio" "$pat" "$2" "$1" \
        "${5:-2}:$3:${6:-1024}:$4" 2>&1
}

# counters SUM_EXPR: a sum over the ranks of `ipvfs-ctl stats --json`
counter() {
    ipvfs_ctl stats --json | python3 -c "
import json, sys
rs = json.load(sys.stdin)['ranks']
print(sum($1 for r in rs))"
}
served() { counter 'r.get("requests", 0) if r.get("role") == "target" else 0'; }
hits() { counter '(r.get("l1") or {}).get("hits", 0)'; }

# read_cmds FILE ROWS ELEM: the read's target commands per MiB (4 ranks)
read_cmds() {
    local c0 c1 out
    c0=$(served)
    out=$(tile "$1" rtile "$2" "$3") || ipvfs_fail "reading $1: $out"
    c1=$(served)
    echo $(((c1 - c0) * 1024 / (4 * $2 * $3)))
}

ipvfs_start_cluster 2 2 --target-size 256M --cache-l1 0
out=$(tile ipvfs:/s8 wtile 128 8) || ipvfs_fail "writing 8 KiB rows: $out"
n=$(read_cmds ipvfs:/s8 128 8)
echo "8 KiB rows, no L1: $n target commands per MiB read"
[ "$n" -le 40 ] || ipvfs_fail "the 8 KiB rows were not sieved without the L1: $n commands per MiB"
out=$(tile ipvfs:/s32 wtile 32 32) || ipvfs_fail "writing 32 KiB rows: $out"
n=$(read_cmds ipvfs:/s32 32 32)
echo "32 KiB rows, no L1: $n target commands per MiB read"
ipvfs_stop_cluster

ipvfs_start_cluster 2 2 --target-size 256M
out=$(tile ipvfs:/s8 wtile 128 8) || ipvfs_fail "writing 8 KiB rows (L1): $out"
h0=$(hits)
n=$(read_cmds ipvfs:/s8 128 8)
h1=$(hits)
echo "8 KiB rows, L1: $n target commands per MiB read, $((h1 - h0)) L1 hits"
# unsieved: a hit per 8 KiB piece (2 x 2 tiles of 128 rows: 512); sieved,
# one per 64 KiB block of the spans (128)
[ $((h1 - h0)) -ge 512 ] || ipvfs_fail "the read through the L1 was sieved: $((h1 - h0)) hits"
out=$(tile ipvfs:/narrow wtile 4096 32 4 1) || ipvfs_fail "writing 32-byte pieces: $out"
h0=$(hits)
out=$(tile ipvfs:/narrow rtile 4096 32 4 1) || ipvfs_fail "reading 32-byte pieces: $out"
h1=$(hits)
echo "32-byte pieces of 4 ranks in turn, L1: $((h1 - h0)) L1 hits"
[ $((h1 - h0)) -lt 1000 ] || ipvfs_fail "the 32-byte pieces were not sieved: $((h1 - h0)) L1 hits"
ipvfs_stop_cluster
echo "t_small_sieve: ok"
