/* The connection layer (srvconn.h states its state machines, ownership
 * and bounds): links that read requests, run several at once and write
 * each reply when it is ready. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/server/srvconn.h"
#include "backend/server/reqorder.h"
#include "common/log.h"
#include "common/net.h"

enum link_rx { RX_HDR, RX_BODY, RX_HOLD, RX_OFF };
enum req_state { REQ_RECEIVING, REQ_PENDING, REQ_BUSY, REQ_QUEUED, REQ_WRITING };

struct link;

/* One request (see the header: what handlers see). */
struct conn {
    struct link *l;
    enum req_state state;
    int close_after;
    struct ipvfs_hdr hdr;
    uint8_t *body;
    struct req_shape shape;
    uint64_t held;                /* bytes charged to the link and server */
    uint64_t busy_since_ms;

    struct ipvfs_hdr rep_hdr;
    void *rep_body;
    struct iovec *rep_iov;        /* conn_reply_iov: [0] the header, then the body */
    int rep_niov;

    void (*sent_cb)(struct server *srv, void *arg);
    void *sent_arg;

    struct conn *next;            /* the link's requests, arrival order */
    struct conn *wnext;           /* the link's queued replies */
};

struct link {
    struct server *srv;
    int fd;
    int dead;                     /* socket closed; freed when nbusy is 0 */
    struct access acc;            /* who is behind it (access.h) */
    int events;                   /* what the loop watches now */
    uint64_t flush_id;            /* a deferred write of the queued replies */
    char peer[64];

    enum link_rx rx;
    struct ipvfs_hdr rxhdr;       /* the header being read */
    size_t hdr_got;
    struct conn *rxreq;           /* RX_BODY: the request being read */
    size_t body_got;

    struct conn *reqs, *reqs_tail;
    uint32_t nreqs, nbusy;
    uint64_t held;
    struct conn *wq, *wq_tail;    /* queued replies; the head is written */
    struct iovec wiov[2];         /* its header and body (not conn_reply_iov's) */
    struct iovec *wv;             /* what is written: wiov or its rep_iov */
    int wn, wiov_start;
    uint64_t last_sent_ms;        /* a reply or keepalive went out */

    struct conn serial;           /* every request that is not READ/WRITE */
    int serial_taken;

    struct link *prev, *next;     /* srv->conns.live, or .dead (next only) */
};

struct server *conn_server(const struct conn *c)
{
    return c->l->srv;
}

uint32_t conn_client_id(const struct conn *c)
{
    return c->l->acc.client_id;
}

struct client_counters *conn_client_counters(struct conn *c)
{
    return server_client_counters(c->l->srv, c->l->acc.client_id);
}

struct access *conn_access(struct conn *c)
{
    return &c->l->acc;
}

void conn_count_bytes(struct conn *c, uint64_t in, uint64_t out)
{
    struct server *srv = c->l->srv;
    struct client_counters *cc = server_client_counters(srv, c->l->acc.client_id);

    srv->total.bytes_in += in;
    srv->total.bytes_out += out;
    if (cc) {
        cc->c.bytes_in += in;
        cc->c.bytes_out += out;
    }
}

/* A request counts for the rank, and for its client once AUTH named it
 * (HELLO and MAP before it count for the rank alone; AUTH, counted after
 * it ran, for the client it proved). */
static void count_request(struct conn *c)
{
    struct client_counters *cc;

    c->l->srv->total.requests++;
    if (access_authed(&c->l->acc) &&
        (cc = server_client_counters(c->l->srv, c->l->acc.client_id)))
        cc->c.requests++;
}

/* Gives back what r held of the link's and the server's window. */
static void release(struct conn *r)
{
    r->l->held -= r->held;
    r->l->srv->conns.held[reqorder_pool(r->hdr.op)] -= r->held;
    r->held = 0;
}

static void charge(struct conn *r, uint64_t bytes)
{
    r->held += bytes;
    r->l->held += bytes;
    r->l->srv->conns.held[reqorder_pool(r->hdr.op)] += bytes;
}

