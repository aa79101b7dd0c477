#!/bin/bash
# Fuzzes the target's PDU and CDB parsing with libFuzzer (clang,
# -fsanitize=fuzzer,address,undefined) for a bounded time
# (IPVFS_FUZZ_SECONDS, default 60); any crash, leak or sanitizer report
# fails the test.  The harness is test/fuzz/fuzz_target.c.
# timeout: 300
set -u
srcdir=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${IPVFS_BUILDDIR:-$srcdir/_build}
secs=${IPVFS_FUZZ_SECONDS:-60}
command -v clang >/dev/null || { echo "clang not installed"; exit 77; }
[ -f "$builddir/config.h" ] || { echo "no config.h in $builddir (configure first)"; exit 1; }

work=$(mktemp -d /tmp/ipvfs-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin=$builddir/test/fuzz_target
mkdir -p "$builddir/test"
libs="-lisal -lnettle"
grep -q 'define HAVE_LIBURING 1' "$builddir/config.h" && libs="$libs -luring"
# Every source of the target library: all of backend/iscsi/ but the two
# programs' main files, and what it links: the L2's cache/ policies and
# the common files.
srcs=()
for f in "$srcdir"/backend/iscsi/*.c; do
    case ${f##*/} in main.c|wperf.c) ;; *) srcs+=("$f") ;; esac
done
echo "building $bin"
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -I"$srcdir" -I"$builddir" \
    "$srcdir/test/fuzz/fuzz_target.c" \
    "${srcs[@]}" \
    "$srcdir"/cache/*.c \
    "$srcdir"/common/{log,net,evloop,u64map,size}.c $libs -o "$bin" || exit 1

# Seeds: a login PDU, a READ(10) and a WRITE(10) with immediate data in
# full feature phase, and a few CDBs for mode 2.
seed() { printf "$2" >"$work/corpus/$1"; }
mkdir -p "$work/corpus"
login_text='InitiatorName=iqn.x:i\0TargetName=iqn.2026-01.org.ipvfs:fuzz\0SessionType=Normal\0HeaderDigest=None\0MaxRecvDataSegmentLength=65536\0\0\0'
seed login '\x00\x00\x43\x87\x00\x00\x00\x00\x00\x6c\x80\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'"$login_text"
seed read10 '\x01\x01\x01\xc0\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x28\x00\x00\x00\x00\x10\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00'
seed write10 '\x01\x01\x01\xa0\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x06\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x00\x00\x20\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00'"$(head -c 512 /dev/zero | tr '\0' 'A')"
seed inquiry '\x02\x00\x12\x01\x83\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00'
seed unmap '\x02\x00\x42\x00\x00\x00\x00\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x18\x00\x16\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00'
seed rsoc '\x02\x00\xa3\x0c\x80\x00\x00\x00\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff'
# ORWRITE(16), GET LBA STATUS, PERSISTENT RESERVE IN/OUT, WRITE SAME(16)
# of 0 blocks (to the end of the LUN)
seed orwrite '\x02\x00\x8b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x02\x00'"$(head -c 512 /dev/zero | tr '\0' 'B')"
seed lbastatus '\x02\x00\x9e\x12\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x01\x00'
seed prin '\x02\x00\x5e\x03\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00'
seed prout '\x02\x00\x5f\x06\x00\x00\x00\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x18\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00'
seed ws0 '\x02\x00\x93\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00'"$(head -c 512 /dev/zero | tr '\0' 'C')"

echo "fuzzing for ${secs}s"
cd "$work" && "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=70000 \
    -print_final_stats=1 "$work/corpus" 2>&1 | grep -v '^#[0-9]*.*\(NEW\|REDUCE\|pulse\)' | tail -40
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] && echo "fuzzing: no crash in ${secs}s" || echo "fuzzing: FAILED (exit $rc)"
exit $rc
