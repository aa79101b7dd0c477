#!/bin/bash
# timeout: 240
# Two real users (made here with useradd) on a cluster started by root as
# the README launches it: the servers enforce POSIX permissions on users
# the kernel proves (SO_PEERCRED over the metadata rank's local socket),
# through MPI-IO, ipvfs-ctl and the FUSE mount.  User B (in A's group)
# cannot read or write A's 0600 file, nor list A's 0700 directory, nor
# remove A's file from the sticky root; B reads A's 0644 and 0640 files;
# root does all; status works for B, shutdown is refused to B; A's files
# stay byte for byte as A wrote them; every refusal is in the server log.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/fuse_lib.sh"
. "$IPVFS_SRCDIR/test/security_lib.sh"
e2e_require
sec_require
E2E_NP=2
A=ipvfs-sa B=ipvfs-sb
work=$(mktemp -d "${TMPDIR:-/tmp}/t_security_users.XXXXXX") || ipvfs_fail "no scratch directory"
chmod 755 "$work"
SEC_HOME=$work FUSE_MNT=$work/mnt FUSE_LOG=$work/fuse.log
ipvfs_test_cleanup() {
    fuse_cleanup
    rm -rf "$work"
    sec_users_remove
}
sec_users_make "$A" "$B"
usermod -a -G "$A" "$B" || ipvfs_fail "cannot put $B in group $A"
cd "$work" && mkdir -m 777 out || ipvfs_fail "cannot enter $work"
as() { sec_as "$@"; }
ctl_as() { sec_as "$1" "$IPVFS_CTL_BIN" "${@:2}"; }
refused() {   # refused WHAT COMMAND...: the command fails with a permission error
    local what=$1 out
    shift
    out=$("$@" 2>&1) && ipvfs_fail "$what: allowed ($out)"
    grep -Eq "Permission denied|Operation not permitted|not the owner" <<<"$out" ||
        ipvfs_fail "$what: failed, but not for permissions: $out"
}

ipvfs_start_cluster 1 2
# users read the map (it holds no key); the key file stays root's
chmod 755 "$IPVFS_CLUSTER_DIR"
[ "$(stat -c %a "$IPVFS_CLUSTER_DIR/secret")" = 600 ] || ipvfs_fail "the key file is not 0600"
as "$B" cat "$IPVFS_CLUSTER_DIR/secret" >/dev/null 2>&1 && ipvfs_fail "$B reads the key file"

# -- A writes its files with ipvfs-ctl cp (modes as the local files')
head -c 300007 /dev/urandom >private.bin
head -c 200003 /dev/urandom >public.bin
head -c 100001 /dev/urandom >group.bin
chown "$A" private.bin public.bin group.bin
chmod 600 private.bin; chmod 644 public.bin; chmod 640 group.bin
ctl_as "$A" cp private.bin ipvfs:/private.bin || ipvfs_fail "$A: cp in"
ctl_as "$A" cp public.bin ipvfs:/public.bin || ipvfs_fail "$A: cp in"
ctl_as "$A" cp group.bin ipvfs:/group.bin || ipvfs_fail "$A: cp in"
mkdir -m 700 adir && cp -p private.bin adir/inner.bin && chown -R "$A" adir
ctl_as "$A" cp -r adir ipvfs:/adir || ipvfs_fail "$A: cp -r of a 0700 directory"
ctl_as "$A" stat /adir | grep -q "Mode: 0700" || ipvfs_fail "/adir is not 0700"
ctl_as "$A" stat /private.bin | grep -q "Owner: uid $(id -u "$A") gid $(id -g "$A")" ||
    ipvfs_fail "the file is not owned by $A: $(ctl_as "$A" stat /private.bin)"
ctl_as "$A" stat /private.bin | grep -q "Mode: 0600" || ipvfs_fail "private.bin is not 0600"

# -- ipvfs-ctl as B
refused "cp of A's 0600 file" ctl_as "$B" cp ipvfs:/private.bin out/b1.bin
ctl_as "$B" cp ipvfs:/public.bin out/b2.bin || ipvfs_fail "$B cannot read A's 0644 file"
cmp public.bin out/b2.bin || ipvfs_fail "$B read other bytes of public.bin"
ctl_as "$B" cp ipvfs:/group.bin out/b3.bin || ipvfs_fail "$B (in A's group) cannot read a 0640 file"
cmp group.bin out/b3.bin || ipvfs_fail "$B read other bytes of group.bin"
refused "ls of A's directory" ctl_as "$B" ls /adir
refused "overwrite of A's 0644 file" ctl_as "$B" cp -f private.bin ipvfs:/public.bin
refused "rm of A's file in the sticky root" ctl_as "$B" rm /public.bin
refused "shutdown by B" ctl_as "$B" shutdown
ctl_as "$B" status >/dev/null || ipvfs_fail "status refused to $B"
refused "chmod of A's file by B" ctl_as "$B" chmod 666 /public.bin
refused "chown of A's file to B by A" ctl_as "$A" chown "$(id -u "$B")" /public.bin
ctl_as "$A" chmod 600 /group.bin || ipvfs_fail "$A cannot chmod its own file"
refused "cp of a file A made 0600 with chmod" ctl_as "$B" cp ipvfs:/group.bin out/b4.bin
ctl_as "$A" chmod 640 /group.bin || ipvfs_fail "$A cannot chmod its own file back"
for bad in "chmod 8 /group.bin" "chmod 17777 /group.bin" "chown x /group.bin" "chown 1:y /group.bin" \
           "chmod 644"; do
    # shellcheck disable=SC2086
    ctl_as "$A" $bad 2>/dev/null
    [ $? = 2 ] || ipvfs_fail "ipvfs-ctl $bad: not a usage error (exit 2)"