/* Takes r off its link's lists and frees it (the serial one is reset). */
static void req_free(struct conn *r)
{
    struct link *l = r->l;
    struct conn **pp = &l->reqs;

    while (*pp && *pp != r)
        pp = &(*pp)->next;
    if (*pp) {
        *pp = r->next;
        if (l->reqs_tail == r) {
            l->reqs_tail = NULL;
            for (struct conn *q = l->reqs; q; q = q->next)
                l->reqs_tail = q;
        }
        l->nreqs--;
    }
    release(r);
    free(r->body);
    free(r->rep_body);
    free(r->rep_iov);
    r->body = NULL;
    r->rep_body = NULL;
    r->rep_iov = NULL;
    if (r == &l->serial) {
        memset(&l->serial, 0, sizeof(l->serial));
        l->serial.l = l;
        l->serial_taken = 0;
    } else {
        free(r);
    }
}

/* Runs the hooks of a dead link and frees it with its requests. */
static void link_free(struct link *l)
{
    struct conn_layer *cl = &l->srv->conns;

    while (l->reqs) {
        struct conn *r = l->reqs;
        void (*cb)(struct server *, void *) = r->sent_cb;

        r->sent_cb = NULL;
        if (cb)
            cb(l->srv, r->sent_arg);
        req_free(r);
    }
    for (size_t i = 0; i < cl->nservices; i++)
        if (cl->services[i]->conn_closed)
            cl->services[i]->conn_closed(l->srv, &l->serial);
    free(l);
}

static void wake_all(struct server *srv);
static void on_writable(struct link *l);

/* Frees the dead links, those that die meanwhile included. */
static void reap_dead(struct evloop *loop, uint64_t id, void *user)
{
    struct server *srv = user;
    struct conn_layer *cl = &srv->conns;

    while (cl->dead) {
        struct link *l = cl->dead;

        cl->dead = l->next;
        link_free(l);
    }
    cl->reap_id = 0;
    /* what they held is free now */
    if (cl->want_wake && loop)
        wake_all(srv);
}

/* Moves a closed link without BUSY requests to the dead list. */
static void link_bury(struct link *l)
{
    struct conn_layer *cl = &l->srv->conns;

    if (l->prev)
        l->prev->next = l->next;
    else
        cl->live = l->next;
    if (l->next)
        l->next->prev = l->prev;
    l->prev = NULL;
    l->next = cl->dead;
    cl->dead = l;
    if (!cl->reap_id && !(cl->reap_id = evloop_defer_outer(l->srv->loop, reap_dead, l->srv)))
        log_warn("no memory to schedule freeing closed connections; they wait for the next");
}

/* Takes l off its socket now; the loop frees it once its BUSY requests
 * have replied (see the header). */
static void link_fail(struct link *l, const char *why)
{
    if (l->dead)
        return;
    log_debug("connection %s: %s", l->peer, why);
    if (l->flush_id)
        evloop_del_timer(l->srv->loop, l->flush_id);
    l->flush_id = 0;
    evloop_del_fd(l->srv->loop, l->fd);
    close(l->fd);
    l->fd = -1;
    l->dead = 1;
    l->rx = RX_OFF;
    if (l->nbusy == 0)
        link_bury(l);
}

/* Watches the socket for what l can do now. */
static void link_arm(struct link *l)
{
    int want = 0;

    if (l->dead)
        return;
    if (l->rx == RX_HDR || l->rx == RX_BODY)
        want |= EV_READ;
    if (l->wq)
        want |= EV_WRITE;
    if (want == l->events)
        return;
    if (evloop_mod_fd(l->srv->loop, l->fd, want) < 0) {
        link_fail(l, "cannot wait for the socket");
        return;
    }
    l->events = want;
}

static void link_flush_run(struct evloop *loop, uint64_t id, void *user)
{
    struct link *l = user;

    (void)loop, (void)id;
    l->flush_id = 0;
    if (!l->dead)
        on_writable(l);
}

/* Writes the queued replies after the running callback; EV_WRITE is armed
 * only when the socket fills (per reply it cost two epoll_ctl calls). */
static void link_flush_soon(struct link *l)
{
    if (l->flush_id || (l->events & EV_WRITE))
        return;     /* a flush, or the socket's readiness, writes them */
    if (!(l->flush_id = evloop_defer(l->srv->loop, link_flush_run, l)))
        link_arm(l);    /* no memory: wait for the socket instead */
}

