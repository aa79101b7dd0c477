/* The request engine: batches of requests to many server ranks, sent and
 * gathered with poll() so that no server waits for another. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/net.h"

/* Error replies carry a short message; anything longer is malformed. */
#define XFER_MAX_ERR_BODY 65536u

enum recv_phase { RECV_HDR, RECV_BODY, RECV_ERRMSG };

/* The requests of one rank and how far they got. */
struct chan {
    uint32_t rank;
    int fd;
    size_t *idx;           /* indices into the batch, in order */
    size_t n;
    size_t sent;           /* requests completely sent */
    int send_start;        /* first unsent iovec of request idx[sent] */
    size_t done;           /* replies completely received */
    enum recv_phase phase;
    struct ipvfs_hdr rhdr;
    size_t hdr_got;
    int recv_start;
    uint64_t err_left;     /* RECV_ERRMSG: bytes still to read */
    size_t msg_len;
    uint64_t moved;        /* bytes sent and received, to see progress */
    int64_t deadline_ms;
};

struct engine {
    struct ipvfs_client *c;
    struct xfer_req *reqs;
    size_t n;
    struct chan *chans;
    size_t nchans;
    int in_order;          /* send one request at a time, in batch order */
    size_t turn;           /* in_order: the request that may be sent now */
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t iov_total(const struct iovec *iov, int cnt)
{
    uint64_t sum = 0;

    for (int i = 0; i < cnt; i++)
        sum += iov[i].iov_len;
    return sum;
}

static int chan_active(const struct chan *ch)
{
    return ch->fd >= 0 && ch->done < ch->n;
}

/* Passes the turn over requests that can no longer be sent (their
 * channel failed), so that one dead server does not stall the others. */
static void turn_skip_failed(struct engine *e)
{
    while (e->turn < e->n && e->reqs[e->turn].err)
        e->turn++;
}

/* Whether the channel has a request to send that it may send now. */
static int chan_may_send(const struct engine *e, const struct chan *ch)
{
    return ch->sent < ch->n && (!e->in_order || ch->idx[ch->sent] == e->turn);
}

/* Fails every unanswered request of the channel and closes its connection:
 * the stream can no longer be trusted. */
static void chan_fail(struct engine *e, struct chan *ch, int code, const char *detail)
{
    for (size_t i = ch->done; i < ch->n; i++) {
        struct xfer_req *r = &e->reqs[ch->idx[i]];

        r->err = code;
        r->transport = 1;
        snprintf(r->msg, sizeof(r->msg), "%s", detail);
    }
    ch->done = ch->n;
    if (ch->fd >= 0)
        conn_drop(e->c, ch->rank);
    ch->fd = -1;
    turn_skip_failed(e);
}

static void prepare_req(struct engine *e, struct xfer_req *r)
{
    memset(&r->hdr, 0, sizeof(r->hdr));
    r->hdr.magic = IPVFS_PROTO_MAGIC;
    r->hdr.version = IPVFS_PROTO_VERSION;
    r->hdr.op = r->op;
    r->hdr.flags = r->flags;
    r->hdr.req_id = ++e->c->next_req_id;
    r->send_iov[0].iov_base = NULL;
    r->send_iov[0].iov_len = 0;
    r->hdr.body_len = iov_total(r->send_iov, r->send_cnt);
    r->send_iov[0].iov_base = &r->hdr;
    r->send_iov[0].iov_len = sizeof(r->hdr);
    r->err = 0;
    r->transport = 0;
    r->msg[0] = '\0';
}

/* Sends as much as the socket takes without blocking. */
static int chan_send(struct engine *e, struct chan *ch)
{
    while (chan_may_send(e, ch)) {
        struct xfer_req *r = &e->reqs[ch->idx[ch->sent]];
        int cnt = r->send_cnt - ch->send_start;
        struct msghdr mh = { 0 };
        ssize_t got;

        if (cnt > IOV_MAX)
            cnt = IOV_MAX;
        mh.msg_iov = r->send_iov + ch->send_start;
        mh.msg_iovlen = (size_t)cnt;
        got = cnt > 0 ? sendmsg(ch->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) : 0;
        if (got < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
        ch->moved += (uint64_t)got;
        ch->send_start = net_iov_advance(r->send_iov, r->send_cnt, ch->send_start, (size_t)got);
        if (ch->send_start >= r->send_cnt) {
            ch->sent++;
            ch->send_start = 0;
            if (e->in_order) {
                e->turn++;
                turn_skip_failed(e);
            }
        }
    }
    return 0;
}

/* Checks a reply header and chooses how to read its body. */
static int start_body(struct chan *ch, struct xfer_req *r)
{
    const struct ipvfs_hdr *h = &ch->rhdr;

    if (h->magic != IPVFS_PROTO_MAGIC || h->version != IPVFS_PROTO_VERSION ||
        h->op != (r->op | IPVFS_OP_REPLY) || h->req_id != r->hdr.req_id)
        return -EPROTO;
    ch->recv_start = 0;
    if (h->status == 0) {
        if (h->body_len != iov_total(r->recv_iov, r->recv_cnt))
            return -EPROTO;
        ch->phase = RECV_BODY;
        return 0;
    }
    if (h->body_len > XFER_MAX_ERR_BODY)
        return -EPROTO;
    ch->phase = RECV_ERRMSG;
    ch->err_left = h->body_len;
    ch->msg_len = 0;
    return 0;
}

static void finish_reply(struct chan *ch, struct xfer_req *r)
{
    if (ch->rhdr.status) {
        r->err = (int)ch->rhdr.status;
        r->msg[ch->msg_len < sizeof(r->msg) ? ch->msg_len : sizeof(r->msg) - 1] = '\0';
    }
    ch->done++;
    ch->phase = RECV_HDR;
    ch->hdr_got = 0;
}

/* Where the next received bytes go: one iovec (or several for a body). */
static void recv_target(struct chan *ch, struct xfer_req *r, struct iovec *scratch,
                        struct iovec **out_iov, int *out_cnt)
{
    static char sink[4096];

    switch (ch->phase) {
    case RECV_HDR:
        scratch->iov_base = (char *)&ch->rhdr + ch->hdr_got;
        scratch->iov_len = sizeof(ch->rhdr) - ch->hdr_got;
        break;
    case RECV_ERRMSG:
        if (ch->msg_len < sizeof(r->msg) - 1) {
            scratch->iov_base = r->msg + ch->msg_len;
            scratch->iov_len = sizeof(r->msg) - 1 - ch->msg_len;
        } else {
            scratch->iov_base = sink;
            scratch->iov_len = sizeof(sink);
        }
        if (scratch->iov_len > ch->err_left)
            scratch->iov_len = (size_t)ch->err_left;
        break;
    case RECV_BODY:
        *out_iov = r->recv_iov + ch->recv_start;
        *out_cnt = r->recv_cnt - ch->recv_start;
        if (*out_cnt > IOV_MAX)
            *out_cnt = IOV_MAX;
        return;
    }
    *out_iov = scratch;
    *out_cnt = 1;
}

/* Accounts for got received bytes; returns 1 when a reply completed. */
static int recv_advance(struct chan *ch, struct xfer_req *r, size_t got)
{
    switch (ch->phase) {
    case RECV_HDR:
        ch->hdr_got += got;
        if (ch->hdr_got < sizeof(ch->rhdr))
            return 0;
        if (start_body(ch, r) < 0)
            return -EPROTO;
        break;
    case RECV_ERRMSG:
        if (ch->msg_len < sizeof(r->msg) - 1)
            ch->msg_len += got;
        ch->err_left -= got;
        break;
    case RECV_BODY:
        ch->recv_start = net_iov_advance(r->recv_iov, r->recv_cnt, ch->recv_start, got);
        break;
    }
    if ((ch->phase == RECV_ERRMSG && ch->err_left == 0) ||
        (ch->phase == RECV_BODY && ch->recv_start >= r->recv_cnt)) {
        finish_reply(ch, r);
        return 1;
    }
    return 0;
}

/* Receives what is there without blocking. */
static int chan_recv(struct engine *e, struct chan *ch)
{
    while (ch->done < ch->n) {
        struct xfer_req *r = &e->reqs[ch->idx[ch->done]];
        struct iovec scratch, *iov;
        struct msghdr mh = { 0 };
        int cnt, rc;
        ssize_t got;

        recv_target(ch, r, &scratch, &iov, &cnt);
        if (ch->phase == RECV_BODY && iov_total(iov, cnt) == 0) {
            finish_reply(ch, r);  /* an empty body */
            continue;
        }
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)cnt;
        got = recvmsg(ch->fd, &mh, MSG_DONTWAIT);
        if (got == 0)
            return -ECONNRESET;
        if (got < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
        ch->moved += (uint64_t)got;
        rc = recv_advance(ch, r, (size_t)got);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Groups the batch by rank and opens the connections. */
static int setup_chans(struct engine *e, size_t n)
{
    struct ipvfs_client *c = e->c;
    int need_refresh = 0;
    char msg[256] = "";

    e->chans = calloc(n, sizeof(*e->chans));
    if (!e->chans)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct chan *ch = NULL;

        for (size_t k = 0; k < e->nchans && !ch; k++)
            if (e->chans[k].rank == e->reqs[i].rank)
                ch = &e->chans[k];
        if (!ch) {
            ch = &e->chans[e->nchans++];
            ch->rank = e->reqs[i].rank;
            ch->fd = -1;
            ch->idx = calloc(n, sizeof(*ch->idx));
            if (!ch->idx)
                return -ENOMEM;
            need_refresh |= !conn_cached(c, ch->rank);
        }
        ch->idx[ch->n++] = i;
        prepare_req(e, &e->reqs[i]);
    }
    if (need_refresh) {
        int rc = conn_refresh(c, msg, sizeof(msg));

        if (rc < 0) {
            for (size_t k = 0; k < e->nchans; k++)
                chan_fail(e, &e->chans[k], -rc, msg);
            return 0;
        }
    }
    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = &e->chans[k];
        int fd = conn_get(c, ch->rank, msg, sizeof(msg));

        if (fd < 0) {
            chan_fail(e, ch, -fd, msg);
            continue;
        }
        ch->fd = fd;
    }
    /* Time limits start once every channel is connected: a connect to a
     * hung server blocks for its own limit, which must not use up the
     * limit of a channel connected before it. */
    for (size_t k = 0; k < e->nchans; k++)
        e->chans[k].deadline_ms = now_ms() + c->request_ms;
    return 0;
}

/* Services one channel after poll; progress moves its deadline. */
static void chan_service(struct engine *e, struct chan *ch, short revents)
{
    uint64_t before = ch->moved;
    int rc = 0;

    if (revents & (POLLIN | POLLHUP | POLLERR))
        rc = chan_recv(e, ch);
    if (rc == 0 && chan_may_send(e, ch) && (revents & (POLLOUT | POLLERR)))
        rc = chan_send(e, ch);
    if (rc < 0) {
        chan_fail(e, ch, -rc, rc == -EPROTO ? "malformed reply" : "");
        return;
    }
    if (ch->moved != before)
        ch->deadline_ms = now_ms() + e->c->request_ms;
}

static int poll_round(struct engine *e, struct pollfd *pfds, struct chan **map)
{
    int64_t now = now_ms(), wait = -1;
    nfds_t np = 0;
    int rc;

    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = &e->chans[k];

        if (!chan_active(ch))
            continue;
        if (!chan_may_send(e, ch) && ch->sent == ch->done) {
            /* waiting for its turn with nothing outstanding: the server
             * owes nothing, so its time limit starts with the turn */
            ch->deadline_ms = now + e->c->request_ms;
            continue;
        }
        if (ch->deadline_ms <= now) {
            chan_fail(e, ch, ETIMEDOUT, "");
            continue;
        }
        pfds[np].fd = ch->fd;
        pfds[np].events = POLLIN | (chan_may_send(e, ch) ? POLLOUT : 0);
        pfds[np].revents = 0;
        map[np++] = ch;
        if (wait < 0 || ch->deadline_ms - now < wait)
            wait = ch->deadline_ms - now;
    }
    if (np == 0)
        return 0;
    rc = poll(pfds, np, (int)wait);
    if (rc < 0 && errno != EINTR)
        return -errno;
    for (nfds_t i = 0; rc > 0 && i < np; i++)
        chan_service(e, map[i], pfds[i].revents);
    return 1;
}

static void free_chans(struct engine *e)
{
    for (size_t k = 0; k < e->nchans; k++)
        free(e->chans[k].idx);
    free(e->chans);
}

static long run_batch(struct ipvfs_client *c, struct xfer_req *reqs, size_t n, int in_order)
{
    struct engine e = { .c = c, .reqs = reqs, .n = n, .in_order = in_order };
    struct pollfd *pfds = NULL;
    struct chan **map = NULL;
    int rc;

    rc = setup_chans(&e, n);
    if (rc == 0) {
        pfds = calloc(e.nchans, sizeof(*pfds));
        map = calloc(e.nchans, sizeof(*map));
        if (!pfds || !map)
            rc = -ENOMEM;
    }
    while (rc == 0 && (rc = poll_round(&e, pfds, map)) > 0)
        rc = 0;
    for (size_t k = 0; k < e.nchans; k++)
        if (rc < 0 && chan_active(&e.chans[k]))
            chan_fail(&e, &e.chans[k], -rc, "");
    free(map);
    free(pfds);
    free_chans(&e);
    for (size_t i = 0; i < n; i++) {
        if (rc < 0 && !reqs[i].err) {
            reqs[i].err = -rc;
            reqs[i].transport = 1;
        }
        if (reqs[i].err)
            return (long)i;
    }
    return -1;
}

long xfer_run(struct ipvfs_client *c, struct xfer_req *reqs, size_t n)
{
    return run_batch(c, reqs, n, 0);
}

long xfer_run_in_order(struct ipvfs_client *c, struct xfer_req *reqs, size_t n)
{
    return run_batch(c, reqs, n, 1);
}
