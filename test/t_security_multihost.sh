#!/bin/bash
# timeout: 240
# Users on another host than the servers (network namespaces of this
# machine, test/hosts_lib.sh) prove themselves with MUNGE, as on a Slurm
# cluster: the servers run on node1 and node2 (2 I/O nodes x 1 target,
# --munge-socket of a munged every host reaches), the users' clients on
# node3 with the map from the metadata rank (IPVFS_MAP=HOST:PORT) and no
# key.  User A writes a 0600 and a 0644 file with ipvfs-ctl; user B, on
# node3, is refused the 0600 one through ipvfs-ctl and MPI-IO and reads
# the 0644 one byte for byte; the servers log B as MUNGE-proven; without
# munged B gets a clear error naming MUNGE and IPVFS_KEY; with
# --root-squash root proven by MUNGE is nobody, root with the key is root.
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/hosts_lib.sh"
. "$IPVFS_SRCDIR/test/multihost_lib.sh"
. "$IPVFS_SRCDIR/test/security_lib.sh"
e2e_require
hosts_require
sec_require
command -v munged >/dev/null || { echo "skip: no munged (Debian munge)"; exit 77; }
A=ipvfs-sa B=ipvfs-sb
work=$(mktemp -d "${TMPDIR:-/tmp}/t_security_mh.XXXXXX") || ipvfs_fail "no scratch directory"
chmod 755 "$work"
SEC_HOME=$work
ipvfs_test_cleanup() {
    sec_munged_stop
    rm -rf "$work"
    sec_users_remove
}
sec_users_make "$A" "$B"
cd "$work" && mkdir -m 777 out || ipvfs_fail "cannot enter $work"

# one munged for every host (its socket is a file all the namespaces see),
# as every node of a Slurm cluster runs one with the same key
sec_munged_start "$work"

hosts_up 3
mh_servers_on node1 node1:2,node2:2
ipvfs_start_cluster 2 1 --target-size 256M --meta-port "$MH_META_PORT" \
    --munge-socket "$SEC_MUNGE_SOCK" --root-squash
remote=node1:$MH_META_PORT
# USER on node3: no key, the map from the metadata rank, munged's socket
on3() {
    local u=$1
    shift
    mh_on node3 runuser -u "$u" -- env HOME="$work" IPVFS_MAP="$remote" \
        IPVFS_MUNGE_SOCKET="$SEC_MUNGE_SOCK" PATH="$PATH" "$@"
}

head -c 250001 /dev/urandom >private.bin && chmod 600 private.bin
head -c 180003 /dev/urandom >public.bin && chmod 644 public.bin
chown "$A" private.bin public.bin
on3 "$A" ipvfs-ctl cp private.bin ipvfs:/private.bin || ipvfs_fail "$A: cp in from node3"
on3 "$A" ipvfs-ctl cp public.bin ipvfs:/public.bin || ipvfs_fail "$A: cp in from node3"

out=$(on3 "$B" ipvfs-ctl cp ipvfs:/private.bin out/b1.bin 2>&1) &&
    ipvfs_fail "$B read A's 0600 file from node3"
grep -q "Permission denied" <<<"$out" || ipvfs_fail "no permission error: $out"
on3 "$B" ipvfs-ctl cp ipvfs:/public.bin out/b2.bin || ipvfs_fail "$B cannot read public.bin"
cmp public.bin out/b2.bin || ipvfs_fail "$B read other bytes from node3"
echo "ok   ipvfs-ctl on node3: MUNGE-proven users, permissions enforced"

lib=$E2E_ROMIO_LIB prog=$E2E_PROGS/mpi_fcopy
refusals() { ipvfs_logs | grep -c "uid $(id -u "$B") (munge): permission denied: uid $(id -u "$B") may not open /private.bin"; }
n=$(refusals)
out=$(on3 "$B" timeout 60 mpiexec -n 2 env LD_PRELOAD="$lib" "$prog" ipvfs:/private.bin \
    out/m1.bin 2>&1) && ipvfs_fail "MPI-IO on node3: $B read A's 0600 file"
# MPI_Abort may end the job before Hydra forwards the error (seen under
# load): then the server's log of the refusal is the proof
[ -z "$out" ] || grep -q "Permission denied" <<<"$out" || ipvfs_fail "MPI-IO: no permission error: $out"
[ "$(refusals)" -gt "$n" ] || ipvfs_fail "MPI-IO: no refusal of /private.bin to $B (munge) in the server log"
on3 "$B" timeout 60 mpiexec -n 2 env LD_PRELOAD="$lib" "$prog" ipvfs:/public.bin out/m2.bin \
    >/dev/null || ipvfs_fail "MPI-IO on node3: $B cannot read public.bin"
cmp public.bin out/m2.bin || ipvfs_fail "MPI-IO on node3: other bytes"
echo "ok   MPI-IO on node3 as $B: refused the 0600 file, read the 0644 one"

out=$(mh_on node3 runuser -u "$B" -- env HOME="$work" IPVFS_MAP="$remote" \
    IPVFS_MUNGE_SOCKET="$work/munge/none" ipvfs-ctl ls / 2>&1) &&
    ipvfs_fail "$B got in without munged: $out"
grep -q "MUNGE" <<<"$out" && grep -q "IPVFS_KEY" <<<"$out" ||
    ipvfs_fail "the error without munged names neither MUNGE nor IPVFS_KEY: $out"
echo "ok   without munged: $out"

# --root-squash: root proven by MUNGE is nobody; root with the key is root
out=$(on3 root ipvfs-ctl cp ipvfs:/private.bin out/s.bin 2>&1) &&
    ipvfs_fail "--root-squash: root (MUNGE) read A's 0600 file"
grep -q "uid 65534" <<<"$out" || ipvfs_fail "--root-squash: not refused as nobody: $out"
echo "ok   --root-squash: root proven by MUNGE is refused as uid 65534"
ipvfs_logs | grep -q "refused: .*uid $(id -u "$B") (munge)" || ipvfs_fail "no refusal of $B (munge) logged"
ipvfs_ctl cp ipvfs:/private.bin "$work/out/r.bin" || ipvfs_fail "root (the key, on node1): cp"
cmp private.bin out/r.bin || ipvfs_fail "A's file changed"
ipvfs_stop_cluster
echo "t_security_multihost: ok"
