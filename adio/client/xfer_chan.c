/* The request engine's channels (xfer_engine.h): one per server rank,
 * carrying the requests of every running batch over that rank's
 * connection, driven by poll() so that no server waits for another.
 *
 * Replies are tagged (protocol 5, common/proto.h): a connection's replies
 * come in any order, and the reader (xfer_rx.c) pairs each with the
 * unanswered request of that channel whose req_id it carries, whatever
 * batch it belongs to, then receives its body straight into that
 * request's iovecs (the user's buffer).  A reply with a req_id that names
 * no unanswered request of the channel is a protocol error: the
 * connection is closed and the channel's unanswered requests fail with a
 * message naming the rank and the tag.  A channel keeps at most the
 * window its server's HELLO stated in flight (requests sent whole and not
 * answered: their number, and their bodies plus reply bodies in bytes; a
 * lone request always goes), so a large access cut into pieces (plan.h:
 * pieces of the schedule block), or the pieces of several accesses, flow
 * as several requests at once that the I/O node serves concurrently.
 *
 * A channel whose connection breaks is reconnected and sends its
 * unanswered requests again, as retry.h decides; meanwhile the others go
 * on. */
#include "adio/client/xfer_engine.h"
#include "adio/client/retry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/net.h"

int64_t xfer_now_ms(void)
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

int chan_active(const struct chan *ch)
{
    return (ch->fd >= 0 || ch->retry_at > 0) && ch->done < ch->n;
}

int chan_idle(const struct chan *ch)
{
    return ch->sent == ch->done && ch->send_start == 0;
}

/* Passes b's turn over requests that can no longer be sent (their
 * channel failed), so that one dead server does not stall the others. */
static void turn_skip_failed(struct xfer_batch *b)
{
    while (b->turn < b->n && b->reqs[b->turn].err)
        b->turn++;
}

/* Whether the next request of ch fits the server's window (one that is
 * partly sent goes on). */
static int chan_window_open(const struct chan *ch)
{
    size_t out = ch->sent - ch->done;
    const struct xfer_req *r = ch->q[ch->sent];

    return ch->send_start > 0 || out == 0 ||
           (out < ch->win_reqs && ch->out_bytes + r->cost <= ch->win_bytes);
}

/* Whether the channel has a request to send that it may send now: an
 * in-order batch's request only in its turn (unless it goes again); the
 * engine's setup requests whenever they are next. */
static int chan_may_send(const struct chan *ch)
{
    const struct xfer_req *r;

    if (ch->fd < 0 || ch->sent >= ch->n)
        return 0;
    r = ch->q[ch->sent];
    return (!(r->batch->flags & XFER_IN_ORDER) || r->setup || ch->sent < ch->resend_end ||
            r == &r->batch->reqs[r->batch->turn]) &&
           chan_window_open(ch);
}

/* The unanswered request of ch that was sent with req_id, or NULL
 * (xfer_rx.h's lookup). */
static struct xfer_req *chan_lookup(void *ctx, uint64_t req_id)
{
    struct chan *ch = ctx;

    for (size_t i = ch->first; i < ch->sent; i++) {
        struct xfer_req *r = ch->q[i];

        if (!r->answered && r->hdr.req_id == req_id)
            return r;
    }
    return NULL;
}

/* r is answered (a reply, or a failure): its batch has one fewer left. */
static void req_answered(struct xfer_req *r)
{
    r->answered = 1;
    r->batch->left--;
}

/* r's reply is in: account for it. */
static void chan_answered(struct chan *ch, struct xfer_req *r)
{
    req_answered(r);
    ch->done++;
    ch->out_bytes -= r->cost;
    while (ch->first < ch->n && ch->q[ch->first]->answered)
        ch->first++;
}

struct chan *engine_chan(const struct xfer_engine *e, uint32_t rank)
{
    for (size_t k = 0; k < e->nchans; k++)
        if (e->chans[k]->rank == rank)
            return e->chans[k];
    return NULL;
}

struct chan *engine_chan_make(struct xfer_engine *e, uint32_t rank)
{
    struct chan *ch = engine_chan(e, rank);
    struct chan **grown;

