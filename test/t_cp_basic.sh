#!/bin/bash
# ipvfs-ctl cp, stat and mv against MPI-IO on a 2 I/O node x 1 target
# cluster: a file written by an MPI program through ipvfs: copied out byte
# for byte; a local tree (spaces and non-ASCII in names, a 0-byte file, a
# sparse file, zeros inside data) copied in with -r and read back through
# MPI; holes staying holes on the way out; overwrite refused without -f
# and exact sizes with it; standard input and output; stat's layout; mv
# without and with -f (the replaced file's datafiles deleted); symbolic
# links inside a tree skipped with a warning, not followed.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
e2e_require
E2E_NP=2
work=$(mktemp -d "${TMPDIR:-/tmp}/t_cp.XXXXXX") || ipvfs_fail "no scratch directory"
ipvfs_test_cleanup() { rm -rf "$work"; }
cd "$work" || ipvfs_fail "cannot enter $work"
fcopy() { e2e_run 60 mpi_fcopy "$@" >/dev/null || ipvfs_fail "mpi_fcopy $* failed"; }
size_of() { stat -c %s "$1"; }

ipvfs_start_cluster 2 1

# -- an MPI program writes, cp copies out
head -c 5000001 /dev/urandom >expected.bin
fcopy expected.bin ipvfs:/run1/out.bin 1000000
ipvfs-ctl cp ipvfs:/run1/out.bin got.bin || ipvfs_fail "cp out failed"
cmp expected.bin got.bin || ipvfs_fail "cp out: bytes differ from what MPI wrote"

# -- a local tree copied in with -r, read back through MPI
mkdir -p "tree/sub dir/ünïcødé" tree/empty
cp expected.bin "tree/sub dir/ünïcødé/data file.bin"
: >"tree/zero bytes"
printf 'tail' >tree/small
truncate -s 20M tree/sparse
printf 'middle' | dd of=tree/sparse bs=1 seek=7340032 conv=notrunc status=none
{ head -c 100000 /dev/urandom; head -c 3000000 /dev/zero; head -c 77 /dev/urandom; } >tree/zeros-inside
ipvfs-ctl cp -r tree ipvfs:/in || ipvfs_fail "cp -r in failed"
[ "$(ipvfs-ctl ls /in | sort | tr '\n' ' ')" = "empty/ small sparse sub dir/ zero bytes zeros-inside " ] ||
    ipvfs_fail "cp -r: wrong names in /in: $(ipvfs-ctl ls /in | tr '\n' ' ')"
# ls, mkdir and rm take the ipvfs: form as cp does
[ "$(ipvfs-ctl ls ipvfs:/in | sort | tr '\n' ' ')" = "$(ipvfs-ctl ls /in | sort | tr '\n' ' ')" ] ||
    ipvfs_fail "ls ipvfs:/in differs from ls /in"
ipvfs-ctl mkdir ipvfs:/in/made || ipvfs_fail "mkdir ipvfs:/in/made"
ipvfs-ctl ls /in | grep -qx 'made/' || ipvfs_fail "mkdir ipvfs:/in/made made nothing"
ipvfs-ctl rm ipvfs:/in/made || ipvfs_fail "rm ipvfs:/in/made"
ipvfs-ctl ls /in | grep -qx 'made/' && ipvfs_fail "rm ipvfs:/in/made left it"
out=$(ipvfs-ctl ls in 2>&1) && ipvfs_fail "ls of a relative path worked: $out"
echo "$out" | grep -q "must be absolute" || ipvfs_fail "ls of a relative path: $out"
for f in "sub dir/ünïcødé/data file.bin" "zero bytes" small sparse zeros-inside; do
    rm -f back.bin
    fcopy "ipvfs:/in/$f" back.bin
    cmp "tree/$f" back.bin || ipvfs_fail "MPI read of ipvfs:/in/$f differs from the local file"
done

# -- holes stay holes on the way out; sizes are exact
ipvfs-ctl cp ipvfs:/in/sparse sparse.out || ipvfs_fail "cp of the sparse file out failed"
cmp tree/sparse sparse.out || ipvfs_fail "sparse file differs"
[ "$(du -k sparse.out | cut -f1)" -lt 1024 ] ||
    ipvfs_fail "the 20 MiB sparse file came out with $(du -k sparse.out | cut -f1) KiB allocated"
ipvfs-ctl cp ipvfs:/in/zeros-inside zi.out && cmp tree/zeros-inside zi.out ||
    ipvfs_fail "a file with zeros inside its data differs"
ipvfs-ctl cp -r ipvfs:/in tree.out || ipvfs_fail "cp -r out failed"
diff -r tree tree.out || ipvfs_fail "the tree copied back differs"

