/* The request engine's batches (the states and the rule of which batches
 * run are in xfer_engine.h): the client's queue of started batches, the
 * engine they run on, and the public xfer_* calls.  A process's
 * nonblocking accesses (XFER_BESIDE) run side by side on the same
 * connections, so their requests reach the servers together instead of
 * one access after another. */
#include "adio/client/xfer_engine.h"
#include "adio/client/retry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies every request's iovecs (as given) so that it can go again;
 * send_iov[0], the header's, is set anew each time it is prepared. */
static int save_iovecs(struct xfer_batch *b)
{
    size_t total = 0;

    b->saved_at = calloc(b->n ? b->n : 1, sizeof(*b->saved_at));
    if (!b->saved_at)
        return -ENOMEM;
    for (size_t i = 0; i < b->n; i++) {
        b->saved_at[i] = total;
        total += (size_t)b->reqs[i].send_cnt + (size_t)b->reqs[i].recv_cnt;
    }
    b->saved = malloc((total ? total : 1) * sizeof(*b->saved));
    if (!b->saved)
        return -ENOMEM;
    for (size_t i = 0; i < b->n; i++) {
        struct xfer_req *r = &b->reqs[i];
        struct iovec *dst = b->saved + b->saved_at[i];

        memcpy(dst, r->send_iov, (size_t)r->send_cnt * sizeof(*dst));
        memcpy(dst + r->send_cnt, r->recv_iov, (size_t)r->recv_cnt * sizeof(*dst));
    }
    return 0;
}

/* Makes the channels of b's ranks and room on them for extra requests,
 * before any request goes on (so that running out of memory leaves the
 * engine as it was: an empty channel takes part in nothing). */
static int reserve_chans(struct xfer_engine *e, struct xfer_batch *b, size_t extra)
{
    for (size_t i = 0; i < b->n; i++) {
        struct chan *ch = engine_chan_make(e, b->reqs[i].rank);

        if (!ch || chan_reserve(ch, extra) < 0)
            return -ENOMEM;
    }
    return engine_poll_reserve(e);
}

/* Puts b's setup requests, then its requests, on their channels, in b's
 * order, and counts b as running. */
static void enqueue_reqs(struct xfer_engine *e, struct xfer_batch *b)
{
    for (size_t i = 0; i < b->nsetup; i++)
        chan_append(engine_chan(e, b->setup[i].req.rank), &b->setup[i].req);
    for (size_t i = 0; i < b->n; i++) {
        b->reqs[i].batch = b;
        chan_append(engine_chan(e, b->reqs[i].rank), &b->reqs[i]);
    }
    b->left = b->n + b->nsetup;
    b->turn = 0;
    b->state = BATCH_RUNNING;
    e->running++;
    if (!(b->flags & XFER_BESIDE))
        e->exclusive = 1;
    if (e->request_ms < e->c->request_ms)
        e->request_ms = e->c->request_ms;
}

/* Connects the channels of a fresh engine (its first batch, nothing in
 * flight): re-reads a changed map, connects, shows capabilities. */
static void connect_chans(struct xfer_engine *e)
{
    struct ipvfs_client *c = e->c;
    int need_refresh = 0;
    char msg[256] = "";

    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = e->chans[k];

        /* a cached connection found closed: its server went away since
         * the last batch, perhaps to restart */
        ch->lost_err = ch->rank < c->map.nranks && c->fds[ch->rank] >= 0 ? ECONNRESET : 0;
        if (conn_cached(c, ch->rank))
            ch->lost_err = 0;
        else
            need_refresh = 1;
    }
    if (need_refresh) {
        int rc = conn_refresh(c, msg, sizeof(msg));

        if (rc < 0) {
            for (size_t k = 0; k < e->nchans; k++)
                chan_fail(e->chans[k], -rc, msg);
            return;
        }
    }
    for (size_t k = 0; k < e->nchans; k++) {
        struct chan *ch = e->chans[k];
        int fd = conn_get(c, ch->rank, msg, sizeof(msg));

        /* a server that resets the HELLO is dying (it accepted, then
         * died): reconnect as after a lost connection */
        if (fd < 0 && !ch->lost_err && retry_after_lost(-fd))
            ch->lost_err = -fd;
        if (fd < 0 && ch->lost_err) {
            ch->lost_ms = xfer_now_ms();
            chan_retry_later(ch, -fd, msg);
            continue;
        }
        if (fd < 0) {
            chan_fail(ch, -fd, msg);
            continue;
        }
        if (chan_show_caps(ch, fd) < 0)
            continue;
        chan_connected(ch, fd);
    }
    /* Time limits start once every channel is connected: a connect to a
     * hung server blocks for its own limit, which must not use up the
     * limit of a channel connected before it. */
    for (size_t k = 0; k < e->nchans; k++)
        e->chans[k]->deadline_ms = xfer_now_ms() + e->request_ms;
}

