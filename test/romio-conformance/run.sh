#!/bin/bash
# MPI-IO conformance harness of libipvfs-romio.so: builds the C test
# programs of ROMIO (src/mpi/romio/test) and of MPICH (test/mpi/io,
# test/mpi/errors/io) from the Debian mpich source that
# scripts/build-romio.sh keeps in its cache, and runs them with our library
# in LD_PRELOAD against one ROMIO prefix.
#
#   test/romio-conformance/run.sh PREFIX_DIR [NPROCS]
#
# PREFIX_DIR is where the tests make their files, e.g. ufs:/tmp/rc or
# ipvfs:/rc; for ufs: the directory is created.  NPROCS (default 4) is the
# rank count of the tests that take any count (tests.txt).  Prints one line
# per test, "PASS name", "FAIL name: reason" or "SKIP name: reason", and
# last "N passed, M failed, K skipped"; exit 0 when none failed, 2 (without
# a summary) when the harness itself cannot run.  A log per test is kept in
# the directory named on stderr.
#
# Environment: IPVFS_SRCDIR and IPVFS_BUILDDIR (test/run-suite.sh sets
# them); IPVFS_CACHE as for the build; IPVFS_ROMIO_LARGE: 1 (default)
# runs the large tests too, 2 the huge one as well, 0 neither (tests.txt); IPVFS_ROMIO_TESTS, an
# extended regex: only the tests whose name matches; IPVFS_ROMIO_TIMEOUT,
# seconds per test (default 120; large ones get 1800); MPICC, MPIEXEC.
#
# The programs are built once into BUILDDIR/test/romio-conformance and
# built again whenever the harness, its tables or the MPI compiler change.
set -eu

me=romio-conformance
die() { echo "$me: $*" >&2; exit 2; }
note() { echo "$me: $*" >&2; }

: "${IPVFS_SRCDIR:?run through test/run-suite.sh (IPVFS_SRCDIR unset)}"
: "${IPVFS_BUILDDIR:?run through test/run-suite.sh (IPVFS_BUILDDIR unset)}"
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: run.sh PREFIX_DIR [NPROCS]"
prefix_dir=${1%/}
nprocs=${2:-4}
case $nprocs in '' | *[!0-9]* | 0) die "NPROCS must be a positive integer" ;; esac

here=$IPVFS_SRCDIR/test/romio-conformance
work=$IPVFS_BUILDDIR/test/romio-conformance
lib=$IPVFS_BUILDDIR/adio/libipvfs-romio.so
large=${IPVFS_ROMIO_LARGE:-1}
filter=${IPVFS_ROMIO_TESTS:-}
timeout_std=${IPVFS_ROMIO_TIMEOUT:-120}
timeout_large=1800
MPICC=${MPICC:-mpicc}
MPIEXEC=${MPIEXEC:-mpiexec}

[ -f "$lib" ] || die "$lib is not built (make all)"
lib=$(readlink -f "$lib")
for tool in "$MPICC" "$MPIEXEC" timeout flock sha256sum tar; do
    command -v "$tool" >/dev/null || die "$tool not found"
done

# The table, without comments and blank lines, fields trimmed.
table() {   # $1 = file
    sed -e '/^#/d' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*|[[:space:]]*/|/g' \
        -e 's/[[:space:]]*$//' "$1"
}

# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------

# Unpacks the test sources of tarball $1 into $work/src.
unpack() {
    local top
    rm -rf "$work/src" "$work/unpack"
    mkdir -p "$work/unpack"
    tar -xf "$1" -C "$work/unpack" --wildcards '*/src/mpi/romio/test/*' '*/test/mpi/io/*' \
        '*/test/mpi/errors/io/*' '*/test/mpi/util/*' '*/test/mpi/include/*' ||
        die "cannot unpack the MPI-IO tests from $1"
    top=$(ls -d "$work"/unpack/mpich-*/ 2>/dev/null | head -n 1)
    [ -n "$top" ] || die "$1 has no mpich-* directory"
    mkdir -p "$work/src/mpich/util"
    mv "$top/src/mpi/romio/test" "$work/src/romio"
    mv "$top/test/mpi/io"/* "$work/src/mpich/"
    mv "$top/test/mpi/errors/io" "$work/src/mpicherr"
    mv "$top/test/mpi/util"/* "$work/src/mpich/util/"
    mv "$top/test/mpi/include" "$work/src/mpich/include"
    rm -rf "$work/unpack"
}

# mpitestconf.h for MPICH's mtest from its template: what this platform
# (Debian, MPICH, glibc) has.
gen_mpitestconf() {
    local d args=()
    for d in HAVE_STDARG_H HAVE_STRING_H HAVE_STRINGS_H HAVE_STDLIB_H HAVE_STDINT_H \
        HAVE_INTTYPES_H HAVE_UNISTD_H HAVE_SYS_TIME_H HAVE_SYS_RESOURCE_H HAVE_SYS_STAT_H \
        HAVE_SYS_TYPES_H HAVE_MEMORY_H HAVE_GETRUSAGE HAVE_LONG_LONG HAVE_LONG_DOUBLE \
        HAVE_MPI_IO HAVE_MPI_WIN_CREATE HAVE_MPI_SPAWN HAVE_PTHREAD_H HAVE_STRDUP HAVE_USLEEP \
        HAVE__BOOL HAVE_DLFCN_H STDC_HEADERS MPIO_USES_MPI_REQUEST; do
        args+=(-e "s|^#undef $d\$|#define $d 1|")
    done
    sed "${args[@]}" \
        -e 's|^#undef THREAD_PACKAGE_NAME$|#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX|' \
        -e 's|^#undef POINTERINT_t$|#define POINTERINT_t long|' \
        -e 's|^#undef \(.*\)$|/* #undef \1 */|' "$1" > "$2"
}

