/* One iSCSI connection: the PDU receive state machine, the transmit queue
 * and the full feature phase.  See tgt.h for the connection states.
 *
 * Receive phases of one PDU (conn->rx_phase):
 *   RX_BHS      48 bytes of Basic Header Segment
 *   RX_AHS      additional header segments + header digest
 *               -> pdu_header(): validate, choose where the data goes
 *   RX_DATA     data segment, straight into a task buffer when it is
 *               SCSI write data, else into rx_seg (or discarded)
 *   RX_TRAILER  padding + data digest -> pdu_done(): act on the PDU
 * Small PDUs are read through a 64 KiB read-ahead buffer; large data
 * segments bypass it.
 */
#include "config.h"

#include "backend/target/tgt.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/evloop.h"
#include "common/log.h"

#define TX_BATCH 64

static uint32_t crc_begin(void)
{
    return 0xffffffffu;
}

static uint32_t crc_add(uint32_t crc, const void *p, size_t n)
{
    return crc32_iscsi((unsigned char *)p, (int)n, crc);
}

/* The digest travels least significant byte first. */
static void crc_put(uint8_t *p, uint32_t crc)
{
    crc = ~crc;
    p[0] = (uint8_t)crc;
    p[1] = (uint8_t)(crc >> 8);
    p[2] = (uint8_t)(crc >> 16);
    p[3] = (uint8_t)(crc >> 24);
}

static int crc_check(const uint8_t *p, uint32_t crc)
{
    uint8_t want[4];

    crc_put(want, crc);
    return memcmp(p, want, 4) == 0;
}

static void conn_fail(struct tgt_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void conn_fail(struct tgt_conn *c, const char *fmt, ...)
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

static void task_release(struct tgt_task *t)
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

static void task_unlink(struct tgt_task *t)
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

static struct tgt_task *task_new(struct tgt_conn *c)
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

static struct tgt_task *task_find(struct tgt_conn *c, uint32_t itt)
{
    for (struct tgt_task *t = c->tasks; t; t = t->next)
        if (t->itt == itt && !t->aborted)
            return t;
    return NULL;
}

/* Keeps t allocated across calls that may close its connection (a failed
 * queueing closes it, and closing frees the tasks nothing else holds). */
static void task_hold(struct tgt_task *t)
{
    t->holds++;
}

static void task_drop(struct tgt_task *t)
{
    t->holds--;
    task_release(t);
}

static void task_abort(struct tgt_task *t)
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
    task_unlink(t);
    task_release(t);
}

void tgt_conn_abort_tasks(struct tgt_conn *c, const struct tgt_lun *lun)
{
    struct tgt_task *t = c->tasks, *next;

    for (; t; t = next) {
        next = t->next;
        if (!lun || t->lun == lun)
            task_abort(t);
    }
}

/* ---- transmit ---- */

int tgt_conn_send_mapped_ok(const struct tgt_conn *c)
{
    /* The digest would be computed at queueing time over bytes that a
     * later write may change before they are sent. */
    return !(c->p.data_digest && c->digests_on);
}

void tgt_conn_fill_sn(struct tgt_conn *c, uint8_t *h, int advance)
{
    uint32_t window = TGT_CMD_WINDOW - (c->ntasks < TGT_CMD_WINDOW ? c->ntasks : TGT_CMD_WINDOW - 1);
    uint32_t max = c->exp_cmdsn + window - 1;

    /* MaxCmdSN never moves backwards. */
    if (sn_gt(max, c->max_cmdsn))
        c->max_cmdsn = max;
    put_be32(h + 24, advance ? c->stat_sn++ : c->stat_sn);
    put_be32(h + 28, c->exp_cmdsn);
    put_be32(h + 32, c->max_cmdsn);
}

static void txpdu_free(struct tgt_txpdu *p)
{
    if (p->task) {
        p->task->tx_refs--;
        task_release(p->task);
    }
    free(p->owned);
    free(p);
}

int tgt_conn_queue(struct tgt_conn *c, const uint8_t *h, const void *data, uint32_t dlen,
                   struct tgt_task *task, int copy)
{
    struct tgt_txpdu *p;
    uint32_t pad = pad4(dlen);

    if (c->state == CONN_CLOSED)
        return 0;
    p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    memcpy(p->hdr, h, ISCSI_BHS_LEN);
    put_be24(p->hdr + 5, dlen);
    p->iov[0] = (struct iovec){ p->hdr, ISCSI_BHS_LEN };
    if (c->p.header_digest && c->digests_on) {
        crc_put(p->hdr + ISCSI_BHS_LEN, crc_add(crc_begin(), p->hdr, ISCSI_BHS_LEN));
        p->iov[0].iov_len += ISCSI_DIGEST_LEN;
    }
    p->iovcnt = 1;
    if (dlen) {
        const void *src = data;
        if (copy) {
            p->owned = malloc(dlen);
            if (!p->owned) {
                free(p);
                return -ENOMEM;
            }
            memcpy(p->owned, data, dlen);
            src = p->owned;
        } else if (task) {
            p->task = task;
            task->tx_refs++;
        }
        p->iov[1] = (struct iovec){ (void *)src, dlen };
        p->iov[2] = (struct iovec){ p->trailer, pad };
        if (c->p.data_digest && c->digests_on) {
            uint32_t crc = crc_add(crc_begin(), src, dlen);
            crc = crc_add(crc, p->trailer, pad);
            crc_put(p->trailer + pad, crc);
            p->iov[2].iov_len += ISCSI_DIGEST_LEN;
        }
        p->iovcnt = p->iov[2].iov_len ? 3 : 2;
    }
    if (c->tx_tail)
        c->tx_tail->next = p;
    else
        c->tx_head = p;
    c->tx_tail = p;
    return 0;
}

