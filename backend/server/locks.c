/* Byte-range locks of the metadata rank, for MPI atomic mode (LOCK,
 * UNLOCK; the contract is at IPVFS_OP_LOCK in common/proto.h).
 *
 * State: per file handle that has locks, one list of lock requests in
 * arrival order.  Each request is in one of two states:
 *
 *   WAITING  --no conflict with a GRANTED lock or an earlier WAITING one--> GRANTED
 *   GRANTED  --UNLOCK from its connection------------------------------> freed
 *   either   --its connection is destroyed (locks_conn_closed)---------> freed
 *
 * A WAITING request owns its connection's reply: the LOCK handler returns
 * without replying (the connection stays BUSY and reads nothing more) and
 * the grant sends the reply later, from whatever event unblocked it (an
 * UNLOCK or a closed connection).  Nothing here ever blocks the loop.
 *
 * Re-entrancy: conn_reply never frees a connection (srvconn.h: the loop
 * does, later), and the conn_closed hook runs from the loop, so the lists
 * change only under the handler or hook that is running.
 *
 * The lists live in srv->locks: they only matter while connections are
 * open, so a restart loses nothing. */
#include <errno.h>
#include <stdlib.h>

#include "backend/server/locks.h"
#include "backend/server/srvconn.h"
#include "common/log.h"

enum lock_state { LOCK_WAITING, LOCK_GRANTED };

struct range_lock {
    struct conn *owner;
    uint64_t offset;
    uint64_t end;               /* one past the last byte */
    int exclusive;
    enum lock_state state;
    struct range_lock *next;    /* arrival order */
};

struct lock_file {
    uint64_t handle;
    struct range_lock *first;
    struct lock_file *next;
};

static int conflicts(const struct range_lock *a, const struct range_lock *b)
{
    return a->offset < b->end && b->offset < a->end && (a->exclusive || b->exclusive);
}

/* FIFO among conflicting requests: a waiter also yields to earlier waiters. */
static int grantable(const struct lock_file *lf, const struct range_lock *w)
{
    int ahead = 1;

    for (const struct range_lock *l = lf->first; l; l = l->next) {
        if (l == w) {
            ahead = 0;
            continue;
        }
        if ((ahead || l->state == LOCK_GRANTED) && conflicts(l, w))
            return 0;
    }
    return 1;
}

static struct range_lock *next_grantable(struct server *srv)
{
    for (struct lock_file *lf = srv->locks; lf; lf = lf->next)
        for (struct range_lock *l = lf->first; l; l = l->next)
            if (l->state == LOCK_WAITING && grantable(lf, l))
                return l;
    return NULL;
}

/* Grants every waiter that can go now. */
static void grant_ready(struct server *srv)
{
    struct range_lock *l;

    while ((l = next_grantable(srv)) != NULL) {
        l->state = LOCK_GRANTED;
        conn_reply(l->owner, 0, NULL, 0);
    }
}

static struct lock_file *file_find(struct server *srv, uint64_t handle)
{
    for (struct lock_file *lf = srv->locks; lf; lf = lf->next)
        if (lf->handle == handle)
            return lf;
    return NULL;
}

static struct lock_file *file_get(struct server *srv, uint64_t handle)
{
    struct lock_file *lf = file_find(srv, handle);

    if (lf || !(lf = calloc(1, sizeof(*lf))))
        return lf;
    lf->handle = handle;
    lf->next = srv->locks;
    srv->locks = lf;
    return lf;
}

/* Frees the files left without locks. */
static void files_prune(struct server *srv)
{
    struct lock_file **pp = &srv->locks;

    while (*pp) {
        struct lock_file *lf = *pp;

        if (lf->first) {
            pp = &lf->next;
            continue;
        }
        *pp = lf->next;
        free(lf);
    }
}

static void append(struct lock_file *lf, struct range_lock *l)
{
    struct range_lock **pp = &lf->first;

    while (*pp)
        pp = &(*pp)->next;
    *pp = l;
}

