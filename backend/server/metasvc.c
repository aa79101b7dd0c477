/* Metadata service of rank 0: LOOKUP REMOVE MKDIR READDIR GETATTR SETATTR
 * RENAME on the LMDB namespace (metadb.c, metadb_attr.c).  Handlers check the body's shape against body_len,
 * then call metadb, which checks the path and commits before returning, so
 * every reply here describes durable state.  SHFP (MPI-IO shared file
 * pointers) is the exception: its pointers live only in this rank's memory,
 * like the open instances they belong to. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/metadb.h"
#include "backend/server/metasvc.h"
#include "common/log.h"

int metasvc_open(struct server *srv)
{
    char dir[1200], msg[512];
    int rc;

    snprintf(dir, sizeof(dir), "%s/meta", srv->rank_dir);
    rc = metadb_open(dir, srv->opts.nio, srv->opts.stripe_unit, &srv->mdb, msg, sizeof(msg));
    if (rc < 0)
        log_error("cannot open the namespace: %s", msg);
    return rc;
}

static void shfp_free_all(struct server *srv);

void metasvc_close(struct server *srv)
{
    shfp_free_all(srv);
    metadb_close(srv->mdb);
    srv->mdb = NULL;
}

/* Reply with a copy of the fixed-size record rec (an entry, attributes),
 * or with metadb's error and message. */
static void reply_record(struct conn *c, int rc, const void *rec, size_t len, const char *msg)
{
    void *rep;

    if (rc < 0) {
        conn_reply_err(c, -rc, "%s", msg);
        return;
    }
    if (!(rep = malloc(len))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    memcpy(rep, rec, len);
    conn_reply(c, 0, rep, len);
}

/* An entry and a capability for it (LOOKUP: the rights asked for;
 * REMOVE: the right to remove its datafiles). */
struct entry_cap {
    struct ipvfs_entry entry;
    struct ipvfs_cap cap;
};

static void reply_entry_cap(struct conn *c, int rc, const struct ipvfs_entry *e, uint32_t rights,
                            const char *msg)
{
    struct entry_cap ec;

    if (rc == 0) {
        ec.entry = *e;
        access_grant(conn_server(c), conn_access(c), e->handle, rights, &ec.cap);
    }
    reply_record(c, rc, &ec, sizeof(ec), msg);
}

/* A user names itself and one of its groups as the owner of what it
 * creates; any other owner is a forgery (logged, EPERM). */
static int check_owner(struct conn *c, uint32_t uid, uint32_t gid, const char *op)
{
    const struct perm_cred *cred = access_cred(conn_access(c));

    if (!cred || perm_owner(cred, uid, gid) == 0)
        return 0;
    conn_reply_err(c, EPERM, "%s: uid %u may not create as %u:%u (a forged owner)", op,
                   cred->uid, uid, gid);
    return -EPERM;
}

static void handle_lookup(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    struct ipvfs_lookup_req req;
    struct metadb_owner owner;
    struct ipvfs_entry e;
    char msg[512];
    int rc;

    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "LOOKUP body shorter than its header");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.path_len) {
        conn_reply_err(c, EINVAL, "LOOKUP path_len %u disagrees with body_len %llu",
                       req.path_len, (unsigned long long)hdr->body_len);
        return;
    }
    if (req.flags & ~(uint32_t)(IPVFS_LOOKUP_CREATE | IPVFS_LOOKUP_EXCL | IPVFS_LOOKUP_READ |
                                IPVFS_LOOKUP_WRITE)) {
        conn_reply_err(c, EINVAL, "LOOKUP flags %#x unknown", req.flags);
        return;
    }
    if (req.mode & ~07777u) {
        conn_reply_err(c, EINVAL, "LOOKUP mode %#o has bits beyond 07777", req.mode);
        return;
    }
    if ((req.flags & IPVFS_LOOKUP_CREATE) && check_owner(c, req.uid, req.gid, "LOOKUP") < 0)
        return;
    owner = (struct metadb_owner){ .mode = req.mode, .uid = req.uid, .gid = req.gid };
    rc = metadb_lookup(srv->mdb, access_cred(conn_access(c)), (const char *)body + sizeof(req),
                       req.path_len, req.flags, req.stripe_factor, req.stripe_unit, &owner, &e,
                       msg, sizeof(msg));
    if (rc == 0 && e.created)
        log_debug("created %.*s handle %llu", (int)req.path_len,
                  (const char *)body + sizeof(req), (unsigned long long)e.handle);
    reply_entry_cap(c, rc, &e,
                    (req.flags & IPVFS_LOOKUP_READ ? IPVFS_CAP_READ : 0) |
                        (req.flags & IPVFS_LOOKUP_WRITE ? IPVFS_CAP_WRITE : 0),
                    msg);
}

