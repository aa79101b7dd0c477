#!/bin/bash
# RAID-5 (and RAID-1) over tgtd targets against a brute-force model:
# random odd writes (and whole-stripe ones), read back, every member's
# backing file compared with the model, clean scrub; Nt = 3, 4, 5 and two
# chunk sizes; a write stream whose next bitmap region is set ahead;
# overlapping writes in flight that must keep their order.  Then RAID-5
# over 4 targets with a write stream while one target is killed (kill -9):
# writes go on degraded, every byte reads back, the target comes back, is
# rebuilt in the background while writes go on, the model holds and scrub
# reports zero mismatches.
# timeout: 240
set -u
. "$(dirname "$0")/iraid_lib.sh"
iraid_test_start iraid5 5 8

model() {
    local level=$1 chunk=$2 n=$3
    echo "== model: RAID-$level, $n members, chunk $chunk"
    "$tool" model $((n * 7 + chunk)) "$level" "$chunk" "${members[@]:0:n}" 2>"$dir/model.log" ||
        { tail -n 20 "$dir/model.log"; echo "FAILED: model RAID-$level n=$n chunk=$chunk"; exit 1; }
}

model 5 65536 3
model 5 4096 4
model 5 65536 5
model 1 65536 2

echo "== RAID-5 over 3 targets: a write stream sets the next bitmap region ahead"
"$tool" ahead 5 65536 "${members[@]:0:3}" 2>"$dir/ahead.log" ||
    { tail -n 20 "$dir/ahead.log"; echo "FAILED: ahead"; exit 1; }

echo "== RAID-5 over 3 targets: overlapping writes keep their order"
"$tool" overlap 5 65536 "${members[@]:0:3}" 2>"$dir/overlap.log" ||
    { tail -n 20 "$dir/overlap.log"; echo "FAILED: overlap"; exit 1; }

echo "== RAID-5 over 4 targets: kill one during a write stream, restart, rebuild"
# The tool says "streaming" as its writes start and "degraded-ok" once
# every byte read back without target 2; then it waits for the restart.
iraid_tool_start 150 streaming degraded 5 65536 "${members[@]:0:4}"
sleep 1
iraid_target_kill 2
echo "killed target 2"
line=
# the degraded check reads the whole volume back: give it the tool's own
# limit, not 60 s, which a loaded machine once ran past
while read -r -t 140 line <&"${IRAID_TOOL[0]}"; do
    echo "$line"
    [ "$line" = degraded-ok ] && break
done
[ "$line" = degraded-ok ] || iraid_fail "degraded phase"
iraid_target_restart 2 || { echo "FAILED: restarting target 2"; exit 1; }
echo "restarted target 2"
iraid_tool_finish
grep -E "failed:|rebuilding member|-> up" "$iraid_log" | sed 's/^/    /' | head
echo "t_iraid_raid5: all passed"
