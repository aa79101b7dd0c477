#!/bin/bash
# A flush that loses a member (its target stops answering: SIGSTOP of its
# tgtd, so the flush to it times out) still succeeds, but only once the
# superblock marking that member stale is on the others: right after the
# flush returns, member 0's backing file holds the stale bit.
# timeout: 120
set -u
. "$(dirname "$0")/iraid_lib.sh"
stopped=
# A target still stopped must resume for the trap's tgtadm to take it down.
iraid_test_cleanup() { [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null; }
iraid_test_start iraidfl 4 8

iraid_tool_start 90 ready flushlose 5 65536 "${members[@]}"
stopped=${IRAID_TGT_PIDS[1]}
kill -STOP "$stopped"
echo "stopped target 1"
iraid_tool_finish
grep -q "member 1 .*failed: silent for [0-9]* ms with commands in flight" "$iraid_log" ||
    iraid_fail "member 1 was not lost by the flush"
echo "t_iraid_flushlose: all passed"
