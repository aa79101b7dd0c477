#!/bin/bash
# Datafile store over a RAID-0 volume on two real iSCSI targets (tgtd):
# write/read/holes/truncate/prealloc/remove/ordering, reopen after close,
# ENOSPC on a full volume, and reopen after SIGKILL following a sync.
# timeout: 240
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/storage-dfstore-tool
[ -x "$tool" ] || { echo "storage-dfstore-tool not built (make check TESTS=)"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-dfs.XXXXXX)
cleanup() { iraid_targets_stop; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

iraid_targets_start "$dir" 2 8
rc=$?
[ $rc -eq 0 ] || exit $rc

echo "== basic"
"$tool" basic "$dir/meta1" "${IRAID_URLS[@]}" || { echo "FAILED: basic"; exit 1; }

echo "== crash after sync"
"$tool" crash "$dir/meta2" "${IRAID_URLS[@]}"
rc=$?
[ $rc -eq 137 ] || { echo "FAILED: crash run exited $rc, expected SIGKILL (137)"; exit 1; }
"$tool" verify "$dir/meta2" "${IRAID_URLS[@]}" || { echo "FAILED: verify after crash"; exit 1; }
echo "t_storage_dfstore: all passed"
