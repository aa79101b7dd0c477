/* The request engine: batches of requests to many server ranks, sent and
 * gathered with poll() so that no server waits for another.
 *
 * A batch goes through three states (enum batch_state):
 *   QUEUED   started, waiting behind earlier batches of the same client;
 *   RUNNING  the head of the client's queue: it owns the connections and
 *            moves bytes whenever someone polls the client;
 *   DONE     every request answered or failed; out of the queue, its
 *            results wait for xfer_finish().
 * Only the head runs because a connection carries one stream of requests
 * and replies: two batches sending on it at once would interleave their
 * requests.  Polling any batch drives the head, so batches behind it move
 * up without their owner.
 *
 * Replies are tagged (protocol 5, common/proto.h): a connection's replies
 * come in any order, and the reader (xfer_rx.c) pairs each with the
 * unanswered request of that channel whose req_id it carries, then
 * receives its body straight into that request's iovecs (the user's
 * buffer).  A reply with a req_id that names no unanswered request of the
 * channel is a protocol error: the connection is closed and the channel's
 * unanswered requests fail with a message naming the rank and the tag.
 * A channel keeps at most the window its server's HELLO stated in flight
 * (requests sent whole and not answered: their number, and their bodies
 * plus reply bodies in bytes; a lone request always goes), so a large
 * access cut into pieces (plan.h: pieces of the schedule block) flows as
 * several requests at once that the I/O node serves concurrently.
 *
 * A channel (one rank's requests of the running batch) whose connection
 * breaks is reconnected and sends its unanswered requests again, as
 * retry.h decides; meanwhile the others go on.  Its states:
 *   CONNECTED     fd >= 0, moving bytes;
 *   RECONNECTING  fd -1, retry_at > 0: the next attempt is due then (the
 *                 attempt itself blocks in connect and HELLO, bounded by
 *                 the client's limits; a success goes back to CONNECTED
 *                 and sends again from the first unanswered request);
 *   FINISHED      every request answered or failed (done == n).
 * To send a request again, its iovecs are restored from the copies taken
 * when the batch began (sending consumes them). */
#include "adio/client/client_internal.h"
#include "adio/client/retry.h"
#include "adio/client/xfer_rx.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/net.h"

struct engine;

/* The requests of one rank and how far they got. */
struct chan {
    struct engine *e;
    uint32_t rank;
    int fd;
    size_t *idx;           /* indices into the batch, in order */
    size_t n;
    size_t sent;           /* requests completely sent: idx[0..sent) */
    int send_start;        /* first unsent iovec of request idx[sent] */
    size_t done;           /* replies completely received (in any order) */
    size_t first;          /* idx[first] is the first unanswered one */
    uint32_t win_reqs;     /* the server's window (conn_window) */
    uint64_t win_bytes;
    uint64_t out_bytes;    /* cost of the requests sent and unanswered */
    struct xfer_rx rx;     /* where the reply being read stands */
    uint64_t moved;        /* bytes sent and received, to see progress */
    int64_t deadline_ms;
    /* reconnecting (see the states above) */
    size_t resend_end;     /* requests below it were sent before: they go
                            * again without waiting for their turn */
    int64_t retry_at;      /* > 0: RECONNECTING, next attempt then */
    int64_t lost_ms;       /* when the connection broke */
    unsigned attempts;
    int lost_err;          /* how it broke */
};

struct engine {
    struct ipvfs_client *c;
    int request_ms;        /* the client's limit when the batch started */
    struct xfer_req *reqs;
    size_t n;
    struct chan *chans;
    size_t nchans;
    int in_order;          /* send one request at a time, in batch order */
    size_t turn;           /* in_order: the request that may be sent now */
    struct iovec *saved;   /* each request's send and recv iovecs, as given */
    size_t *saved_at;      /* where request i's copies start in saved */
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
    return (ch->fd >= 0 || ch->retry_at > 0) && ch->done < ch->n;
}

/* Passes the turn over requests that can no longer be sent (their
 * channel failed), so that one dead server does not stall the others. */
static void turn_skip_failed(struct engine *e)
{
    while (e->turn < e->n && e->reqs[e->turn].err)
        e->turn++;
}