static void tx_drop_all(struct tgt_conn *c)
{
    struct tgt_txpdu *p = c->tx_head, *next;

    c->tx_head = c->tx_tail = NULL;
    for (; p; p = next) {
        next = p->next;
        txpdu_free(p);
    }
}

/* Retire fully written PDUs after n bytes went out. Returns 1 when a
 * written PDU asked for the connection to close. */
static int tx_advance(struct tgt_conn *c, size_t n)
{
    int close_now = 0;

    while (c->tx_head) {
        struct tgt_txpdu *p = c->tx_head;
        while (p->iov_pos < p->iovcnt && n >= p->iov[p->iov_pos].iov_len) {
            n -= p->iov[p->iov_pos].iov_len;
            p->iov_pos++;
        }
        if (p->iov_pos < p->iovcnt) {
            struct iovec *v = &p->iov[p->iov_pos];
            v->iov_base = (uint8_t *)v->iov_base + n;
            v->iov_len -= n;
            return close_now;
        }
        c->tx_head = p->next;
        if (!c->tx_head)
            c->tx_tail = NULL;
        close_now |= p->close_after;
        txpdu_free(p);
    }
    return close_now;
}

void tgt_conn_tx(struct tgt_conn *c)
{
    struct iovec iov[TX_BATCH * 3];

    while (c->tx_head && c->state != CONN_CLOSED) {
        int cnt = 0, npdu = 0;
        ssize_t n;

        for (struct tgt_txpdu *p = c->tx_head; p && npdu < TX_BATCH; p = p->next, npdu++)
            for (int i = p->iov_pos; i < p->iovcnt; i++)
                if (p->iov[i].iov_len)
                    iov[cnt++] = p->iov[i];
        n = c->tp->sendv(c, iov, cnt);
        if (n == -EAGAIN || n == -EWOULDBLOCK) {
            if (!c->tx_blocked && c->fd >= 0 &&
                evloop_mod_fd(c->srv->loop, c->fd, EV_READ | EV_WRITE) == 0)
                c->tx_blocked = 1;
            return;
        }
        if (n < 0) {
            conn_fail(c, "send failed: %s", strerror((int)-n));
            return;
        }
        if (tx_advance(c, (size_t)n)) {
            tgt_conn_close(c, "final logout or login response sent");
            return;
        }
    }
    if (c->tx_blocked && c->fd >= 0 && evloop_mod_fd(c->srv->loop, c->fd, EV_READ) == 0)
        c->tx_blocked = 0;
}

static void tx_kick(struct tgt_conn *c)
{
    struct tgt_server *srv = c->srv;

    if (c->in_rx)
        return;   /* tgt_conn_rx() sends at its end */
    if (!srv->batch) {
        tgt_conn_tx(c);
        return;
    }
    if (c->tx_queued)
        return;
    c->tx_queued = 1;
    c->refs++;
    c->tx_next = srv->tx_pending;
    srv->tx_pending = c;
}

void tgt_batch_begin(struct tgt_server *srv)
{
    if (srv->batch++ == 0 && srv->aio)
        tgt_aio_batch_begin(srv->aio);
}

/* Backing ios first, so the disk works while the responses go out. */
void tgt_batch_end(struct tgt_server *srv)
{
    if (--srv->batch > 0)
        return;
    if (srv->aio)
        tgt_aio_batch_end(srv->aio);
    while (srv->tx_pending) {
        struct tgt_conn *c = srv->tx_pending;

        srv->tx_pending = c->tx_next;
        c->tx_queued = 0;
        if (c->state != CONN_CLOSED)
            tgt_conn_tx(c);
        tgt_conn_put(c);
    }
}

/* ---- responses ---- */

static void send_reject(struct tgt_conn *c, const uint8_t *bad, uint8_t reason)
{
    uint8_t h[ISCSI_BHS_LEN] = { 0 };

    h[0] = ISCSI_OP_REJECT;
    h[1] = ISCSI_FLAG_FINAL;
    h[2] = reason;
    put_be32(h + 16, ISCSI_RSVD_TAG);
    tgt_conn_fill_sn(c, h, 1);
    if (tgt_conn_queue(c, h, bad, ISCSI_BHS_LEN, NULL, 1) < 0)
        conn_fail(c, "out of memory queueing a reject");
}