/* Checks a LOCK/UNLOCK body; replies and returns -1 when it is malformed. */
static int parse_req(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body,
                     const char *opname, struct range_lock *out)
{
    const struct ipvfs_lock_req *req = (const struct ipvfs_lock_req *)body;

    if (hdr->body_len != sizeof(*req)) {
        conn_reply_err(c, EINVAL, "%s body is %llu bytes, not %zu", opname,
                       (unsigned long long)hdr->body_len, sizeof(*req));
        return -1;
    }
    if (req->meta_verifier && req->meta_verifier != conn_server(c)->verifier) {
        conn_reply_err(c, ESTALE, "the metadata rank restarted since this file was opened: "
                       "its byte-range locks are lost (a write under them may not have been "
                       "atomic); reopen the file");
        return -1;
    }
    if (req->len == 0 || req->offset + req->len < req->offset || req->exclusive > 1) {
        conn_reply_err(c, EINVAL, "%s of %llu bytes at %llu (exclusive %u) is not a range",
                       opname, (unsigned long long)req->len, (unsigned long long)req->offset,
                       req->exclusive);
        return -1;
    }
    *out = (struct range_lock){ .owner = c, .offset = req->offset,
                                .end = req->offset + req->len, .exclusive = (int)req->exclusive };
    return 0;
}

static void handle_lock(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    const struct ipvfs_lock_req *req = (const struct ipvfs_lock_req *)body;
    struct server *srv = conn_server(c);
    struct range_lock want, *l;
    struct lock_file *lf;

    if (parse_req(c, hdr, body, "LOCK", &want) < 0)
        return;
    if (!(lf = file_get(srv, req->handle))) {
        conn_reply_err(c, ENOMEM, "no memory for the locks of handle %llu",
                       (unsigned long long)req->handle);
        return;
    }
    if (!(l = malloc(sizeof(*l)))) {
        files_prune(srv);
        conn_reply_err(c, ENOMEM, "no memory for a lock of handle %llu",
                       (unsigned long long)req->handle);
        return;
    }
    *l = want;
    append(lf, l);
    if (grantable(lf, l)) {
        l->state = LOCK_GRANTED;
        conn_reply(c, 0, NULL, 0);
        return;
    }
    log_debug("lock of handle %llu [%llu, %llu) waits", (unsigned long long)req->handle,
              (unsigned long long)l->offset, (unsigned long long)l->end);
}

static void handle_unlock(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    const struct ipvfs_lock_req *req = (const struct ipvfs_lock_req *)body;
    struct server *srv = conn_server(c);
    struct lock_file *lf;
    struct range_lock want, **pp;

    if (parse_req(c, hdr, body, "UNLOCK", &want) < 0)
        return;
    lf = file_find(srv, req->handle);
    for (pp = lf ? &lf->first : NULL; pp && *pp; pp = &(*pp)->next) {
        struct range_lock *l = *pp;

        if (l->owner == c && l->state == LOCK_GRANTED && l->offset == want.offset &&
            l->end == want.end && l->exclusive == want.exclusive) {
            *pp = l->next;
            free(l);
            files_prune(srv);
            conn_reply(c, 0, NULL, 0);
            grant_ready(srv);
            return;
        }
    }
    conn_reply_err(c, ENOENT, "this connection holds no such lock of handle %llu (its "
                   "connection broke while it was held: a write under it may not have been "
                   "atomic)", (unsigned long long)req->handle);
}

/* The service's conn_closed hook: releases the connection's locks, forgets
 * its waiting request and grants what that unblocks. */
static void locks_conn_closed(struct server *srv, struct conn *c)
{
    int dropped = 0;

    for (struct lock_file *lf = srv->locks; lf; lf = lf->next) {
        struct range_lock **pp = &lf->first;

        while (*pp) {
            struct range_lock *l = *pp;

            if (l->owner != c) {
                pp = &l->next;
                continue;
            }
            *pp = l->next;
            free(l);
            dropped++;
        }
    }
    if (!dropped)
        return;
    log_debug("closed connection released %d lock(s) or lock request(s)", dropped);
    files_prune(srv);
    grant_ready(srv);
}

static const struct op_entry lock_ops[] = {
    { IPVFS_OP_LOCK, IPVFS_ROLE_METADATA, handle_lock, "LOCK" },
    { IPVFS_OP_UNLOCK, IPVFS_ROLE_METADATA, handle_unlock, "UNLOCK" },
    { 0, 0, NULL, NULL },
};

const struct service locks_service = {
    .name = "locks", .ops = lock_ops, .conn_closed = locks_conn_closed,
};
