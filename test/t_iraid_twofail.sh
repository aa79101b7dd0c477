#!/bin/bash
# RAID-5 over 4 tgtd targets loses two of them (kill -9 of two tgtd): every
# read either fails with EIO or returns exactly the bytes written, never
# wrong data; some reads fail, a write fails with EIO, and the volume logs
# why ("2 members missing: the volume cannot serve").
# timeout: 120
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/iraid-model-tool
[ -x "$tool" ] || { echo "iraid-model-tool not built"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"
dir=$(mktemp -d /tmp/ipvfs-iraid2f.XXXXXX)
tool_pid=
cleanup() {
    [ -n "$tool_pid" ] && kill -9 "$tool_pid" 2>/dev/null
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

coproc TF { exec timeout 90 "$tool" twofail 5 65536 "${members[@]}" 2>"$dir/twofail.log"; }
tool_pid=$TF_PID
read -r -t 60 line <&"${TF[0]}"
[ "$line" = ready ] || { tail "$dir/twofail.log"; echo "FAILED: not ready: $line"; exit 1; }
iraid_target_kill 1
iraid_target_kill 3
echo "killed targets 1 and 3"
echo go >&"${TF[1]}"
cat <&"${TF[0]}"
wait "$tool_pid"
rc=$?
tool_pid=
[ $rc -eq 0 ] || { tail -n 20 "$dir/twofail.log"; echo "FAILED: twofail run (status $rc)"; exit 1; }
grep -q "2 members missing: the volume cannot serve" "$dir/twofail.log" ||
    { tail -n 20 "$dir/twofail.log"; echo "FAILED: no clear error logged"; exit 1; }
echo "t_iraid_twofail: all passed"
