#!/bin/bash
# timeout: 900
# ipvfs-server under AddressSanitizer (and LeakSanitizer): builds the server
# and ipvfs-ctl a second time with -fsanitize=address in BUILDDIR/asan
# (kept, so later runs only rebuild what changed), runs a 1 I/O node x 2
# targets RAID-1 cluster through the bad-input client of t_server_badinput.sh, the
# namespace commands, a scrub and a clean shutdown, and fails on any sanitizer
# report or unclean exit.  Leaks inside MPI/UCX/hwloc (not ours) are
# suppressed.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"

asan=$IPVFS_BUILDDIR/asan
mkdir -p "$asan"
echo 'int main(void) { return 0; }' >"$asan/probe.c"
gcc -fsanitize=address "$asan/probe.c" -o "$asan/probe" 2>/dev/null || {
    echo "no AddressSanitizer runtime for gcc"
    exit 77
}
if [ ! -f "$asan/Makefile" ]; then
    (cd "$asan" && "$IPVFS_SRCDIR/configure" -q \
        CFLAGS="-g -O1 -fsanitize=address -fno-omit-frame-pointer" \
        LDFLAGS="-fsanitize=address") >"$asan/configure.log" 2>&1 ||
        ipvfs_fail "configure of the ASan build failed: $(tail -n 5 "$asan/configure.log")"
fi
# Without -Werror: -O1 brings other warnings than the main build's, which
# polices them; this build is about what the sanitizer finds at run time.
make -C "$asan" -j1 WARN_CFLAGS="-Wall -Wextra -Wno-unused-parameter" \
    backend/ipvfs-server tools/ipvfs-ctl >"$asan/build.log" 2>&1 ||
    ipvfs_fail "ASan build failed: $(tail -n 20 "$asan/build.log")"

cat >"$asan/lsan.supp" <<'EOF'
leak:libmpi
leak:libucs
leak:libucp
leak:libuct
leak:libhwloc
leak:libpmi
leak:MPI_Init
EOF
export ASAN_OPTIONS=abort_on_error=0:exitcode=66:detect_leaks=1
export LSAN_OPTIONS=suppressions=$asan/lsan.supp:print_suppressions=0
IPVFS_SERVER_BIN=$asan/backend/ipvfs-server
IPVFS_CTL_BIN=$asan/tools/ipvfs-ctl
export PATH=$asan/tools:$PATH

ipvfs_start_cluster 1 2 --raid 1 --target-size 64M --no-bind
IPVFS_BADINPUT_MAP=$IPVFS_MAP bash "$IPVFS_SRCDIR/test/t_server_badinput.sh" ||
    ipvfs_fail "bad-input checks failed under ASan"
ipvfs-ctl mkdir /asan/dir || ipvfs_fail "mkdir"
[ "$(ipvfs-ctl ls /asan)" = "dir/" ] || ipvfs_fail "ls"
ipvfs-ctl rm /asan/dir || ipvfs_fail "rm"
ipvfs-ctl stats --json >/dev/null || ipvfs_fail "stats"
# A scrub runs the iRAID's request rounds to their end, empty ones included
# (a round that ended inside its own submission was once written after free).
ipvfs-ctl scrub >/dev/null || ipvfs_fail "scrub"
# Sequential 1 MiB reads (cp's) take read-ahead's blocks as loans: the
# replies go out from the L1's slots, which come back when written.
head -c 40M /dev/urandom >"$IPVFS_CLUSTER_DIR/big.in" || ipvfs_fail "no scratch space"
ipvfs-ctl cp "$IPVFS_CLUSTER_DIR/big.in" ipvfs:/asan/big || ipvfs_fail "cp in"
ipvfs-ctl cp ipvfs:/asan/big "$IPVFS_CLUSTER_DIR/big.out" || ipvfs_fail "cp out"
cmp "$IPVFS_CLUSTER_DIR/big.in" "$IPVFS_CLUSTER_DIR/big.out" || ipvfs_fail "cp out: wrong bytes"
ipvfs_stop_cluster
if ipvfs_logs | grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|SUMMARY: AddressSanitizer"; then
    ipvfs_fail "sanitizer report in the server log"
fi
lent=$(ipvfs_logs | sed -n 's/.*read (\([0-9]*\) lent to replies).*/\1/p' | head -n 1)
[ "${lent:-0}" -gt 0 ] || ipvfs_fail "no read-ahead block was lent to a reply (${lent:-no log line})"
echo "read-ahead blocks lent to replies: $lent"
echo "t_server_asan: ok"