/* Whether rank has a live connection for a joining batch: its channel's,
 * connected, or the client's cached one.  A connection with nothing on
 * it is probed first (conn_cached: readable then means closed); one
 * found closed is gone, and so is its channel's hold on it. */
static int join_conn_alive(struct xfer_engine *e, uint32_t rank)
{
    struct chan *ch = engine_chan(e, rank);

    if (ch && ch->fd < 0)
        return 0;
    if (ch && chan_active(ch))
        return 1;   /* in use: a break shows in poll */
    if (conn_cached(e->c, rank))
        return 1;
    if (ch)
        ch->fd = -1;
    return 0;
}

/* Whether b may join the running batches without blocking setup: each of
 * its ranks has a live connection (capabilities it does not hold yet go
 * ahead as setup requests). */
static int may_join(struct xfer_engine *e, const struct xfer_batch *b)
{
    if (!(b->flags & XFER_BESIDE) || e->exclusive)
        return 0;
    for (size_t i = 0; i < b->n; i++)
        if (!join_conn_alive(e, b->reqs[i].rank))
            return 0;
    return 1;
}

/* Room for a CAP ahead of every request of b whose connection does not
 * hold its capability yet (more than needed where requests share one):
 * how many, or -ENOMEM. */
static long setup_alloc(struct xfer_engine *e, struct xfer_batch *b)
{
    size_t want = 0;

    for (size_t i = 0; i < b->n; i++)
        want += b->reqs[i].cap && !conn_cap_held(e->c, b->reqs[i].rank, b->reqs[i].cap);
    if (want && !(b->setup = calloc(want, sizeof(*b->setup))))
        return -ENOMEM;
    return (long)want;
}

/* Makes b's setup requests (room taken by setup_alloc): one CAP per rank
 * and capability not held, counted as held at once, so that the same
 * batch and the ones after it send no second one. */
static void setup_make(struct xfer_engine *e, struct xfer_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        const struct xfer_req *r = &b->reqs[i];
        struct xfer_setup *su;

        if (!r->cap || conn_cap_held(e->c, r->rank, r->cap))
            continue;
        su = &b->setup[b->nsetup++];
        su->cap = r->cap;
        su->send[1] = (struct iovec){ .iov_base = (void *)r->cap, .iov_len = sizeof(*r->cap) };
        su->req = (struct xfer_req){ .rank = r->rank, .op = IPVFS_OP_CAP, .send_iov = su->send,
                                     .send_cnt = 2, .setup = 1, .batch = b };
        su->marked = conn_cap_mark(e->c, r->rank, r->cap);
    }
}

/* b joins the running batches (may_join said it can). */
static int join(struct xfer_engine *e, struct xfer_batch *b)
{
    int64_t deadline = xfer_now_ms() + e->request_ms;
    long setups = setup_alloc(e, b);
    int rc;

    if (setups < 0)
        return (int)setups;
    if ((rc = reserve_chans(e, b, b->n + (size_t)setups)) < 0)
        return rc;
    setup_make(e, b);
    for (size_t i = 0; i < b->n; i++) {
        struct chan *ch = engine_chan(e, b->reqs[i].rank);

        /* made now: may_join saw its cached connection alive */
        if (ch->fd < 0)
            chan_connected(ch, e->c->fds[ch->rank]);
        /* the server owes nothing yet: its limit starts now */
        if (chan_idle(ch))
            ch->deadline_ms = deadline;
    }
    enqueue_reqs(e, b);
    return 0;
}

static void engine_free(struct ipvfs_client *c)
{
    struct xfer_engine *e = c->engine;

    for (size_t k = 0; k < e->nchans; k++) {
        free(e->chans[k]->q);
        free(e->chans[k]);
    }
    free(e->chans);
    free(e->pfds);
    free(e->map);
    free(e);
    c->engine = NULL;
}

/* b leaves the queue. */
static void unqueue(struct xfer_batch *b)
{
    struct ipvfs_client *c = b->c;
    struct xfer_batch **pp = &c->queue_head, *prev = NULL;

    while (*pp != b) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = b->next;
    if (c->queue_tail == b)
        c->queue_tail = prev;
    b->next = NULL;
}

/* b could not begin (err, detail): all its requests fail, it is done. */
static void fail_unstarted(struct xfer_batch *b, int err, const char *detail)
{
    for (size_t i = 0; i < b->n; i++) {
        b->reqs[i].err = err;
        b->reqs[i].transport = 1;
        b->reqs[i].answered = 1;
        snprintf(b->reqs[i].msg, sizeof(b->reqs[i].msg), "%s", detail);
    }
    b->left = 0;
    b->state = BATCH_DONE;
    unqueue(b);
}

/* b begins on a fresh engine, alone. */
static int begin(struct ipvfs_client *c, struct xfer_batch *b)
{
    struct xfer_engine *e = calloc(1, sizeof(*e));
    int rc;

    if (!e)
        return -ENOMEM;
    e->c = c;
    e->request_ms = c->request_ms;
    c->engine = e;
    if ((rc = reserve_chans(e, b, b->n)) < 0) {
        engine_free(c);
        return rc;
    }
    enqueue_reqs(e, b);
    connect_chans(e);
    return 0;
}

