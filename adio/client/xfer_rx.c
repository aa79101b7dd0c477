#include "adio/client/xfer_rx.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "common/net.h"

static uint64_t iov_total(const struct iovec *iov, int cnt)
{
    uint64_t sum = 0;

    for (int i = 0; i < cnt; i++)
        sum += iov[i].iov_len;
    return sum;
}

void rx_reset(struct xfer_rx *x)
{
    memset(x, 0, sizeof(*x));
    x->phase = RX_HDR;
}

void rx_set_lookup(struct xfer_rx *x, struct xfer_req *(*lookup)(void *ctx, uint64_t req_id),
                   void *ctx)
{
    x->lookup = lookup;
    x->lookup_ctx = ctx;
}

/* Checks a reply header and chooses how to read its body. */
static int start_body(struct xfer_rx *x, const struct xfer_req *r)
{
    const struct ipvfs_hdr *h = &x->rhdr;

    if (h->magic != IPVFS_PROTO_MAGIC || h->version != IPVFS_PROTO_VERSION ||
        h->op != (r->op | IPVFS_OP_REPLY) || h->req_id != r->hdr.req_id)
        return -EPROTO;
    x->recv_start = 0;
    if (h->status == 0) {
        if (h->body_len != iov_total(r->recv_iov, r->recv_cnt))
            return -EPROTO;
        x->phase = RX_BODY;
        return 0;
    }
    if (h->body_len > XFER_MAX_ERR_BODY)
        return -EPROTO;
    x->phase = RX_ERRMSG;
    x->err_left = h->body_len;
    x->msg_len = 0;
    return 0;
}

static void finish_reply(struct xfer_rx *x, struct xfer_req *r)
{
    if (x->rhdr.status) {
        r->err = (int)x->rhdr.status;
        r->msg[x->msg_len < sizeof(r->msg) ? x->msg_len : sizeof(r->msg) - 1] = '\0';
    }
    x->phase = RX_HDR;
    x->hdr_got = 0;
}

size_t rx_target(struct xfer_rx *x, struct xfer_req *r, struct iovec *scratch,
                 struct iovec **out_iov, int *out_cnt)
{
    /* the part of a long error message past r->msg is read and dropped */
    static char sink[4096];

    switch (x->phase) {
    case RX_HDR:
        scratch->iov_base = (char *)&x->rhdr + x->hdr_got;
        scratch->iov_len = sizeof(x->rhdr) - x->hdr_got;
        break;
    case RX_ERRMSG:
        if (x->msg_len < sizeof(r->msg) - 1) {
            scratch->iov_base = r->msg + x->msg_len;
            scratch->iov_len = sizeof(r->msg) - 1 - x->msg_len;
        } else {
            scratch->iov_base = sink;
            scratch->iov_len = sizeof(sink);
        }
        if (scratch->iov_len > x->err_left)
            scratch->iov_len = (size_t)x->err_left;
        break;
    case RX_BODY:
        *out_iov = r->recv_iov + x->recv_start;
        *out_cnt = r->recv_cnt - x->recv_start;
        if (*out_cnt > IOV_MAX)
            *out_cnt = IOV_MAX;
        return (size_t)iov_total(*out_iov, *out_cnt);
    }
    *out_iov = scratch;
    *out_cnt = 1;
    return scratch->iov_len;
}

int rx_advance(struct xfer_rx *x, struct xfer_req *r, size_t got)
{
    switch (x->phase) {
    case RX_HDR:
        x->hdr_got += got;
        if (x->hdr_got < sizeof(x->rhdr))
            return 0;
        if (ipvfs_hdr_is_progress(&x->rhdr)) {
            x->hdr_got = 0;  /* keepalive: the bytes moved the deadline */
            return 0;
        }
        if (x->lookup) {
            /* a reply that is not the next one's may be any unanswered one's */
            if (x->rhdr.magic != IPVFS_PROTO_MAGIC || x->rhdr.version != IPVFS_PROTO_VERSION)
                return -EPROTO;
            if (!(r = x->lookup(x->lookup_ctx, x->rhdr.req_id))) {
                x->bad_tag = x->rhdr.req_id;
                return -ENOMSG;
            }
            x->cur = r;
        }
        if (start_body(x, r) < 0)
            return -EPROTO;
        break;
    case RX_ERRMSG:
        if (x->msg_len < sizeof(r->msg) - 1)
            x->msg_len += got;
        x->err_left -= got;
        break;
    case RX_BODY:
        x->recv_start = net_iov_advance(r->recv_iov, r->recv_cnt, x->recv_start, got);
        break;
    }
    if ((x->phase == RX_ERRMSG && x->err_left == 0) ||
        (x->phase == RX_BODY && x->recv_start >= r->recv_cnt)) {
        finish_reply(x, r);
        return 1;
    }
    return 0;
}
