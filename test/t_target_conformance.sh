#!/bin/bash
# Conformance of the embedded iSCSI target: libiscsi's iscsi-test-cu, test
# family ALL (230 tests), against ipvfs-target and against tgtd on a LUN of
# the same size, in the same run.  Prints both pass counts and every test
# we fail (with the known reason); fails when we pass fewer tests than
# tgtd or fail a test that tgtd passes.  About a minute in all.
# timeout: 400
set -u
srcdir=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
target=$(command -v ipvfs-target || echo "${IPVFS_BUILDDIR:-$srcdir/_build}/backend/ipvfs-target")
command -v iscsi-test-cu >/dev/null || { echo "iscsi-test-cu (libiscsi-bin) not installed"; exit 77; }
command -v tgtd >/dev/null && command -v tgtadm >/dev/null || { echo "tgtd (tgt) not installed"; exit 77; }
[ -x "$target" ] || { echo "ipvfs-target not built"; exit 1; }

work=$(mktemp -d /tmp/ipvfs-conf.XXXXXX)
ours_pid= tgtd_pid= ctl=
size=64M
iqn=iqn.2026-01.org.ipvfs:conformance

cleanup() {
    [ -n "$ours_pid" ] && kill "$ours_pid" 2>/dev/null && wait "$ours_pid" 2>/dev/null
    if [ -n "$tgtd_pid" ]; then
        tgtadm -C "$ctl" --lld iscsi --op delete --mode target --tid 1 --force >/dev/null 2>&1
        tgtadm -C "$ctl" --op update --mode sys --name State -v offline >/dev/null 2>&1
        tgtadm -C "$ctl" --op delete --mode system >/dev/null 2>&1
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$tgtd_pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$tgtd_pid" 2>/dev/null
        wait "$tgtd_pid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Runs the suite against URL in DIR; leaves "Suite.Test PASS|FAIL" lines in DIR/res.
run_suite() {
    local dir=$1 url=$2
    mkdir -p "$dir"
    (cd "$dir" && timeout 300 iscsi-test-cu -x --dataloss -t ALL "$url" >cu.out 2>&1)
    [ -f "$dir/CUnitAutomated-Results.xml" ] || { echo "no results from $url"; tail -20 "$dir/cu.out"; return 1; }
    awk '/<SUITE_NAME>/ {s = $2}
         /<CUNIT_RUN_TEST_SUCCESS>/ {st = "PASS"}
         /<CUNIT_RUN_TEST_FAILURE>/ {st = "FAIL"}
         /<TEST_NAME>/ {print s "." $2, st}' "$dir/CUnitAutomated-Results.xml" |
        awk '{ if ($2 == "FAIL" || r[$1] == "FAIL") r[$1] = "FAIL"; else r[$1] = "PASS" }
             END { for (k in r) print k, r[k] }' | sort >"$dir/res"
}

reason() {
    case $1 in
    iSCSIdatasn.iSCSIDataSnInvalid)
        echo "the test's second case runs after libiscsi reconnected (we closed the connection on the first bad DataSN, as RFC 7143 ERL 0 allows); the new session negotiates immediate data, no Data-Out is sent, so the write it expects to fail succeeds (tgtd fails it the same way)" ;;
    Reserve6.2Initiators)
        echo "test expects RESERVE(6) semantics tgtd does not have either" ;;
    *) echo "see $1 in the log" ;;
    esac
}

# --- ipvfs-target ---
"$target" --portal 127.0.0.1:0 --iqn "$iqn" --lun "$work/ours.img:$size" \
    >"$work/ours.out" 2>"$work/ours.log" &
ours_pid=$!
for _ in $(seq 50); do grep -q '^listening on' "$work/ours.out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/ours.out")
[ -n "$port" ] || { echo "ipvfs-target did not start"; cat "$work/ours.log"; exit 1; }
run_suite "$work/ours" "iscsi://127.0.0.1:$port/$iqn/0" || exit 1
kill "$ours_pid"; wait "$ours_pid"; rc=$?; ours_pid=
[ $rc -eq 0 ] || { echo "ipvfs-target exited with $rc at SIGTERM"; exit 1; }
grep -E 'error|warn' "$work/ours.log" | sort | uniq -c | sort -rn | head -5

# --- tgtd on a file of the same size ---
truncate -s "$size" "$work/tgtd.img"
for try in 0 1 2 3 4; do
    tport=$((13000 + ($$ + try * 37) % 200 * 2))
    ctl=$((tport + 1))
    tgtd -f -C "$ctl" --iscsi portal=127.0.0.1:$tport >"$work/tgtd.log" 2>&1 &
    tgtd_pid=$!
    for _ in $(seq 30); do tgtadm -C "$ctl" --op show --mode sys >/dev/null 2>&1 && break; sleep 0.1; done
    kill -0 "$tgtd_pid" 2>/dev/null && tgtadm -C "$ctl" --op show --mode sys >/dev/null 2>&1 && break
    wait "$tgtd_pid" 2>/dev/null; tgtd_pid=
done
[ -n "$tgtd_pid" ] || { echo "tgtd did not start"; cat "$work/tgtd.log"; exit 77; }
tgtadm -C "$ctl" --lld iscsi --mode target --op new --tid 1 -T iqn.2026-01.org.tgt:conformance &&
tgtadm -C "$ctl" --lld iscsi --mode logicalunit --op new --tid 1 --lun 1 -b "$work/tgtd.img" &&
tgtadm -C "$ctl" --lld iscsi --mode target --op bind --tid 1 -I ALL ||
    { echo "tgtadm setup failed"; exit 77; }
run_suite "$work/tgtd" "iscsi://127.0.0.1:$tport/iqn.2026-01.org.tgt:conformance/1" || exit 1

# --- comparison ---
total=$(wc -l <"$work/ours/res")
ours_pass=$(grep -c ' PASS$' "$work/ours/res")
tgtd_pass=$(grep -c ' PASS$' "$work/tgtd/res")
for fam in "iSCSI" "SCSI"; do :; done
echo "ipvfs-target: $ours_pass of $total tests passed"
echo "tgtd:         $tgtd_pass of $(wc -l <"$work/tgtd/res") tests passed"
status=0
while read -r name res; do
    t=$(awk -v n="$name" '$1 == n {print $2}' "$work/tgtd/res")
    [ "$res" = FAIL ] || continue
    if [ "$t" = PASS ]; then
        echo "REGRESSION: $name fails here but passes on tgtd"
        status=1
    else
        echo "known failure (tgtd fails it too): $name: $(reason "$name")"
    fi
done <"$work/ours/res"
while read -r name res; do
    [ "$res" = FAIL ] && grep -q "^$name PASS$" "$work/ours/res" && echo "passes here, fails on tgtd: $name"
done <"$work/tgtd/res"
[ "$ours_pass" -ge "$tgtd_pass" ] || { echo "FAIL: fewer passes than tgtd"; status=1; }
[ $status -eq 0 ] && echo "conformance: OK"
exit $status