/* Returns 0, or -ENOMEM after the connection was closed (which frees the
 * tasks nobody holds: see task_hold()). */
static int queue_or_fail(struct tgt_conn *c, const uint8_t *h, const void *data, uint32_t dlen,
                         struct tgt_task *t, int copy)
{
    if (tgt_conn_queue(c, h, data, dlen, t, copy) < 0) {
        conn_fail(c, "out of memory queueing a response");
        return -ENOMEM;
    }
    return 0;
}

static void residual(const struct tgt_task *t, uint32_t spdtl, uint8_t *flags, uint32_t *count)
{
    *flags = 0;
    *count = 0;
    if (spdtl > t->edtl) {
        *flags = ISCSI_FLAG_RES_OVERFLOW;
        *count = spdtl - t->edtl;
    } else if (spdtl < t->edtl) {
        *flags = ISCSI_FLAG_RES_UNDERFLOW;
        *count = t->edtl - spdtl;
    }
}

/* Where the Data-In bytes of t are: its buffer, or for a READ served
 * from the page cache, the LUN's mapping (see tgt.h). */
static const uint8_t *data_in_src(const struct tgt_task *t)
{
    return t->data_in_mapped ? t->lun->map + t->lba * t->lun->block_size : t->buf;
}

/* Data-In PDUs for len bytes of the task's data; the last carries the
 * status when collapse is set.  Returns the number of PDUs (DataSN count). */
static uint32_t send_data_in(struct tgt_conn *c, struct tgt_task *t, uint32_t len, int collapse,
                             uint8_t rflags, uint32_t rcount)
{
    uint32_t seg = c->p.peer_mrdsl, burst = c->p.max_burst, off = 0, datasn = 0;
    const uint8_t *src = data_in_src(t);

    while (off < len) {
        uint8_t h[ISCSI_BHS_LEN] = { 0 };
        uint32_t burst_end = (off / burst + 1) * burst;
        uint32_t n = len - off;
        int last;

        if (n > seg)
            n = seg;
        if (off + n > burst_end)
            n = burst_end - off;
        last = off + n == len;
        h[0] = ISCSI_OP_DATA_IN;
        if (last || off + n == burst_end)
            h[1] |= ISCSI_FLAG_FINAL;
        memcpy(h + 8, t->lun_raw, 8);
        put_be32(h + 16, t->itt);
        put_be32(h + 20, ISCSI_RSVD_TAG);
        if (last && collapse) {
            h[1] |= ISCSI_FLAG_DATA_STATUS | rflags;
            h[3] = t->status;
            put_be32(h + 44, rcount);
        }
        tgt_conn_fill_sn(c, h, last && collapse);
        put_be32(h + 36, datasn++);
        put_be32(h + 40, off);
        /* A mapped payload needs no task reference: the mapping lives
         * until the LUN closes, after every connection. */
        if (queue_or_fail(c, h, src + off, n, t->data_in_mapped ? NULL : t, 0) < 0)
            break;
        off += n;
    }
    c->srv->stats.bytes_read += len;
    return datasn;
}

static void send_scsi_rsp(struct tgt_conn *c, struct tgt_task *t, uint32_t datasn, uint8_t rflags,
                          uint32_t rcount)
{
    uint8_t h[ISCSI_BHS_LEN] = { 0 };
    uint8_t sense[2 + sizeof(t->sense)];
    uint32_t slen = 0;

    h[0] = ISCSI_OP_SCSI_RSP;
    h[1] = ISCSI_FLAG_FINAL | rflags;
    h[3] = t->status;
    put_be32(h + 16, t->itt);
    tgt_conn_fill_sn(c, h, 1);
    put_be32(h + 36, datasn);
    put_be32(h + 44, rcount);
    if (t->sense_len) {
        put_be16(sense, t->sense_len);
        memcpy(sense + 2, t->sense, t->sense_len);
        slen = 2u + t->sense_len;
    }
    queue_or_fail(c, h, sense, slen, NULL, 1);
}

void tgt_task_complete(struct tgt_task *t)
{
    struct tgt_conn *c = t->conn;
    uint32_t spdtl, datasn = 0, rcount;
    uint8_t rflags;

    /* Its backing I/O is over: overlapping writers may go on. */
    tgt_order_leave(t);
    if (t->aborted || c->state == CONN_CLOSED) {
        task_unlink(t);
        task_release(t);
        return;
    }
    spdtl = t->dir == DIR_READ ? t->data_len : t->xfer;
    if (t->dir == DIR_READ && t->status == 0 && t->data_len == 0)
        spdtl = 0;
    residual(t, spdtl, &rflags, &rcount);
    /* The connection (owner of the task's reference on it) may close
     * while the responses are queued. */
    c->refs++;
    task_hold(t);
    if (t->dir == DIR_READ && t->data_len > 0) {
        uint32_t len = t->data_len < t->edtl ? t->data_len : t->edtl;
        int collapse = t->status == 0;
        if (len > 0)
            datasn = send_data_in(c, t, len, collapse, rflags, rcount);
        if ((!collapse || len == 0) && c->state != CONN_CLOSED)
            send_scsi_rsp(c, t, datasn, rflags, rcount);
    } else {
        send_scsi_rsp(c, t, datasn, rflags, rcount);
    }
    task_unlink(t);
    task_drop(t);
    if (c->state != CONN_CLOSED)
        tx_kick(c);
    tgt_conn_put(c);
}