/* Whether the next request of ch fits the server's window (one that is
 * partly sent goes on). */
static int chan_window_open(const struct engine *e, const struct chan *ch)
{
    size_t out = ch->sent - ch->done;
    const struct xfer_req *r = &e->reqs[ch->idx[ch->sent]];

    return ch->send_start > 0 || out == 0 ||
           (out < ch->win_reqs && ch->out_bytes + r->cost <= ch->win_bytes);
}

/* Whether the channel has a request to send that it may send now. */
static int chan_may_send(const struct engine *e, const struct chan *ch)
{
    return ch->fd >= 0 && ch->sent < ch->n &&
           (!e->in_order || ch->sent < ch->resend_end || ch->idx[ch->sent] == e->turn) &&
           chan_window_open(e, ch);
}

/* The unanswered request of ch that was sent with req_id, or NULL
 * (xfer_rx.h's lookup). */
static struct xfer_req *chan_lookup(void *ctx, uint64_t req_id)
{
    struct chan *ch = ctx;

    for (size_t i = ch->first; i < ch->sent; i++) {
        struct xfer_req *r = &ch->e->reqs[ch->idx[i]];

        if (!r->answered && r->hdr.req_id == req_id)
            return r;
    }
    return NULL;
}

/* r's reply is in: account for it. */
static void chan_answered(struct chan *ch, struct xfer_req *r)
{
    r->answered = 1;
    ch->done++;
    ch->out_bytes -= r->cost;
    while (ch->first < ch->n && ch->e->reqs[ch->idx[ch->first]].answered)
        ch->first++;
}

/* Takes the window of ch's server, as its HELLO stated. */
static void chan_connected(struct engine *e, struct chan *ch, int fd)
{
    ch->fd = fd;
    conn_window(e->c, ch->rank, &ch->win_reqs, &ch->win_bytes);
}

/* Fails every unanswered request of the channel and closes its connection:
 * the stream can no longer be trusted. */
static void chan_fail(struct engine *e, struct chan *ch, int code, const char *detail)
{
    for (size_t i = ch->first; i < ch->n; i++) {
        struct xfer_req *r = &e->reqs[ch->idx[i]];

        if (r->answered)
            continue;
        r->err = code;
        r->transport = 1;
        r->in_doubt = i < ch->sent;
        r->answered = 1;
        snprintf(r->msg, sizeof(r->msg), "%s", detail);
    }
    ch->done = ch->n;
    ch->first = ch->n;
    ch->out_bytes = 0;
    if (ch->fd >= 0)
        conn_drop(e->c, ch->rank);
    ch->fd = -1;
    ch->retry_at = 0;
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
    r->cost = r->hdr.body_len + iov_total(r->recv_iov, r->recv_cnt);
    r->answered = 0;
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
        size_t ri = ch->idx[ch->sent];
        struct xfer_req *r = &e->reqs[ri];
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
            if (e->in_order && ri == e->turn) {
                e->turn++;
                turn_skip_failed(e);
            }
        }
    }
    return 0;
}

/* Receives what is there without blocking; the reader (xfer_rx.c) says
 * where the bytes go. */
static int chan_recv(struct engine *e, struct chan *ch)
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

/* Copies every request's iovecs (as prepared) so that it can go again. */
static int save_iovecs(struct engine *e)
{
    size_t total = 0;

    e->saved_at = calloc(e->n ? e->n : 1, sizeof(*e->saved_at));
    for (size_t i = 0; i < e->n; i++) {
        if (e->saved_at)
            e->saved_at[i] = total;
        total += (size_t)e->reqs[i].send_cnt + (size_t)e->reqs[i].recv_cnt;
    }
    e->saved = malloc((total ? total : 1) * sizeof(*e->saved));
    if (!e->saved || !e->saved_at)
        return -ENOMEM;
    for (size_t i = 0; i < e->n; i++) {
        struct xfer_req *r = &e->reqs[i];
        struct iovec *dst = e->saved + e->saved_at[i];

        memcpy(dst, r->send_iov, (size_t)r->send_cnt * sizeof(*dst));
        memcpy(dst + r->send_cnt, r->recv_iov, (size_t)r->recv_cnt * sizeof(*dst));
    }
    return 0;
}

