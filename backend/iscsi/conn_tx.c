/* Sending on one connection: the transmit queue, its batching over one
 * event's work, and the responses built from a task (Data-In, SCSI
 * Response) or a bad PDU (Reject).
 *
 * A queued PDU (struct tgt_txpdu) is its header, its data (copied into
 * `owned`, pointing into a task's buffer with a reference on the task,
 * into a LUN's mapping, or a range of a LUN's descriptor that sendfile
 * sends: tgt_conn_queue_file) and its padding and digests, as up to three
 * iovs.  A send stops before a file range (the headers before it go with
 * MSG_MORE), which the next send moves by sendfile.
 * It goes: queued on c->tx_head..tx_tail -> partly written (iov_pos, the
 * first iov not fully sent) -> retired and freed once fully written, when
 * a PDU marked close_after closes the connection.  While the socket is
 * full the connection waits for EV_WRITE (tx_blocked).
 *
 * Batching: inside tgt_conn_rx() (c->in_rx) or a server batch, queued
 * responses are not sent at once: tgt_conn_tx_kick() puts the connection
 * on srv->tx_pending (holding a reference), and the end of the outermost
 * batch sends each connection's queue with one sendmsg() of up to
 * TX_BATCH PDUs.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "common/evloop.h"

#define TX_BATCH 64

/* ---- transmit ---- */

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

/* A PDU with header h (its digest too) for dlen bytes of data, not yet
 * queued; NULL when out of memory. */
static struct tgt_txpdu *pdu_new(struct tgt_conn *c, const uint8_t *h, uint32_t dlen)
{
    struct tgt_txpdu *p = calloc(1, sizeof(*p));

    if (!p)
        return NULL;
    p->file_fd = -1;
    memcpy(p->hdr, h, ISCSI_BHS_LEN);
    put_be24(p->hdr + 5, dlen);
    p->iov[0] = (struct iovec){ p->hdr, ISCSI_BHS_LEN };
    if (c->p.header_digest && c->digests_on) {
        crc_put(p->hdr + ISCSI_BHS_LEN, crc_add(crc_begin(), p->hdr, ISCSI_BHS_LEN));
        p->iov[0].iov_len += ISCSI_DIGEST_LEN;
    }
    p->iovcnt = 1;
    return p;
}

static void pdu_append(struct tgt_conn *c, struct tgt_txpdu *p)
{
    if (c->tx_tail)
        c->tx_tail->next = p;
    else
        c->tx_head = p;
    c->tx_tail = p;
}

int tgt_conn_queue_file(struct tgt_conn *c, const uint8_t *h, int fd, uint64_t off, uint32_t dlen)
{
    struct tgt_txpdu *p;

    if (c->state == CONN_CLOSED)
        return 0;
    if (!(p = pdu_new(c, h, dlen)))
        return -ENOMEM;
    p->file_fd = fd;
    p->file_off = off;
    p->iov[1] = (struct iovec){ NULL, dlen };
    p->iov[2] = (struct iovec){ p->trailer, pad4(dlen) };
    p->iovcnt = p->iov[2].iov_len ? 3 : 2;
    pdu_append(c, p);
    return 0;
}

int tgt_conn_queue(struct tgt_conn *c, const uint8_t *h, const void *data, uint32_t dlen,
                   struct tgt_task *task, int copy)
{
    struct tgt_txpdu *p;
    uint32_t pad = pad4(dlen);

    if (c->state == CONN_CLOSED)
        return 0;
    if (!(p = pdu_new(c, h, dlen)))
        return -ENOMEM;
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
    pdu_append(c, p);
    return 0;
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
            if (p->iov_pos == 1 && p->file_fd >= 0)
                p->file_off += n;
            else
                v->iov_base = (uint8_t *)v->iov_base + n;
            v->iov_len -= n;
            return close_now;
        }
        c->tx_head = p->next;
        if (!c->tx_head)
            c->tx_tail = NULL;
        close_now |= p->close_after;
        tgt_txpdu_free(p);
    }
    return close_now;
}

/* Gathers the queue's unsent iovs from its head, up to TX_BATCH PDUs or
 * the first file range (*out_file: its PDU, else NULL). */