/* ---- CmdSN window ---- */

/* Returns 1 when a PDU with this CmdSN is to be processed. */
static int cmdsn_accept(struct tgt_conn *c, uint32_t cmdsn, int immediate)
{
    if (immediate)
        return 1;
    if (sn_lt(cmdsn, c->exp_cmdsn) || sn_gt(cmdsn, c->max_cmdsn)) {
        log_debug("target: %s: CmdSN %u outside [%u, %u], dropped", c->peer, cmdsn,
                  c->exp_cmdsn, c->max_cmdsn);
        return 0;
    }
    /* One connection per session and TCP order: a gap means the initiator
     * skipped numbers; we follow it rather than stall the session. */
    c->exp_cmdsn = cmdsn + 1;
    return 1;
}

/* ---- SCSI command and Data-Out ---- */

static void issue_r2ts(struct tgt_task *t)
{
    struct tgt_conn *c = t->conn;

    task_hold(t);
    while (t->r2t_next < t->want && c->state != CONN_CLOSED) {
        struct tgt_r2t *r = NULL;
        uint8_t h[ISCSI_BHS_LEN] = { 0 };
        uint32_t len = t->want - t->r2t_next;

        for (uint32_t i = 0; i < c->p.max_r2t && i < TGT_MAX_OUT_R2T; i++)
            if (!t->r2t[i].active) {
                r = &t->r2t[i];
                break;
            }
        if (!r)
            break;
        if (len > c->p.max_burst)
            len = c->p.max_burst;
        if (++c->srv->next_ttt == ISCSI_RSVD_TAG)
            c->srv->next_ttt = 1;
        *r = (struct tgt_r2t){ .ttt = c->srv->next_ttt, .offset = t->r2t_next, .len = len,
                               .active = 1 };
        h[0] = ISCSI_OP_R2T;
        h[1] = ISCSI_FLAG_FINAL;
        memcpy(h + 8, t->lun_raw, 8);
        put_be32(h + 16, t->itt);
        put_be32(h + 20, r->ttt);
        tgt_conn_fill_sn(c, h, 0);
        put_be32(h + 36, t->r2tsn++);
        put_be32(h + 40, r->offset);
        put_be32(h + 44, len);
        if (queue_or_fail(c, h, NULL, 0, NULL, 0) < 0)
            break;
        t->r2t_next += len;
    }
    task_drop(t);
}

static void task_advance(struct tgt_task *t)
{
    if (!t->unsol_done)
        return;
    if (t->status != 0) {
        tgt_task_complete(t);
        return;
    }
    if (t->dir == DIR_WRITE && t->got < t->want) {
        if (t->r2t_next < t->unsol_got)
            t->r2t_next = t->unsol_got < t->want ? t->unsol_got : t->want;
        issue_r2ts(t);
        return;
    }
    t->data_ready = 1;
    scsi_execute(t);
}

static uint32_t lun_from_raw(const uint8_t *l)
{
    switch (l[0] >> 6) {
    case 0: return l[1];                       /* peripheral device addressing */
    case 1: return (uint32_t)(l[0] & 0x3f) << 8 | l[1]; /* flat space */
    default: return UINT32_MAX;
    }
}

static int cmd_header(struct tgt_conn *c, const uint8_t *h, uint32_t dlen)
{
    struct tgt_task *t;
    uint32_t lun;

    if (c->discovery) {
        send_reject(c, h, ISCSI_REJECT_PROTOCOL_ERROR);
        return 0;
    }
    if (bhs_ahs_len(h) > 0) {
        send_reject(c, h, ISCSI_REJECT_CMD_NOT_SUPPORTED);
        return 0;
    }
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return 0;
    if (dlen && (!c->p.immediate_data || dlen > c->p.first_burst)) {
        conn_fail(c, "%u bytes of immediate data not allowed", dlen);
        return -EPROTO;
    }
    if (!(h[1] & ISCSI_FLAG_FINAL) && c->p.initial_r2t) {
        conn_fail(c, "unsolicited Data-Out announced while InitialR2T=Yes");
        return -EPROTO;
    }
    t = task_new(c);
    if (!t) {
        conn_fail(c, "out of memory for a task");
        return -ENOMEM;
    }
    c->srv->stats.commands++;
    t->itt = bhs_itt(h);
    t->flags = h[1];
    t->immediate = bhs_immediate(h);
    memcpy(t->lun_raw, h + 8, 8);
    t->edtl = get_be32(h + 20);
    t->cmdsn = get_be32(h + 24);
    memcpy(t->cdb, h + 32, 16);
    lun = lun_from_raw(t->lun_raw);
    t->lun = lun < (uint32_t)c->srv->nluns ? &c->srv->luns[lun] : NULL;
    t->unsol_got = dlen;
    t->unsol_done = (h[1] & ISCSI_FLAG_FINAL) != 0;
    if (scsi_prepare(t) == 0 && t->dir == DIR_WRITE) {
        if (t->xfer > t->edtl && scsi_clip_write(t) < 0) {
            /* SPDTL > EDTL and the command cannot be cut short. */
            scsi_set_sense(t, 0x05, 0x0e03);
        } else {
            t->want = t->xfer > t->edtl ? t->nblocks * t->lun->block_size : t->xfer;
            t->buf = malloc(t->want ? t->want : 1);
            if (!t->buf)
                scsi_set_sense(t, 0x0b, 0x5500);  /* system resource failure */
        }
    }
    if (t->status != 0)
        t->want = 0;
    c->rx_task = t;
    c->rx_dst = t->buf;
    c->rx_keep = dlen < t->want ? dlen : t->want;
    return 0;
}

