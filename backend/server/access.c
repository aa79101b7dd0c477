/* Who is behind a connection and what it may ask: the rules are in
 * access.h. */
#include "backend/server/access.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/server/server.h"
#include "common/auth.h"
#include "common/log.h"

#define NOBODY_ID 65534u

/* What an op needs, by class. */
enum op_class {
    CLASS_OPEN,      /* before AUTH too */
    CLASS_AUTHED,    /* anyone who finished AUTH */
    CLASS_USER,      /* a proven user or the key */
    CLASS_DATA,      /* the key, or a capability with the op's right */
    CLASS_ADMIN,     /* the key, or a proven root */
};

static enum op_class op_class(uint16_t op)
{
    switch (op) {
    case IPVFS_OP_HELLO:
    case IPVFS_OP_AUTH:
    case IPVFS_OP_MAP:
    case IPVFS_OP_STATUS:
        return CLASS_OPEN;
    case IPVFS_OP_DF_STATFS:
    case IPVFS_OP_CAP:
    case IPVFS_OP_QOS_CLASS:
    case IPVFS_OP_QOS_STATUS:
        return CLASS_AUTHED;
    case IPVFS_OP_READ:
    case IPVFS_OP_WRITE:
    case IPVFS_OP_DF_GETSIZE:
    case IPVFS_OP_DF_TRUNCATE:
    case IPVFS_OP_DF_SYNC:
    case IPVFS_OP_DF_REMOVE:
    case IPVFS_OP_DF_PREALLOC:
        return CLASS_DATA;
    case IPVFS_OP_SHUTDOWN:
    case IPVFS_OP_SCRUB:
    case IPVFS_OP_REBUILD:
    case IPVFS_OP_QOS_SET:
        return CLASS_ADMIN;
    default:
        return CLASS_USER;   /* the metadata rank's ops */
    }
}

