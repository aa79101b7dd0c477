/* Public entry points of the embedded target (target.h): the portal,
 * accepting connections, LUN setup, flush, statistics and teardown. */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/evloop.h"
#include "common/log.h"
#include "common/net.h"

static void accept_event(struct evloop *loop, int lfd, int events, void *user)
{
    struct tgt_server *srv = user;

    for (int i = 0; i < 64; i++) {
        struct tgt_conn *c;
        int fd = net_accept(lfd), rc;

        if (fd == -EAGAIN || fd == -EWOULDBLOCK)
            return;
        if (fd < 0) {
            log_warn("target: accept on %s:%u failed: %s", srv->portal_host, srv->port,
                     strerror(-fd));
            return;
        }
        (void)net_set_nodelay(fd);
        rc = tgt_conn_create(srv, fd, NULL, NULL, &c);
        if (rc < 0) {
            log_warn("target: cannot take a connection: %s", strerror(-rc));
            close(fd);
            continue;
        }
        net_peer_name(fd, c->peer, sizeof(c->peer));
        log_debug("target: connection from %s", c->peer);
    }
}

/* ---- connections: the socket transport, socket events, creation ----
 * Here rather than in conn.c: a connection's events drive conn_rx.c and
 * conn_tx.c, which sit above conn.c. */

static ssize_t sock_recv(struct tgt_conn *c, void *buf, size_t len)
{
    ssize_t n = recv(c->fd, buf, len, 0);

    return n < 0 ? -errno : n;
}

static ssize_t sock_sendv(struct tgt_conn *c, const struct iovec *iov, int iovcnt, int more)
{
    struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
    ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL | (more ? MSG_MORE : 0));

    return n < 0 ? -errno : n;
}

static ssize_t sock_sendfile(struct tgt_conn *c, int fd, uint64_t off, size_t len)
{
    off_t pos = (off_t)off;
    ssize_t n = sendfile(c->fd, fd, &pos, len);

    return n < 0 ? -errno : n;
}

static const struct tgt_transport sock_transport = { sock_recv, sock_sendv, sock_sendfile };

static void conn_event(struct evloop *loop, int fd, int events, void *user)
{
    struct tgt_conn *c = user;

    c->refs++;
    if (events & (EV_READ | EV_ERROR))
        tgt_conn_rx(c);
    if ((events & EV_WRITE) && c->state != CONN_CLOSED)
        tgt_conn_tx(c);
    tgt_conn_put(c);
}

int tgt_conn_create(struct tgt_server *srv, int fd, const struct tgt_transport *tp,
                    void *tp_user, struct tgt_conn **out)
{
    struct tgt_conn *c = calloc(1, sizeof(*c));
    int rc;

    if (!c)
        return -ENOMEM;
    c->srv = srv;
    c->fd = fd;
    c->tp = tp ? tp : &sock_transport;
    c->tp_user = tp_user;
    c->state = CONN_LOGIN;
    c->refs = 1;
    c->p = (struct tgt_params){ .peer_mrdsl = 8192, .max_burst = 262144, .first_burst = 65536,
                                .max_r2t = 1, .immediate_data = 1, .initial_r2t = 1 };
    tgt_conn_rx_start(c);
    snprintf(c->peer, sizeof(c->peer), "fd %d", fd);
    if (fd >= 0) {
        rc = evloop_set_fd(srv->loop, fd, EV_READ, conn_event, c);
        if (rc < 0) {
            free(c);
            return rc;
        }
    }
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    *out = c;
    return 0;
}

static char *dup_opt(const char *s, int *failed)
{
    char *d;

    if (!s)
        return NULL;
    d = strdup(s);
    if (!d)
        *failed = 1;
    return d;
}

static void free_auth(struct tgt_auth *a)
{
    free(a->user);
    free(a->secret);
    free(a->mutual_user);
    free(a->mutual_secret);
}

