# Helpers of the iRAID tests over tgtd targets (test/t_iraid_*.sh); source
# it right after `set -u`:
#
#   . "$(dirname "$0")/iraid_lib.sh"
#   iraid_test_start TAG 4 8        # $dir (/tmp/ipvfs-TAG.*), 4 targets of
#                                   # 8 MB, members=(URL:FILE ...) of all
#   iraid_tool_start 90 ready twofail 5 65536 "${members[@]}"
#   ...break a target...            # the tool waits for "go"
#   iraid_tool_finish               # "go", its output, its exit status
#   grep -q "..." "$iraid_log" || iraid_fail "no clear error logged"
#
# Sets src, build and tool (test/iraid-model-tool; exit 77 when it is not
# built) and sources benchmarks/iraid-targets.sh.  The EXIT trap installed
# here kills the tool still running, stops the targets and removes $dir; a
# test that needs its own cleanup defines a function iraid_test_cleanup,
# which the trap calls first.

src=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${IPVFS_BUILDDIR:-$src/_build}
tool=$build/test/iraid-model-tool
[ -x "$tool" ] || { echo "iraid-model-tool not built"; exit 77; }
. "$src/benchmarks/iraid-targets.sh"

dir=
members=()
iraid_tool_pid=      # the coprocess of iraid_tool_start, until it is waited for
iraid_log=           # its stderr

_iraid_cleanup() {
    if declare -F iraid_test_cleanup >/dev/null; then
        iraid_test_cleanup
    fi
    [ -n "$iraid_tool_pid" ] && kill -9 "$iraid_tool_pid" 2>/dev/null
    iraid_targets_stop
    [ -n "$dir" ] && rm -rf "$dir"
}
trap _iraid_cleanup EXIT
trap 'exit 1' INT TERM

# Prints the tool's log tail (when there is one) and the failure, exits 1.
iraid_fail() {
    [ -n "$iraid_log" ] && [ -f "$iraid_log" ] && tail -n 30 "$iraid_log"
    echo "FAILED: $*"
    exit 1
}

# iraid_test_start TAG COUNT SIZE_MB: the scratch directory, COUNT targets
# and the members array; exits with the status of a failed start (77 when
# tgtd is not installed).
iraid_test_start() {
    local tag=$1 count=$2 size=$3 rc i
    dir=$(mktemp -d "/tmp/ipvfs-$tag.XXXXXX")
    iraid_targets_start "$dir" "$count" "$size"
    rc=$?
    [ $rc -eq 0 ] || exit $rc
    for ((i = 0; i < count; i++)); do
        members+=("${IRAID_URLS[$i]}:${IRAID_FILES[$i]}")
    done
}

# iraid_tool_start LIMIT WORD SUBCOMMAND ARGS...: runs `iraid-model-tool
# SUBCOMMAND ARGS...` as the coprocess IRAID_TOOL (killed after LIMIT
# seconds, stderr in $dir/SUBCOMMAND.log, named by $iraid_log) and waits
# (60 s at most) for its first line, which must be WORD: the tool is set up
# and the test may break something now.
iraid_tool_start() {
    local limit=$1 word=$2 line=
    shift 2
    iraid_log=$dir/$1.log
    coproc IRAID_TOOL { exec timeout "$limit" "$tool" "$@" 2>"$iraid_log"; }
    iraid_tool_pid=$IRAID_TOOL_PID
    read -r -t 60 line <&"${IRAID_TOOL[0]}"
    [ "$line" = "$word" ] || iraid_fail "no \"$word\" from the $1 run: $line"
}

# iraid_tool_finish: tells the tool to go on, shows what it prints to the
# end, and fails unless it exits 0.
iraid_tool_finish() {
    local rc
    echo go >&"${IRAID_TOOL[1]}"
    cat <&"${IRAID_TOOL[0]}"
    wait "$iraid_tool_pid"
    rc=$?
    iraid_tool_pid=
    [ $rc -eq 0 ] || iraid_fail "$(basename "$iraid_log" .log) run (status $rc)"
}