void conn_reply_iov(struct conn *c, uint32_t status, void *body, struct iovec *iov, int niov)
{
    size_t len = 0;

    for (int i = 1; i < niov; i++)
        len += iov[i].iov_len;
    c->rep_iov = iov;
    c->rep_niov = niov;
    conn_reply(c, status, body, len);
}

void conn_reply(struct conn *c, uint32_t status, void *body, size_t len)
{
    struct link *l = c->l;

    l->nbusy--;
    l->srv->conns.nbusy--;
    if (l->dead) {
        /* a zombie: the reply goes nowhere; link_free runs the hook */
        free(body);
        c->state = REQ_QUEUED;
        if (l->nbusy == 0)
            link_bury(l);
        return;
    }
    c->rep_hdr = (struct ipvfs_hdr){
        .magic = IPVFS_PROTO_MAGIC,
        /* the request's version: a refusal of another version must be
         * readable by its sender (the header is the same in every one) */
        .version = c->hdr.magic == IPVFS_PROTO_MAGIC && c->hdr.version ? c->hdr.version
                                                                     : IPVFS_PROTO_VERSION,
        .op = (uint16_t)(c->hdr.op | IPVFS_OP_REPLY),
        .status = status,
        .req_id = c->hdr.req_id,
        .body_len = len,
    };
    c->rep_body = body;
    c->state = REQ_QUEUED;
    c->wnext = NULL;
    if (l->wq_tail)
        l->wq_tail->wnext = c;
    else
        l->wq = c;
    l->wq_tail = c;
    link_flush_soon(l);
}

void conn_reply_err(struct conn *c, int status, const char *fmt, ...)
{
    char *msg = malloc(512);
    va_list ap;

    if (msg) {
        va_start(ap, fmt);
        vsnprintf(msg, 512, fmt, ap);
        va_end(ap);
        /* Clients probe for names all the time: expected misses stay quiet. */
        char who[64];

        access_describe(&c->l->acc, who, sizeof(who));
        ipvfs_log(status == ENOENT || status == EEXIST ? IPVFS_LOG_DEBUG : IPVFS_LOG_INFO,
                  "%s: op %u from %s, %s: %s (%s)",
                  status == EACCES || status == EPERM ? "refused" : "request failed",
                  c->hdr.op, c->l->peer, who, msg, strerror(status));
    }
    conn_reply(c, (uint32_t)status, msg, msg ? strlen(msg) + 1 : 0);
}

void conn_on_reply_sent(struct conn *c, void (*cb)(struct server *srv, void *arg), void *arg)
{
    c->sent_cb = cb;
    c->sent_arg = arg;
}

void conn_close_after_reply(struct conn *c)
{
    c->close_after = 1;
}

int srvconn_register(struct server *srv, const struct service *svc)
{
    struct conn_layer *cl = &srv->conns;

    if (cl->nservices == SERVER_MAX_SERVICES) {
        log_error("cannot register service %s: %d services at most", svc->name,
                  SERVER_MAX_SERVICES);
        return -ENOSPC;
    }
    cl->services[cl->nservices++] = svc;
    return 0;
}

static const struct op_entry *find_op(const struct server *srv, uint16_t op)
{
    const struct conn_layer *cl = &srv->conns;

    for (size_t i = 0; i < cl->nservices; i++)
        for (const struct op_entry *e = cl->services[i]->ops; e->handler; e++)
            if (e->op == op)
                return e;
    return NULL;
}

/* The BUSY request of l that started first, or NULL. */
static const struct conn *oldest_busy(const struct link *l)
{
    const struct conn *old = NULL;

    for (const struct conn *r = l->reqs; r; r = r->next)
        if (r->state == REQ_BUSY && (!old || r->busy_since_ms < old->busy_since_ms))
            old = r;
    return old;
}

/* Sends l a keepalive when its oldest BUSY request has waited long enough
 * and nothing went out meanwhile. */