/* Checks the configuration once, here at the boundary. */
static int check_config(const struct tgt_config *cfg)
{
    if (!cfg->iqn || !*cfg->iqn || strlen(cfg->iqn) > 223) {
        log_error("target: a target name (IQN) of 1 to 223 characters is required");
        return -EINVAL;
    }
    if (!cfg->portal_host || cfg->nluns < 1 || cfg->nluns > TGT_MAX_LUNS || !cfg->luns) {
        log_error("target: need a portal address and 1 to %d LUNs", TGT_MAX_LUNS);
        return -EINVAL;
    }
    if (!cfg->chap_user != !cfg->chap_secret || !cfg->mutual_user != !cfg->mutual_secret ||
        (cfg->mutual_user && !cfg->chap_user)) {
        log_error("target: CHAP needs a user and a secret (mutual CHAP also one-way CHAP)");
        return -EINVAL;
    }
    return 0;
}

static int open_luns(struct tgt_server *srv, const struct tgt_config *cfg)
{
    for (int i = 0; i < cfg->nluns; i++) {
        struct tgt_lun *l = &srv->luns[i];
        int rc;

        l->index = i;
        rc = tgt_lun_open(srv, l, &cfg->luns[i]);
        if (rc < 0)
            return rc;
        srv->nluns = i + 1;
        scsi_lun_init(l);
        log_info("target: LUN %d: %s store %s, %llu blocks of %u bytes", i, l->ops->name,
                 cfg->luns[i].kind == TGT_BACKING_MEMORY ? "(memory)" : cfg->luns[i].path,
                 (unsigned long long)l->nblocks, l->block_size);
    }
    return 0;
}

static void close_luns(struct tgt_server *srv)
{
    for (int i = 0; i < srv->nluns; i++) {
        tgt_lun_close(&srv->luns[i]);
        scsi_pr_free(&srv->luns[i]);
    }
    srv->nluns = 0;
    tgt_l2_destroy(srv);
}

/* The engine's completions run inside a batch (store.c sits below the
 * connection files and reaches their batch only through these). */
static const struct tgt_aio_hooks aio_hooks = { tgt_batch_begin, tgt_batch_end };

/* The SCSI files hand finished commands up to conn_tx.c through this. */
static const struct tgt_scsi_upcalls scsi_upcalls = { tgt_task_complete };

/* A portal bound by someone else (ipvfs-server binds it once, so that the
 * port stays the same when its serving process restarts): its port. */
static int adopt_portal(int fd, uint16_t *port)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        return -errno;
    if (ss.ss_family == AF_INET)
        *port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    else if (ss.ss_family == AF_INET6)
        *port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    else
        return -EAFNOSUPPORT;
    return fd;
}

