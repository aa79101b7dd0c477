#!/bin/bash
# Conformance of the embedded iSCSI target: libiscsi's iscsi-test-cu, test
# family ALL (230 tests), against ipvfs-target and against tgtd on a LUN of
# the same size, in the same run.  iscsi-test-cu reports a test whose
# command the target does not support as passed, with a "[SKIPPED]" line:
# such tests are counted apart.  Prints passed/skipped/failed for both
# targets per family (SCSI, iSCSI) and every test we do not pass (with the
# known reason); fails when a test that passes on tgtd fails here, or is
# skipped here for any reason but a command listed in known_gap() (commands
# we do not implement yet: printed as KNOWN GAP; none at present).
# The raw outputs stay in the log.  About a minute in all.
# timeout: 400
set -u
export LC_ALL=C   # sort and join must agree on the order
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

# Family of every Suite.Test (SCSI or iSCSI), from the suite's own list.
iscsi-test-cu -l | awk -F. 'NF == 3 && ($1 == "SCSI" || $1 == "iSCSI") {print $2 "." $3, $1}' |
    sort >"$work/families"

# Runs the suite against URL in DIR (verbose console mode, unbuffered so
# that a test's "[SKIPPED]" line comes between its "Test: NAME ..." and
# its result); leaves "Family.Suite.Test PASS|SKIP|FAIL" lines in DIR/res
# and "Suite.Test message" of each skip in DIR/skips.  Text after a test's
# result is its teardown's and does not count.
run_suite() {
    local dir=$1 url=$2
    mkdir -p "$dir"
    (cd "$dir" && timeout 300 stdbuf -o0 -e0 iscsi-test-cu --dataloss -t ALL "$url" >cu.out 2>&1)
    grep -q '^Run Summary' "$dir/cu.out" || { echo "no results from $url"; tail -20 "$dir/cu.out"; return 1; }
    perl -0777 -ne '
        while (/^Suite: (\S+)\n(.*?)(?=^Suite: |^Run Summary)/msg) {
            my ($suite, $body) = ($1, $2);
            while ($body =~ /Test: (\S+) \.\.\.(.*?)\b(passed|FAILED)\b/sg) {
                my ($t, $mid, $r) = ($1, $2, $3);
                my $skip = $mid =~ /\[SKIPPED\] *([^\n]*)/ ? $1 : undef;
                print "$suite.$t ", $r eq "FAILED" ? "FAIL" : defined $skip ? "SKIP" : "PASS", "\n";
                print STDERR "$suite.$t $skip\n" if defined $skip;
            }
        }' "$dir/cu.out" 2>"$dir/skips" | sort | join -a1 -e ALL -o 2.2,1.1,1.2 - "$work/families" |
        awk '{print $1 "." $2, $3}' | sort >"$dir/res"
    [ -s "$dir/res" ] || { echo "could not parse the results from $url"; return 1; }
}

# Prints "family: P passed, S skipped, F failed of N" for res file $1.
counts() {
    for fam in SCSI iSCSI; do
        awk -v f="$fam" 'index($1, f ".") == 1 { n++; c[$2]++ }
            END { printf "  %-6s %3d passed, %3d skipped, %3d failed of %3d\n", f ":",
                  c["PASS"], c["SKIP"], c["FAIL"], n }' "$1"
    done
}

# Keeps the raw output of a run in the test log.
show_raw() {
    echo "----- raw iscsi-test-cu output against $1 -----"
    cat "$2"
    echo "----- end of raw output against $1 -----"
}

# Why test $1 (Family.Suite.Test) does not pass here.
reason() {
    case ${1#*.} in
    iSCSIdatasn.iSCSIDataSnInvalid)
        echo "the test's second case runs after libiscsi reconnected (we closed the connection on the first bad DataSN, as RFC 7143 ERL 0 allows); the new session negotiates immediate data, no Data-Out is sent, so the write it expects to fail succeeds (tgtd fails it the same way)" ;;
    *)
        local msg
        msg=$(awk -v n="${1#*.}" '$1 == n {$1 = ""; print substr($0, 2); exit}' "$work/ours/skips")
        if [ -n "$msg" ]; then echo "skip reported by the test: $msg"; else echo "see $1 in the log"; fi ;;
    esac
}

# 0 when test $1 exercises a command we knowingly do not implement yet, so
# that its skip here is a known gap rather than a regression.  Every
# command tgtd passes with is implemented now, so none is: a test may only
# be named here with the reason in reason(), never one that used to pass.
known_gap() {
    return 1
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
show_raw ipvfs-target "$work/ours/cu.out"
show_raw tgtd "$work/tgtd/cu.out"
echo "ipvfs-target:"
counts "$work/ours/res"
echo "tgtd:"
counts "$work/tgtd/res"
status=0 gaps=0
while read -r name res; do
    t=$(awk -v n="$name" '$1 == n {print $2}' "$work/tgtd/res")
    [ "$res" = PASS ] && continue
    what=$([ "$res" = SKIP ] && echo "skipped" || echo "fails")
    if [ "$t" = PASS ] && [ "$res" = SKIP ] && known_gap "$name"; then
        echo "KNOWN GAP: $name skipped here, passes on tgtd: $(reason "$name")"
        gaps=$((gaps + 1))
    elif [ "$t" = PASS ]; then
        echo "REGRESSION: $name $what here but passes on tgtd: $(reason "$name")"
        status=1
    else
        echo "not passed on tgtd either (${t:-absent} there): $name $what here: $(reason "$name")"
    fi
done <"$work/ours/res"
while read -r name res; do
    [ "$res" != PASS ] && grep -q "^$name PASS$" "$work/ours/res" &&
        echo "passes here, $([ "$res" = SKIP ] && echo "skipped" || echo "fails") on tgtd: $name"
done <"$work/tgtd/res"
echo "$gaps known gap(s): tests tgtd passes that we skip for a command not implemented yet"
[ $status -eq 0 ] && echo "conformance: OK (no regression against tgtd beyond the known gaps)"
exit $status
