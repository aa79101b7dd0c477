#include "common/wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/net.h"

/* A request's header and body go out in one gathered write: more iovecs
 * than this would be a caller's mistake, not a protocol need. */
#define WIRE_MAX_IOV 16

void wire_reply_free(struct wire_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

int wire_send(int fd, uint16_t op, uint32_t flags, uint64_t req_id, const struct iovec *body,
              int cnt, int timeout_ms)
{
    struct ipvfs_hdr h = { .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
                           .op = op, .flags = flags, .req_id = req_id };
    struct iovec iov[WIRE_MAX_IOV + 1];

    if (cnt < 0 || cnt > WIRE_MAX_IOV)
        return -EINVAL;
    iov[0] = (struct iovec){ .iov_base = &h, .iov_len = sizeof(h) };
    for (int i = 0; i < cnt; i++) {
        iov[i + 1] = body[i];   /* a copy: net_writev_full consumes it */
        h.body_len += body[i].iov_len;
    }
    return net_writev_full(fd, iov, cnt + 1, timeout_ms);
}

int wire_recv(int fd, uint16_t op, uint64_t req_id, int timeout_ms, struct wire_reply *out)
{
    struct ipvfs_hdr h;
    int rc;

    memset(out, 0, sizeof(*out));
    do {
        if ((rc = net_read_full(fd, &h, sizeof(h), timeout_ms)) < 0)
            return rc;
    } while (ipvfs_hdr_is_progress(&h));
    if (h.magic == IPVFS_PROTO_MAGIC && h.version != IPVFS_PROTO_VERSION)
        return -EPROTONOSUPPORT;
    if (h.magic != IPVFS_PROTO_MAGIC ||
        h.op != (op | IPVFS_OP_REPLY) || h.req_id != req_id || h.body_len > IPVFS_MAX_BODY)
        return -EPROTO;
    if (!(out->body = malloc(h.body_len + 1)))
        return -ENOMEM;
    if ((rc = net_read_full(fd, out->body, h.body_len, timeout_ms)) < 0) {
        wire_reply_free(out);
        return rc;
    }
    out->body[h.body_len] = '\0';
    out->len = h.body_len;
    out->status = h.status;
    return 0;
}

int wire_call(int fd, uint16_t op, uint32_t flags, uint64_t req_id, const struct iovec *body,
              int cnt, int timeout_ms, struct wire_reply *out)
{
    int rc = wire_send(fd, op, flags, req_id, body, cnt, timeout_ms);

    if (rc < 0) {
        memset(out, 0, sizeof(*out));
        return rc;
    }
    return wire_recv(fd, op, req_id, timeout_ms, out);
}

int wire_fetch_map(const char *host, uint16_t port, int connect_ms, int reply_ms,
                   struct wire_reply *out, char *msg, size_t msglen)
{
    int fd, rc;

    memset(out, 0, sizeof(*out));
    if ((fd = net_connect(host, port, connect_ms)) < 0) {
        snprintf(msg, msglen, "connecting: %s", strerror(-fd));
        return fd;
    }
    rc = wire_call(fd, IPVFS_OP_MAP, 0, 1, NULL, 0, reply_ms, out);
    close(fd);
    if (rc < 0) {
        snprintf(msg, msglen, "MAP: %s", rc == -EPROTONOSUPPORT
                 ? "the server speaks another protocol version (mixed builds?)"
                 : rc == -EPROTO ? "malformed reply" : strerror(-rc));
        return rc;
    }
    if (out->status) {
        rc = -(int)out->status;
        snprintf(msg, msglen, "MAP refused%s%s", out->len && out->body[0] ? ": " : "",
                 out->len ? (const char *)out->body : "");
        wire_reply_free(out);
        return rc;
    }
    return 0;
}