static void send_progress(struct link *l, uint64_t now)
{
    const struct conn *r = oldest_busy(l);
    struct ipvfs_hdr h = {
        .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
        .op = IPVFS_OP_PROGRESS | IPVFS_OP_REPLY,
    };
    uint64_t since;
    int queued = 0;
    ssize_t n;

    if (!r || l->wq)
        return;
    since = r->busy_since_ms > l->last_sent_ms ? r->busy_since_ms : l->last_sent_ms;
    if (now - since < IPVFS_PROGRESS_MS)
        return;
    /* a client that stopped reading: its own limit will end it */
    if (ioctl(l->fd, SIOCOUTQ, &queued) < 0 || queued != 0)
        return;
    h.req_id = r->hdr.req_id;
    n = send(l->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == (ssize_t)sizeof(h))
        l->last_sent_ms = now;
    else if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        link_fail(l, n >= 0 ? "keepalive cut short" : strerror(errno));
}

static void progress_tick(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct conn_layer *cl = &((struct server *)user)->conns;
    uint64_t now = evloop_now_ms();
    struct link *next;

    cl->progress_timer = 0;
    for (struct link *l = cl->live; l; l = next) {
        next = l->next;  /* a link without BUSY requests may die and leave */
        if (l->nbusy && !l->dead)
            send_progress(l, now);
    }
    if (cl->nbusy)
        cl->progress_timer = evloop_add_timer(loop, IPVFS_PROGRESS_MS / 4, progress_tick, user);
}

/* Called when r goes BUSY: keepalives start IPVFS_PROGRESS_MS from now. */
static void progress_watch(struct conn *r)
{
    struct conn_layer *cl = &r->l->srv->conns;

    if (!cl->progress_timer)
        cl->progress_timer = evloop_add_timer(r->l->srv->loop, IPVFS_PROGRESS_MS / 4,
                                              progress_tick, r->l->srv);
    if (!cl->progress_timer)
        log_warn("connection %s: no keepalive timer; a slow request may time out", r->l->peer);
}

/* Runs r's handler. */
static void dispatch(struct conn *r)
{
    struct link *l = r->l;
    const struct op_entry *e = find_op(l->srv, r->hdr.op);
    int authed = access_authed(&l->acc), err;
    char msg[256];

    r->state = REQ_BUSY;
    r->busy_since_ms = evloop_now_ms();
    l->nbusy++;
    l->srv->conns.nbusy++;
    /* requests before AUTH count once the handler ran (AUTH names the client) */
    if (authed)
        count_request(r);
    if ((err = access_check(l->srv, &l->acc, r->hdr.op, r->body, r->hdr.body_len, msg,
                            sizeof(msg)))) {
        if (!authed)
            conn_close_after_reply(r);
        conn_reply_err(r, err, "%s", msg);
    } else if (!(e->roles & l->srv->role)) {
        conn_reply_err(r, EOPNOTSUPP, "rank %d (%s) does not serve %s", l->srv->rank,
                       role_name(l->srv->role), e->name);
    } else {
        e->handler(r, &r->hdr, r->body);
    }
    if (!authed)
        count_request(r);
    /* Still BUSY: the handler went async and will call conn_reply later. */
    if (r->state == REQ_BUSY)
        progress_watch(r);
}

/* Whether PENDING r may start: no earlier request it must follow is
 * unfinished, and its READ data fits the windows. */
static int may_start(const struct link *l, const struct conn *r)
{
    const struct conn_layer *cl = &l->srv->conns;

    for (const struct conn *q = l->reqs; q != r; q = q->next)
        if ((q->state == REQ_PENDING || q->state == REQ_BUSY) &&
            reqorder_must_wait(&q->shape, &r->shape))
            return 0;
    return reqorder_may_start(r->shape.reply_bytes, l->held, l->nbusy, cl->held[REQ_POOL_OTHER],
                              cl->nbusy);
}

/* Starts every PENDING request of l that may start now, in order; the
 * server wakes every link at its next freed bytes if one had to wait. */
static void link_start_ready(struct link *l)
{
    for (struct conn *r = l->reqs; r && !l->dead; r = r->next) {
        if (r->state != REQ_PENDING)
            continue;
        if (!may_start(l, r)) {
            l->srv->conns.want_wake = 1;
            continue;
        }
        charge(r, r->shape.reply_bytes);
        dispatch(r);
    }
}


