#!/bin/bash
# MPI-IO conformance of libipvfs-romio.so: runs the shared harness
# (shared/tools/romio-conformance.sh beside the checkout: ROMIO's own tests
# plus MPICH's MPI-IO tests) with 4 processes and ROMIO_PRELOAD set to our
# library, on ufs: in a temporary directory.  Passes when every test passes,
# or fails only with one of the documented exceptions below.  Prints the
# harness's per-test lines and summary.
#
# The test programs are built once into ROMIO_CONFORMANCE_BUILD (default
# BUILDDIR/test/romio-conformance/build) from the mpich source that
# scripts/build-romio.sh fetched into the cache; a run then takes about a
# minute.  test/t_romio_conformance_ipvfs.sh runs this script against a
# cluster by setting
#   IPVFS_ROMIO_PREFIX      the PREFIX_DIR for the harness (default: ufs:TMPDIR)
#   IPVFS_ROMIO_EXCEPTIONS  more "name|symptom|reason" lines of accepted
#                           failures: a failure of test name is accepted only
#                           when its log has a line matching the extended
#                           regex symptom and every "...; should be ..."
#                           complaint in it matches symptom too, so another
#                           fault in the same test still fails
# timeout: 900
set -eu

: "${IPVFS_SRCDIR:?run through test/run-suite.sh (IPVFS_SRCDIR unset)}"
: "${IPVFS_BUILDDIR:?run through test/run-suite.sh (IPVFS_BUILDDIR unset)}"
me=${0##*/}
fail() { echo "$me: FAIL: $*" >&2; exit 1; }

# Accepted failures on every file system, "name|symptom|reason" lines (none).
EXCEPTIONS=''
EXCEPTIONS="$EXCEPTIONS${IPVFS_ROMIO_EXCEPTIONS:+
$IPVFS_ROMIO_EXCEPTIONS}"

harness=$IPVFS_SRCDIR/../shared/tools/romio-conformance.sh
if [ ! -f "$harness" ]; then
    echo "$me: no conformance harness at $harness (shared/ not beside the checkout)"
    exit 77
fi
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
[ -f "$lib" ] || fail "$lib is not built (make all)"

work=${ROMIO_CONFORMANCE_BUILD:-$IPVFS_BUILDDIR/test/romio-conformance/build}
export ROMIO_CONFORMANCE_BUILD=$work ROMIO_PRELOAD=$lib

# The tests' sources: unpacked (once) from the mpich source tarball that
# build-romio.sh keeps in the cache; without it the harness fetches its own.
if [ -z "${MPICH_SRC:-}" ]; then
    srcver=$(dpkg-query -W -f='${source:Version}' libmpich-dev 2>/dev/null || true)
    upver=${srcver#*:}
    upver=${upver%-*}
    orig=$(ls "${IPVFS_CACHE:-$IPVFS_SRCDIR/.cache}/mpich-$srcver/mpich_$upver".orig.tar.* \
        2>/dev/null | head -n 1 || true)
    tests_src=$work/../mpich-src
    if [ -n "$orig" ] && [ ! -f "$tests_src/.complete" ]; then
        rm -rf "$tests_src"
        mkdir -p "$tests_src"
        tar -xf "$orig" -C "$tests_src" --wildcards '*/src/mpi/romio/test/*' \
            '*/test/mpi/io/*' '*/test/mpi/errors/io/*' '*/test/mpi/util/*' \
            '*/test/mpi/include/*' || fail "cannot unpack the tests from $orig"
        touch "$tests_src/.complete"
    fi
    top=$(ls -d "$tests_src"/mpich-*/ 2>/dev/null | head -n 1 || true)
    [ -z "$top" ] || export MPICH_SRC=${top%/}
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_romio_conformance.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=${IPVFS_ROMIO_PREFIX:-ufs:$tmp/files}

start=$(date +%s)
rc=0
bash "$harness" "$prefix" 4 > "$tmp/out" 2> "$tmp/err" || rc=$?
took=$(( $(date +%s) - start ))
cat "$tmp/out"
summary=$(tail -n 1 "$tmp/out")
if ! [[ $summary =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
    cat "$tmp/err" >&2
    fail "the harness gave no summary (exit $rc)"
fi
grep -E '^romio-conformance.sh: (run time|.*provided by)' "$tmp/err" || true

logs=$(sed -n 's/.*logs in //p' "$tmp/err")

# accepted NAME: 0 when an exception covers the failure of NAME (see above).
accepted() {
    local entry symptom tlog=$logs/${1//\//.}.log
    entry=$(printf '%s\n' "$EXCEPTIONS" | grep -F "$1|" | head -n 1)
    [ -n "$entry" ] && [ -f "$tlog" ] || return 1
    symptom=${entry#*|}
    symptom=${symptom%%|*}
    reason=${entry##*|}
    grep -qE -- "$symptom" "$tlog" && ! grep -F 'should be' "$tlog" | grep -qvE -- "$symptom"
}

unexpected=0
while read -r line; do
    name=${line#FAIL }
    name=${name%% *}
    if accepted "$name"; then
        echo "$me: accepted failure $name: $reason"
    else
        echo "$me: unexpected failure: $line"
        unexpected=$((unexpected + 1))
    fi
done < <(grep '^FAIL ' "$tmp/out" || true)
echo "$me: $summary on $prefix in ${took}s"
[ "$unexpected" -eq 0 ] || fail "$unexpected unexpected failure(s); logs: $logs"
echo "$me: passed"