/* REMOVE, READDIR and GETATTR share this body: struct ipvfs_path_req + path. */
static int path_body(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body,
                     const char **out_path, size_t *out_len, uint32_t *out_flags)
{
    struct ipvfs_path_req req;

    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "request body shorter than its header");
        return -EINVAL;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.path_len) {
        conn_reply_err(c, EINVAL, "path_len %u disagrees with body_len %llu", req.path_len,
                       (unsigned long long)hdr->body_len);
        return -EINVAL;
    }
    *out_path = (const char *)body + sizeof(req);
    *out_len = req.path_len;
    *out_flags = req.flags;
    return 0;
}

static void handle_remove(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_entry e;
    const char *path;
    char msg[512];
    uint32_t flags;
    size_t len;

    if (path_body(c, hdr, body, &path, &len, &flags) < 0)
        return;
    if (flags & ~(uint32_t)IPVFS_REMOVE_DIR) {
        conn_reply_err(c, EINVAL, "REMOVE flags %#x unknown", flags);
        return;
    }
    reply_entry_cap(c, metadb_remove(conn_server(c)->mdb, access_cred(conn_access(c)), path, len,
                                     flags & IPVFS_REMOVE_DIR, &e, msg, sizeof(msg)),
                    &e, IPVFS_CAP_REMOVE, msg);
}

static void handle_orphans(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_orphans_req req;
    uint32_t *rep, n = 0;
    char msg[512];
    int rc;

    if (hdr->body_len != sizeof(req)) {
        conn_reply_err(c, EINVAL, "ORPHANS body of %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (req.max > IPVFS_MAX_ORPHANS) {
        conn_reply_err(c, EINVAL, "ORPHANS max %u over %u", req.max, IPVFS_MAX_ORPHANS);
        return;
    }
    rep = calloc(1, 8 + (size_t)req.max * sizeof(struct ipvfs_entry));
    if (!rep) {
        conn_reply_err(c, ENOMEM, "no memory for the orphan list");
        return;
    }
    /* only the key may remove another's datafiles: others get no list */
    rc = metadb_orphans(conn_server(c)->mdb, req.done,
                        access_cred(conn_access(c)) ? 0 : req.max,
                        (struct ipvfs_entry *)(rep + 2), &n, msg, sizeof(msg));
    if (rc < 0) {
        free(rep);
        conn_reply_err(c, -rc, "%s", msg);
        return;
    }
    rep[0] = n;
    conn_reply(c, 0, rep, 8 + (size_t)req.max * sizeof(struct ipvfs_entry));
}

static void handle_mkdir(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_mkdir_req req;
    struct metadb_owner owner;
    char msg[512];
    int rc;

    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "MKDIR body shorter than its header");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.path_len) {
        conn_reply_err(c, EINVAL, "MKDIR path_len %u disagrees with body_len %llu",
                       req.path_len, (unsigned long long)hdr->body_len);
        return;
    }
    if (req.mode & ~07777u) {
        conn_reply_err(c, EINVAL, "MKDIR mode %#o has bits beyond 07777", req.mode);
        return;
    }
    if (check_owner(c, req.uid, req.gid, "MKDIR") < 0)
        return;
    owner = (struct metadb_owner){ .mode = req.mode, .uid = req.uid, .gid = req.gid };
    rc = metadb_mkdir(conn_server(c)->mdb, access_cred(conn_access(c)),
                      (const char *)body + sizeof(req), req.path_len, &owner, msg, sizeof(msg));
    if (rc < 0)
        conn_reply_err(c, -rc, "%s", msg);
    else
        conn_reply(c, 0, NULL, 0);
}

