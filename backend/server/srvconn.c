/* The connection layer (srvconn.h): one nonblocking state machine per
 * client socket, and dispatch to the registered services.
 *
 * States and transitions (the only ones there are):
 *
 *   READ_HDR  --32 header bytes in, header valid--------------> READ_BODY
 *   READ_HDR  --header invalid (magic/version/op/size)--------> WRITE (close after)
 *   READ_BODY --body_len bytes in (at once if 0)--------------> dispatch:
 *               no HELLO yet and op != HELLO                  -> WRITE (EACCES, close after)
 *               op not served by this rank's roles            -> WRITE (EOPNOTSUPP)
 *               handler replied before returning              -> WRITE
 *               handler went async                            -> BUSY
 *   BUSY      --conn_reply() from the completion-------------> WRITE
 *   WRITE     --reply fully written--------------------------> READ_HDR (or DEAD)
 *   any state --peer hang-up, socket error, EOF--------------> DEAD, except
 *   BUSY      --peer hang-up--------------------------------> ZOMBIE
 *   ZOMBIE    --conn_reply() from the completion-------------> DEAD
 *
 * DEAD (conn_kill) deregisters and closes the socket at once and moves the
 * connection to srv->conns.dead.  A call deferred to the outermost loop
 * level (reap_dead) then runs a pending reply-sent hook and every service's
 * conn_closed hook, and frees the buffers and the connection: never inside
 * a nested run of the loop (the stores run one while they close) and never
 * inside another connection's teardown, so no hook re-enters another.  A
 * connection in BUSY has a completion outstanding that holds a pointer to
 * it, so it is not killed then: it becomes a ZOMBIE that the completion's
 * reply kills.
 *
 * Buffers: the connection owns the request body (c->body, malloc'd per
 * request, freed when the reply is written, so handlers may point into it
 * across async calls, as READ/WRITE do with the pairs and data) and the
 * reply body handed over by conn_reply().  The reply is sent with one
 * writev of header + body, so READ data goes from the store's buffer to
 * the socket without another copy.
 *
 * Replies are never written from inside conn_reply(): it arms EV_WRITE and
 * the loop writes, so a handler never re-enters the state machine.
 *
 * Keepalive (common/proto.h): a connection BUSY for IPVFS_PROGRESS_MS gets
 * a bare PROGRESS header about every IPVFS_PROGRESS_MS until its reply.  In
 * BUSY nothing else is written on the socket, and the header goes out only
 * when the socket's send queue is empty, so its 32 bytes never interleave
 * with a reply.  One timer serves all connections; it runs only while some
 * connection is BUSY. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
#include "common/log.h"
#include "common/net.h"

enum conn_state { READ_HDR, READ_BODY, BUSY, WRITE, ZOMBIE, DEAD };

struct conn {
    struct server *srv;
    int fd;
    enum conn_state state;
    int authed;
    int close_after;
    uint32_t client_id;
    char peer[64];

    struct ipvfs_hdr hdr;
    size_t hdr_got;
    uint8_t *body;
    size_t body_got;

    uint64_t busy_since_ms;       /* when the request in progress arrived */
    uint64_t progress_sent_ms;    /* last keepalive, 0: none for it yet */

    struct ipvfs_hdr rep_hdr;
    void *rep_body;
    struct iovec iov[2];
    int iov_start;

    void (*sent_cb)(struct server *srv, void *arg);
    void *sent_arg;

    struct conn *prev, *next;   /* srv->conns.live, or .dead (next only) */
};

struct server *conn_server(const struct conn *c)
{
    return c->srv;
}

uint32_t conn_client_id(const struct conn *c)
{
    return c->client_id;
}

struct client_counters *conn_client_counters(struct conn *c)
{
    return server_client_counters(c->srv, c->client_id);
}

void conn_count_bytes(struct conn *c, uint64_t in, uint64_t out)
{
    struct client_counters *cc = server_client_counters(c->srv, c->client_id);

    c->srv->total.bytes_in += in;
    c->srv->total.bytes_out += out;
    if (cc) {
        cc->c.bytes_in += in;
        cc->c.bytes_out += out;
    }
}

static void count_request(struct conn *c)
{
    struct client_counters *cc = server_client_counters(c->srv, c->client_id);

    c->srv->total.requests++;
    if (cc)
        cc->c.requests++;
}

/* Runs the hooks of a dead connection and frees it. */
static void conn_free(struct conn *c)
{
    struct conn_layer *cl = &c->srv->conns;
    void (*cb)(struct server *, void *) = c->sent_cb;

    c->sent_cb = NULL;
    if (cb)
        cb(c->srv, c->sent_arg);
    for (size_t i = 0; i < cl->nservices; i++)
        if (cl->services[i]->conn_closed)
            cl->services[i]->conn_closed(c->srv, c);
    free(c->body);
    free(c->rep_body);
    free(c);
}