/* Whether every unanswered request of ch may go again (retry.h). */
static int chan_may_resend(const struct engine *e, const struct chan *ch)
{
    for (size_t i = ch->first; i < ch->n; i++) {
        const struct xfer_req *r = &e->reqs[ch->idx[i]];

        if (!r->answered && !retry_request_again(r->op, r->once, i < ch->sent))
            return 0;
    }
    return 1;
}

/* Moves ch's answered requests before its unanswered ones, each group in
 * its order: the requests sent before (answered or not) stay in front of
 * those never sent, so resend_end keeps meaning "sent before". */
static void chan_compact(struct engine *e, struct chan *ch)
{
    size_t w = ch->first;

    for (size_t i = ch->first; i < ch->n; i++) {
        size_t ri = ch->idx[i];

        if (!e->reqs[ri].answered)
            continue;
        memmove(ch->idx + w + 1, ch->idx + w, (i - w) * sizeof(*ch->idx));
        ch->idx[w++] = ri;
    }
    ch->first = w;
}

/* Takes ch back to its first unanswered request, without a connection:
 * those requests get their iovecs back and new request ids. */
static void chan_rewind(struct engine *e, struct chan *ch)
{
    if (ch->fd >= 0)
        conn_drop(e->c, ch->rank);
    ch->fd = -1;
    chan_compact(e, ch);
    for (size_t i = ch->done; i < ch->n; i++) {
        struct xfer_req *r = &e->reqs[ch->idx[i]];
        const struct iovec *src = e->saved + e->saved_at[ch->idx[i]];

        memcpy(r->send_iov, src, (size_t)r->send_cnt * sizeof(*src));
        memcpy(r->recv_iov, src + r->send_cnt, (size_t)r->recv_cnt * sizeof(*src));
        prepare_req(e, r);
    }
    if (ch->sent > ch->resend_end)
        ch->resend_end = ch->sent;
    ch->sent = ch->done;
    ch->send_start = 0;
    ch->out_bytes = 0;
    rx_reset(&ch->rx);
    rx_set_lookup(&ch->rx, chan_lookup, ch);
}

/* A reconnect attempt of ch failed with err (detail: the attempt's): the
 * next one is scheduled, or past the deadline ch fails with err. */
static void chan_retry_later(struct engine *e, struct chan *ch, int err, const char *detail)
{
    int64_t now = now_ms();
    int delay = -1;
    char msg[256];

    if (retry_reconnect_again(err))
        delay = retry_delay_ms(ch->attempts++, now - ch->lost_ms, e->c->reconnect_ms);
    if (delay >= 0) {
        ch->retry_at = now + delay;
        return;
    }
    snprintf(msg, sizeof(msg), "connection lost (%s), reconnecting for %.1f s%s%s",
             strerror(ch->lost_err), (double)(now - ch->lost_ms) / 1000.0,
             detail[0] ? ": " : "", detail);
    chan_fail(e, ch, err, msg);
}

/* The connection of ch broke with err: ch reconnects and sends again what
 * was unanswered when retry.h allows both, else its requests fail. */
static void chan_broken(struct engine *e, struct chan *ch, int err, const char *detail)
{
    if (!retry_after_lost(err) || !chan_may_resend(e, ch)) {
        chan_fail(e, ch, err, detail);
        return;
    }
    chan_rewind(e, ch);
    ch->lost_ms = now_ms();
    ch->lost_err = err;
    ch->attempts = 0;
    chan_retry_later(e, ch, err, detail);
}

/* Shows the capabilities of ch's requests to its new connection fd before
 * anything is in flight on it (CAP is a blocking call): 0, or the
 * channel failed. */
static int chan_show_caps(struct engine *e, struct chan *ch, int fd)
{
    char msg[256] = "";

    for (size_t i = 0; i < ch->n; i++) {
        const struct ipvfs_cap *cap = e->reqs[ch->idx[i]].cap;
        int rc;

        if (cap && (rc = conn_show_cap(e->c, ch->rank, fd, cap, msg, sizeof(msg))) < 0) {
            if (rc != -EACCES && rc != -EKEYEXPIRED && rc != -ENOMEM && rc != -EINVAL)
                conn_drop(e->c, ch->rank);   /* the connection is out of step */
            chan_fail(e, ch, -rc, msg);
            return rc;
        }
    }
    return 0;
}

