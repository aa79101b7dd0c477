#!/bin/bash
# RAID-5 over 4 tgtd targets loses two of them (kill -9 of two tgtd): every
# read either fails with EIO or returns exactly the bytes written, never
# wrong data; some reads fail, a write fails with EIO, and the volume logs
# why ("2 members missing: the volume cannot serve").
# timeout: 120
set -u
. "$(dirname "$0")/iraid_lib.sh"
iraid_test_start iraid2f 4 8

iraid_tool_start 90 ready twofail 5 65536 "${members[@]}"
iraid_target_kill 1
iraid_target_kill 3
echo "killed targets 1 and 3"
iraid_tool_finish
grep -q "2 members missing: the volume cannot serve" "$iraid_log" ||
    iraid_fail "no clear error logged"
echo "t_iraid_twofail: all passed"
