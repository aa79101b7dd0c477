/* The receive side of the request engine (xfer.c), without any I/O: where
 * the next bytes of a reply go and what they mean.  A reply arrives in
 * pieces of any size (whatever one recvmsg returns); this cuts the stream
 * into a header, then either the body (straight into the request's
 * recv_iov) or, for an error status, a message (kept up to the size of
 * xfer_req.msg, the rest read and dropped).  Keepalive headers
 * (IPVFS_OP_PROGRESS) between replies are skipped.
 *
 * Use: rx_reset() once per connection; then per read, rx_target() names
 * the iovecs to receive into and rx_advance() accounts for the bytes that
 * arrived.  rx_advance() returns 1 when the reply of r is complete (r->err
 * and r->msg then hold a server's refusal) and the reader is ready for the
 * next one.
 *
 * Tagged replies (protocol 5: a connection's replies come in any order):
 * after rx_set_lookup() the reader finds the request of each reply itself,
 * by the req_id of its header, through the lookup function; x->cur is
 * then that request (NULL between replies), and the r passed to
 * rx_target() and rx_advance() must be x->cur.  A header whose req_id
 * names no unanswered request makes rx_advance() return -ENOMSG, its
 * req_id in x->bad_tag: the stream is out of step, close it. */
#ifndef IPVFS_XFER_RX_H
#define IPVFS_XFER_RX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "adio/client/client_internal.h"

#pragma GCC visibility push(hidden)

/* Error replies carry a short message; anything longer is malformed. */
#define XFER_MAX_ERR_BODY 65536u

enum rx_phase { RX_HDR, RX_BODY, RX_ERRMSG };

struct xfer_rx {
    enum rx_phase phase;
    struct ipvfs_hdr rhdr;
    size_t hdr_got;
    int recv_start;        /* RX_BODY: first unfilled iovec of recv_iov */
    uint64_t err_left;     /* RX_ERRMSG: bytes still to read */
    size_t msg_len;
    /* tagged replies (see above) */
    struct xfer_req *(*lookup)(void *ctx, uint64_t req_id);
    void *lookup_ctx;
    struct xfer_req *cur;  /* the request whose reply is being read, or was last */
    uint64_t bad_tag;
};

/* Back to "expecting a header", untagged (no lookup). */
void rx_reset(struct xfer_rx *x);
/* Turns on tagged replies (after each rx_reset): lookup(ctx, req_id)
 * returns the unanswered request with that req_id, or NULL. */
void rx_set_lookup(struct xfer_rx *x, struct xfer_req *(*lookup)(void *ctx, uint64_t req_id),
                   void *ctx);

/* Points *out_iov and *out_cnt (at most IOV_MAX) where the next bytes of r's
 * reply go: into scratch for a header or message, into r->recv_iov for a
 * body.  Returns the number of bytes they can take; 0 when those are
 * empty iovecs of a body (an empty body, or empty ones in a row): then
 * call rx_advance(x, r, 0) without reading, which steps over them. */
size_t rx_target(struct xfer_rx *x, struct xfer_req *r, struct iovec *scratch,
                 struct iovec **out_iov, int *out_cnt);

/* Accounts for got bytes received where rx_target pointed.  Returns 1 when
 * r's reply completed, 0 when more is needed, -EPROTO for a header that is
 * not r's reply (wrong magic, version, op or req_id; a body of the wrong
 * size; an error message over XFER_MAX_ERR_BODY), -ENOMSG (tagged) for a
 * reply to no unanswered request. */
int rx_advance(struct xfer_rx *x, struct xfer_req *r, size_t got);

#pragma GCC visibility pop

#endif