/* One reconnect attempt of ch (blocking, within the client's limits). */
static void chan_reconnect(struct engine *e, struct chan *ch)
{
    char msg[256] = "";
    int fd = conn_get(e->c, ch->rank, msg, sizeof(msg));

    if (fd < 0) {
        chan_retry_later(e, ch, -fd, msg);
        return;
    }
    if (chan_show_caps(e, ch, fd) < 0)
        return;
    chan_connected(e, ch, fd);
    ch->retry_at = 0;
    ch->deadline_ms = now_ms() + e->request_ms;
}

/* The reconnect attempts that are due. */
static void chans_reconnect(struct engine *e)
{
    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = &e->chans[k];

        if (ch->fd < 0 && ch->retry_at > 0 && ch->done < ch->n && ch->retry_at <= now_ms())
            chan_reconnect(e, ch);
    }
}

/* Groups the batch by rank and opens the connections. */
static int setup_chans(struct engine *e, size_t n)
{
    struct ipvfs_client *c = e->c;
    int need_refresh = 0;
    char msg[256] = "";

    e->chans = calloc(n ? n : 1, sizeof(*e->chans));
    if (!e->chans)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct chan *ch = NULL;

        for (size_t k = 0; k < e->nchans && !ch; k++)
            if (e->chans[k].rank == e->reqs[i].rank)
                ch = &e->chans[k];
        if (!ch) {
            ch = &e->chans[e->nchans++];
            ch->e = e;
            ch->rank = e->reqs[i].rank;
            ch->fd = -1;
            rx_reset(&ch->rx);
            rx_set_lookup(&ch->rx, chan_lookup, ch);
            ch->idx = calloc(n, sizeof(*ch->idx));
            if (!ch->idx)
                return -ENOMEM;
            /* a cached connection found closed: its server went away
             * since the last batch, perhaps to restart */
            ch->lost_err = ch->rank < c->map.nranks && c->fds[ch->rank] >= 0 ? ECONNRESET : 0;
            if (conn_cached(c, ch->rank))
                ch->lost_err = 0;
            else
                need_refresh = 1;
        }
        ch->idx[ch->n++] = i;
        prepare_req(e, &e->reqs[i]);
    }
    if (save_iovecs(e) < 0)
        return -ENOMEM;
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

        /* a server that resets the HELLO is dying (it accepted, then
         * died): reconnect as after a lost connection */
        if (fd < 0 && !ch->lost_err && retry_after_lost(-fd))
            ch->lost_err = -fd;
        if (fd < 0 && ch->lost_err) {
            ch->lost_ms = now_ms();
            chan_retry_later(e, ch, -fd, msg);
            continue;
        }
        if (fd < 0) {
            chan_fail(e, ch, -fd, msg);
            continue;
        }
        if (chan_show_caps(e, ch, fd) < 0)
            continue;
        chan_connected(e, ch, fd);
    }
    /* Time limits start once every channel is connected: a connect to a
     * hung server blocks for its own limit, which must not use up the
     * limit of a channel connected before it. */
    for (size_t k = 0; k < e->nchans; k++)
        e->chans[k].deadline_ms = now_ms() + e->request_ms;
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
    if (rc == -ENOMSG) {
        char msg[160];

        snprintf(msg, sizeof(msg), "rank %u sent a reply with unknown tag (req_id %llu); "
                 "connection closed", ch->rank, (unsigned long long)ch->rx.bad_tag);
        chan_broken(e, ch, EPROTO, msg);
        return;
    }
    if (rc < 0) {
        chan_broken(e, ch, -rc, rc == -EPROTO ? "malformed reply" : "");
        return;
    }
    if (ch->moved != before)
        ch->deadline_ms = now_ms() + e->request_ms;
}

/* Fills pfds with the channels that wait for the network; *out_wait gets
 * the time to the nearest deadline.  Returns how many. */