static void reply_attr(struct conn *c, int rc, const struct ipvfs_attr *a, const char *msg)
{
    reply_record(c, rc, a, sizeof(*a), msg);
}

static void handle_getattr(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_attr a;
    const char *path;
    char msg[512];
    uint32_t flags;
    size_t len;

    if (path_body(c, hdr, body, &path, &len, &flags) < 0)
        return;
    if (flags) {
        conn_reply_err(c, EINVAL, "GETATTR flags %#x unknown", flags);
        return;
    }
    reply_attr(c, metadb_getattr(conn_server(c)->mdb, access_cred(conn_access(c)), path, len, &a,
                                 msg, sizeof(msg)),
               &a, msg);
}

static void handle_setattr(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_setattr_req req;
    struct ipvfs_attr a;
    char msg[512];
    int rc;

    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "SETATTR body shorter than its header");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.path_len) {
        conn_reply_err(c, EINVAL, "SETATTR path_len %u disagrees with body_len %llu",
                       req.path_len, (unsigned long long)hdr->body_len);
        return;
    }
    rc = metadb_setattr(conn_server(c)->mdb, access_cred(conn_access(c)),
                        (const char *)body + sizeof(req), req.path_len, &req, &a, msg,
                        sizeof(msg));
    reply_attr(c, rc, &a, msg);
}

