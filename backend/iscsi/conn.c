/* The life of one iSCSI connection and of the tasks it owns: close, the
 * reference counts that keep a closed connection's memory until the last
 * task lets go, and the tasks themselves.  See tgt.h for the connection
 * states.  This file sits below the SCSI files and the rest of the
 * connection files, which all close connections and release tasks:
 * creation on a socket and the event callback are server.c's, receiving
 * conn_rx.c, sending conn_tx.c, the full feature phase PDUs ffp.c, login
 * login.c (whose state a close frees through c->login_free).
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

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- transmit queue ---- */

void tgt_txpdu_free(struct tgt_txpdu *p)
{
    if (p->task) {
        p->task->tx_refs--;
        tgt_task_release(p->task);
    }
    free(p->owned);
    free(p);
}

void tgt_conn_tx_drop_all(struct tgt_conn *c)
{
    struct tgt_txpdu *p = c->tx_head, *next;

    c->tx_head = c->tx_tail = NULL;
    for (; p; p = next) {
        next = p->next;
        tgt_txpdu_free(p);
    }
}

/* ---- close and references ---- */

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
    if (c->login_free)
        c->login_free(c);
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
