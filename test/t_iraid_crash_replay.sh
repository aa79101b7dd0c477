#!/bin/bash
# The block-level crash-state checker (issue 31): a RAID-5 volume of 4
# members and a RAID-1 volume of 2, each over tgtd targets, record the
# writes they send to their members in the order the members acknowledge
# them (iraid_config.observer, as dm-log-writes records a device's), under
# a load of durable slots (flushed every 8) beside random tiny, partial
# and whole-stripe writes.  Then WINDOWS prefixes of each log, each in
# three crash states (every acknowledged write landed; unflushed writes
# lost; a coin for each), are replayed onto the members' files: the
# volume must open (its resync), scrub clean and read back every slot a
# flush made durable.
# timeout: 240
set -u
. "$(dirname "$0")/iraid_lib.sh"
crashlog=$build/test/iraid-crashlog-tool
[ -x "$crashlog" ] || { echo "iraid-crashlog-tool not built"; exit 77; }
windows=${IRAID_REPLAY_WINDOWS:-20}
iraid_test_start iraidcr 4 8

run_level() {   # LEVEL MEMBERS...
    local level=$1 out
    shift
    echo "== RAID-$level over $# members: record"
    "$crashlog" record "$dir/log$level" 31 "$level" 65536 "$@" 2>"$dir/record$level.log" ||
        iraid_fail "the RAID-$level record run failed: $(tail -n 3 "$dir/record$level.log")"
    echo "== RAID-$level: replay of $windows crash windows"
    out=$("$crashlog" replay "$dir/log$level" "$windows" "$level" 65536 "$@" 2>"$dir/replay$level.log")
    local rc=$?
    echo "$out" | grep -v "^VIOLATION" | sed 's/^/    /'
    echo "$out" | grep -m 10 "^VIOLATION" | sed 's/^/    /'
    [ $rc -eq 0 ] || iraid_fail "RAID-$level: crash states violate the invariants"
    echo "$out" | grep -Eq "^replay: [0-9]+ windows, [0-9]+ states, 0 violations" ||
        iraid_fail "RAID-$level: no summary from the replay"
    local n
    n=$(echo "$out" | sed -n 's/^replay: \([0-9]*\) windows,.*/\1/p')
    [ "$n" -ge "$windows" ] || iraid_fail "RAID-$level: only $n distinct windows"
}

run_level 5 "${members[@]}"
run_level 1 "${members[0]}" "${members[1]}"
echo "t_iraid_crash_replay: all passed"