/* Returns 0 when the header may be followed, else the errno to reply. */
static int check_header(struct link *l)
{
    const struct ipvfs_hdr *h = &l->rxhdr;

    if (h->magic != IPVFS_PROTO_MAGIC) {
        log_warn("connection %s: bad magic %#x", l->peer, h->magic);
        return EPROTO;
    }
    if (h->version != IPVFS_PROTO_VERSION) {
        log_warn("connection %s: protocol version %u, not %u", l->peer, h->version,
                 IPVFS_PROTO_VERSION);
        return EPROTONOSUPPORT;
    }
    if (!find_op(l->srv, h->op)) {
        log_warn("connection %s: unknown op %u", l->peer, h->op);
        return EPROTO;
    }
    if (h->body_len > IPVFS_MAX_BODY) {
        log_warn("connection %s: request body of %llu bytes exceeds the bound of %llu that "
                 "HELLO stated; closing the connection", l->peer,
                 (unsigned long long)h->body_len, (unsigned long long)IPVFS_MAX_BODY);
        return EMSGSIZE;
    }
    return 0;
}

/* Appends r, for the header just read, to l's requests in state. */
static void link_append(struct link *l, struct conn *r, enum req_state state)
{
    r->l = l;
    r->hdr = l->rxhdr;
    r->state = state;
    r->next = NULL;
    if (l->reqs_tail)
        l->reqs_tail->next = r;
    else
        l->reqs = r;
    l->reqs_tail = r;
    l->nreqs++;
}

/* A request for the header just read, appended; NULL without memory. */
static struct conn *link_add_req(struct link *l)
{
    int data = l->rxhdr.op == IPVFS_OP_READ || l->rxhdr.op == IPVFS_OP_WRITE;
    struct conn *r = data ? calloc(1, sizeof(*r)) : &l->serial;

    if (!r)
        return NULL;
    l->serial_taken |= !data;
    link_append(l, r, REQ_RECEIVING);
    return r;
}

/* Refuses what l sent and stops reading it; the reply goes out after
 * those queued before it, then the link closes. */
