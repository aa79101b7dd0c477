#!/bin/bash
# A flush that loses a member (its target stops answering: SIGSTOP of its
# tgtd, so the flush to it times out) still succeeds, but only once the
# superblock marking that member stale is on the others: right after the
# flush returns, member 0's backing file holds the stale bit.
# timeout: 120
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/iraid-model-tool
[ -x "$tool" ] || { echo "iraid-model-tool not built"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"
dir=$(mktemp -d /tmp/ipvfs-iraidfl.XXXXXX)
tool_pid= stopped=
cleanup() {
    [ -n "$tool_pid" ] && kill -9 "$tool_pid" 2>/dev/null
    [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
    iraid_targets_stop
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
iraid_targets_start "$dir" 4 8
rc=$?
[ $rc -eq 0 ] || exit $rc
members=()
for i in 0 1 2 3; do members+=("${IRAID_URLS[$i]}:${IRAID_FILES[$i]}"); done

coproc FL { exec timeout 90 "$tool" flushlose 5 65536 "${members[@]}" 2>"$dir/flushlose.log"; }
tool_pid=$FL_PID
read -r -t 60 line <&"${FL[0]}"
[ "$line" = ready ] || { tail "$dir/flushlose.log"; echo "FAILED: not ready: $line"; exit 1; }
stopped=${IRAID_TGT_PIDS[1]}
kill -STOP "$stopped"
echo "stopped target 1"
echo go >&"${FL[1]}"
cat <&"${FL[0]}"
wait "$tool_pid"
rc=$?
tool_pid=
[ $rc -eq 0 ] || { tail -n 20 "$dir/flushlose.log"; echo "FAILED: flushlose run (status $rc)"; exit 1; }
grep -q "member 1 .*failed: command timed out" "$dir/flushlose.log" ||
    { tail -n 20 "$dir/flushlose.log"; echo "FAILED: member 1 was not lost by the flush"; exit 1; }
echo "t_iraid_flushlose: all passed"
