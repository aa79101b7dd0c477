#!/bin/bash
# first-write.sh: the first write of a file on a fresh cluster against a
# rewrite of the same file (issue 14: first writes were several times
# slower than rewrites).
#
#   benchmarks/first-write.sh [BUILDDIR]
#
# A fresh cluster (doc/launching.md's launch through test/lib.sh; FIRSTWRITE_NIO x
# FIRSTWRITE_NT, default 2 x 1 as run-patterns.sh tile), then the
# mpi-tile-io shape of ipvfs-patterns (4 ranks, 2x2 tiles of 1024 x 768
# elements of 24 bytes, one round: 72 MiB) written to a new file, then
# written again over the same bytes.  Each write phase is timed with its
# MPI_File_sync; the bytes the targets received in each phase come from
# ipvfs-ctl stats.  Prints one line:
#   FIRSTWRITE first_MiBps=.. rewrite_MiBps=.. first_over_rewrite=..
#              first_target_MiB=.. rewrite_target_MiB=..
# Environment: FIRSTWRITE_NIO, FIRSTWRITE_NT, FIRSTWRITE_SERVER_OPTS.
set -u
IPVFS_SRCDIR=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
IPVFS_BUILDDIR=$(cd "${1:-${IPVFS_BUILDDIR:-.}}" && pwd)
export IPVFS_SRCDIR IPVFS_BUILDDIR
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
prog=$IPVFS_BUILDDIR/benchmarks/ipvfs-patterns
for f in "$lib" "$prog"; do
    [ -e "$f" ] || { echo "first-write.sh: $f is not built" >&2; exit 1; }
done
. "$IPVFS_SRCDIR/test/lib.sh"

# Bytes the targets have received so far (all target ranks).
target_bytes() {
    ipvfs-ctl stats --json | python3 -c '
import json, sys
print(sum(r.get("bytes_in", 0) for r in json.load(sys.stdin)["ranks"] if r.get("role") == "target"))'
}

# write_phase NAME: "MiBps target_MiB" of one tile write round.
write_phase() {
    local b0 b1 o
    b0=$(target_bytes) || return 1
    o=$(timeout -k 5 300 mpiexec -n 4 env LD_PRELOAD="$lib" "$prog" tile ipvfs:/firstwrite 1 2>&1) ||
        { echo "first-write.sh: ipvfs-patterns failed: $(tail -n 5 <<<"$o")" >&2; return 1; }
    b1=$(target_bytes) || return 1
    echo "$(sed -n 's/.*pattern=tile op=write .* MiBps=\([0-9.]*\).*/\1/p' <<<"$o") $(((b1 - b0) >> 20))"
}

# shellcheck disable=SC2086
ipvfs_start_cluster "${FIRSTWRITE_NIO:-2}" "${FIRSTWRITE_NT:-1}" ${FIRSTWRITE_SERVER_OPTS:-}
read -r first first_t < <(write_phase) || ipvfs_fail "first write failed"
read -r again again_t < <(write_phase) || ipvfs_fail "rewrite failed"
ipvfs_stop_cluster >/dev/null
[ -n "$first" ] && [ -n "$again" ] || ipvfs_fail "no write figure from ipvfs-patterns"
awk -v a="$first" -v b="$again" -v at="$first_t" -v bt="$again_t" 'BEGIN {
    printf "FIRSTWRITE first_MiBps=%s rewrite_MiBps=%s first_over_rewrite=%.3f first_target_MiB=%s rewrite_target_MiB=%s\n",
           a, b, (b > 0 ? a / b : 0), at, bt }'
