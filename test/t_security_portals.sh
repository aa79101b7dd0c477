#!/bin/bash
# The target ranks' iSCSI portals are closed to strangers: each takes only
# its I/O node, by mutual CHAP with per-target secrets derived from the
# cluster key (common/auth.h, backend/server/server.c).  Against a target
# rank's portal, run as user nobody as the issue found it:
#   iscsi-ls -s (discovery and LUNs) and iscsi-inq without CHAP: refused;
#   iscsi-inq with the I/O node's name and a wrong secret: refused;
#   iscsi-inq with another target's secret: refused;
#   iscsi-inq with the right secret but one-way CHAP: refused, as mutual
#   CHAP is required (the log shows that its response was right, so the
#   refusals above are CHAP's, not a broken portal);
# each refusal logged by the target.  The volume serves MPI-IO byte-exact
# throughout, and a rebuild of a member onto its own target rank (which
# needs the derived CHAP again) completes.
# timeout: 120
set -u
. "$IPVFS_SRCDIR/test/lib.sh"
. "$IPVFS_SRCDIR/test/mpi/e2e_lib.sh"
. "$IPVFS_SRCDIR/test/raid_lib.sh"
e2e_require
for c in iscsi-ls iscsi-inq runuser; do
    command -v "$c" >/dev/null || { echo "skip: no $c (libiscsi-bin)"; exit 77; }
done
export E2E_NP=2

ipvfs_start_cluster 1 3 --target-size 64M --no-bind
e2e_run 60 e2e_persist write ipvfs:/p/1 1 >/dev/null || ipvfs_fail "write /p/1"

# member 0: target rank 1's portal and name, the I/O node's name, and the
# secrets the key gives (as auth_chap_secret computes them)
read -r portal iqn other initiator secret wrong < <(python3 - "$IPVFS_CLUSTER_DIR" <<'PYEOF'
import hashlib, hmac, json, subprocess, sys
d = sys.argv[1]
st = json.loads(subprocess.run(["ipvfs-ctl", "status", "--json"], capture_output=True,
                               check=True).stdout)
urls = [m["url"] for m in st["ranks"][0]["volume"]["members"]]
portal, iqn = urls[0][len("iscsi://"):].split("/")[:2]
other = urls[1][len("iscsi://"):].split("/")[1]
key = open(d + "/secret", "rb").read()
def chap(who, target):
    return hmac.new(key, b"iPVFS CHAP " + who + b"\0" + target.encode(), hashlib.sha256).digest()[:16].hex()
initiator = iqn.rsplit(".t", 1)[0] + ".io0"
print(portal, iqn, other, initiator, chap(b"initiator", iqn), chap(b"initiator", other))
PYEOF
) || ipvfs_fail "cannot read the members from status"
echo "target rank 1: $iqn at $portal; its I/O node: $initiator"

refused() {   # refused WHAT CMD...: CMD, as nobody, must fail
    local what=$1
    shift
    if runuser -u nobody -- timeout 20 "$@" >"$IPVFS_CLUSTER_DIR/probe.out" 2>&1; then
        cat "$IPVFS_CLUSTER_DIR/probe.out"
        ipvfs_fail "$what: the portal let it in"
    fi
    echo "refused: $what ($(tail -n 1 "$IPVFS_CLUSTER_DIR/probe.out"))"
}
refused "iscsi-ls (discovery) without CHAP" iscsi-ls "iscsi://$portal"
refused "iscsi-ls -s without CHAP" iscsi-ls -s "iscsi://$portal"
refused "iscsi-inq without CHAP" iscsi-inq "iscsi://$portal/$iqn/0"
refused "iscsi-inq with a wrong secret" \
    iscsi-inq -i "$initiator" "iscsi://$initiator%0123456789abcdef0123456789abcdef@$portal/$iqn/0"
refused "iscsi-inq with another target's secret" \
    iscsi-inq -i "$initiator" "iscsi://$initiator%$wrong@$portal/$iqn/0"
ipvfs_wait_log 'target\[?.*CHAP: wrong response|CHAP: unknown name|login rejected' ||
    ipvfs_fail "the target logged no refused login"
ipvfs_logs | grep -E 'CHAP: wrong response|login rejected' | head -3

# The right derived secret passes the response check; the target then
# wants to check its own answer too (mutual CHAP), which iscsi-inq does
# not ask for: refused for that, and only that.  (The I/O node, which does
# both, serves the volume all along.)
refused "iscsi-inq with the right secret but one-way CHAP" \
    iscsi-inq -i "$initiator" "iscsi://$initiator%$secret@$portal/$iqn/0"
ipvfs_wait_log 'CHAP: mutual authentication required' ||
    ipvfs_fail "the right secret was not taken as right (no 'mutual authentication required')"
[ "$(ipvfs_logs | grep -c 'CHAP: wrong response')" = 2 ] ||
    ipvfs_fail "the right secret was logged as a wrong response"
echo "the derived secret passes the CHAP check; one-way CHAP is still refused"

# the cluster itself goes on, and a member rebuilt onto its own target
# rank logs in with the derived CHAP again
e2e_run 60 e2e_persist verify ipvfs:/p/1 1 >/dev/null || ipvfs_fail "/p/1 differs"
ipvfs-ctl rebuild 0 1 || ipvfs_fail "rebuild of member 1 refused"
wait_status 60 'assert vol["missing"] == 0 and r0["state"] == "serving", vol' ||
    ipvfs_fail "member 1 did not come back after its rebuild"
e2e_run 60 e2e_persist verify ipvfs:/p/1 1 >/dev/null || ipvfs_fail "/p/1 differs after the rebuild"
echo "member 1 rebuilt onto its own target rank; /p/1 byte-exact"
ipvfs_stop_cluster
echo "PASS"
