/* HELLO and AUTH (common/proto.h), the first requests on every connection:
 * HELLO proves the cluster key to the client (common/auth.h), names the
 * client and states the connection's bounds; AUTH says who the client is
 * (access.h).  Every rank registers them first (serve.c), a down one too.
 * MAP, allowed before them, is the metadata rank's map without the key
 * (addresses, layout), so that a client on another host finds the
 * cluster from HOST:PORT; CAP presents a capability to an I/O node. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/srvconn.h"
#include "common/auth.h"
#include "common/log.h"

/* HELLO: the client's challenge; the reply states the window and answers
 * with the server's own challenge and proof.  The connection serves
 * nothing but AUTH (and MAP) until AUTH proves the client's key. */
static void handle_hello(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct access *a = conn_access(c);
    struct server *srv = conn_server(c);
    uint8_t nonce_s[IPVFS_NONCE_LEN];
    struct ipvfs_hello_rep *rep;
    struct ipvfs_hello_req req;
    int rc;

    if (hdr->body_len != sizeof(req)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "HELLO body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    if (a->state != ACCESS_NEW) {
        conn_close_after_reply(c);
        conn_reply_err(c, EPROTO, "a second HELLO on one connection");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (!(rep = calloc(1, sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    if ((rc = auth_nonce(nonce_s)) < 0) {
        free(rep);
        conn_close_after_reply(c);
        conn_reply_err(c, -rc, "no random bytes for the challenge");
        return;
    }
    access_challenge(srv, a, req.client_id, req.nonce, nonce_s);
    rep->rank = (uint32_t)srv->rank;
    rep->role = srv->role;
    rep->max_inflight = IPVFS_CONN_MAX_INFLIGHT;
    rep->window_bytes = IPVFS_CONN_WINDOW_BYTES;
    rep->max_body = IPVFS_MAX_BODY;
    memcpy(rep->nonce, nonce_s, sizeof(rep->nonce));
    rep->verifier = srv->verifier;
    auth_server_proof(srv->secret, req.nonce, nonce_s, rep->proof);
    conn_reply(c, 0, rep, sizeof(*rep));
}

/* AUTH: who the client is, by the method it names (access.h). */
static void handle_auth(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct access *a = conn_access(c);
    struct ipvfs_auth_req req;
    char msg[256], who[64];
    int err;

    if (hdr->body_len < sizeof(req)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "AUTH body is %llu bytes, less than %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (hdr->body_len != sizeof(req) + (uint64_t)req.cred_len) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "AUTH cred_len %u disagrees with body_len %llu", req.cred_len,
                       (unsigned long long)hdr->body_len);
        return;
    }
    if (a->state != ACCESS_CHALLENGED) {
        conn_close_after_reply(c);
        conn_reply_err(c, EPROTO, "AUTH %s", a->state == ACCESS_NEW ? "without a HELLO before it"
                                                                    : "a second time");
        return;
    }
    /* one try per challenge: a refused AUTH ends the connection */
    if ((err = access_auth(conn_server(c), a, &req, body + sizeof(req), req.cred_len, msg,
                           sizeof(msg)))) {
        a->state = ACCESS_NEW;
        conn_close_after_reply(c);
        conn_reply_err(c, err, "%s", msg);
        return;
    }
    access_describe(a, who, sizeof(who));
    log_debug("connection of client %u: %s", a->client_id, who);
    conn_reply(c, 0, NULL, 0);
}

/* CAP: a capability for this connection's later data requests. */
static void handle_cap(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_cap cap;
    char msg[256];
    int err;

    if (hdr->body_len != sizeof(cap)) {
        conn_reply_err(c, EINVAL, "CAP body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(cap));
        return;
    }
    memcpy(&cap, body, sizeof(cap));
    if ((err = access_present(conn_server(c), conn_access(c), &cap, msg, sizeof(msg))))
        conn_reply_err(c, err, "%s", msg);
    else
        conn_reply(c, 0, NULL, 0);
}

static void hello_closed(struct server *srv, struct conn *c)
{
    access_forget(srv, conn_access(c));
}

static void handle_map(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    size_t len;
    char *text;
    int rc;

    (void)body;
    if (hdr->body_len != 0) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "MAP takes no body");
        return;
    }
    if ((rc = ipvfs_map_format(&srv->map, 0, &text, &len)) < 0) {
        conn_reply_err(c, -rc, "cannot format the map");
        return;
    }
    conn_reply(c, 0, text, len);
}

static const struct op_entry hello_ops[] = {
    { IPVFS_OP_HELLO, IPVFS_ROLE_METADATA | IPVFS_ROLE_IO | IPVFS_ROLE_TARGET, handle_hello,
      "HELLO" },
    { IPVFS_OP_AUTH, IPVFS_ROLE_METADATA | IPVFS_ROLE_IO | IPVFS_ROLE_TARGET, handle_auth,
      "AUTH" },
    { IPVFS_OP_MAP, IPVFS_ROLE_METADATA, handle_map, "MAP" },
    { IPVFS_OP_CAP, IPVFS_ROLE_IO, handle_cap, "CAP" },
    { 0, 0, NULL, NULL },
};

const struct service hello_service = { .name = "HELLO", .ops = hello_ops,
                                       .conn_closed = hello_closed };
