#!/bin/bash
# timeout: 240
# A file over 4 GiB (sparse: data at its start, across the 4 GiB line and
# at its end) through ipvfs-ctl cp in and out: exact size, exact bytes,
# holes kept on the way out (MPI-IO beyond 4 GiB: t_e2e_io --large).
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/t_cp_large.XXXXXX") || ipvfs_fail "no scratch directory"
ipvfs_test_cleanup() { rm -rf "$work"; }
cd "$work" || ipvfs_fail "cannot enter $work"

size=$(((4 << 30) + (1 << 20) + 12345))
truncate -s "$size" big.bin
head -c 65536 /dev/urandom | dd of=big.bin conv=notrunc status=none
head -c 1048576 /dev/urandom |
    dd of=big.bin bs=65536 iflag=fullblock oflag=seek_bytes seek=$(((4 << 30) - 524288)) conv=notrunc status=none
printf 'the end' | dd of=big.bin bs=1 seek=$((size - 7)) conv=notrunc status=none

ipvfs_start_cluster 2 1
ipvfs-ctl cp big.bin ipvfs:/large/big.bin || ipvfs_fail "cp of a 4 GiB+ file in failed"
ipvfs-ctl stat /large/big.bin >stat.txt || ipvfs_fail "stat failed"
grep -q "^  Size: $size\$" stat.txt || ipvfs_fail "wrong size in iPVFS: $(cat stat.txt)"
ipvfs-ctl cp ipvfs:/large/big.bin out.bin || ipvfs_fail "cp of a 4 GiB+ file out failed"
[ "$(stat -c %s out.bin)" = "$size" ] || ipvfs_fail "the copy out has $(stat -c %s out.bin) bytes"
cmp big.bin out.bin || ipvfs_fail "the 4 GiB+ file came out different"
[ "$(du -k out.bin | cut -f1)" -lt 65536 ] || ipvfs_fail "the holes were filled on the way out"
ipvfs_stop_cluster
echo "PASS t_cp_large"