/* Starts the queued batches that may run now, in queue order; the first
 * that may not stops the walk. */
static void queue_admit(struct ipvfs_client *c)
{
    struct xfer_batch *b = c->queue_head, *next;

    for (; b; b = next) {
        int rc = 0;

        next = b->next;
        if (b->state == BATCH_RUNNING)
            continue;
        if (!c->engine)
            rc = begin(c, b);
        else if (may_join(c->engine, b))
            rc = join(c->engine, b);
        else
            return;
        if (rc < 0)
            fail_unstarted(b, -rc, "out of memory");
    }
}

/* A CAP of b's setup that failed is taken back, and b's failed requests
 * that needed it take its reason (the server refused them for want of
 * it). */
static void setup_failures(struct ipvfs_client *c, struct xfer_batch *b)
{
    for (size_t k = 0; k < b->nsetup; k++) {
        const struct xfer_setup *su = &b->setup[k];

        if (!su->req.err)
            continue;
        conn_cap_unmark(c, su->req.rank, su->cap, su->marked);
        for (size_t i = 0; i < b->n; i++) {
            struct xfer_req *r = &b->reqs[i];

            if (r->err && r->rank == su->req.rank && r->cap &&
                r->cap->handle == su->cap->handle) {
                r->err = su->req.err;
                r->transport = su->req.transport;
                snprintf(r->msg, sizeof(r->msg), "%s", su->req.msg);
            }
        }
    }
}

/* Takes the batches whose requests are all answered off the channels and
 * out of the queue; the engine goes once none runs.  Returns how many. */
static int queue_retire(struct ipvfs_client *c)
{
    struct xfer_engine *e = c->engine;
    struct xfer_batch *b = c->queue_head, *next;
    int retired = 0;

    for (; e && b; b = next) {
        next = b->next;
        if (b->state != BATCH_RUNNING || b->left > 0)
            continue;
        setup_failures(c, b);
        for (size_t k = 0; k < e->nchans; k++)
            chan_forget(e->chans[k], b);
        b->state = BATCH_DONE;
        e->running--;
        unqueue(b);
        retired++;
    }
    if (e && e->running == 0)
        engine_free(c);
    else if (e && retired) {
        e->exclusive = 0;
        for (b = c->queue_head; b; b = b->next)
            if (b->state == BATCH_RUNNING && !(b->flags & XFER_BESIDE))
                e->exclusive = 1;
    }
    return retired;
}

/* Every unanswered request of the engine fails with err. */
static void engine_fail_all(struct xfer_engine *e, int err)
{
    for (size_t k = 0; k < e->nchans; k++)
        if (chan_active(e->chans[k]))
            chan_fail(e->chans[k], err, "");
}

/* Drives the client's batches until b is done or, without block, until
 * the network has nothing more to give right now. */
static void client_pump(struct xfer_batch *b, int block)
{
    struct ipvfs_client *c = b->c;

    while (b->state != BATCH_DONE) {
        struct xfer_engine *e;
        uint64_t before;
        int rc, moved;

        queue_admit(c);
        if (b->state == BATCH_DONE || !(e = c->engine))
            continue;
        before = engine_moved(e);
        rc = engine_poll_round(e, block ? -1 : 0);
        /* 0: nothing is outstanding, so every running batch is done */
        if (rc <= 0)
            engine_fail_all(e, rc < 0 ? -rc : EPROTO);
        /* without block, go on while bytes move: a request sent may give
         * the turn to another server's channel, which can send at once;
         * a batch done may let a queued one begin */
        moved = engine_moved(e) != before;
        if (queue_retire(c) == 0 && !block && !moved)
            return;
    }
}

int xfer_start(struct ipvfs_client *c, struct xfer_req *reqs, size_t n, unsigned flags,
               struct xfer_batch **out_batch)
{
    struct xfer_batch *b = calloc(1, sizeof(*b));

    if (!b)
        return -ENOMEM;
    b->c = c;
    b->reqs = reqs;
    b->n = n;
    b->flags = flags;
    if (save_iovecs(b) < 0) {
        free(b->saved_at);
        free(b);
        return -ENOMEM;
    }
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
    struct xfer_req *reqs = b->reqs;
    size_t n = b->n;

    xfer_wait(b);
    free(b->setup);
    free(b->saved);
    free(b->saved_at);
    free(b);
    for (size_t i = 0; i < n; i++)
        if (reqs[i].err)
            return (long)i;
    return -1;
}

static long run_batch(struct ipvfs_client *c, struct xfer_req *reqs, size_t n, unsigned flags)
{
    struct xfer_batch *b;

    if (xfer_start(c, reqs, n, flags, &b) < 0) {
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
    return run_batch(c, reqs, n, XFER_IN_ORDER);
}