static int create(struct evloop *loop, const struct tgt_config *cfg, struct tgt_server **out,
                  uint16_t *out_port)
{
    struct tgt_server *srv;
    int rc, failed = 0;

    if (!loop || !cfg || !out)
        return -EINVAL;
    rc = check_config(cfg);
    if (rc < 0)
        return rc;
    srv = calloc(1, sizeof(*srv));
    if (!srv)
        return -ENOMEM;
    srv->loop = loop;
    srv->listen_fd = -1;
    srv->scsi_up = &scsi_upcalls;
    srv->iqn = dup_opt(cfg->iqn, &failed);
    srv->portal_host = dup_opt(cfg->portal_host, &failed);
    srv->auth.user = dup_opt(cfg->chap_user, &failed);
    srv->auth.secret = dup_opt(cfg->chap_secret, &failed);
    srv->auth.mutual_user = dup_opt(cfg->mutual_user, &failed);
    srv->auth.mutual_secret = dup_opt(cfg->mutual_secret, &failed);
    srv->auth.discovery = cfg->chap_discovery && cfg->chap_user;
    if (failed) {
        rc = -ENOMEM;
        goto undo_strings;
    }
    rc = tgt_aio_create(srv, &aio_hooks, &srv->aio);
    if (rc < 0)
        goto undo_strings;
    /* Before the LUNs: with an L2 they are opened with O_DIRECT. */
    rc = cfg->cache_l2 ? tgt_l2_create(srv, cfg->cache_l2, cfg->cache_l2_policy) : 0;
    if (rc < 0)
        goto undo_luns;
    rc = open_luns(srv, cfg);
    if (rc < 0)
        goto undo_luns;
    rc = cfg->listen_fd > 0 ? adopt_portal(cfg->listen_fd, &srv->port)
                            : net_listen(cfg->portal_host, cfg->portal_port, &srv->port);
    if (rc < 0) {
        log_error("target: cannot listen on %s:%u: %s", cfg->portal_host, cfg->portal_port,
                  strerror(-rc));
        goto undo_luns;
    }
    srv->listen_fd = rc;
    rc = net_set_nonblock(srv->listen_fd, 1);
    if (rc == 0)
        rc = evloop_set_fd(loop, srv->listen_fd, EV_READ, accept_event, srv);
    if (rc < 0) {
        log_error("target: cannot register the portal: %s", strerror(-rc));
        goto undo_listen;
    }
    log_info("target: %s serving %d LUN(s) on %s:%u (backing I/O: %s%s)", srv->iqn, srv->nluns,
             srv->portal_host, srv->port, tgt_aio_name(srv->aio),
             srv->auth.user ? (srv->auth.mutual_user ? ", mutual CHAP" : ", CHAP") : "");
    if (out_port)
        *out_port = srv->port;
    *out = srv;
    return 0;
undo_listen:
    if (cfg->listen_fd <= 0)    /* an adopted portal is closed by the caller below */
        close(srv->listen_fd);
undo_luns:
    close_luns(srv);
    tgt_aio_destroy(srv->aio);
undo_strings:
    free_auth(&srv->auth);
    free(srv->portal_host);
    free(srv->iqn);
    free(srv);
    return rc;
}

int tgt_server_create(struct evloop *loop, const struct tgt_config *cfg,
                      struct tgt_server **out, uint16_t *out_port)
{
    int rc = create(loop, cfg, out, out_port);

    /* An adopted portal is the target's whatever the outcome. */
    if (rc < 0 && cfg && cfg->listen_fd > 0)
        close(cfg->listen_fd);
    return rc;
}

int tgt_server_flush(struct tgt_server *tgt)
{
    int first = 0;

    if (!tgt)
        return -EINVAL;
    for (int i = 0; i < tgt->nluns; i++) {
        int rc = tgt->luns[i].ops->flush(&tgt->luns[i]);
        if (rc < 0) {
            log_error("target: LUN %d: flush failed: %s", i, strerror(-rc));
            if (!first)
                first = rc;
        }
    }
    return first;
}

void tgt_server_stats(const struct tgt_server *tgt, struct tgt_stats *out)
{
    uint32_t sessions = 0;

    memset(out, 0, sizeof(*out));
    if (!tgt)
        return;
    *out = tgt->stats;
    tgt_l2_stats(tgt, out);
    for (const struct tgt_conn *c = tgt->conns; c; c = c->next)
        if (c->state == CONN_FULL && !c->discovery)
            sessions++;
    out->sessions = sessions;
}

void tgt_server_destroy(struct tgt_server *tgt)
{
    struct tgt_conn *c, *next;

    if (!tgt)
        return;
    if (tgt->listen_fd >= 0) {
        evloop_del_fd(tgt->loop, tgt->listen_fd);
        close(tgt->listen_fd);
    }
    for (c = tgt->conns; c; c = next) {
        /* Closing may free c; a task in flight keeps it (and next) alive. */
        next = c->next;
        c->refs++;
        tgt_conn_close(c, "target shutting down");
        next = c->next;
        tgt_conn_put(c);
    }
    /* Completes every backing io in flight (an emulated disk's at once);
     * their tasks are aborted and release the last connection references. */
    for (int i = 0; i < tgt->nluns; i++)
        tgt_lun_drain(&tgt->luns[i]);
    tgt_aio_destroy(tgt->aio);
    close_luns(tgt);
    if (tgt->conns)
        log_warn("target: connections still referenced at shutdown");
    free_auth(&tgt->auth);
    free(tgt->portal_host);
    free(tgt->iqn);
    free(tgt);
}
