#!/bin/bash
# The L1's partial blocks (issue 27) in the datafile store over a RAID-0
# volume on two of our iSCSI targets: writes at every sector offset inside
# a block and a sample of lengths (and at byte offsets), into blocks the L1
# holds and blocks it never saw (absorbed without a volume read), the
# bytes read back through hits, reads around the holes and merges,
# overlapping writes queued at once, two writers' 8 KiB rows interleaved
# (each writer's in one large write: absorbed, written back as one volume
# write per writer, the other's clean rows bridged), then after a sync and a reopen with
# nothing cached: byte-exact against a model (test/test_small_dfstore.c).
# Then, on two ipvfs-target LUNs (which vouch for their room, so the store
# places blocks by file offset): the rows of two clients that share blocks,
# written out of order, lie on consecutive volume blocks (read raw), also
# after a reopen, and a truncated datafile's run is free again ("place").
# timeout: 240
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
export PATH=$build/backend:$PATH
tool=$build/test/storage-small-tool
[ -x "$tool" ] || { echo "storage-small-tool not built (make check TESTS=)"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-small.XXXXXX)
cleanup() { iraid_targets_stop; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

iraid_targets_start "$dir" 2 64
rc=$?
[ $rc -eq 0 ] || exit $rc
"$tool" partial "$dir/meta" "${IRAID_URLS[@]}" || { echo "FAILED: partial"; exit 1; }
iraid_targets_stop
mkdir "$dir/own" && iraid_ipvfs_targets_start "$dir/own" 2 8 || { echo "FAILED: ipvfs-target"; exit 1; }
"$tool" place "$dir/meta-place" "${IRAID_URLS[@]}" || { echo "FAILED: place"; exit 1; }
echo "t_small_partial: all passed"