static void cmd_done(struct tgt_conn *c, uint32_t dlen)
{
    struct tgt_task *t = c->rx_task;

    c->rx_task = NULL;
    if (!t)
        return;
    t->got += c->rx_keep;
    c->srv->stats.bytes_written += dlen;
    task_advance(t);
}

static int dataout_header(struct tgt_conn *c, const uint8_t *h, uint32_t dlen)
{
    struct tgt_task *t = task_find(c, bhs_itt(h));
    uint32_t ttt = get_be32(h + 20), datasn = get_be32(h + 36), off = get_be32(h + 40);

    c->rx_task = NULL;
    if (!t || t->data_ready) {
        /* A task that ended early (error status, abort): drop its data. */
        log_debug("target: %s: Data-Out for unknown task 0x%08x dropped", c->peer, bhs_itt(h));
        return 0;
    }
    if (ttt == ISCSI_RSVD_TAG) {
        if (t->unsol_done || off != t->unsol_got || datasn != t->unsol_datasn ||
            (uint64_t)off + dlen > c->p.first_burst) {
            conn_fail(c, "bad unsolicited Data-Out (offset %u, DataSN %u) for task 0x%08x", off,
                      datasn, t->itt);
            return -EPROTO;
        }
        t->unsol_datasn++;
    } else {
        struct tgt_r2t *r = NULL;
        for (int i = 0; i < (int)TGT_MAX_OUT_R2T; i++)
            if (t->r2t[i].active && t->r2t[i].ttt == ttt)
                r = &t->r2t[i];
        if (!r || off != r->offset + r->received || datasn != r->datasn ||
            dlen > r->len - r->received) {
            conn_fail(c, "bad Data-Out (TTT 0x%08x, offset %u, DataSN %u) for task 0x%08x", ttt,
                      off, datasn, t->itt);
            return -EPROTO;
        }
        r->datasn++;
    }
    c->rx_task = t;
    c->rx_dst = off < t->want ? t->buf + off : NULL;
    c->rx_keep = off < t->want ? (dlen < t->want - off ? dlen : t->want - off) : 0;
    return 0;
}

static void dataout_done(struct tgt_conn *c, const uint8_t *h, uint32_t dlen)
{
    struct tgt_task *t = c->rx_task;
    uint32_t ttt = get_be32(h + 20);

    c->rx_task = NULL;
    if (!t)
        return;
    c->srv->stats.bytes_written += dlen;
    t->got += c->rx_keep;
    if (ttt == ISCSI_RSVD_TAG) {
        t->unsol_got += dlen;
        if (h[1] & ISCSI_FLAG_FINAL)
            t->unsol_done = 1;
    } else {
        for (int i = 0; i < (int)TGT_MAX_OUT_R2T; i++) {
            struct tgt_r2t *r = &t->r2t[i];
            if (!r->active || r->ttt != ttt)
                continue;
            r->received += dlen;
            if (r->received == r->len)
                r->active = 0;
            else if (h[1] & ISCSI_FLAG_FINAL) {
                conn_fail(c, "Data-Out burst ended %u bytes short", r->len - r->received);
                return;
            }
        }
    }
    task_advance(t);
}

/* ---- NOP, TMF, logout ---- */

static void nop_out(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    uint8_t r[ISCSI_BHS_LEN] = { 0 };

    if (bhs_itt(h) == ISCSI_RSVD_TAG)
        return;   /* answer to our ping, or a ping wanting no answer */
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return;
    r[0] = ISCSI_OP_NOP_IN;
    r[1] = ISCSI_FLAG_FINAL;
    memcpy(r + 8, h + 8, 8);
    put_be32(r + 16, bhs_itt(h));
    put_be32(r + 20, ISCSI_RSVD_TAG);
    tgt_conn_fill_sn(c, r, 1);
    queue_or_fail(c, r, data, dlen, NULL, 1);
}