    if (ch)
        return ch;
    grown = realloc(e->chans, (e->nchans + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    e->chans = grown;
    ch = calloc(1, sizeof(*ch));
    if (!ch)
        return NULL;
    ch->e = e;
    ch->rank = rank;
    ch->fd = -1;
    rx_reset(&ch->rx);
    rx_set_lookup(&ch->rx, chan_lookup, ch);
    e->chans[e->nchans++] = ch;
    return ch;
}

int chan_reserve(struct chan *ch, size_t extra)
{
    size_t want = ch->n + extra;
    struct xfer_req **grown;

    if (want <= ch->cap)
        return 0;
    if (want < 2 * ch->cap)
        want = 2 * ch->cap;
    grown = realloc(ch->q, want * sizeof(*grown));
    if (!grown)
        return -ENOMEM;
    ch->q = grown;
    ch->cap = want;
    return 0;
}

void chan_connected(struct chan *ch, int fd)
{
    ch->fd = fd;
    conn_window(ch->e->c, ch->rank, &ch->win_reqs, &ch->win_bytes);
}

void chan_fail(struct chan *ch, int code, const char *detail)
{
    struct xfer_engine *e = ch->e;

    for (size_t i = ch->first; i < ch->n; i++) {
        struct xfer_req *r = ch->q[i];

        if (r->answered)
            continue;
        r->err = code;
        r->transport = 1;
        r->in_doubt = i < ch->sent;
        snprintf(r->msg, sizeof(r->msg), "%s", detail);
        req_answered(r);
        turn_skip_failed(r->batch);
    }
    ch->done = ch->n;
    ch->first = ch->n;
    ch->out_bytes = 0;
    ch->send_start = 0;
    if (ch->fd >= 0)
        conn_drop(e->c, ch->rank);
    ch->fd = -1;
    ch->retry_at = 0;
}

static void prepare_req(struct ipvfs_client *c, struct xfer_req *r)
{
    memset(&r->hdr, 0, sizeof(r->hdr));
    r->hdr.magic = IPVFS_PROTO_MAGIC;
    r->hdr.version = IPVFS_PROTO_VERSION;
    r->hdr.op = r->op;
    r->hdr.flags = r->flags;
    r->hdr.req_id = ++c->next_req_id;
    r->send_iov[0].iov_base = NULL;
    r->send_iov[0].iov_len = 0;
    r->hdr.body_len = iov_total(r->send_iov, r->send_cnt);
    r->cost = r->hdr.body_len + iov_total(r->recv_iov, r->recv_cnt);
    r->answered = 0;
    r->send_iov[0].iov_base = &r->hdr;
    r->send_iov[0].iov_len = sizeof(r->hdr);
    r->err = 0;
    r->transport = 0;
    r->msg[0] = '\0';
}

void chan_append(struct chan *ch, struct xfer_req *r)
{
    prepare_req(ch->e->c, r);
    ch->q[ch->n++] = r;
}

/* Sends as much as the socket takes without blocking. */
static int chan_send(struct chan *ch)
{
    while (chan_may_send(ch)) {
        struct xfer_req *r = ch->q[ch->sent];
        struct xfer_batch *b = r->batch;
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
            ch->out_bytes += r->cost;
            if ((b->flags & XFER_IN_ORDER) && r == &b->reqs[b->turn]) {
                b->turn++;
                turn_skip_failed(b);
            }
        }
    }
    return 0;
}

/* Receives what is there without blocking; the reader (xfer_rx.c) says
 * where the bytes go. */
static int chan_recv(struct chan *ch)
{
    while (ch->done < ch->n) {
        struct xfer_req *r = ch->rx.cur;
        struct iovec scratch, *iov;
        struct msghdr mh = { 0 };
        ssize_t got = 0;
        int cnt, rc;

        if (rx_target(&ch->rx, r, &scratch, &iov, &cnt) > 0) {
            mh.msg_iov = iov;
            mh.msg_iovlen = (size_t)cnt;
            got = recvmsg(ch->fd, &mh, MSG_DONTWAIT);
            if (got == 0)
                return -ECONNRESET;
            if (got < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
            ch->moved += (uint64_t)got;
        }
        rc = rx_advance(&ch->rx, r, (size_t)got);
        if (rc < 0)
            return rc;
        if (rc == 1)
            chan_answered(ch, ch->rx.cur);
    }
    return 0;
}

/* Whether every unanswered request of ch may go again (retry.h). */
static int chan_may_resend(const struct chan *ch)
{
    for (size_t i = ch->first; i < ch->n; i++) {
        const struct xfer_req *r = ch->q[i];

        if (!r->answered && !retry_request_again(r->op, r->once, i < ch->sent))
            return 0;
    }
    return 1;
}

/* Moves ch's answered requests before its unanswered ones, each group in
 * its order: the requests sent before (answered or not) stay in front of
 * those never sent, so resend_end keeps meaning "sent before", and each
 * batch's requests keep their order. */
static void chan_compact(struct chan *ch)
{
    size_t w = ch->first;

    for (size_t i = ch->first; i < ch->n; i++) {
        struct xfer_req *r = ch->q[i];

        if (!r->answered)
            continue;
        memmove(ch->q + w + 1, ch->q + w, (i - w) * sizeof(*ch->q));
        ch->q[w++] = r;
    }
    ch->first = w;
}

/* Gives r back the iovecs it was started with (sending consumed them). */
static void req_restore_iovecs(struct xfer_req *r)
{
    const struct xfer_batch *b = r->batch;
    const struct iovec *src;

    if (r->setup) {
        const struct xfer_setup *su = (const struct xfer_setup *)r;

        r->send_iov[1] = (struct iovec){ .iov_base = (void *)su->cap, .iov_len = sizeof(*su->cap) };
        return;
    }
    src = b->saved + b->saved_at[r - b->reqs];
    memcpy(r->send_iov, src, (size_t)r->send_cnt * sizeof(*src));
    memcpy(r->recv_iov, src + r->send_cnt, (size_t)r->recv_cnt * sizeof(*src));
}

/* Takes ch back to its first unanswered request, without a connection:
 * those requests get their iovecs back and new request ids. */
static void chan_rewind(struct chan *ch)
{
    if (ch->fd >= 0)
        conn_drop(ch->e->c, ch->rank);
    ch->fd = -1;
    chan_compact(ch);
    for (size_t i = ch->done; i < ch->n; i++) {
        struct xfer_req *r = ch->q[i];

        req_restore_iovecs(r);
        prepare_req(ch->e->c, r);
    }
    if (ch->sent > ch->resend_end)
        ch->resend_end = ch->sent;
    ch->sent = ch->done;
    ch->send_start = 0;
    ch->out_bytes = 0;
    rx_reset(&ch->rx);
    rx_set_lookup(&ch->rx, chan_lookup, ch);
}

void chan_retry_later(struct chan *ch, int err, const char *detail)
{
    int64_t now = xfer_now_ms();
    int delay = -1;
    char msg[256];

    if (retry_reconnect_again(err))
        delay = retry_delay_ms(ch->attempts++, now - ch->lost_ms, ch->e->c->reconnect_ms);
    if (delay >= 0) {
        ch->retry_at = now + delay;
        return;
    }
    snprintf(msg, sizeof(msg), "connection lost (%s), reconnecting for %.1f s%s%s",
             strerror(ch->lost_err), (double)(now - ch->lost_ms) / 1000.0,
             detail[0] ? ": " : "", detail);
    chan_fail(ch, err, msg);
}

/* The connection of ch broke with err: ch reconnects and sends again what
 * was unanswered when retry.h allows both, else its requests fail. */
static void chan_broken(struct chan *ch, int err, const char *detail)
{
    if (!retry_after_lost(err) || !chan_may_resend(ch)) {
        chan_fail(ch, err, detail);
        return;
    }
    chan_rewind(ch);
    ch->lost_ms = xfer_now_ms();
    ch->lost_err = err;
    ch->attempts = 0;
    chan_retry_later(ch, err, detail);
}

int chan_show_caps(struct chan *ch, int fd)
{
    struct ipvfs_client *c = ch->e->c;
    char msg[256] = "";

    for (size_t i = 0; i < ch->n; i++) {
        const struct ipvfs_cap *cap = ch->q[i]->cap;
        int rc;

        if (cap && (rc = conn_show_cap(c, ch->rank, fd, cap, msg, sizeof(msg))) < 0) {
            if (rc != -EACCES && rc != -EKEYEXPIRED && rc != -ENOMEM && rc != -EINVAL)
                conn_drop(c, ch->rank);   /* the connection is out of step */
            chan_fail(ch, -rc, msg);
            return rc;
        }
    }
    return 0;
}

/* One reconnect attempt of ch (blocking, within the client's limits). */
static void chan_reconnect(struct chan *ch)
{
    char msg[256] = "";
    int fd = conn_get(ch->e->c, ch->rank, msg, sizeof(msg));

    if (fd < 0) {
        chan_retry_later(ch, -fd, msg);
        return;
    }
    if (chan_show_caps(ch, fd) < 0)
        return;
    chan_connected(ch, fd);
    ch->retry_at = 0;
    ch->deadline_ms = xfer_now_ms() + ch->e->request_ms;
}

void chan_forget(struct chan *ch, const struct xfer_batch *b)
{
    size_t kept = 0, n = ch->n, first = ch->first, sent = ch->sent, resend_end = ch->resend_end;

    for (size_t i = 0; i < n; i++) {
        struct xfer_req *r = ch->q[i];

        if (r->batch != b) {
            ch->q[kept++] = r;
            continue;
        }
        /* answered, as its batch is done */
        ch->first -= i < first;
        ch->sent -= i < sent;
        ch->resend_end -= i < resend_end;
        ch->done--;
    }
    ch->n = kept;
    if (ch->rx.cur && ch->rx.cur->batch == b)
        ch->rx.cur = NULL;
}

/* The reconnect attempts that are due. */
static void chans_reconnect(struct xfer_engine *e)
{
    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = e->chans[k];

        if (ch->fd < 0 && ch->retry_at > 0 && ch->done < ch->n && ch->retry_at <= xfer_now_ms())
            chan_reconnect(ch);
    }
}

/* Services one channel after poll; progress moves its deadline. */
static void chan_service(struct chan *ch, short revents)
{
    uint64_t before = ch->moved;
    int rc = 0;

    if (revents & (POLLIN | POLLHUP | POLLERR))
        rc = chan_recv(ch);
    if (rc == 0 && chan_may_send(ch) && (revents & (POLLOUT | POLLERR)))
        rc = chan_send(ch);
    if (rc == -ENOMSG) {
        char msg[160];

        snprintf(msg, sizeof(msg), "rank %u sent a reply with unknown tag (req_id %llu); "
                 "connection closed", ch->rank, (unsigned long long)ch->rx.bad_tag);
        chan_broken(ch, EPROTO, msg);
        return;
    }
    if (rc < 0) {
        chan_broken(ch, -rc, rc == -EPROTO ? "malformed reply" : "");
        return;
    }
    if (ch->moved != before)
        ch->deadline_ms = xfer_now_ms() + ch->e->request_ms;
}

/* Fills the poll arrays with the channels that wait for the network;
 * *out_wait gets the time to the nearest deadline.  Returns how many. */
static nfds_t poll_set(struct xfer_engine *e, int64_t *out_wait)
{
    int64_t now = xfer_now_ms();
    nfds_t np = 0;

    *out_wait = -1;
    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = e->chans[k];

        if (!chan_active(ch))
            continue;
        if (ch->fd < 0) {
            /* reconnecting: wake up for its next attempt */
            int64_t left = ch->retry_at > now ? ch->retry_at - now : 0;

            if (*out_wait < 0 || left < *out_wait)
                *out_wait = left;
            continue;
        }
        if (!chan_may_send(ch) && ch->sent == ch->done) {
            /* waiting for its turn with nothing outstanding: the server
             * owes nothing, so its time limit starts with the turn */
            ch->deadline_ms = now + e->request_ms;
            continue;
        }
        e->pfds[np].fd = ch->fd;
        e->pfds[np].events = POLLIN | (chan_may_send(ch) ? POLLOUT : 0);
        e->pfds[np].revents = 0;
        e->map[np++] = ch;
        if (*out_wait < 0 || ch->deadline_ms - now < *out_wait)
            *out_wait = ch->deadline_ms > now ? ch->deadline_ms - now : 0;
    }
    return np;
}

