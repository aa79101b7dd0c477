#!/bin/bash
# The RAID-5 write hole: a process doing partial-stripe writes (flushing
# every 8) is killed with SIGKILL mid-way; the volume reopened resyncs the
# regions its write-intent bitmap marks dirty, scrub reports zero
# mismatches, every synced write reads back, and reads back again with a
# member missing (so the parity itself is right, not just the data).
# timeout: 120
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/iraid-model-tool
[ -x "$tool" ] || { echo "iraid-model-tool not built"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-iraidwh.XXXXXX)
crash_pid=
cleanup() {
    [ -n "$crash_pid" ] && kill -9 "$crash_pid" 2>/dev/null
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

for round in 1 2; do
    echo "== round $round: partial-stripe writes, SIGKILL mid-way"
    "$tool" crash 5 65536 "${members[@]}" >"$dir/crash.out" 2>"$dir/crash.log" &
    crash_pid=$!
    for _ in $(seq 200); do
        synced=$(sed -n 's/^synced //p' "$dir/crash.out" | tail -n 1)
        [ "${synced:-0}" -ge $((round * 40)) ] && break
        kill -0 "$crash_pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -9 "$crash_pid" 2>/dev/null
    wait "$crash_pid" 2>/dev/null
    crash_pid=
    synced=$(sed -n 's/^synced //p' "$dir/crash.out" | tail -n 1)
    [ "${synced:-0}" -gt 0 ] || { tail "$dir/crash.log"; echo "FAILED: crash run synced nothing"; exit 1; }
    echo "killed after $synced synced writes"
    "$tool" verify "$synced" 5 65536 "${members[@]}" 2>"$dir/verify.log" ||
        { tail -n 20 "$dir/verify.log"; echo "FAILED: verify after crash"; exit 1; }
    grep -h "resyncing" "$dir/verify.log" | sed 's/^/    /'
done

echo "== synced writes read back with member 1 missing"
degraded=("${members[@]}")
# A portal in our range where nobody listens: the login is refused.
port=$(iraid_free_port) || { echo "FAILED: no free port"; exit 1; }
degraded[1]="iscsi://127.0.0.1:$port/$IRAID_IQN_PREFIX:none/1:-"
"$tool" verify "$synced" 5 65536 "${degraded[@]}" 2>"$dir/verify2.log" ||
    { tail -n 20 "$dir/verify2.log"; echo "FAILED: degraded verify"; exit 1; }
echo "t_iraid_writehole: all passed"