/* Frees the dead connections, those that die meanwhile included. */
static void reap_dead(struct evloop *loop, uint64_t id, void *user)
{
    struct conn_layer *cl = &((struct server *)user)->conns;

    while (cl->dead) {
        struct conn *c = cl->dead;

        cl->dead = c->next;
        conn_free(c);
    }
    cl->reap_id = 0;
}

/* Takes c off its socket now; the loop frees it (see the header). */
static void conn_kill(struct conn *c)
{
    struct conn_layer *cl = &c->srv->conns;

    if (c->state == DEAD)
        return;
    evloop_del_fd(c->srv->loop, c->fd);
    close(c->fd);
    c->fd = -1;
    c->state = DEAD;
    if (c->prev)
        c->prev->next = c->next;
    else
        cl->live = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = NULL;
    c->next = cl->dead;
    cl->dead = c;
    if (!cl->reap_id && !(cl->reap_id = evloop_defer_outer(c->srv->loop, reap_dead, c->srv)))
        log_warn("no memory to schedule freeing closed connections; they wait for the next");
}

/* Peer gone or socket broken: kill now, or leave it to the completion. */
static void conn_fail(struct conn *c, const char *why)
{
    log_debug("connection %s: %s", c->peer, why);
    if (c->state == BUSY) {
        evloop_del_fd(c->srv->loop, c->fd);
        c->state = ZOMBIE;
        return;
    }
    conn_kill(c);
}