static void handle_rename(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_rename_req req;
    struct ipvfs_rename_rep *rep;
    const char *src;
    char msg[512];
    int rc;

    if (hdr->body_len < sizeof(req)) {
        conn_reply_err(c, EINVAL, "RENAME body shorter than its header");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.src_len + req.dst_len) {
        conn_reply_err(c, EINVAL, "RENAME src_len %u + dst_len %u disagree with body_len %llu",
                       req.src_len, req.dst_len, (unsigned long long)hdr->body_len);
        return;
    }
    if (!(rep = malloc(sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    src = (const char *)body + sizeof(req);
    rc = metadb_rename(conn_server(c)->mdb, access_cred(conn_access(c)), src, req.src_len,
                       src + req.src_len, req.dst_len, req.flags, rep, msg, sizeof(msg));
    if (rc < 0) {
        free(rep);
        conn_reply_err(c, -rc, "%s", msg);
        return;
    }
    if (rep->replaced)
        access_grant(conn_server(c), conn_access(c), rep->entry.handle, IPVFS_CAP_REMOVE,
                     &rep->cap);
    conn_reply(c, 0, rep, sizeof(*rep));
}

static void handle_readdir(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    const char *path;
    char msg[512];
    void *list;
    size_t len, list_len;
    uint32_t flags;
    int rc;

    if (path_body(c, hdr, body, &path, &len, &flags) < 0)
        return;
    rc = metadb_readdir(conn_server(c)->mdb, access_cred(conn_access(c)), path, len,
                        IPVFS_MAX_BODY, &list, &list_len, msg, sizeof(msg));
    if (rc < 0)
        conn_reply_err(c, -rc, "%s", msg);
    else
        conn_reply(c, 0, list, list_len);
}

/* Shared file pointers by (handle, instance) in srv->shfps, most recently
 * used first: a process holds few open instances that use them, and an
 * instance's ranks hit the same one in bursts. */
struct shfp {
    uint64_t handle;
    uint64_t instance;
    int64_t value;
    struct shfp *next;
};

/* Finds the pointer and moves it to the front; NULL when unknown. */
static struct shfp *shfp_find(struct server *srv, uint64_t handle, uint64_t instance)
{
    for (struct shfp **pp = &srv->shfps; *pp; pp = &(*pp)->next) {
        struct shfp *p = *pp;

        if (p->handle != handle || p->instance != instance)
            continue;
        *pp = p->next;
        p->next = srv->shfps;
        srv->shfps = p;
        return p;
    }
    return NULL;
}

/* A pointer never set reads as 0, so it is created on first use. */
static struct shfp *shfp_get(struct server *srv, uint64_t handle, uint64_t instance)
{
    struct shfp *p = shfp_find(srv, handle, instance);

    if (p || !(p = calloc(1, sizeof(*p))))
        return p;
    p->handle = handle;
    p->instance = instance;
    p->next = srv->shfps;
    srv->shfps = p;
    return p;
}

/* Forgets the pointer (it is at the front after shfp_find). */
static int64_t shfp_release(struct server *srv, uint64_t handle, uint64_t instance)
{
    struct shfp *p = shfp_find(srv, handle, instance);
    int64_t last;

    if (!p)
        return 0;
    last = p->value;
    srv->shfps = p->next;
    free(p);
    return last;
}

static void shfp_free_all(struct server *srv)
{
    while (srv->shfps) {
        struct shfp *p = srv->shfps;

        srv->shfps = p->next;
        free(p);
    }
}

/* Applies a SET or FETCH_ADD; -EINVAL leaves the pointer as it was. */
static int shfp_apply(struct shfp *p, uint32_t op, int64_t value)
{
    if (op == IPVFS_SHFP_SET) {
        if (value < 0)
            return -EINVAL;
        p->value = value;
        return 0;
    }
    if ((value > 0 && p->value > INT64_MAX - value) || p->value + value < 0)
        return -EINVAL;
    p->value += value;
    return 0;
}

static void handle_shfp(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    struct ipvfs_shfp_rep *rep;
    struct ipvfs_shfp_req req;
    struct shfp *p;

    if (hdr->body_len != sizeof(req)) {
        conn_reply_err(c, EINVAL, "SHFP body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (req.op != IPVFS_SHFP_SET && req.op != IPVFS_SHFP_FETCH_ADD &&
        req.op != IPVFS_SHFP_RELEASE) {
        conn_reply_err(c, EINVAL, "SHFP op %u unknown", req.op);
        return;
    }
    if (req.meta_verifier && req.meta_verifier != srv->verifier && req.op != IPVFS_SHFP_RELEASE) {
        conn_reply_err(c, ESTALE, "the metadata rank restarted since this file was opened: "
                       "its shared file pointer is lost; reopen the file");
        return;
    }
    if (!(rep = malloc(sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    if (req.op == IPVFS_SHFP_RELEASE) {
        rep->previous = shfp_release(srv, req.handle, req.instance);
        conn_reply(c, 0, rep, sizeof(*rep));
        return;
    }
    if (!(p = shfp_get(srv, req.handle, req.instance))) {
        free(rep);
        conn_reply_err(c, ENOMEM, "no memory for a shared file pointer");
        return;
    }
    rep->previous = p->value;
    if (shfp_apply(p, req.op, req.value) < 0) {
        free(rep);
        conn_reply_err(c, EINVAL, "shared file pointer %lld %s %lld is out of range",
                       (long long)p->value, req.op == IPVFS_SHFP_SET ? "set to" : "plus",
                       (long long)req.value);
        return;
    }
    conn_reply(c, 0, rep, sizeof(*rep));
}

static const struct op_entry meta_ops[] = {
    { IPVFS_OP_LOOKUP, IPVFS_ROLE_METADATA, handle_lookup, "LOOKUP" },
    { IPVFS_OP_REMOVE, IPVFS_ROLE_METADATA, handle_remove, "REMOVE" },
    { IPVFS_OP_MKDIR, IPVFS_ROLE_METADATA, handle_mkdir, "MKDIR" },
    { IPVFS_OP_READDIR, IPVFS_ROLE_METADATA, handle_readdir, "READDIR" },
    { IPVFS_OP_ORPHANS, IPVFS_ROLE_METADATA, handle_orphans, "ORPHANS" },
    { IPVFS_OP_GETATTR, IPVFS_ROLE_METADATA, handle_getattr, "GETATTR" },
    { IPVFS_OP_SETATTR, IPVFS_ROLE_METADATA, handle_setattr, "SETATTR" },
    { IPVFS_OP_RENAME, IPVFS_ROLE_METADATA, handle_rename, "RENAME" },
    { IPVFS_OP_SHFP, IPVFS_ROLE_METADATA, handle_shfp, "SHFP" },
    { 0, 0, NULL, NULL },
};

const struct service metasvc_service = { .name = "metadata", .ops = meta_ops };
