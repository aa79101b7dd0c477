#!/bin/bash
# RAID-5 (and RAID-1) over tgtd targets against a brute-force model:
# random odd writes, read back, every member's backing file compared with
# the model, clean scrub; Nt = 3, 4, 5 and two chunk sizes.  Then RAID-5
# over 4 targets with a write stream while one target is killed (kill -9):
# writes go on degraded, every byte reads back, the target comes back, is
# rebuilt in the background while writes go on, the model holds and scrub
# reports zero mismatches.
# timeout: 240
set -u
src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/iraid-model-tool
[ -x "$tool" ] || { echo "iraid-model-tool not built"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=$(mktemp -d /tmp/ipvfs-iraid5.XXXXXX)
cleanup() { iraid_targets_stop; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

iraid_targets_start "$dir" 5 8
rc=$?
[ $rc -eq 0 ] || exit $rc

members() {
    local n=$1 i
    for i in $(seq 0 $((n - 1))); do
        printf '%s ' "${IRAID_URLS[$i]}:${IRAID_FILES[$i]}"
    done
}

model() {
    local level=$1 chunk=$2 n=$3 i
    echo "== model: RAID-$level, $n members, chunk $chunk"
    # shellcheck disable=SC2046
    "$tool" model $((n * 7 + chunk)) "$level" "$chunk" $(members "$n") 2>"$dir/model.log" ||
        { tail -n 20 "$dir/model.log"; echo "FAILED: model RAID-$level n=$n chunk=$chunk"; exit 1; }
}

model 5 65536 3
model 5 4096 4
model 5 65536 5
model 1 65536 2

echo "== RAID-5 over 4 targets: kill one during a write stream, restart, rebuild"
coproc DEG { exec timeout 150 "$tool" degraded 5 65536 $(members 4) 2>"$dir/degraded.log"; }
deg_pid=$DEG_PID
read -r -t 60 line <&"${DEG[0]}"
[ "$line" = streaming ] || { tail "$dir/degraded.log"; echo "FAILED: no stream: $line"; exit 1; }
sleep 1
iraid_target_kill 2
echo "killed target 2"
while read -r -t 60 line <&"${DEG[0]}"; do
    echo "$line"
    [ "$line" = degraded-ok ] && break
done
[ "$line" = degraded-ok ] || { tail -n 30 "$dir/degraded.log"; echo "FAILED: degraded phase"; exit 1; }
iraid_target_restart 2 || { echo "FAILED: restarting target 2"; exit 1; }
echo "restarted target 2"
echo go >&"${DEG[1]}"
cat <&"${DEG[0]}"
wait "$deg_pid" || { tail -n 30 "$dir/degraded.log"; echo "FAILED: degraded/rebuild run"; exit 1; }
grep -E "failed:|rebuilding member|-> up" "$dir/degraded.log" | sed 's/^/    /' | head
echo "t_iraid_raid5: all passed"
