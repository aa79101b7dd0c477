/* Which requests of one connection may run at once, and how much a
 * connection and a server may hold in flight (the rules are in
 * common/proto.h's connection rules; srvconn.c applies them).  Pure: no
 * sockets, no server state, so the policy is unit tested on its own
 * (test/test_server_tagged.c).
 *
 * Each request is summarized once its body is in (reqorder_describe): a
 * READ or WRITE by its handle and the envelope of its pairs' byte ranges
 * (one range is conservative for list I/O, whose pairs are short and
 * close: a later request may wait for an earlier one that only shares
 * the envelope, never the other way round), anything else as a barrier. */
#ifndef IPVFS_SERVER_REQORDER_H
#define IPVFS_SERVER_REQORDER_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

enum req_kind {
    REQ_BARRIER,    /* not a READ or WRITE, or one whose body is malformed */
    REQ_READ,
    REQ_WRITE,
};

struct req_shape {
    enum req_kind kind;
    uint64_t handle;
    uint64_t lo, hi;        /* envelope [lo, hi) of the pairs; lo == hi: none */
    uint64_t reply_bytes;   /* READ: the data its reply carries */
};

/* Summarizes the request hdr with its body (hdr->body_len bytes). */
void reqorder_describe(const struct ipvfs_hdr *hdr, const uint8_t *body,
                       struct req_shape *out_shape);

/* 1 when later must wait for earlier (both of one connection, earlier
 * still in flight), else 0. */
int reqorder_must_wait(const struct req_shape *earlier, const struct req_shape *later);

/* The server's two bounds (common/proto.h): what a request's bytes are
 * charged to.  WRITE bodies wait for the volume; everything else must
 * not wait behind them. */
enum req_pool { REQ_POOL_OTHER, REQ_POOL_WRITE, REQ_POOLS };
enum req_pool reqorder_pool(uint16_t op);

/* 1 when a connection holding held_reqs requests and held_bytes bytes
 * (bodies and READ data) may read one more request, with the server's
 * connections holding srv_bytes together in the request's pool (checked
 * for REQ_POOL_OTHER before its header is read, and for REQ_POOL_WRITE
 * again once the header says WRITE); else 0. */
int reqorder_may_admit(uint32_t held_reqs, uint64_t held_bytes, uint64_t srv_bytes);

/* 1 when a request that adds bytes (READ data: its reply buffer) may
 * start, with the connection and the server holding conn_bytes and
 * srv_bytes (its REQ_POOL_OTHER) and running conn_running and srv_running requests; a lone
 * request always may, so a request as large as the window still runs. */
int reqorder_may_start(uint64_t bytes, uint64_t conn_bytes, uint32_t conn_running,
                       uint64_t srv_bytes, uint32_t srv_running);

#endif