int engine_poll_reserve(struct xfer_engine *e)
{
    size_t want = e->nchans ? e->nchans : 1;
    struct pollfd *pfds = realloc(e->pfds, want * sizeof(*pfds));
    struct chan **map;

    if (!pfds)
        return -ENOMEM;
    e->pfds = pfds;
    map = realloc(e->map, want * sizeof(*map));
    if (!map)
        return -ENOMEM;
    e->map = map;
    return 0;
}

/* Deadlines are judged after servicing, so a caller that polls rarely (a
 * computing MPI program) does not time out a server whose answer is
 * already waiting. */
int engine_poll_round(struct xfer_engine *e, int timeout_ms)
{
    int64_t wait, now;
    nfds_t np;
    int rc;

    /* before the poll: a reconnect blocks, and what the other servers
     * sent meanwhile must be read before their deadlines are judged */
    chans_reconnect(e);
    np = poll_set(e, &wait);
    if (np == 0 && wait < 0) {
        for (size_t k = 0; k < e->nchans; k++)
            if (chan_active(e->chans[k]))
                chan_fail(e->chans[k], EPROTO, "request engine stalled");
        return 0;
    }
    if (timeout_ms >= 0 && timeout_ms < wait)
        wait = timeout_ms;
    rc = poll(e->pfds, np, (int)wait);
    if (rc < 0 && errno != EINTR)
        return -errno;
    for (nfds_t i = 0; rc > 0 && i < np; i++)
        chan_service(e->map[i], e->pfds[i].revents);
    now = xfer_now_ms();
    for (nfds_t i = 0; i < np; i++)
        if (e->map[i]->fd >= 0 && chan_active(e->map[i]) && e->map[i]->deadline_ms <= now)
            chan_fail(e->map[i], ETIMEDOUT, "");
    return 1;
}

uint64_t engine_moved(const struct xfer_engine *e)
{
    uint64_t sum = 0;

    for (size_t k = 0; k < e->nchans; k++)
        sum += e->chans[k]->moved;
    return sum;
}
