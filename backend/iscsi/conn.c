/* The life of one iSCSI connection and of the tasks it owns: creation on
 * the socket (or a test transport), the event callback, close, and the
 * reference counts that keep a closed connection's memory until the last
 * task lets go.  See tgt.h for the connection states; receiving is
 * conn_rx.c, sending conn_tx.c, the full feature phase PDUs ffp.c.
 *
 * A task (struct tgt_task) lives while any of these holds it:
 *   linked   on c->tasks, from its SCSI Command until its response is
 *            queued or it is aborted (counts in c->ntasks, the window);
 *   tx_refs  queued Data-In PDUs that point into its buffer;
 *   io_busy  backing I/O in flight on its buffer;
 *   holds    a caller across a step that may close the connection.
 * tgt_task_release() frees it when none is left; each task holds a
 * reference on its connection, so the connection outlives its tasks.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/evloop.h"
#include "common/log.h"

void tgt_conn_fail(struct tgt_conn *c, const char *fmt, ...)
{
    char why[256];
    va_list ap;

    if (c->state == CONN_CLOSED)
        return;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    log_warn("target: connection from %s (%s): %s; closing it", c->peer,
             c->initiator[0] ? c->initiator : "not logged in", why);
    tgt_conn_close(c, NULL);
}

/* ---- socket transport ---- */

static ssize_t sock_recv(struct tgt_conn *c, void *buf, size_t len)
{
    ssize_t n = recv(c->fd, buf, len, 0);

    return n < 0 ? -errno : n;
}

static ssize_t sock_sendv(struct tgt_conn *c, const struct iovec *iov, int iovcnt)
{
    struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
    ssize_t n = sendmsg(c->fd, &m, MSG_NOSIGNAL);

    return n < 0 ? -errno : n;
}

static const struct tgt_transport sock_transport = { sock_recv, sock_sendv };

/* ---- tasks ---- */

void tgt_task_release(struct tgt_task *t)
{
    struct tgt_conn *c = t->conn;

    if (t->linked || t->tx_refs > 0 || t->io_busy || t->holds > 0)
        return;
    /* A writer still waiting for its range (aborted, connection gone)
     * must not stay in the LUN's queue. */
    tgt_order_leave(t);
    free(t->buf);
    free(t->aux);
    free(t);
    tgt_conn_put(c);
}

void tgt_task_unlink(struct tgt_task *t)
{
    struct tgt_conn *c = t->conn;

    if (!t->linked)
        return;
    if (t->prev)
        t->prev->next = t->next;
    else
        c->tasks = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->linked = 0;
    c->ntasks--;
}

struct tgt_task *tgt_task_new(struct tgt_conn *c)
{
    struct tgt_task *t = calloc(1, sizeof(*t));

    if (!t)
        return NULL;
    t->conn = c;
    c->refs++;
    t->next = c->tasks;
    if (c->tasks)
        c->tasks->prev = t;
    c->tasks = t;
    t->linked = 1;
    c->ntasks++;
    return t;
}

struct tgt_task *tgt_task_find(struct tgt_conn *c, uint32_t itt)
{
    for (struct tgt_task *t = c->tasks; t; t = t->next)
        if (t->itt == itt && !t->aborted)
            return t;
    return NULL;
}

/* Keeps t allocated across calls that may close its connection (a failed
 * queueing closes it, and closing frees the tasks nothing else holds). */
void tgt_task_hold(struct tgt_task *t)
{
    t->holds++;
}

void tgt_task_drop(struct tgt_task *t)
{
    t->holds--;
    tgt_task_release(t);
}

void tgt_task_abort(struct tgt_task *t)
{
    struct tgt_conn *c = t->conn;

    t->aborted = 1;
    if (c->rx_task == t) {
        /* A reset from another connection can land while this one is in
         * the middle of t's data segment: the rest of the segment is
         * still read, to keep the PDU framing, but dropped. */
        c->rx_task = NULL;
        c->rx_dst = NULL;
        c->rx_keep = 0;
    }
    tgt_task_unlink(t);
    tgt_task_release(t);
}

void tgt_conn_abort_tasks(struct tgt_conn *c, const struct tgt_lun *lun)
{
    struct tgt_task *t = c->tasks, *next;

    for (; t; t = next) {
        next = t->next;
        if (!lun || t->lun == lun)
            tgt_task_abort(t);
    }
}

/* ---- lifecycle ---- */

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

void tgt_conn_close(struct tgt_conn *c, const char *why)
{
    struct tgt_server *srv = c->srv;

    if (c->state == CONN_CLOSED)
        return;
    if (why)
        log_info("target: connection from %s (%s) closed: %s", c->peer,
                 c->initiator[0] ? c->initiator : "not logged in", why);
    c->state = CONN_CLOSED;
    if (c->fd >= 0) {
        evloop_del_fd(srv->loop, c->fd);
        close(c->fd);
        c->fd = -1;
    }
    c->rx_task = NULL;
    if (c->rx_resume_timer) {
        evloop_del_timer(srv->loop, c->rx_resume_timer);
        c->rx_resume_timer = 0;
        c->refs--;   /* the timer's; the caller's reference is still held */
    }
    tgt_conn_tx_drop_all(c);
    tgt_conn_abort_tasks(c, NULL);
    for (int i = 0; i < srv->nluns; i++)
        if (srv->luns[i].reserved_by == c)
            srv->luns[i].reserved_by = NULL;
    tgt_login_free(c);
    tgt_conn_put(c);
}

void tgt_conn_put(struct tgt_conn *c)
{
    struct tgt_server *srv = c->srv;

    if (--c->refs > 0)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c->rx_seg);
    free(c);
}