static void link_refuse(struct link *l, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void link_refuse(struct link *l, int err, const char *fmt, ...)
{
    struct conn *r = calloc(1, sizeof(*r));
    char msg[256];
    va_list ap;

    l->rx = RX_OFF;
    if (!r) {
        link_fail(l, "no memory to refuse a request");
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    link_append(l, r, REQ_BUSY);
    l->nbusy++;
    l->srv->conns.nbusy++;
    conn_close_after_reply(r);
    conn_reply_err(r, err, "%s", msg);
}

/* A whole header is in: check it and start reading its body, or hold. */
static int header_in(struct link *l)
{
    int data = l->rxhdr.op == IPVFS_OP_READ || l->rxhdr.op == IPVFS_OP_WRITE;
    int err = check_header(l);

    if (err == EPROTONOSUPPORT) {
        link_refuse(l, err, "protocol version %u is not supported: this server speaks "
                    "version %u (mixed builds?)", l->rxhdr.version, IPVFS_PROTO_VERSION);
        return -1;
    }
    if (err == EMSGSIZE) {
        link_refuse(l, err, "request body of %llu bytes is over the bound of %llu; closing "
                    "the connection", (unsigned long long)l->rxhdr.body_len,
                    (unsigned long long)IPVFS_MAX_BODY);
        return -1;
    }
    if (err) {
        link_refuse(l, err, "malformed request header; closing the connection");
        return -1;
    }
    if ((!data && l->serial_taken) ||    /* the slot frees when its reply is written */
        (reqorder_pool(l->rxhdr.op) == REQ_POOL_WRITE &&
         !reqorder_may_admit(l->nreqs, l->held, l->srv->conns.held[REQ_POOL_WRITE]))) {
        l->srv->conns.want_wake |= data;
        l->rx = RX_HOLD;
        return 0;
    }
    if (!(l->rxreq = link_add_req(l))) {
        link_refuse(l, ENOMEM, "no memory for a request");
        return -1;
    }
    l->body_got = 0;
    l->rxreq->body = l->rxhdr.body_len ? malloc(l->rxhdr.body_len) : NULL;
    if (l->rxhdr.body_len && !l->rxreq->body) {
        req_free(l->rxreq);
        l->rxreq = NULL;
        link_refuse(l, ENOMEM, "no memory for a %llu-byte request",
                    (unsigned long long)l->rxhdr.body_len);
        return -1;
    }
    charge(l->rxreq, l->rxhdr.body_len);
    l->rx = RX_BODY;
    return 0;
}

/* Reads into buf[*got..want); 1 when complete, 0 when the socket is dry,
 * -1 when the link is gone (already handled). */
static int read_some(struct link *l, void *buf, size_t want, size_t *got)
{
    while (*got < want) {
        ssize_t n = read(l->fd, (uint8_t *)buf + *got, want - *got);
        if (n > 0) {
            *got += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n == 0 && (l->rx != RX_HDR || *got))
            log_warn("connection %s: closed in the middle of a request", l->peer);
        link_fail(l, n == 0 ? "closed by peer" : strerror(errno));
        return -1;
    }
    return 1;
}

/* Whether l may read another request now (see "room" in the header). */
static int link_has_room(const struct link *l)
{
    return reqorder_may_admit(l->nreqs, l->held, l->srv->conns.held[REQ_POOL_OTHER]);
}

static void on_readable(struct link *l)
{
    while (!l->dead && (l->rx == RX_HDR || l->rx == RX_BODY)) {
        if (l->rx == RX_HDR) {
            if (!link_has_room(l)) {
                l->rx = RX_HOLD;
                l->srv->conns.want_wake = 1;
                break;
            }
            if (read_some(l, &l->rxhdr, sizeof(l->rxhdr), &l->hdr_got) <= 0)
                break;
            if (header_in(l) < 0 || l->rx != RX_BODY)
                break;
        }
        if (read_some(l, l->rxreq->body, l->rxhdr.body_len, &l->body_got) <= 0)
            break;
        reqorder_describe(&l->rxreq->hdr, l->rxreq->body, &l->rxreq->shape);
        l->rxreq->state = REQ_PENDING;
        l->rxreq = NULL;
        l->hdr_got = 0;
        l->rx = RX_HDR;
        link_start_ready(l);
    }
    link_arm(l);
}

/* A held link may read again when there is room (and, for a barrier
 * header waiting, the serial slot is free). */
static void link_resume(struct link *l)
{
    if (l->dead || l->rx != RX_HOLD)
        return;
    if (l->hdr_got == sizeof(l->rxhdr)) {
        if (l->serial_taken)
            return;
        /* the body may be in already, or empty: read on at once */
        if (header_in(l) == 0)
            on_readable(l);
        return;
    } else if (!link_has_room(l)) {
        l->srv->conns.want_wake = 1;
        return;
    } else {
        l->rx = RX_HDR;
    }
    link_arm(l);
}

/* Bytes were freed while some link waited for room: every link may go on
 * (those that still cannot set want_wake again). */
static void wake_all(struct server *srv)
{
    struct link *next;

    srv->conns.want_wake = 0;
    for (struct link *l = srv->conns.live; l; l = next) {
        next = l->next;
        link_resume(l);
        if (!l->dead)
            link_start_ready(l);
    }
}

/* r's reply is written: free it, run its hook, read and start more. */
static void reply_done(struct link *l, struct conn *r)
{
    void (*cb)(struct server *, void *) = r->sent_cb;
    struct server *srv = l->srv;
    void *arg = r->sent_arg;
    int close_after = r->close_after;

    l->wq = r->wnext;
    if (!l->wq)
        l->wq_tail = NULL;
    r->sent_cb = NULL;
    req_free(r);
    l->last_sent_ms = evloop_now_ms();
    if (close_after) {
        link_fail(l, "closed after its reply");
    } else {
        link_resume(l);
        link_start_ready(l);
    }
    if (srv->conns.want_wake)
        wake_all(srv);
    if (cb)
        cb(srv, arg); /* l may be dead by now */
}

static void on_writable(struct link *l)
{
    while (l->wq && !l->dead) {
        struct conn *r = l->wq;
        ssize_t n;

        if (r->state == REQ_QUEUED) {
            l->wv = r->rep_iov ? r->rep_iov : l->wiov;
            l->wn = r->rep_iov ? r->rep_niov : 2;
            l->wv[0] = (struct iovec){ &r->rep_hdr, sizeof(r->rep_hdr) };
            if (!r->rep_iov)
                l->wv[1] = (struct iovec){ r->rep_body, r->rep_hdr.body_len };
            l->wiov_start = 0;
            r->state = REQ_WRITING;
        }
        while (l->wiov_start < l->wn) {
            int cnt = l->wn - l->wiov_start < IOV_MAX ? l->wn - l->wiov_start : IOV_MAX;
            n = writev(l->fd, l->wv + l->wiov_start, cnt);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                goto arm;   /* full: the rest when the loop sees room */
            if (n < 0) {
                link_fail(l, strerror(errno));
                return;
            }
            l->wiov_start = net_iov_advance(l->wv, l->wn, l->wiov_start, (size_t)n);
        }
        reply_done(l, r);
    }
arm:
    link_arm(l);
}

static void on_conn_event(struct evloop *loop, int fd, int events, void *user)
{
    struct link *l = user;

    if (l->dead)
        return;
    if (events & EV_WRITE)
        on_writable(l);
    if (!l->dead && (events & EV_READ))
        on_readable(l);
    if (!l->dead && (events & EV_ERROR))
        link_fail(l, "socket error or hang-up");
}

static void on_accept(struct evloop *loop, int fd, int events, void *user)
{
    struct server *srv = user;
    struct link *l;
    int cfd;

    while ((cfd = net_accept(fd)) >= 0) {
        if (net_set_nonblock(cfd, 1) < 0 || !(l = calloc(1, sizeof(*l)))) {
            log_warn("dropping a connection: %s", strerror(errno));
            close(cfd);
            continue;
        }
        if (net_set_nodelay(cfd) < 0)
            log_debug("connection fd %d: no TCP_NODELAY", cfd);
        l->srv = srv;
        l->fd = cfd;
        l->rx = RX_HDR;
        l->serial.l = l;
        l->events = EV_READ;
        net_peer_name(cfd, l->peer, sizeof(l->peer));
        if (evloop_set_fd(loop, cfd, EV_READ, on_conn_event, l) < 0) {
            log_warn("dropping a connection: cannot watch it");
            close(cfd);
            free(l);
            continue;
        }
        l->next = srv->conns.live;
        if (l->next)
            l->next->prev = l;
        srv->conns.live = l;
    }
    if (cfd != -EAGAIN)
        log_warn("accept failed: %s", strerror(-cfd));
}

int srvconn_listen(struct server *srv)
{
    int fd = srv->conns.listen_fd;

    if (fd < 0) {
        log_error("no listening socket on %s", srv->bind_addr);
        return -EBADF;
    }
    if (net_set_nonblock(fd, 1) < 0 || evloop_set_fd(srv->loop, fd, EV_READ, on_accept, srv) < 0) {
        log_error("cannot watch the listening socket");
        close(fd);
        srv->conns.listen_fd = -1;
        return -EIO;
    }
    return 0;
}

void srvconn_close_all(struct server *srv)
{
    struct conn_layer *cl = &srv->conns;

    evloop_del_timer(srv->loop, cl->progress_timer);
    cl->progress_timer = 0;
    while (cl->live) {
        struct link *l = cl->live;

        /* the stores are closed: nothing in flight completes later */
        cl->nbusy -= l->nbusy;
        l->nbusy = 0;
        if (l->dead)
            link_bury(l);
        else
            link_fail(l, "server stopping");
    }
    /* Outside the loop now: nothing else will reap them. */
    evloop_del_timer(srv->loop, cl->reap_id);
    reap_dead(NULL, 0, srv);
    if (srv->conns.listen_fd >= 0) {
        evloop_del_fd(srv->loop, srv->conns.listen_fd);
        close(srv->conns.listen_fd);
        srv->conns.listen_fd = -1;
    }
}