/* The right a data op needs (0: any right on the handle). */
static uint32_t data_right(uint16_t op)
{
    switch (op) {
    case IPVFS_OP_READ:
        return IPVFS_CAP_READ;
    case IPVFS_OP_WRITE:
    case IPVFS_OP_DF_TRUNCATE:
    case IPVFS_OP_DF_PREALLOC:
        return IPVFS_CAP_WRITE;
    case IPVFS_OP_DF_REMOVE:
        return IPVFS_CAP_REMOVE;
    default:
        return 0;
    }
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *op_name(uint16_t op)
{
    return op == IPVFS_OP_READ ? "READ" : op == IPVFS_OP_WRITE ? "WRITE" : "a datafile request";
}

/* A data request of a connection without the key: one hash lookup. */
static int check_data(const struct access *a, uint16_t op, const uint8_t *body,
                      uint64_t body_len, char *msg, size_t msglen)
{
    uint32_t right = data_right(op);
    uint64_t handle, v;

    if (body_len < sizeof(handle)) {
        snprintf(msg, msglen, "body too short for a handle");
        return EINVAL;
    }
    memcpy(&handle, body, sizeof(handle));
    if (op == IPVFS_OP_DF_SYNC && handle == 0 && a->caps.count > 0)
        return 0;
    if ((v = u64map_get(&a->caps, handle)) == U64MAP_NONE) {
        snprintf(msg, msglen, "%s of handle %llu without a capability: open the file through "
                 "the metadata rank first", op_name(op), (unsigned long long)handle);
        return EACCES;
    }
    if ((int64_t)(v >> 3) <= wall_ms()) {
        snprintf(msg, msglen, "the capability for handle %llu expired: open the file again",
                 (unsigned long long)handle);
        return EKEYEXPIRED;
    }
    if (right && !(v & right)) {
        snprintf(msg, msglen, "%s of handle %llu: the capability grants no %s", op_name(op),
                 (unsigned long long)handle, right == IPVFS_CAP_READ ? "reading"
                 : right == IPVFS_CAP_WRITE ? "writing" : "removal");
        return EACCES;
    }
    return 0;
}

int access_check(struct server *srv, const struct access *a, uint16_t op, const uint8_t *body,
                 uint64_t body_len, char *msg, size_t msglen)
{
    enum op_class cls = op_class(op);
    char who[64];

    (void)srv;
    if (cls == CLASS_OPEN || a->state == ACCESS_KEY)
        return 0;
    if (!access_authed(a)) {
        snprintf(msg, msglen, "HELLO and AUTH must come first");
        return EACCES;
    }
    access_describe(a, who, sizeof(who));
    switch (cls) {
    case CLASS_AUTHED:
        return 0;
    case CLASS_DATA:
        return check_data(a, op, body, body_len, msg, msglen);
    case CLASS_ADMIN:
        if (a->state == ACCESS_USER && a->cred.uid == 0)
            return 0;
        snprintf(msg, msglen, "only root or a holder of the cluster key may do this; this "
                 "connection is %s", who);
        return EPERM;
    default:
        if (a->state == ACCESS_USER)
            return 0;
        snprintf(msg, msglen, "this connection proved no user (%s): the metadata rank serves "
                 "users proven by the kernel (same host) or MUNGE", who);
        return EACCES;
    }
}

const struct perm_cred *access_cred(const struct access *a)
{
    return a->state == ACCESS_KEY ? NULL : &a->cred;
}

void access_describe(const struct access *a, char *out, size_t outlen)
{
    if (a->state == ACCESS_USER)
        snprintf(out, outlen, "uid %u (%s)", a->cred.uid, a->how);
    else
        snprintf(out, outlen, "%s", a->state == ACCESS_KEY ? "the cluster key"
                 : a->state == ACCESS_NOBODY ? "nobody" : "not authenticated");
}

void access_challenge(struct server *srv, struct access *a, uint32_t client_id,
                      const uint8_t nonce_c[IPVFS_NONCE_LEN],
                      const uint8_t nonce_s[IPVFS_NONCE_LEN])
{
    a->state = ACCESS_CHALLENGED;
    a->client_id = client_id;
    memcpy(a->nonce_c, nonce_c, IPVFS_NONCE_LEN);
    memcpy(a->nonce_s, nonce_s, IPVFS_NONCE_LEN);
    a->next_challenged = srv->challenged;
    srv->challenged = a;
}

static void unlist(struct server *srv, struct access *a)
{
    for (struct access **pp = &srv->challenged; *pp; pp = &(*pp)->next_challenged) {
        if (*pp == a) {
            *pp = a->next_challenged;
            a->next_challenged = NULL;
            return;
        }
    }
}

void access_user(const struct server *srv, uint32_t uid, uint32_t gid, const uint32_t *groups,
                 uint32_t ngroups, struct perm_cred *out)
{
    memset(out, 0, sizeof(*out));
    out->uid = uid;
    out->gid = gid;
    if (groups) {
        out->ngroups = ngroups < PERM_MAX_GROUPS ? ngroups : PERM_MAX_GROUPS;
        memcpy(out->groups, groups, out->ngroups * sizeof(*groups));
    } else {
        struct passwd pw, *found = NULL;
        gid_t list[PERM_MAX_GROUPS];
        int n = PERM_MAX_GROUPS;
        char buf[4096];

        /* MUNGE vouches uid and gid only: the groups are the user database's */
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found &&
            getgrouplist(found->pw_name, gid, list, &n) >= 0)
            for (int i = 0; i < n; i++)
                out->groups[out->ngroups++] = list[i];
    }
    if (srv->opts.root_squash && uid == 0) {
        out->uid = out->gid = NOBODY_ID;
        out->ngroups = 0;
    }
}