done
ctl_as "$B" cp public.bin ipvfs:/bfile.bin || ipvfs_fail "$B cannot make its own file"
ctl_as "$B" stat /bfile.bin | grep -q "Owner: uid $(id -u "$B")" || ipvfs_fail "bfile is not B's"

echo "ok   ipvfs-ctl: $B refused A's 0600 file, 0700 directory, overwrite, sticky rm, shutdown, chmod; A's chown"
# -- MPI-IO as B
E2E_ON_HOST="runuser -u $B -- env HOME=$work IPVFS_MAP=$IPVFS_MAP"
# MPI_Abort may tear the job down before Hydra forwards the ranks' last
# words (seen under load): the server's log of the refusal is the proof
# then, the error text when it came through
refusals() { ipvfs_logs | grep -c "(kernel): permission denied: uid $(id -u "$B") may not open $1"; }
refused_mpi() {   # refused_mpi WHAT PATH OUTPUT REFUSALS_BEFORE
    [ -z "$3" ] || grep -q "Permission denied" <<<"$3" || ipvfs_fail "MPI-IO: $1: no permission error: $3"
    [ "$(refusals "$2")" -gt "$4" ] || ipvfs_fail "MPI-IO: $1: no refusal of $2 in the server log"
}
n=$(refusals /private.bin)
out=$(e2e_run 60 mpi_fcopy ipvfs:/private.bin out/m1.bin 2>&1) &&
    ipvfs_fail "MPI-IO: $B read A's 0600 file"
refused_mpi "read of A's 0600 file" /private.bin "$out" "$n"
e2e_run 60 mpi_fcopy ipvfs:/public.bin out/m2.bin >/dev/null || ipvfs_fail "MPI-IO: $B cannot read public.bin"
cmp public.bin out/m2.bin || ipvfs_fail "MPI-IO: $B read other bytes"
n=$(refusals /public.bin)
out=$(e2e_run 60 mpi_fcopy out/b2.bin ipvfs:/public.bin 2>&1) &&
    ipvfs_fail "MPI-IO: $B wrote A's 0644 file"
refused_mpi "write of A's 0644 file" /public.bin "$out" "$n"
E2E_ON_HOST=
echo "ok   MPI-IO: $B refused A's 0600 file and writes to A's 0644 file, reads 0644"

# -- root does all
"$IPVFS_CTL_BIN" cp ipvfs:/private.bin out/r1.bin || ipvfs_fail "root cannot read A's 0600 file"
cmp private.bin out/r1.bin || ipvfs_fail "root read other bytes"
"$IPVFS_CTL_BIN" ls /adir | grep -q inner.bin || ipvfs_fail "root cannot list A's directory"
"$IPVFS_CTL_BIN" chown "$(id -u "$B"):$(id -g "$B")" /bfile.bin || ipvfs_fail "root: chown"
"$IPVFS_CTL_BIN" stat /bfile.bin | grep -q "Owner: uid $(id -u "$B") gid $(id -g "$B")" ||
    ipvfs_fail "root's chown did not take"

# -- the FUSE mount (root's, allow_other): the kernel checks, as the servers would
if [ -c /dev/fuse ] && [ -x "$FUSE_BIN" ]; then
    mkdir "$FUSE_MNT"
    fuse_mount -o allow_other
    refused "FUSE: cat of A's 0600 file" as "$B" cat "$FUSE_MNT/private.bin"
    refused "FUSE: ls of A's 0700 directory" as "$B" ls "$FUSE_MNT/adir"
    refused "FUSE: rm of A's file" as "$B" rm -f "$FUSE_MNT/public.bin"
    as "$B" cat "$FUSE_MNT/public.bin" | cmp - public.bin || ipvfs_fail "FUSE: $B cannot read public.bin"
    cmp "$FUSE_MNT/private.bin" private.bin || ipvfs_fail "FUSE: root cannot read private.bin"
    fuse_cleanup
    echo "ok   FUSE: $B refused by the kernel's check, root reads"
else
    echo "note: no FUSE here, the mount's part skipped"
fi

# -- nothing of A's changed, and the servers logged each refusal
for f in private public group; do
    "$IPVFS_CTL_BIN" cp "ipvfs:/$f.bin" "out/final-$f.bin" || ipvfs_fail "root: cp $f"
    cmp "$f.bin" "out/final-$f.bin" || ipvfs_fail "$f.bin changed"
done
n=$(ipvfs_logs | grep -c "refused: .*uid $(id -u "$B") (kernel)")
[ "$n" -ge 6 ] || ipvfs_fail "only $n refusals of $B in the logs"
echo "ok   A's files unchanged; $n refusals of $B logged"
ipvfs_stop_cluster
echo "t_security_users: ok"
