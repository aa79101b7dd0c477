#!/bin/bash
# df: ipvfs-ctl df (each I/O node's datafile store and the total) and df(1)
# on ipvfs-fuse (statfs sums the same DF_STATFS replies) on a 2 I/O node x
# 1 target cluster: a 24 MiB file written through the mount takes 24 MiB
# of the stores, spread over both I/O nodes; removing it gives the space
# back once the store commits the removal (the next sync); the mount's
# size and free space are ipvfs-ctl df's totals.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/fuse_lib.sh"
fuse_require
work=$(mktemp -d "${TMPDIR:-/tmp}/t_fuse_df.XXXXXX") || ipvfs_fail "no scratch directory"
FUSE_MNT=$work/mnt FUSE_LOG=$work/fuse.log
ipvfs_test_cleanup() {
    fuse_cleanup
    rm -rf "$work"
}
mkdir "$FUSE_MNT" || ipvfs_fail "no mount point"

# df_field ROW COLUMN: a number of ipvfs-ctl df's row (0, 1, total);
# columns: 2 size_MiB, 3 used_MiB, 4 free_MiB, 6 datafiles
df_field() { ipvfs-ctl df | awk -v r="$1" -v c="$2" '$1 == r { print $c }'; }

ipvfs_start_cluster 2 1
ipvfs-ctl df >"$work/df0.txt" || ipvfs_fail "ipvfs-ctl df failed"
[ "$(awk 'NR > 1' "$work/df0.txt" | wc -l)" = 3 ] || ipvfs_fail "df: not 2 I/O nodes and a total: $(cat "$work/df0.txt")"
size0=$(df_field total 2) used0=$(df_field total 3) free0=$(df_field total 4)
[ "$size0" -gt 0 ] && [ "$size0" = "$(($(df_field 0 2) + $(df_field 1 2)))" ] ||
    ipvfs_fail "df: the total size is not the sum: $(cat "$work/df0.txt")"
[ "$((used0 + free0))" -le "$size0" ] || ipvfs_fail "df: used + free exceed the size"

fuse_mount
head -c 24M /dev/urandom >"$FUSE_MNT/big" || ipvfs_fail "writing through the mount failed"
used1=$(df_field total 3)
[ "$((used1 - used0))" -ge 24 ] && [ "$((used1 - used0))" -le 26 ] ||
    ipvfs_fail "df: 24 MiB written, used grew from $used0 to $used1 MiB"
[ "$(df_field 0 3)" -ge 11 ] && [ "$(df_field 1 3)" -ge 11 ] ||
    ipvfs_fail "df: the file is not on both I/O nodes: $(ipvfs-ctl df)"
[ "$(df_field total 6)" -ge 2 ] || ipvfs_fail "df: no datafiles counted: $(ipvfs-ctl df)"

# df(1) on the mount: 1 MiB blocks, the same totals
read -r msize mused mfree < <(df -B1M --output=size,used,avail "$FUSE_MNT" | tail -1)
[ "$msize" = "$(df_field total 2)" ] && [ "$mfree" = "$(df_field total 4)" ] ||
    ipvfs_fail "df on the mount ($msize size, $mfree free) is not ipvfs-ctl df's: $(ipvfs-ctl df)"

# removing gives the blocks back at the store's next commit (within a second)
rm "$FUSE_MNT/big" || ipvfs_fail "rm through the mount failed"
for ((i = 0; i < 100; i++)); do
    [ "$(df_field total 3)" -le "$((used0 + 1))" ] && break
    sleep 0.1
done
[ "$(df_field total 3)" -le "$((used0 + 1))" ] ||
    ipvfs_fail "df: the removed file's space did not come back: $(ipvfs-ctl df)"

ipvfs-ctl df extra 2>/dev/null; [ $? = 2 ] || ipvfs_fail "df with an argument: not a usage error"
fusermount3 -u "$FUSE_MNT" || ipvfs_fail "unmount failed"
fuse_wait 20 || ipvfs_fail "ipvfs-fuse did not exit cleanly"
ipvfs_stop_cluster