/* Aborts the tasks of lun (NULL: all LUNs) on every connection and leaves
 * a reset unit attention for the other I_T nexuses. */
static void reset_luns(struct tgt_conn *c, struct tgt_lun *lun)
{
    struct tgt_server *srv = c->srv;

    for (struct tgt_conn *o = srv->conns; o; o = o->next) {
        if (o->state == CONN_CLOSED || o->discovery)
            continue;
        tgt_conn_abort_tasks(o, lun);
        if (o != c)
            o->ua_reset |= lun ? 1ull << lun->index : ~0ull;
    }
    for (int i = 0; i < srv->nluns; i++)
        if (!lun || lun == &srv->luns[i])
            srv->luns[i].reserved_by = NULL;
}

static uint8_t tmf_exec(struct tgt_conn *c, const uint8_t *h)
{
    uint32_t lun = lun_from_raw(h + 8);
    struct tgt_lun *l = lun < (uint32_t)c->srv->nluns ? &c->srv->luns[lun] : NULL;
    uint32_t rtt = get_be32(h + 20), refcmdsn = get_be32(h + 32), cmdsn = get_be32(h + 24);
    struct tgt_task *t;

    switch (h[1] & 0x7f) {
    case ISCSI_TMF_ABORT_TASK:
        t = task_find(c, rtt);
        if (t) {
            task_abort(t);
            return ISCSI_TMF_RSP_COMPLETE;
        }
        /* RFC 7143 11.5.1: a task that never arrived counts as done when
         * its CmdSN is inside the window (not below ExpCmdSN) and before
         * this request.  Below ExpCmdSN it did arrive (one connection, TCP
         * order) and has completed: it does not exist any more. */
        if (!sn_lt(refcmdsn, c->exp_cmdsn) && sn_lt(refcmdsn, cmdsn + 1))
            return ISCSI_TMF_RSP_COMPLETE;
        return ISCSI_TMF_RSP_NO_TASK;
    case ISCSI_TMF_ABORT_TASK_SET:
    case ISCSI_TMF_CLEAR_TASK_SET:
        if (!l)
            return ISCSI_TMF_RSP_NO_LUN;
        tgt_conn_abort_tasks(c, l);
        return ISCSI_TMF_RSP_COMPLETE;
    case ISCSI_TMF_LUN_RESET:
        if (!l)
            return ISCSI_TMF_RSP_NO_LUN;
        log_info("target: %s: LUN RESET of LUN %u", c->initiator, lun);
        reset_luns(c, l);
        return ISCSI_TMF_RSP_COMPLETE;
    case ISCSI_TMF_TARGET_WARM_RESET:
        log_info("target: %s: TARGET WARM RESET", c->initiator);
        reset_luns(c, NULL);
        return ISCSI_TMF_RSP_COMPLETE;
    case ISCSI_TMF_TASK_REASSIGN:
        return 4;   /* allegiance reassignment not supported (ERL 0) */
    default:
        return ISCSI_TMF_RSP_NOT_SUPPORTED;
    }
}

static void tmf_req(struct tgt_conn *c, const uint8_t *h)
{
    uint8_t r[ISCSI_BHS_LEN] = { 0 };
    uint8_t resp;

    if (c->discovery) {
        send_reject(c, h, ISCSI_REJECT_PROTOCOL_ERROR);
        return;
    }
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return;
    resp = tmf_exec(c, h);
    r[0] = ISCSI_OP_TMF_RSP;
    r[1] = ISCSI_FLAG_FINAL;
    r[2] = resp;
    put_be32(r + 16, bhs_itt(h));
    tgt_conn_fill_sn(c, r, 1);
    queue_or_fail(c, r, NULL, 0, NULL, 0);
}

static void logout_req(struct tgt_conn *c, const uint8_t *h)
{
    uint8_t r[ISCSI_BHS_LEN] = { 0 };

    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return;
    r[0] = ISCSI_OP_LOGOUT_RSP;
    r[1] = ISCSI_FLAG_FINAL;
    r[2] = 0;   /* closed successfully */
    put_be32(r + 16, bhs_itt(h));
    tgt_conn_fill_sn(c, r, 1);
    if (tgt_conn_queue(c, r, NULL, 0, NULL, 0) < 0) {
        conn_fail(c, "out of memory queueing the logout response");
        return;
    }
    if (c->tx_tail)
        c->tx_tail->close_after = 1;
    c->state = CONN_LOGOUT;
}

/* ---- receive state machine ---- */

/* First look at a header, before waiting for anything it announces. */
static int bhs_check(struct tgt_conn *c)
{
    const uint8_t *h = c->rx_bhs;
    uint32_t dlen = bhs_data_len(h);
    uint32_t limit = c->state == CONN_FULL ? TGT_MAX_RECV_DSL : TGT_LOGIN_MAX_DSL;
    uint8_t op = bhs_opcode(h);

    if (c->state == CONN_LOGIN && op != ISCSI_OP_LOGIN_REQ) {
        conn_fail(c, "opcode 0x%02x before login completed", op);
        return -EPROTO;
    }
    if (dlen > limit) {
        conn_fail(c, "data segment of %u bytes exceeds MaxRecvDataSegmentLength %u", dlen, limit);
        return -EPROTO;
    }
    return 0;
}

