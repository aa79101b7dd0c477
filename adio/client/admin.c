/* Administrative calls: one blocking request to one server rank, for the
 * ops that the file calls do not cover (ipvfs-ctl's STATUS, SHUTDOWN,
 * SCRUB, REBUILD, READDIR, MKDIR).  They share the client's connections
 * with the request engine (xfer.c) and speak through common/wire.c. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/wire.h"

const struct ipvfs_map *ipvfs_client_map(const struct ipvfs_client *c)
{
    return &c->map;
}

/* The op's name for messages ("request 42" for ops without one here). */
static const char *op_name(uint16_t op, char *buf, size_t len)
{
    switch (op) {
    case IPVFS_OP_STATUS: return "STATUS";
    case IPVFS_OP_SHUTDOWN: return "SHUTDOWN";
    case IPVFS_OP_SCRUB: return "SCRUB";
    case IPVFS_OP_REBUILD: return "REBUILD";
    case IPVFS_OP_READDIR: return "READDIR";
    case IPVFS_OP_MKDIR: return "MKDIR";
    case IPVFS_OP_REMOVE: return "REMOVE";
    case IPVFS_OP_ORPHANS: return "ORPHANS";
    default:
        snprintf(buf, len, "request %u", op);
        return buf;
    }
}

/* The one worker.  With out_req_id it sends (connecting first when
 * needed) and stores the request's id; with out it waits for the reply to
 * *req_id.  Both: a whole call. */
static int admin_xchg(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint32_t flags,
                      const struct iovec *body, int cnt, int timeout_ms, uint64_t *req_id,
                      int sending, struct wire_reply *out, struct ipvfs_error *out_err)
{
    char name[32], msg[256] = "";
    const char *opname = op_name(op, name, sizeof(name));
    int fd, rc;

    if (out)
        memset(out, 0, sizeof(*out));
    if (c->queue_head)
        return client_error(out_err, EBUSY, opname, NULL, c, rank,
                            "an asynchronous access holds the connections");
    if (sending) {
        fd = conn_get_within(c, rank, timeout_ms, timeout_ms, msg, sizeof(msg));
        if (fd < 0)
            return client_error(out_err, -fd, opname, NULL, c, rank, msg);
        *req_id = ++c->next_req_id;
        if ((rc = wire_send(fd, op, flags, *req_id, body, cnt, timeout_ms)) < 0) {
            conn_drop(c, rank);
            return client_error(out_err, -rc, opname, NULL, c, rank, "sending the request");
        }
    }
    if (!out)
        return 0;
    if (rank >= c->map.nranks || c->fds[rank] < 0)
        return client_error(out_err, ENOTCONN, opname, NULL, c, rank,
                            "no request of this client is outstanding there");
    if ((rc = wire_recv(c->fds[rank], op, *req_id, timeout_ms, out)) < 0) {
        conn_drop(c, rank);
        return client_error(out_err, -rc, opname, NULL, c, rank,
                            rc == -EPROTO ? "malformed reply" : "waiting for the reply");
    }
    return 0;
}

int ipvfs_admin_send(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint32_t flags,
                     const struct iovec *body, int cnt, int timeout_ms, uint64_t *out_req_id,
                     struct ipvfs_error *out_err)
{
    return admin_xchg(c, rank, op, flags, body, cnt, timeout_ms, out_req_id, 1, NULL, out_err);
}

int ipvfs_admin_recv(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint64_t req_id,
                     int timeout_ms, struct wire_reply *out, struct ipvfs_error *out_err)
{
    return admin_xchg(c, rank, op, 0, NULL, 0, timeout_ms, &req_id, 0, out, out_err);
}

int ipvfs_admin_call(struct ipvfs_client *c, uint32_t rank, uint16_t op, uint32_t flags,
                     const struct iovec *body, int cnt, int timeout_ms, struct wire_reply *out,
                     struct ipvfs_error *out_err)
{
    uint64_t req_id;

    return admin_xchg(c, rank, op, flags, body, cnt, timeout_ms, &req_id, 1, out, out_err);
}
