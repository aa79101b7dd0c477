#!/bin/bash
# The target's worker-thread engine: the target unit tests again with
# IPVFS_TARGET_NO_URING=1, which must select the pool (the log says so),
# and ipvfs-target answering a discovery and an INQUIRY on a file LUN.
# timeout: 240
set -u
b=${IPVFS_BUILDDIR:?run through test/run-suite.sh}
work=$(mktemp -d /tmp/ipvfs-tnour.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; tail -20 "$work/log" 2>/dev/null; exit 1; }
export IPVFS_TARGET_NO_URING=1

for t in test_target_io test_target_cmds; do
    "$b/test/$t" >"$work/log" 2>&1 || fail "$t with the thread pool"
    grep -q 'backing I/O: thread pool' "$work/log" || fail "$t did not use the thread pool"
    grep -q 'backing I/O: io_uring' "$work/log" && fail "$t used io_uring despite the variable"
    echo "ok: $t on the thread pool"
done

command -v iscsi-inq >/dev/null || { echo "libiscsi-bin missing"; exit 77; }
target=$(command -v ipvfs-target) || fail "ipvfs-target not on PATH"
"$target" --portal 127.0.0.1:0 --iqn iqn.2026-01.org.ipvfs:nouring --lun "$work/f.img:16M" \
    >"$work/out" 2>"$work/log" &
pid=$!
for _ in $(seq 50); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out")
[ -n "$port" ] || fail "no 'listening on' line"
grep -q 'backing I/O: thread pool' "$work/log" || fail "ipvfs-target did not use the thread pool"
iscsi-inq -e 1 -c 128 "iscsi://127.0.0.1:$port/iqn.2026-01.org.ipvfs:nouring/0" |
    grep -q 'Unit Serial' || fail "INQUIRY through the thread-pool target"
kill -TERM "$pid"; wait "$pid"; rc=$?; pid=
[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
echo "ok: ipvfs-target on the thread pool"