# Applies adapt.txt to the sources in $work/src.
adapt() {
    local line dir rest file expr check
    while IFS= read -r line; do
        dir=${line%%|*}; rest=${line#*|}; file=${rest%%|*}; rest=${rest#*|}
        if [ "$rest" = GEN_FROM_IN ]; then
            sed 's/@LL@/lld/g' "$work/src/$dir/$file.in" > "$work/src/$dir/$file"
            check=%lld
        else
            expr=${rest%;*}; check=${rest##*;}
            sed -i -e "$expr" "$work/src/$dir/$file"
        fi
        grep -qF -- "$check" "$work/src/$dir/$file" ||
            echo "adaptation did not apply" > "$work/src/$dir/$file.noadapt"
    done < <(table "$here/adapt.txt")
}

# Compiles one test; a failure leaves its reason in BIN.fail.
build_one() {   # $1 = dir, $2 = source
    local src=$work/src/$1/$2 bin=$work/bin/$1/${2%.c} extra=() msg
    rm -f "$bin" "$bin.fail"
    if [ ! -f "$src" ]; then
        echo "no $1/$2 in this mpich source" > "$bin.fail"
        return 0
    fi
    if [ -f "$src.noadapt" ]; then
        cp "$src.noadapt" "$bin.fail"
        return 0
    fi
    [ "$1" = romio ] || extra=(-I"$work/src/mpich/include" "$work/obj/mtest.o"
        "$work/obj/mtest_common.o" "$work/obj/mtest_single.o")
    # upstream code: its warnings are not ours to fix
    if ! "$MPICC" -O1 -g -w -include "$here/rt_helpers.h" -o "$bin" "$src" "${extra[@]}" \
            -lm > "$bin.log" 2>&1; then
        msg=$(grep -m 1 -E 'error|undefined' "$bin.log" | cut -c 1-120)
        echo "does not compile: ${msg:-see $bin.log}" > "$bin.fail"
    fi
}

build_key() {   # $1 = source tarball
    { basename "$1"; cat "$0" "$here/tests.txt" "$here/adapt.txt" "$here/rt_helpers.h" \
        "$here/rt_util.c"; "$MPICC" -show; } | sha256sum | cut -c 1-32
}

build_all() {   # $1 = source tarball
    local dir file jobs=0 maxjobs
    note "building the test programs from $1 into $work"
    unpack "$1"
    adapt
    gen_mpitestconf "$work/src/mpich/include/mpitestconf.h.in" \
        "$work/src/mpich/include/mpitestconf.h"
    rm -rf "$work/bin" "$work/obj"
    mkdir -p "$work/bin/romio" "$work/bin/mpich" "$work/bin/mpicherr" "$work/obj"
    for file in mtest mtest_common mtest_single; do
        "$MPICC" -O1 -g -w -I"$work/src/mpich/include" -c "$work/src/mpich/util/$file.c" \
            -o "$work/obj/$file.o" || die "cannot build MPICH's $file.c (mtest)"
    done
    "$MPICC" -O2 -g -Wall -Wextra -Werror -o "$work/bin/rt_util" "$here/rt_util.c" -ldl ||
        die "cannot build rt_util"
    maxjobs=$(nproc 2>/dev/null || echo 2)
    while IFS='|' read -r _ dir file _; do
        build_one "$dir" "$file" &
        jobs=$((jobs + 1))
        if [ "$jobs" -ge "$maxjobs" ]; then
            wait -n || true
            jobs=$((jobs - 1))
        fi
    done < <(table "$here/tests.txt")
    wait
}

ensure_built() {
    local orig key
    orig=$("$IPVFS_SRCDIR/scripts/build-romio.sh" --srcdir "$IPVFS_SRCDIR" \
        --builddir "$IPVFS_BUILDDIR" --print-source) || die "no mpich source (see above)"
    mkdir -p "$work"
    exec 9> "$work/.lock"
    flock 9 || die "cannot lock $work/.lock"
    key=$(build_key "$orig")
    if [ "$(cat "$work/.build-key" 2>/dev/null)" != "$key" ] || [ ! -x "$work/bin/rt_util" ]; then
        rm -f "$work/.build-key"
        build_all "$orig"
        echo "$key" > "$work/.build-key"
    fi
    flock -u 9
}

# ---------------------------------------------------------------------------
# Run
# ---------------------------------------------------------------------------

# The prefix (2 or more characters, as ROMIO wants) and the path after it.
fstype= fspath=$prefix_dir
if [[ $prefix_dir =~ ^([A-Za-z0-9_]{2,}):(.*)$ ]]; then
    fstype=${BASH_REMATCH[1]}
    fspath=${BASH_REMATCH[2]}
fi
localdir=
case $fstype in '' | ufs | nfs) localdir=$fspath ;; esac

ensure_built
[ -z "$localdir" ] || mkdir -p -- "$localdir" || die "cannot create $localdir"
logdir=$work/logs/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$logdir/cwd" "$logdir/bin" || die "cannot create $logdir"
# the logs of the last few runs are enough
ls -d "$work"/logs/*/ | head -n -6 | xargs -r rm -rf
ulimit -c 0
export MPITEST_RETURN_WITH_CODE=yes
launch=("$MPIEXEC" -genv LD_PRELOAD "$lib${LD_PRELOAD:+:$LD_PRELOAD}")

# Our library must really serve the tests' MPI-IO calls.
which=$(cd "$logdir/cwd" && timeout -k 5 60 "${launch[@]}" -n 1 "$work/bin/rt_util" which 2>&1) ||
    die "cannot run an MPI program: $which"
[ "$(grep -cE '^P?MPI_' <<< "$which")" = 2 ] || die "rt_util which named no library: $which"
while read -r sym obj; do
    [ "$(readlink -f "$obj" 2>/dev/null)" = "$lib" ] ||
        die "LD_PRELOAD of $lib does not interpose $sym (it comes from $obj)"
done < <(grep -E '^P?MPI_' <<< "$which")
note "prefix $prefix_dir, $nprocs ranks, logs in $logdir"

# Tests to run: "name|dir|file|ranks|check|args" lines; skipped ones are
# reported at once.
selected=()
passed=0 failed=0 skipped=0
while IFS='|' read -r name dir file np check size args; do
    if [ -n "$filter" ] && ! [[ $name =~ $filter ]]; then
        continue
    fi
    case $size in
        large) if [ "$large" -lt 1 ]; then
                   echo "SKIP $name: large (4 GB file, 6.5 GB of memory), not run with IPVFS_ROMIO_LARGE=0"
                   skipped=$((skipped + 1))
                   continue
               fi ;;
        huge)  if [ "$large" -lt 2 ]; then
                   echo "SKIP $name: needs 14 GB of memory in the test ranks beside the servers, more than this machine can spare (IPVFS_ROMIO_LARGE=2 runs it)"
                   skipped=$((skipped + 1))
                   continue
               fi ;;
    esac
    [ "$np" = N ] && np=$nprocs
    selected+=("$name|$dir|$file|$np|$check|$size|$args")
done < <(table "$here/tests.txt")

# Files a test may make: FILE and FILE.RANK.
files_of() {   # $1 = file, $2 = ranks
    local i
    echo "$1"
    for ((i = 0; i < $2; i++)); do echo "$1.$i"; done
}

clean_local() {   # $1 = file id
    [ -z "$localdir" ] || rm -rf -- "$localdir/$1" "$localdir/$1".*
}

# Leftovers of an earlier run, removed through the driver in one launch.
leftovers=()
for t in ${selected[@]+"${selected[@]}"}; do
    IFS='|' read -r name _ _ np _ <<< "$t"
    clean_local "${name//\//.}"
    mapfile -t -O ${#leftovers[@]} leftovers < <(files_of "$prefix_dir/${name//\//.}" "$np")
done
if [ ${#leftovers[@]} -gt 0 ] &&
    ! (cd "$logdir/cwd" && timeout -k 5 120 "${launch[@]}" -n 1 "$work/bin/rt_util" delete \
        "${leftovers[@]}") > "$logdir/cleanup.log" 2>&1; then
    die "cannot remove the files of an earlier run (see $logdir/cleanup.log)"
fi

# Kills what a timed-out launch left of test $1 (processes whose program
# is this run's copy of the test).
reap() {
    local p pids=()
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = "$1" ] && pids+=("${p#/proc/}")
    done
    [ ${#pids[@]} -eq 0 ] || kill -KILL "${pids[@]}" 2>/dev/null || true
}

# The first line of log $1 that reads like a complaint, shortened.
complaint() {
    grep -v -E '^# |(^|[[:space:]])No Errors[[:space:]]*$|^[[:space:]]*$|not counted as an error' "$1" |
        grep -m 1 -iE 'error|fail|abort|corrupt|mismatch|wrong|unexpected|should be|expect|signal|killed|segmentation|assert|cannot|usage|\*\*[a-z]' |
        tr -s '[:space:]' ' ' | cut -c 1-120 || true
}

# Why the test of log $1 failed, or nothing when it passed.
verdict() {   # $1 = log, $2 = exit status, $3 = check, $4 = ranks, $5 = timed out (0/1)
    local log=$1 rc=$2 bad detail host n
    bad=$(grep -v '^# ' "$log" | grep -m 1 -oE 'Found [1-9][0-9]* errors?|[0-9]+/[0-9]+ blocks corrupt|type [0-9]+ failed (indep|collective)' || true)
    detail=$(complaint "$log")
    if [ "$5" = 1 ]; then
        echo "timed out"
    elif [ "$rc" != 0 ]; then
        echo "exit status $rc${bad:+: $bad}${detail:+: $detail}"
    elif [ -n "$bad" ]; then
        echo "$bad${detail:+: $detail}"
    else
        case $3 in
            noerr)
                grep -qE '(^|[[:space:]])No Errors[[:space:]]*$' "$log" ||
                    echo "no \" No Errors\" line${detail:+: $detail}" ;;
            exit0)
                detail=$(grep -v '^# ' "$log" |
                    grep -m 1 -E 'returns error|not enough memory|[Ee]rror:|readbuf=' |
                    tr -s '[:space:]' ' ' | cut -c 1-120 || true)
                [ -z "$detail" ] || echo "error output: $detail" ;;
            endian)
                host=LITTLE
                [ "$(printf '\001\000' | od -An -tu2 | tr -d ' ')" = 1 ] || host=BIG
                grep -q "^native datarep is $host ENDIAN" "$log" ||
                    echo "native data are not in host ($host ENDIAN) order"
                grep -q '^external32 datarep is BIG ENDIAN' "$log" ||
                    echo "external32 data are not big-endian" ;;
            readback)
                n=$(grep -c 'data read back is correct' "$log" || true)
                [ "$n" = "$4" ] || echo "only $n of $4 ranks read back correct data" ;;
        esac
    fi
}

start=$(date +%s)
for t in ${selected[@]+"${selected[@]}"}; do
    IFS='|' read -r name dir file np check size args <<< "$t"
    fid=${name//\//.}
    bin=$work/bin/$dir/${file%.c}
    log=$logdir/$fid.log
    if [ -f "$bin.fail" ] || [ ! -x "$bin" ]; then
        echo "FAIL $name: not built: $(cat "$bin.fail" 2>/dev/null || echo "no program")"
        failed=$((failed + 1))
        continue
    fi
    f=$prefix_dir/$fid
    argv=()
    read -r -a words <<< "$args"
    for a in ${words[@]+"${words[@]}"}; do
        a=${a//@F@/$f}
        argv+=("${a//@H@/$work/src/romio/test_hintfile}")
    done
    limit=$timeout_std
    [ "$size" = std ] || limit=$timeout_large
    # a copy per run, so that reap() finds only this run's processes
    run=$logdir/bin/$fid
    ln -f "$bin" "$run" 2>/dev/null || cp "$bin" "$run"
    t0=$(date +%s)
    rc=0
    # stdout and stderr apart: a diagnostic without a newline must not
    # glue itself to the " No Errors" line
    (cd "$logdir/cwd" && RT_FILE=$f exec timeout -k 10 "$limit" "${launch[@]}" -n "$np" \
        "$run" ${argv[@]+"${argv[@]}"}) > "$log.out" 2> "$log.err" < /dev/null || rc=$?
    took=$(($(date +%s) - t0))
    timed_out=0
    if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ "$took" -ge "$limit" ]; }; then
        timed_out=1
        reap "$run"
    fi
    rm -f "$run"
    {
        echo "# $name: $np ranks, file $f, exit status $rc after ${took}s"
        echo "# ${launch[*]} -n $np $bin ${argv[*]}"
        echo "# ---- stdout"
        cat "$log.out"
        echo "# ---- stderr"
        cat "$log.err"
    } > "$log"
    rm -f "$log.out" "$log.err"
    clean_local "$fid"
    reason=$(verdict "$log" "$rc" "$check" "$np" "$timed_out" | tr '\n' ' ' | sed 's/ $//' |
        cut -c 1-200)
    if [ -z "$reason" ]; then
        echo "PASS $name (${took}s)"
        passed=$((passed + 1))
    else
        echo "FAIL $name: $reason (log: $log)"
        failed=$((failed + 1))
    fi
done
note "run time $(($(date +%s) - start))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