# -- symbolic links inside a tree: skipped with a warning, never followed
# (a link to .. would loop), the rest copied
mkdir linktree && printf 'real' >linktree/real && ln -s .. linktree/loop &&
    ln -s ../tree/small linktree/tofile || ipvfs_fail "cannot make the link tree"
ipvfs-ctl cp -r linktree ipvfs:/links 2>err.txt || ipvfs_fail "cp -r of a tree with links failed: $(cat err.txt)"
[ "$(grep -c 'skipping symbolic link' err.txt)" = 2 ] || ipvfs_fail "no warning per link: $(cat err.txt)"
[ "$(ipvfs-ctl ls /links | tr '\n' ' ')" = "real " ] ||
    ipvfs_fail "cp -r followed links: $(ipvfs-ctl ls /links | tr '\n' ' ')"

# -- overwriting: refused without -f (nothing changed), exact with -f
printf 'short' >short.txt
ipvfs-ctl cp short.txt ipvfs:/run1/out.bin 2>err.txt && ipvfs_fail "cp over an iPVFS file without -f succeeded"
grep -q 'exists (-f overwrites it)' err.txt || ipvfs_fail "no clear refusal: $(cat err.txt)"
ipvfs-ctl cp ipvfs:/run1/out.bin got.bin 2>err.txt && ipvfs_fail "cp over a local file without -f succeeded"
cmp expected.bin got.bin || ipvfs_fail "a refused cp changed the local file"
ipvfs-ctl cp -f short.txt ipvfs:/run1/out.bin || ipvfs_fail "cp -f in failed"
ipvfs-ctl cp -f ipvfs:/run1/out.bin got.bin || ipvfs_fail "cp -f out failed"
cmp short.txt got.bin || ipvfs_fail "after cp -f the file is not exactly the new one"
ipvfs-ctl cp -f ipvfs:/run1/out.bin ipvfs:/run1//out.bin 2>err.txt && ipvfs_fail "cp -f of a file onto itself succeeded"
ipvfs-ctl cp ipvfs:/run1/out.bin - | cmp - short.txt || ipvfs_fail "cp -f onto itself damaged the file"
ipvfs-ctl cp ipvfs:/run1/out.bin ipvfs:/run1/dup.bin && ipvfs-ctl cp ipvfs:/run1/dup.bin - | cmp - short.txt ||
    ipvfs_fail "cp from iPVFS to iPVFS differs"

# -- standard input and output
head -c 3000000 /dev/urandom >stream.bin
ipvfs-ctl cp - ipvfs:/stream.bin <stream.bin || ipvfs_fail "cp - failed"
ipvfs-ctl cp ipvfs:/stream.bin - | cmp - stream.bin || ipvfs_fail "cp to - differs"
ipvfs-ctl cp ipvfs:/in/sparse - | cmp - tree/sparse || ipvfs_fail "sparse file to - differs"
ipvfs-ctl cp ipvfs:/in/small /dev/null || ipvfs_fail "cp to /dev/null (a device, not refused) failed"

# -- stat: size, mode, one line per datafile
ipvfs-ctl stat "ipvfs:/in/sub dir/ünïcødé/data file.bin" >stat.txt || ipvfs_fail "stat failed"
grep -q '^  Size: 5000001$' stat.txt || ipvfs_fail "stat: wrong size: $(cat stat.txt)"
grep -q '^  Mode: 0644 ' stat.txt || ipvfs_fail "stat: wrong mode: $(cat stat.txt)"
[ "$(grep -c '^Datafile [01]: I/O node [01] ' stat.txt)" = 2 ] || ipvfs_fail "stat: no layout: $(cat stat.txt)"
ipvfs-ctl stat ipvfs:/nope 2>/dev/null && ipvfs_fail "stat of a missing name succeeded"

# -- mv: refused over an existing name, -f replaces it and its datafiles go
ipvfs-ctl mv /stream.bin /run1/out.bin 2>err.txt && ipvfs_fail "mv over a file without -f succeeded"
grep -q 'exists (-f replaces it)' err.txt || ipvfs_fail "mv: no clear refusal: $(cat err.txt)"
ipvfs-ctl mv -f ipvfs:/stream.bin ipvfs:/run1/out.bin || ipvfs_fail "mv -f failed"
ipvfs-ctl cp ipvfs:/run1/out.bin - | cmp - stream.bin || ipvfs_fail "after mv -f the content is not the moved file's"
ipvfs-ctl stat /stream.bin 2>/dev/null && ipvfs_fail "the source of mv still exists"
ipvfs-ctl gc | grep -q 'no removed file has datafiles left' || ipvfs_fail "the replaced file left datafiles"
ipvfs-ctl mv /in /run1 || ipvfs_fail "mv of a directory into a directory failed"
ipvfs-ctl stat "/run1/in/zero bytes" >/dev/null || ipvfs_fail "mv did not move the tree into /run1"

ipvfs_stop_cluster
echo "PASS t_cp_basic"