static int auth_key(const struct server *srv, struct access *a, const struct ipvfs_auth_req *req,
                    char *msg, size_t msglen)
{
    uint8_t want[IPVFS_PROOF_LEN];

    auth_client_proof(srv->secret, a->nonce_s, a->nonce_c, a->client_id, want);
    if (!auth_proof_equal(req->proof, want)) {
        snprintf(msg, msglen, "wrong proof of the cluster key");
        return EACCES;
    }
    a->state = ACCESS_KEY;
    a->how = "key";
    return 0;
}

int access_auth(struct server *srv, struct access *a, const struct ipvfs_auth_req *req,
                const uint8_t *cred, size_t cred_len, char *msg, size_t msglen)
{
    uint32_t uid, gid;
    int rc = 0;

    unlist(srv, a);
    switch (req->method) {
    case IPVFS_AUTH_KEY:
        return auth_key(srv, a, req, msg, msglen);
    case IPVFS_AUTH_KERNEL:
        if (!a->vouched) {
            snprintf(msg, msglen, "AUTH KERNEL without this connection's nonce on the rank's "
                     "local socket (a client on another host must use MUNGE)");
            return EACCES;
        }
        a->how = "kernel";
        break;
    case IPVFS_AUTH_MUNGE:
        if ((rc = access_munge_verify(srv, a, cred, cred_len, &uid, &gid, msg, msglen)) != 0)
            return rc;
        access_user(srv, uid, gid, NULL, 0, &a->cred);
        a->how = "munge";
        break;
    case IPVFS_AUTH_NONE:
        a->state = ACCESS_NOBODY;
        a->how = "none";
        return 0;
    default:
        snprintf(msg, msglen, "AUTH method %u unknown", req->method);
        return EINVAL;
    }
    a->state = ACCESS_USER;
    return 0;
}

void access_forget(struct server *srv, struct access *a)
{
    unlist(srv, a);
    u64map_free(&a->caps);
}

void access_grant(const struct server *srv, const struct access *a, uint64_t handle,
                  uint32_t rights, struct ipvfs_cap *out)
{
    memset(out, 0, sizeof(*out));
    out->handle = handle;
    out->rights = rights & IPVFS_CAP_ALL;
    out->uid = a->state == ACCESS_USER ? a->cred.uid : 0;
    out->expires_ms = wall_ms() + (int64_t)srv->opts.cap_lifetime_s * 1000;
    auth_cap_mac(srv->secret, out, out->mac);
}

int access_present(const struct server *srv, struct access *a, const struct ipvfs_cap *cap,
                   char *msg, size_t msglen)
{
    uint8_t want[IPVFS_PROOF_LEN];
    uint32_t rights;
    uint64_t old;
    int64_t exp;

    auth_cap_mac(srv->secret, cap, want);
    if (!auth_proof_equal(cap->mac, want) || (cap->rights & ~IPVFS_CAP_ALL) ||
        cap->expires_ms <= 0 || (uint64_t)cap->expires_ms >= (1ull << 60)) {
        snprintf(msg, msglen, "capability for handle %llu is forged or damaged",
                 (unsigned long long)cap->handle);
        return EACCES;
    }
    if (cap->expires_ms <= wall_ms()) {
        snprintf(msg, msglen, "capability for handle %llu expired: open the file again",
                 (unsigned long long)cap->handle);
        return EKEYEXPIRED;
    }
    /* A capability never widens another's life: one that grants at least
     * the rights held replaces them, another adds its rights until the
     * earlier of the two expires. */
    old = u64map_get(&a->caps, cap->handle);
    exp = cap->expires_ms;
    rights = cap->rights;
    if (old != U64MAP_NONE && (int64_t)(old >> 3) > wall_ms() &&
        (old & IPVFS_CAP_ALL & ~cap->rights)) {
        rights |= (uint32_t)(old & IPVFS_CAP_ALL);
        if ((int64_t)(old >> 3) < exp)
            exp = (int64_t)(old >> 3);
    }
    if (u64map_put(&a->caps, cap->handle, (uint64_t)exp << 3 | rights) < 0) {
        snprintf(msg, msglen, "out of memory");
        return ENOMEM;
    }
    return 0;
}
