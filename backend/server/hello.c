/* HELLO and AUTH (common/proto.h), the first requests on every connection:
 * they prove the cluster key both ways without sending it (common/auth.h),
 * name the client and state the connection's bounds.  Every rank registers
 * them first (serve.c), a down one too; the connection layer refuses any
 * other op before AUTH succeeded but MAP, which the
 * metadata rank answers with the map's public part (addresses, layout),
 * so that a client on another host finds the cluster from HOST:PORT. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/srvconn.h"
#include "common/auth.h"

/* HELLO: the client's challenge; the reply states the window and answers
 * with the server's own challenge and proof.  The connection serves
 * nothing but AUTH (and MAP) until AUTH proves the client's key. */
static void handle_hello(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct conn_challenge *ch = conn_challenge(c);
    struct server *srv = conn_server(c);
    struct ipvfs_hello_rep *rep;
    struct ipvfs_hello_req req;
    int rc;

    if (hdr->body_len != sizeof(req)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "HELLO body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    if (ch->said_hello) {
        conn_close_after_reply(c);
        conn_reply_err(c, EPROTO, "a second HELLO on one connection");
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (!(rep = calloc(1, sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    if ((rc = auth_nonce(ch->nonce_s)) < 0) {
        free(rep);
        conn_close_after_reply(c);
        conn_reply_err(c, -rc, "no random bytes for the challenge");
        return;
    }
    memcpy(ch->nonce_c, req.nonce, sizeof(ch->nonce_c));
    ch->client_id = req.client_id;
    ch->said_hello = 1;
    rep->rank = (uint32_t)srv->rank;
    rep->role = srv->role;
    rep->max_inflight = IPVFS_CONN_MAX_INFLIGHT;
    rep->window_bytes = IPVFS_CONN_WINDOW_BYTES;
    rep->max_body = IPVFS_MAX_BODY;
    memcpy(rep->nonce, ch->nonce_s, sizeof(rep->nonce));
    rep->verifier = srv->verifier;
    auth_server_proof(srv->secret, ch->nonce_c, ch->nonce_s, rep->proof);
    conn_reply(c, 0, rep, sizeof(*rep));
}

/* AUTH: the client's proof of the key, over this connection's nonces. */
static void handle_auth(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct conn_challenge *ch = conn_challenge(c);
    uint8_t want[IPVFS_PROOF_LEN];
    struct ipvfs_auth_req req;

    if (hdr->body_len != sizeof(req)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "AUTH body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    if (!ch->said_hello) {
        conn_close_after_reply(c);
        conn_reply_err(c, EPROTO, "AUTH without a HELLO before it");
        return;
    }
    memcpy(&req, body, sizeof(req));
    auth_client_proof(conn_server(c)->secret, ch->nonce_s, ch->nonce_c, ch->client_id, want);
    /* one try per challenge: a wrong proof ends the connection */
    ch->said_hello = 0;
    if (!auth_proof_equal(req.proof, want)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EACCES, "wrong proof of the cluster key");
        return;
    }
    conn_set_client(c, ch->client_id);
    conn_reply(c, 0, NULL, 0);
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
    { 0, 0, NULL, NULL },
};

const struct service hello_service = { .name = "HELLO", .ops = hello_ops };