static nfds_t poll_set(struct engine *e, struct pollfd *pfds, struct chan **map,
                       int64_t *out_wait)
{
    int64_t now = now_ms();
    nfds_t np = 0;

    *out_wait = -1;
    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = &e->chans[k];

        if (!chan_active(ch))
            continue;
        if (ch->fd < 0) {
            /* reconnecting: wake up for its next attempt */
            int64_t left = ch->retry_at > now ? ch->retry_at - now : 0;

            if (*out_wait < 0 || left < *out_wait)
                *out_wait = left;
            continue;
        }
        if (!chan_may_send(e, ch) && ch->sent == ch->done) {
            /* waiting for its turn with nothing outstanding: the server
             * owes nothing, so its time limit starts with the turn */
            ch->deadline_ms = now + e->request_ms;
            continue;
        }
        pfds[np].fd = ch->fd;
        pfds[np].events = POLLIN | (chan_may_send(e, ch) ? POLLOUT : 0);
        pfds[np].revents = 0;
        map[np++] = ch;
        if (*out_wait < 0 || ch->deadline_ms - now < *out_wait)
            *out_wait = ch->deadline_ms > now ? ch->deadline_ms - now : 0;
    }
    return np;
}

/* One round: waits up to min(timeout_ms, nearest deadline) for the
 * network (timeout_ms < 0: up to the deadline), moves what it can, then
 * fails the channels past their deadline.  Deadlines are judged after
 * servicing, so a caller that polls rarely (a computing MPI program) does
 * not time out a server whose answer is already waiting.  Returns 1 while
 * requests are outstanding, 0 when the batch is done, or -errno. */
static int poll_round(struct engine *e, struct pollfd *pfds, struct chan **map, int timeout_ms)
{
    int64_t wait, now;
    nfds_t np;
    int rc;

    /* before the poll: a reconnect blocks, and what the other servers
     * sent meanwhile must be read before their deadlines are judged */
    chans_reconnect(e);
    np = poll_set(e, pfds, map, &wait);
    if (np == 0 && wait < 0) {
        for (size_t k = 0; k < e->nchans; k++)
            if (chan_active(&e->chans[k]))
                chan_fail(e, &e->chans[k], EPROTO, "request engine stalled");
        return 0;
    }
    if (timeout_ms >= 0 && timeout_ms < wait)
        wait = timeout_ms;
    rc = poll(pfds, np, (int)wait);
    if (rc < 0 && errno != EINTR)
        return -errno;
    for (nfds_t i = 0; rc > 0 && i < np; i++)
        chan_service(e, map[i], pfds[i].revents);
    now = now_ms();
    for (nfds_t i = 0; i < np; i++)
        if (map[i]->fd >= 0 && chan_active(map[i]) && map[i]->deadline_ms <= now)
            chan_fail(e, map[i], ETIMEDOUT, "");
    return 1;
}

static void free_chans(struct engine *e)
{
    for (size_t k = 0; k < e->nchans; k++)
        free(e->chans[k].idx);
    free(e->chans);
    e->chans = NULL;
    e->nchans = 0;
    free(e->saved);
    free(e->saved_at);
    e->saved = NULL;
    e->saved_at = NULL;
}

enum batch_state { BATCH_QUEUED, BATCH_RUNNING, BATCH_DONE };

struct xfer_batch {
    struct engine e;
    enum batch_state state;
    struct pollfd *pfds;
    struct chan **map;
    int fatal;                 /* -errno that ended the batch early, or 0 */
    struct xfer_batch *next;   /* the client's queue */
};

/* Ends the head batch: fails what is left with the fatal error, releases
 * the channels and lets the next batch become the head. */
