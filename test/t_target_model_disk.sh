#!/bin/bash
# The emulated disk (ipvfs-target --emulate-disk st318452lw), measured from
# outside through iSCSI: sequential 64 KiB WRITEs (no seek: each starts
# where the previous ended) must each take a mean rotational latency of
# 2 ms plus 65536 / 51e6 s of transfer, 3.285 ms: with 8 in flight the
# target completes 1 / 3.285 ms = 304 a second (one at a time, so the
# depth buys nothing: never 10% more, and at most 20% less where the
# machine is loaded), with 1 in flight at most that; the same target
# without the option does several times more.  The log at
# stop counts the ios and their mean service time; an unknown disk is
# refused.
# timeout: 120
set -u
b=${IPVFS_BUILDDIR:?run through test/run-suite.sh}
work=$(mktemp -d /tmp/ipvfs-tdisk.XXXXXX)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "$work/log" 2>/dev/null; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 is needed"; exit 77; }
target=$(command -v ipvfs-target) || fail "ipvfs-target not on PATH"
wperf=$b/backend/iscsi/ipvfs-iscsi-wperf
[ -x "$wperf" ] || fail "$wperf not built"
iqn=iqn.2026-01.org.ipvfs:disk

# start ARGS...: a target on a free port; sets pid and port.
start() {
    "$target" --portal 127.0.0.1:0 --iqn $iqn --lun "$work/d.img:256M" "$@" \
        >"$work/out" 2>"$work/log" &
    pid=$!
    for _ in $(seq 100); do grep -q '^listening on' "$work/out" && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/out")
    [ -n "$port" ] || fail "no 'listening on' line"
}
stop() {
    kill -TERM "$pid"; wait "$pid"; local rc=$?; pid=
    [ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
}
iops() {   # DEPTH SECONDS
    "$wperf" "127.0.0.1:$port" $iqn 0 65536 "$1" "$2" | sed -n 's/^iops \([0-9]*\) .*/\1/p'
}

expect_ms=$(python3 -c 'print(2.0 + 65536 / 51e6 * 1e3)')

start --emulate-disk st318452lw
grep -q 'LUN 0: emulated disk st318452lw: 51.0 MB/s, 3.80 ms mean seek, 2.00 ms mean rotational latency' \
    "$work/log" || fail "the log does not name the emulated disk"
deep=$(iops 8 3)
one=$(iops 1 2)
stop
echo "emulated: $deep writes/s with 8 in flight, $one with 1; expected $(python3 -c "print(round(1e3 / $expect_ms))")/s"
python3 - "$deep" "$one" "$expect_ms" <<'PY' || fail "the emulated disk's service time is off (above)"
import sys
deep, one, ms = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
want = 1e3 / ms
# Never faster than the disk; slower by at most 20%: on a loaded machine
# the target may wait for a core between two ios, leaving the disk idle.
assert 0.80 * want <= deep <= 1.10 * want, "8 in flight: %.0f/s, want %.0f/s -20%%/+10%%" % (deep, want)
assert one <= deep * 1.05, "1 in flight faster than 8: %.0f > %.0f" % (one, deep)
PY
line=$(grep 'emulated disk st318452lw: [0-9]* ios, service mean' "$work/log") ||
    fail "no counters in the log at stop"
echo "$line"
python3 - "$line" "$expect_ms" <<'PY' || fail "the logged service time is off"
import re, sys
m = re.search(r'(\d+) ios, service mean ([\d.]+) ms', sys.argv[1])
n, mean = int(m.group(1)), float(m.group(2))
assert n > 500, n
assert abs(mean - float(sys.argv[2])) < 0.05 * float(sys.argv[2]), mean
PY

start
plain=$(iops 8 2)
stop
echo "without --emulate-disk: $plain writes/s"
python3 -c "import sys; assert float(sys.argv[1]) > 3 * float(sys.argv[2])" "$plain" "$deep" ||
    fail "the plain file LUN ($plain/s) is not much faster than the emulated disk ($deep/s)"

"$target" --portal 127.0.0.1:0 --iqn $iqn --lun "$work/d.img" --emulate-disk floppy \
    >"$work/out" 2>"$work/err" && fail "an unknown disk was accepted"
grep -q "emulate-disk floppy: unknown disk (known: st318452lw)" "$work/err" ||
    fail "no clear error for an unknown disk: $(cat "$work/err")"
echo "PASS"
