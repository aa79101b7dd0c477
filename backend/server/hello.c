/* HELLO (common/proto.h), the first request on every connection: it
 * proves the cluster secret, names the client and learns the connection's
 * bounds.  Every rank registers it first (serve.c), a down one too; the
 * connection layer refuses any other op before it but MAP, which the
 * metadata rank answers with the map's public part (addresses, layout),
 * so that a client on another host finds the cluster from HOST:PORT. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/srvconn.h"

/* Compares in time independent of where the secrets differ. */
static int secret_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0;

    for (size_t i = 0; i < IPVFS_SECRET_LEN; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

static void handle_hello(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct server *srv = conn_server(c);
    struct ipvfs_hello_rep *rep;
    struct ipvfs_hello_req req;

    if (hdr->body_len != sizeof(req)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "HELLO body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (!secret_equal(req.secret, srv->secret)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EACCES, "wrong cluster secret");
        return;
    }
    if (!(rep = calloc(1, sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    conn_set_client(c, req.client_id);
    rep->rank = (uint32_t)srv->rank;
    rep->role = srv->role;
    rep->max_inflight = IPVFS_CONN_MAX_INFLIGHT;
    rep->window_bytes = IPVFS_CONN_WINDOW_BYTES;
    rep->max_body = IPVFS_MAX_BODY;
    conn_reply(c, 0, rep, sizeof(*rep));
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
    { IPVFS_OP_MAP, IPVFS_ROLE_METADATA, handle_map, "MAP" },
    { 0, 0, NULL, NULL },
};

const struct service hello_service = { .name = "HELLO", .ops = hello_ops };