static void batch_end(struct xfer_batch *b)
{
    struct ipvfs_client *c = b->e.c;

    for (size_t k = 0; k < b->e.nchans; k++)
        if (b->fatal < 0 && chan_active(&b->e.chans[k]))
            chan_fail(&b->e, &b->e.chans[k], -b->fatal, "");
    for (size_t i = 0; b->fatal < 0 && i < b->e.n; i++) {
        if (!b->e.reqs[i].err) {
            b->e.reqs[i].err = -b->fatal;
            b->e.reqs[i].transport = 1;
        }
    }
    free(b->map);
    free(b->pfds);
    b->map = NULL;
    b->pfds = NULL;
    free_chans(&b->e);
    b->state = BATCH_DONE;
    c->queue_head = b->next;
    if (!c->queue_head)
        c->queue_tail = NULL;
    b->next = NULL;
}

/* The head batch takes the connections and starts sending. */
static void batch_begin(struct xfer_batch *b)
{
    int rc = setup_chans(&b->e, b->e.n);

    b->state = BATCH_RUNNING;
    if (rc == 0) {
        b->pfds = calloc(b->e.nchans ? b->e.nchans : 1, sizeof(*b->pfds));
        b->map = calloc(b->e.nchans ? b->e.nchans : 1, sizeof(*b->map));
        if (!b->pfds || !b->map)
            rc = -ENOMEM;
    }
    if (rc < 0) {
        b->fatal = rc;
        batch_end(b);
    }
}

/* Bytes the engine's channels moved so far. */
static uint64_t engine_moved(const struct engine *e)
{
    uint64_t sum = 0;

    for (size_t k = 0; k < e->nchans; k++)
        sum += e->chans[k].moved;
    return sum;
}

/* Drives the client's queue until b is done or, without block, until the
 * network has nothing more to give right now. */
static void client_pump(struct xfer_batch *b, int block)
{
    struct ipvfs_client *c = b->e.c;

    while (b->state != BATCH_DONE) {
        struct xfer_batch *h = c->queue_head;
        uint64_t before;
        int rc;

        if (h->state == BATCH_QUEUED)
            batch_begin(h);
        if (h->state == BATCH_DONE)
            continue;
        before = engine_moved(&h->e);
        rc = poll_round(&h->e, h->pfds, h->map, block ? -1 : 0);
        if (rc <= 0) {
            h->fatal = rc;
            batch_end(h);
            continue;
        }
        /* without block, go on while bytes move: a request sent may give
         * the turn to another server's channel, which can send at once */
        if (!block && engine_moved(&h->e) == before)
            return;
    }
}

int xfer_start(struct ipvfs_client *c, struct xfer_req *reqs, size_t n, int in_order,
               struct xfer_batch **out_batch)
{
    struct xfer_batch *b = calloc(1, sizeof(*b));

    if (!b)
        return -ENOMEM;
    b->e = (struct engine){ .c = c, .request_ms = c->request_ms, .reqs = reqs, .n = n,
                            .in_order = in_order };
    b->state = BATCH_QUEUED;
    if (c->queue_tail)
        c->queue_tail->next = b;
    else
        c->queue_head = b;
    c->queue_tail = b;
    client_pump(b, 0);
    *out_batch = b;
    return 0;
}

int xfer_test(struct xfer_batch *b)
{
    client_pump(b, 0);
    return b->state == BATCH_DONE;
}

void xfer_wait(struct xfer_batch *b)
{
    client_pump(b, 1);
}

long xfer_finish(struct xfer_batch *b)
{
    struct xfer_req *reqs = b->e.reqs;
    size_t n = b->e.n;

    xfer_wait(b);
    free(b);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].err)
            return (long)i;
    return -1;
}

static long run_batch(struct ipvfs_client *c, struct xfer_req *reqs, size_t n, int in_order)
{
    struct xfer_batch *b;

    if (xfer_start(c, reqs, n, in_order, &b) < 0) {
        for (size_t i = 0; i < n; i++) {
            reqs[i].err = ENOMEM;
            reqs[i].transport = 1;
            snprintf(reqs[i].msg, sizeof(reqs[i].msg), "out of memory");
        }
        return n ? 0 : -1;
    }
    return xfer_finish(b);
}

long xfer_run(struct ipvfs_client *c, struct xfer_req *reqs, size_t n)
{
    return run_batch(c, reqs, n, 0);
}

long xfer_run_in_order(struct ipvfs_client *c, struct xfer_req *reqs, size_t n)
{
    return run_batch(c, reqs, n, 1);
}