/* Decide where the data segment of the PDU whose header is complete goes.
 * Returns 0, or a negative errno after the connection was failed. */
static int pdu_header(struct tgt_conn *c)
{
    const uint8_t *h = c->rx_bhs;
    uint32_t dlen = bhs_data_len(h);
    uint8_t op = bhs_opcode(h);

    c->rx_dst = NULL;
    c->rx_keep = 0;
    c->rx_task = NULL;
    if (c->state == CONN_FULL && op == ISCSI_OP_SCSI_CMD)
        return cmd_header(c, h, dlen);
    if (c->state == CONN_FULL && op == ISCSI_OP_DATA_OUT)
        return dataout_header(c, h, dlen);
    if (dlen > c->rx_seg_cap) {
        uint8_t *p = realloc(c->rx_seg, dlen);
        if (!p) {
            conn_fail(c, "out of memory for a %u byte segment", dlen);
            return -ENOMEM;
        }
        c->rx_seg = p;
        c->rx_seg_cap = dlen;
    }
    c->rx_dst = c->rx_seg;
    c->rx_keep = dlen;
    return 0;
}

static void pdu_done(struct tgt_conn *c)
{
    const uint8_t *h = c->rx_bhs;
    uint32_t dlen = bhs_data_len(h);
    int rc = 0;

    if (c->state == CONN_LOGOUT)
        return;
    switch (bhs_opcode(h)) {
    case ISCSI_OP_LOGIN_REQ:
        if (c->state != CONN_LOGIN)
            conn_fail(c, "login request in full feature phase");
        else
            rc = tgt_login_pdu(c, h, c->rx_seg, dlen);
        break;
    case ISCSI_OP_SCSI_CMD:
        cmd_done(c, dlen);
        break;
    case ISCSI_OP_DATA_OUT:
        dataout_done(c, h, dlen);
        break;
    case ISCSI_OP_NOP_OUT:
        nop_out(c, h, c->rx_seg, dlen);
        break;
    case ISCSI_OP_TMF_REQ:
        tmf_req(c, h);
        break;
    case ISCSI_OP_TEXT_REQ:
        if (cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
            rc = tgt_text_pdu(c, h, c->rx_seg, dlen);
        break;
    case ISCSI_OP_LOGOUT_REQ:
        logout_req(c, h);
        break;
    case ISCSI_OP_SNACK_REQ:
        send_reject(c, h, ISCSI_REJECT_SNACK);
        break;
    default:
        send_reject(c, h, ISCSI_REJECT_CMD_NOT_SUPPORTED);
        break;
    }
    if (rc < 0)
        conn_fail(c, "%s", strerror(-rc));
}

/* Moves up to need bytes to dst (NULL: discard); *seen points at them.
 * Returns bytes moved, -EAGAIN, or another negative errno. */
static ssize_t rx_read(struct tgt_conn *c, uint8_t *dst, size_t need, const uint8_t **seen)
{
    size_t avail = c->rx_stage_end - c->rx_stage_pos;
    ssize_t n;

    if (avail == 0 && dst && need >= 4096) {
        n = c->tp->recv(c, dst, need);
        if (n == 0)
            return -ECONNRESET;
        if (n > 0)
            *seen = dst;
        return n;
    }
    if (avail == 0) {
        n = c->tp->recv(c, c->rx_stage, sizeof(c->rx_stage));
        if (n <= 0)
            return n == 0 ? -ECONNRESET : n;
        c->rx_stage_pos = 0;
        c->rx_stage_end = (uint32_t)n;
        avail = (size_t)n;
    }
    if (avail > need)
        avail = need;
    *seen = c->rx_stage + c->rx_stage_pos;
    if (dst) {
        memcpy(dst, *seen, avail);
        *seen = dst;
    }
    c->rx_stage_pos += (uint32_t)avail;
    return (ssize_t)avail;
}

static void rx_enter(struct tgt_conn *c, enum rx_phase phase, uint32_t need)
{
    c->rx_phase = phase;
    c->rx_need = need;
    c->rx_have = 0;
}

/* Called when the current phase has all its bytes; moves to the next. */
static int rx_phase_done(struct tgt_conn *c)
{
    uint32_t dlen = bhs_data_len(c->rx_bhs);
    uint32_t hd = c->p.header_digest && c->digests_on ? ISCSI_DIGEST_LEN : 0;
    uint32_t dd = c->p.data_digest && c->digests_on ? ISCSI_DIGEST_LEN : 0;

    switch (c->rx_phase) {
    case RX_BHS:
        if (bhs_check(c) < 0)
            return -EPROTO;
        if (bhs_ahs_len(c->rx_bhs) + hd > sizeof(c->rx_ahs)) {
            conn_fail(c, "additional header segments too long");
            return -EPROTO;
        }
        rx_enter(c, RX_AHS, bhs_ahs_len(c->rx_bhs) + hd);
        if (c->rx_need)
            return 0;
        /* fall through */
    case RX_AHS:
        if (hd) {
            uint32_t ahs = bhs_ahs_len(c->rx_bhs);
            uint32_t crc = crc_add(crc_add(crc_begin(), c->rx_bhs, ISCSI_BHS_LEN), c->rx_ahs, ahs);
            if (!crc_check(c->rx_ahs + ahs, crc)) {
                conn_fail(c, "header digest mismatch");
                return -EPROTO;
            }
        }
        if (pdu_header(c) < 0)
            return -EPROTO;
        c->rx_crc = crc_begin();
        rx_enter(c, RX_DATA, dlen);
        if (c->rx_need)
            return 0;
        /* fall through */
    case RX_DATA:
        /* No data segment, no data digest (RFC 7143 11.1). */
        rx_enter(c, RX_TRAILER, dlen ? pad4(dlen) + dd : 0);
        if (c->rx_need)
            return 0;
        /* fall through */
    case RX_TRAILER:
        if (dd && dlen) {
            uint32_t pad = pad4(dlen);
            uint32_t crc = crc_add(c->rx_crc, c->rx_trailer, pad);
            if (!crc_check(c->rx_trailer + pad, crc)) {
                conn_fail(c, "data digest mismatch");
                return -EPROTO;
            }
        }
        pdu_done(c);
        rx_enter(c, RX_BHS, ISCSI_BHS_LEN);
        return 1;
    }
    return 0;
}

static uint8_t *rx_target(struct tgt_conn *c)
{
    switch (c->rx_phase) {
    case RX_BHS: return c->rx_bhs + c->rx_have;
    case RX_AHS: return c->rx_ahs + c->rx_have;
    case RX_TRAILER: return c->rx_trailer + c->rx_have;
    case RX_DATA:
        return c->rx_dst && c->rx_have < c->rx_keep ? c->rx_dst + c->rx_have : NULL;
    }
    return NULL;
}

static void rx_resume(struct evloop *loop, uint64_t id, void *user)
{
    struct tgt_conn *c = user;

    c->rx_resume_timer = 0;
    if (c->state != CONN_CLOSED)
        tgt_conn_rx(c);
    tgt_conn_put(c);
}

/* The loop stopped at its PDU budget with bytes left in rx_stage.  epoll
 * reports only new socket data, so those bytes would wait for the
 * initiator's next send, which may never come (it waits for our answers):
 * come back on the next loop turn, after the other connections had theirs.
 * Returns 1 when the loop is to go on at once instead (no timer). */
static int rx_defer(struct tgt_conn *c)
{
    if (c->rx_resume_timer)
        return 0;
    c->rx_resume_timer = evloop_add_timer(c->srv->loop, 0, rx_resume, c);
    if (!c->rx_resume_timer)
        return 1;   /* out of memory: rather unfair than stalled */
    c->refs++;
    return 0;
}

#define RX_PDU_BUDGET 256

void tgt_conn_rx(struct tgt_conn *c)
{
    struct tgt_server *srv = c->srv;
    int pdus = 0;

    tgt_batch_begin(srv);
    c->in_rx = 1;
    while (c->state != CONN_CLOSED) {
        size_t need = c->rx_need - c->rx_have;
        uint8_t *dst = rx_target(c);
        const uint8_t *seen = NULL;
        ssize_t n;

        if (pdus >= RX_PDU_BUDGET) {
            /* Bytes still on the socket make epoll (level-triggered)
             * call again; bytes already staged do not. */
            if (c->rx_stage_pos == c->rx_stage_end || !rx_defer(c))
                break;
            pdus = 0;
        }
        if (c->rx_phase == RX_DATA && dst && need > c->rx_keep - c->rx_have)
            need = c->rx_keep - c->rx_have;
        n = rx_read(c, dst, need, &seen);
        if (n == -EAGAIN || n == -EWOULDBLOCK)
            break;
        if (n < 0) {
            if (n == -ECONNRESET && c->rx_phase == RX_BHS && c->rx_have == 0)
                tgt_conn_close(c, "closed by the initiator");
            else
                conn_fail(c, "receive failed: %s", strerror((int)-n));
            break;
        }
        if (c->rx_phase == RX_DATA && c->p.data_digest && c->digests_on)
            c->rx_crc = crc_add(c->rx_crc, seen, (size_t)n);
        c->rx_have += (uint32_t)n;
        if (c->rx_have == c->rx_need) {
            int rc = rx_phase_done(c);
            if (rc < 0)
                break;
            pdus += rc;
        }
    }
    c->in_rx = 0;
    if (c->state != CONN_CLOSED)
        tx_kick(c);
    tgt_batch_end(srv);
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
    rx_enter(c, RX_BHS, ISCSI_BHS_LEN);
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
    tx_drop_all(c);
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