static int tx_gather(struct tgt_conn *c, struct iovec *iov, struct tgt_txpdu **out_file)
{
    int cnt = 0, npdu = 0;

    *out_file = NULL;
    for (struct tgt_txpdu *p = c->tx_head; p && npdu < TX_BATCH; p = p->next, npdu++)
        for (int i = p->iov_pos; i < p->iovcnt; i++) {
            if (i == 1 && p->file_fd >= 0 && p->iov[1].iov_len) {
                *out_file = p;
                return cnt;
            }
            if (p->iov[i].iov_len)
                iov[cnt++] = p->iov[i];
        }
    return cnt;
}

void tgt_conn_tx(struct tgt_conn *c)
{
    struct iovec iov[TX_BATCH * 3];

    while (c->tx_head && c->state != CONN_CLOSED) {
        struct tgt_txpdu *file;
        int cnt = tx_gather(c, iov, &file);
        ssize_t n = cnt ? c->tp->sendv(c, iov, cnt, file != NULL)
                        : c->tp->sendfile(c, file->file_fd, file->file_off,
                                          file->iov[1].iov_len);

        if (n == -EAGAIN || n == -EWOULDBLOCK) {
            if (!c->tx_blocked && c->fd >= 0 &&
                evloop_mod_fd(c->srv->loop, c->fd, EV_READ | EV_WRITE) == 0)
                c->tx_blocked = 1;
            return;
        }
        if (n < 0) {
            tgt_conn_fail(c, "send failed: %s", strerror((int)-n));
            return;
        }
        if (n == 0 && !cnt) {   /* the file ended before its range */
            tgt_conn_fail(c, "LUN store shorter than a READ's data");
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

void tgt_conn_tx_kick(struct tgt_conn *c)
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

void tgt_conn_reject(struct tgt_conn *c, const uint8_t *bad, uint8_t reason)
{
    uint8_t h[ISCSI_BHS_LEN] = { 0 };

    h[0] = ISCSI_OP_REJECT;
    h[1] = ISCSI_FLAG_FINAL;
    h[2] = reason;
    put_be32(h + 16, ISCSI_RSVD_TAG);
    tgt_conn_fill_sn(c, h, 1);
    if (tgt_conn_queue(c, h, bad, ISCSI_BHS_LEN, NULL, 1) < 0)
        tgt_conn_fail(c, "out of memory queueing a reject");
}

/* rc, a queueing call's result; on -ENOMEM the connection is failed
 * first (which frees the tasks nobody holds: see tgt_task_hold()). */
static int fail_unqueued(struct tgt_conn *c, int rc)
{
    if (rc < 0)
        tgt_conn_fail(c, "out of memory queueing a response");
    return rc;
}

int tgt_conn_queue_or_fail(struct tgt_conn *c, const uint8_t *h, const void *data,
                           uint32_t dlen, struct tgt_task *t, int copy)
{
    return fail_unqueued(c, tgt_conn_queue(c, h, data, dlen, t, copy));
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
    int rc;

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
        /* A mapped payload needs no task reference: the mapping and the
         * descriptor live until the LUN closes, after every connection. */
        if (t->data_in_mapped && c->tp->sendfile)
            rc = tgt_conn_queue_file(c, h, t->lun->fd, t->lba * t->lun->block_size + off, n);
        else
            rc = tgt_conn_queue(c, h, src + off, n, t->data_in_mapped ? NULL : t, 0);
        if (fail_unqueued(c, rc) < 0)
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
    tgt_conn_queue_or_fail(c, h, sense, slen, NULL, 1);
}

void tgt_task_complete(struct tgt_task *t)
{
    struct tgt_conn *c = t->conn;
    uint32_t spdtl, datasn = 0, rcount;
    uint8_t rflags;

    /* Its backing I/O is over: overlapping writers may go on. */
    tgt_order_leave(t);
    if (t->aborted || c->state == CONN_CLOSED) {
        tgt_task_unlink(t);
        tgt_task_release(t);
        return;
    }
    spdtl = t->dir == DIR_READ ? t->data_len : t->xfer;
    if (t->dir == DIR_READ && t->status == 0 && t->data_len == 0)
        spdtl = 0;
    residual(t, spdtl, &rflags, &rcount);
    /* The connection (owner of the task's reference on it) may close
     * while the responses are queued. */
    c->refs++;
    tgt_task_hold(t);
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
    tgt_task_unlink(t);
    tgt_task_drop(t);
    if (c->state != CONN_CLOSED)
        tgt_conn_tx_kick(c);
    tgt_conn_put(c);
}