void conn_reply(struct conn *c, uint32_t status, void *body, size_t len)
{
    if (c->state == ZOMBIE || c->state == DEAD) {
        free(body);
        conn_kill(c);
        return;
    }
    c->rep_hdr = (struct ipvfs_hdr){
        .magic = IPVFS_PROTO_MAGIC,
        .version = IPVFS_PROTO_VERSION,
        .op = (uint16_t)(c->hdr.op | IPVFS_OP_REPLY),
        .status = status,
        .req_id = c->hdr.req_id,
        .body_len = len,
    };
    c->rep_body = body;
    c->iov[0] = (struct iovec){ &c->rep_hdr, sizeof(c->rep_hdr) };
    c->iov[1] = (struct iovec){ body, len };
    c->iov_start = 0;
    c->state = WRITE;
    if (evloop_mod_fd(c->srv->loop, c->fd, EV_WRITE) < 0)
        conn_fail(c, "cannot wait for the socket");
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
        ipvfs_log(status == ENOENT || status == EEXIST ? IPVFS_LOG_DEBUG : IPVFS_LOG_INFO,
                  "%s: op %u from %s: %s (%s)", c->authed ? "request failed" : "refused",
                  c->hdr.op, c->peer, msg, strerror(status));
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

/* Compares in time independent of where the secrets differ. */
static int secret_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t diff = 0;

    for (size_t i = 0; i < IPVFS_SECRET_LEN; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

static void handle_hello(struct conn *c, const struct ipvfs_hdr *hdr, const uint8_t *body)
{
    struct ipvfs_hello_rep *rep;
    struct ipvfs_hello_req req;

    if (hdr->body_len != sizeof(req)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EINVAL, "HELLO body is %llu bytes, not %zu",
                       (unsigned long long)hdr->body_len, sizeof(req));
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (!secret_equal(req.secret, c->srv->secret)) {
        conn_close_after_reply(c);
        conn_reply_err(c, EACCES, "wrong cluster secret");
        return;
    }
    if (!(rep = malloc(sizeof(*rep)))) {
        conn_reply_err(c, ENOMEM, "out of memory");
        return;
    }
    c->authed = 1;
    c->client_id = req.client_id;
    rep->rank = (uint32_t)c->srv->rank;
    rep->role = c->srv->role;
    conn_reply(c, 0, rep, sizeof(*rep));
}

static const struct op_entry conn_ops[] = {
    { IPVFS_OP_HELLO, IPVFS_ROLE_METADATA | IPVFS_ROLE_IO | IPVFS_ROLE_TARGET, handle_hello,
      "HELLO" },
    { 0, 0, NULL, NULL },
};

/* Sends c a keepalive when its request has waited long enough. */
static void send_progress(struct conn *c, uint64_t now)
{
    struct ipvfs_hdr h = {
        .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
        .op = IPVFS_OP_PROGRESS | IPVFS_OP_REPLY, .req_id = c->hdr.req_id,
    };
    uint64_t since = c->progress_sent_ms ? c->progress_sent_ms : c->busy_since_ms;
    int queued = 0;
    ssize_t n;

    if (now - since < IPVFS_PROGRESS_MS)
        return;
    /* a client that stopped reading: its own limit will end it */
    if (ioctl(c->fd, SIOCOUTQ, &queued) < 0 || queued != 0)
        return;
    n = send(c->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == (ssize_t)sizeof(h))
        c->progress_sent_ms = now;
    else if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        conn_fail(c, n >= 0 ? "keepalive cut short" : strerror(errno));
}

static void progress_tick(struct evloop *loop, uint64_t timer_id, void *user)
{
    struct conn_layer *cl = &((struct server *)user)->conns;
    uint64_t now = evloop_now_ms();
    int busy = 0;

    cl->progress_timer = 0;
    for (struct conn *c = cl->live; c; c = c->next) {
        if (c->state != BUSY)
            continue;
        send_progress(c, now);  /* a BUSY connection may turn ZOMBIE, stays listed */
        busy = 1;
    }
    if (busy)
        cl->progress_timer = evloop_add_timer(loop, IPVFS_PROGRESS_MS / 4, progress_tick, user);
}

/* Called when c goes BUSY: keepalives start IPVFS_PROGRESS_MS from now. */
static void progress_watch(struct conn *c)
{
    struct conn_layer *cl = &c->srv->conns;

    c->busy_since_ms = evloop_now_ms();
    c->progress_sent_ms = 0;
    if (!cl->progress_timer)
        cl->progress_timer = evloop_add_timer(c->srv->loop, IPVFS_PROGRESS_MS / 4,
                                              progress_tick, c->srv);
    if (!cl->progress_timer)
        log_warn("connection %s: no keepalive timer; a slow request may time out", c->peer);
}

static void dispatch(struct conn *c)
{
    const struct op_entry *e = c->hdr.op == IPVFS_OP_HELLO ? &conn_ops[0] : find_op(c->srv, c->hdr.op);

    /* HELLO counts for the client it names (known only after it) */
    if (c->hdr.op != IPVFS_OP_HELLO)
        count_request(c);
    c->state = BUSY;
    if (!c->authed && c->hdr.op != IPVFS_OP_HELLO) {
        conn_close_after_reply(c);
        conn_reply_err(c, EACCES, "HELLO with the cluster secret must come first");
    } else if (!(e->roles & c->srv->role)) {
        conn_reply_err(c, EOPNOTSUPP, "rank %d (%s) does not serve %s", c->srv->rank,
                       role_name(c->srv->role), e->name);
    } else {
        e->handler(c, &c->hdr, c->body);
    }
    if (c->hdr.op == IPVFS_OP_HELLO)
        count_request(c);
    /* Still BUSY: the handler went async and will call conn_reply later. */
    if (c->state != BUSY)
        return;
    if (evloop_mod_fd(c->srv->loop, c->fd, 0) < 0)
        log_warn("connection %s: cannot quiet the socket", c->peer);
    progress_watch(c);
}

/* Returns 0 when the header may be followed, else the errno to reply. */
static int check_header(struct conn *c)
{
    const struct ipvfs_hdr *h = &c->hdr;

    if (h->magic != IPVFS_PROTO_MAGIC) {
        log_warn("connection %s: bad magic %#x", c->peer, h->magic);
        return EPROTO;
    }
    if (h->version != IPVFS_PROTO_VERSION) {
        log_warn("connection %s: protocol version %u, this server speaks %u", c->peer,
                 h->version, IPVFS_PROTO_VERSION);
        return EPROTONOSUPPORT;
    }
    if (h->op != IPVFS_OP_HELLO && !find_op(c->srv, h->op)) {
        log_warn("connection %s: unknown op %u", c->peer, h->op);
        return EPROTO;
    }
    if (h->body_len > IPVFS_MAX_BODY) {
        log_warn("connection %s: body of %llu bytes exceeds %llu", c->peer,
                 (unsigned long long)h->body_len, (unsigned long long)IPVFS_MAX_BODY);
        return EMSGSIZE;
    }
    return 0;
}

/* Reads into buf[*got..want); 1 when complete, 0 when the socket is dry,
 * -1 when the connection is gone (already handled). */
static int read_some(struct conn *c, void *buf, size_t want, size_t *got)
{
    while (*got < want) {
        ssize_t n = read(c->fd, (uint8_t *)buf + *got, want - *got);
        if (n > 0) {
            *got += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n == 0 && (c->state != READ_HDR || *got))
            log_warn("connection %s: closed in the middle of a request", c->peer);
        conn_fail(c, n == 0 ? "closed by peer" : strerror(errno));
        return -1;
    }
    return 1;
}

static void on_readable(struct conn *c)
{
    int rc, err;

    for (;;) {
        if (c->state == READ_HDR) {
            if ((rc = read_some(c, &c->hdr, sizeof(c->hdr), &c->hdr_got)) <= 0)
                return;
            if ((err = check_header(c)) != 0) {
                c->state = BUSY;
                conn_close_after_reply(c);
                if (err == EPROTONOSUPPORT)
                    conn_reply_err(c, err, "protocol version %u not supported: this server "
                                   "speaks version %u (mixed iPVFS versions); closing the "
                                   "connection", c->hdr.version, IPVFS_PROTO_VERSION);
                else
                    conn_reply_err(c, err, "malformed request header; closing the connection");
                return;
            }
            c->body_got = 0;
            c->body = c->hdr.body_len ? malloc(c->hdr.body_len) : NULL;
            if (c->hdr.body_len && !c->body) {
                c->state = BUSY;
                conn_close_after_reply(c);
                conn_reply_err(c, ENOMEM, "no memory for a %llu-byte request",
                               (unsigned long long)c->hdr.body_len);
                return;
            }
            c->state = READ_BODY;
        }
        if ((rc = read_some(c, c->body, c->hdr.body_len, &c->body_got)) <= 0)
            return;
        dispatch(c);
        if (c->state != READ_HDR)
            return;
    }
}

static void reply_done(struct conn *c)
{
    void (*cb)(struct server *, void *) = c->sent_cb;
    struct server *srv = c->srv;
    void *arg = c->sent_arg;

    c->sent_cb = NULL;
    free(c->rep_body);
    free(c->body);
    c->rep_body = NULL;
    c->body = NULL;
    c->hdr_got = 0;
    if (c->close_after) {
        conn_kill(c);
    } else {
        c->state = READ_HDR;
        if (evloop_mod_fd(c->srv->loop, c->fd, EV_READ) < 0)
            conn_fail(c, "cannot wait for the socket");
    }
    if (cb)
        cb(srv, arg); /* c may be dead by now */
}

static void on_writable(struct conn *c)
{
    ssize_t n;

    while (c->iov_start < 2) {
        n = writev(c->fd, c->iov + c->iov_start, 2 - c->iov_start);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0) {
            conn_fail(c, strerror(errno));
            return;
        }
        c->iov_start = net_iov_advance(c->iov, 2, c->iov_start, (size_t)n);
    }
    reply_done(c);
}

static void on_conn_event(struct evloop *loop, int fd, int events, void *user)
{
    struct conn *c = user;

    if (c->state == WRITE && (events & EV_WRITE))
        on_writable(c);
    else if ((c->state == READ_HDR || c->state == READ_BODY) && (events & EV_READ))
        on_readable(c);
    else if (events & EV_ERROR)
        conn_fail(c, "socket error or hang-up");
}

static void describe_peer(int fd, char *out, size_t outlen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[48] = "?";
    unsigned port = 0;

    memset(&ss, 0, sizeof(ss));
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
        port = ntohs(sin->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
        port = ntohs(sin6->sin6_port);
    }
    snprintf(out, outlen, "%s:%u", host, port);
}

static void on_accept(struct evloop *loop, int fd, int events, void *user)
{
    struct server *srv = user;
    struct conn *c;
    int cfd;

    while ((cfd = net_accept(fd)) >= 0) {
        if (net_set_nonblock(cfd, 1) < 0 || !(c = calloc(1, sizeof(*c)))) {
            log_warn("dropping a connection: %s", strerror(errno));
            close(cfd);
            continue;
        }
        if (net_set_nodelay(cfd) < 0)
            log_debug("connection fd %d: no TCP_NODELAY", cfd);
        c->srv = srv;
        c->fd = cfd;
        c->state = READ_HDR;
        describe_peer(cfd, c->peer, sizeof(c->peer));
        if (evloop_set_fd(loop, cfd, EV_READ, on_conn_event, c) < 0) {
            log_warn("dropping a connection: cannot watch it");
            close(cfd);
            free(c);
            continue;
        }
        c->next = srv->conns.live;
        if (c->next)
            c->next->prev = c;
        srv->conns.live = c;
    }
    if (cfd != -EAGAIN)
        log_warn("accept failed: %s", strerror(-cfd));
}

int srvconn_listen(struct server *srv)
{
    int fd = srv->conns.listen_fd;

    if (fd < 0) {
        log_error("no listening socket on %s", srv->opts.listen);
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
        cl->live->state = READ_HDR; /* the stores are closed: nothing completes later */
        conn_kill(cl->live);
    }
    /* Outside the loop now: nothing else will reap them. */
    evloop_del_timer(srv->loop, cl->reap_id);
    reap_dead(srv->loop, 0, srv);
    if (srv->conns.listen_fd >= 0) {
        evloop_del_fd(srv->loop, srv->conns.listen_fd);
        close(srv->conns.listen_fd);
        srv->conns.listen_fd = -1;
    }
}
