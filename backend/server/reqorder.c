/* The ordering and window rules of a connection (reqorder.h). */
#include "backend/server/reqorder.h"

#include <string.h>

void reqorder_describe(const struct ipvfs_hdr *hdr, const uint8_t *body,
                       struct req_shape *out_shape)
{
    struct ipvfs_io_req req;
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0;

    memset(out_shape, 0, sizeof(*out_shape));
    out_shape->kind = REQ_BARRIER;
    if ((hdr->op != IPVFS_OP_READ && hdr->op != IPVFS_OP_WRITE) || hdr->body_len < sizeof(req))
        return;
    memcpy(&req, body, sizeof(req));
    if (req.npairs > IPVFS_MAX_PAIRS ||
        hdr->body_len < sizeof(req) + (uint64_t)req.npairs * sizeof(struct ipvfs_pair))
        return;
    for (uint32_t i = 0; i < req.npairs; i++) {
        struct ipvfs_pair p;

        memcpy(&p, body + sizeof(req) + (size_t)i * sizeof(p), sizeof(p));
        /* a range that wraps is refused by the handler: order it as a barrier */
        if (p.len > IPVFS_MAX_IO_BYTES || p.offset + p.len < p.offset)
            return;
        if (p.len == 0)
            continue;
        lo = p.offset < lo ? p.offset : lo;
        hi = p.offset + p.len > hi ? p.offset + p.len : hi;
        sum += p.len;
    }
    out_shape->kind = hdr->op == IPVFS_OP_READ ? REQ_READ : REQ_WRITE;
    out_shape->handle = req.handle;
    out_shape->lo = hi ? lo : 0;
    out_shape->hi = hi;
    out_shape->reply_bytes = hdr->op == IPVFS_OP_READ ? sum : 0;
}

int reqorder_must_wait(const struct req_shape *earlier, const struct req_shape *later)
{
    if (earlier->kind == REQ_BARRIER || later->kind == REQ_BARRIER)
        return 1;
    if (earlier->kind == REQ_READ && later->kind == REQ_READ)
        return 0;
    return earlier->handle == later->handle && earlier->lo < later->hi &&
           later->lo < earlier->hi;
}

enum req_pool reqorder_pool(uint16_t op)
{
    return op == IPVFS_OP_WRITE ? REQ_POOL_WRITE : REQ_POOL_OTHER;
}

int reqorder_may_admit(uint32_t held_reqs, uint64_t held_bytes, uint64_t srv_bytes)
{
    return held_reqs < IPVFS_CONN_MAX_INFLIGHT && held_bytes < IPVFS_CONN_WINDOW_BYTES &&
           srv_bytes < IPVFS_SERVER_INFLIGHT_BYTES;
}

int reqorder_may_start(uint64_t bytes, uint64_t conn_bytes, uint32_t conn_running,
                       uint64_t srv_bytes, uint32_t srv_running)
{
    if (bytes == 0)
        return 1;
    return (conn_running == 0 || conn_bytes + bytes <= IPVFS_CONN_WINDOW_BYTES) &&
           (srv_running == 0 || srv_bytes + bytes <= IPVFS_SERVER_INFLIGHT_BYTES);
}
