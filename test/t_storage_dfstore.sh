#!/bin/bash
# Datafile store over a RAID-0 volume on two real iSCSI targets (tgtd):
# write/read/holes/truncate/prealloc/remove/ordering, reopen after close,
# no zero-fill of new blocks on an all-zero volume (but of reused ones),
# ENOSPC on a full volume, read-ahead's blocks lent to stream reads (no
# copy), reopen after SIGKILL following a sync, and clean errors (no
# hang) when a target dies under the store.
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

echo "== new blocks of a volume that is all zeros (first, while the targets are)"
"$tool" zeroed "$dir/meta0" "${IRAID_URLS[@]}" || { echo "FAILED: zeroed"; exit 1; }

echo "== basic"
"$tool" basic "$dir/meta1" "${IRAID_URLS[@]}" || { echo "FAILED: basic"; exit 1; }

echo "== read-ahead's blocks lent to stream reads"
"$tool" lend "$dir/meta4" "${IRAID_URLS[@]}" || { echo "FAILED: lend"; exit 1; }

echo "== crash after sync"
"$tool" crash "$dir/meta2" "${IRAID_URLS[@]}"
rc=$?
[ $rc -eq 137 ] || { echo "FAILED: crash run exited $rc, expected SIGKILL (137)"; exit 1; }
"$tool" verify "$dir/meta2" "${IRAID_URLS[@]}" || { echo "FAILED: verify after crash"; exit 1; }
echo "== a member dies under the store"
coproc DEAD { exec timeout 60 "$tool" dead "$dir/meta3" "${IRAID_URLS[@]}" 2>"$dir/dead.log"; }
dead_pid=$DEAD_PID
read -r -t 30 line <&"${DEAD[0]}"
[ "$line" = ready ] || { cat "$dir/dead.log"; echo "FAILED: dead-member tool did not start"; exit 1; }
iraid_target_kill 1
echo go >&"${DEAD[1]}"
cat <&"${DEAD[0]}"
wait "$dead_pid" || { cat "$dir/dead.log"; echo "FAILED: store with a dead member"; exit 1; }
echo "t_storage_dfstore: all passed"
