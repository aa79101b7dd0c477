#!/bin/bash
# Runs the whole iPVFS test suite from a configured, built tree.
#
#   test/run-suite.sh BUILDDIR [PATTERN]
#
# Unit tests are the check programs BUILDDIR/test/test_*; integration tests
# are the scripts test/t_*.sh of the source tree.  Each runs under a time
# limit (a script may ask for more with a line "# timeout: SECONDS"), its
# output goes to BUILDDIR/test-results/NAME.log, exit 77 means skipped.
# The last line is "N passed, M failed" (", K skipped" when any were).
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(cd "${1:?usage: run-suite.sh BUILDDIR [PATTERN]}" && pwd)
pattern=${2:-}
results=$builddir/test-results
mkdir -p "$results"

export IPVFS_SRCDIR=$srcdir IPVFS_BUILDDIR=$builddir
export PATH=$builddir/backend:$builddir/tools:$builddir/benchmarks:$PATH

passed=0 failed=0 skipped=0 failures=()

run_one() {
    local name=$1 limit=$2 start rc
    shift 2
    start=$(date +%s)
    timeout -k 10 "$limit" "$@" >"$results/$name.log" 2>&1 </dev/null
    rc=$?
    local took=$(( $(date +%s) - start ))
    case $rc in
    0)  passed=$((passed + 1)); echo "PASS $name (${took}s)" ;;
    77) skipped=$((skipped + 1)); echo "SKIP $name: $(tail -n 1 "$results/$name.log")" ;;
    124|137)
        failed=$((failed + 1)); failures+=("$name")
        echo "FAIL $name: timed out after ${limit}s (log: $results/$name.log)" ;;
    *)  failed=$((failed + 1)); failures+=("$name")
        echo "FAIL $name: exit $rc (log: $results/$name.log)"
        tail -n 15 "$results/$name.log" | sed 's/^/    | /' ;;
    esac
}

for t in "$builddir"/test/test_*; do
    [ -x "$t" ] && [ -f "$t" ] || continue
    name=$(basename "$t")
    [[ -z $pattern || $name == *$pattern* ]] || continue
    run_one "$name" 300 "$t"
done

for t in "$srcdir"/test/t_*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    [[ -z $pattern || $name == *$pattern* ]] || continue
    limit=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$t" | head -n 1)
    run_one "$name" "${limit:-300}" bash "$t"
done

if [ "$failed" -gt 0 ]; then
    echo "failed: ${failures[*]}"
fi
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
