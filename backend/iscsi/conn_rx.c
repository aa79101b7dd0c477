/* Receiving on one connection: the PDU receive state machine.  See tgt.h
 * for the connection states.
 *
 * Receive phases of one PDU (conn->rx_phase):
 *   RX_BHS      48 bytes of Basic Header Segment
 *   RX_AHS      additional header segments + header digest
 *               -> pdu_header(): validate, choose where the data goes
 *   RX_DATA     data segment, straight into a task buffer when it is
 *               SCSI write data, else into rx_seg (or discarded)
 *   RX_TRAILER  padding + data digest -> pdu_done(): act on the PDU
 * then back to RX_BHS.  What each opcode does is tgt_pdu_ops[] (ffp.c).
 * Small PDUs are read through a 64 KiB read-ahead buffer (of which a
 * header's read takes 4 KiB: RX_STAGE_AT_BHS); large data segments
 * bypass it.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/evloop.h"

/* ---- receive state machine ---- */

/* First look at a header, before waiting for anything it announces. */
static int bhs_check(struct tgt_conn *c)
{
    const uint8_t *h = c->rx_bhs;
    uint32_t dlen = bhs_data_len(h);
    uint32_t limit = c->state == CONN_FULL ? TGT_MAX_RECV_DSL : TGT_LOGIN_MAX_DSL;
    uint8_t op = bhs_opcode(h);

    if (c->state == CONN_LOGIN && op != ISCSI_OP_LOGIN_REQ) {
        tgt_conn_fail(c, "opcode 0x%02x before login completed", op);
        return -EPROTO;
    }
    if (dlen > limit) {
        tgt_conn_fail(c, "data segment of %u bytes exceeds MaxRecvDataSegmentLength %u",
                      dlen, limit);
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
    const struct tgt_pdu_op *op = &tgt_pdu_ops[bhs_opcode(h)];

    c->rx_dst = NULL;
    c->rx_keep = 0;
    c->rx_task = NULL;
    if (c->state == CONN_FULL && op->header)
        return op->header(c, h, dlen);
    if (dlen > c->rx_seg_cap) {
        uint8_t *p = realloc(c->rx_seg, dlen);
        if (!p) {
            tgt_conn_fail(c, "out of memory for a %u byte segment", dlen);
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
    const struct tgt_pdu_op *op = &tgt_pdu_ops[bhs_opcode(h)];
    int rc;

    if (c->state == CONN_LOGOUT)
        return;
    if (!op->done) {
        tgt_conn_reject(c, h, ISCSI_REJECT_CMD_NOT_SUPPORTED);
        return;
    }
    rc = op->done(c, h, c->rx_seg, bhs_data_len(h));
    if (rc < 0)
        tgt_conn_fail(c, "%s", strerror(-rc));
}

/* What a header's read takes into the stage at most: the headers of 85
 * small PDUs in one recv, yet little of a large data segment behind it
 * (those bytes are copied out of the stage; the rest is received straight
 * into the task's buffer).  A whole 64 KiB stage here cost every 256 KiB
 * Data-Out up to a quarter of its bytes in an extra copy: 6.6% of the
 * target's CPU samples were that memmove during 1 MiB sequential writes,
 * 0.5% with this bound. */
#define RX_STAGE_AT_BHS 4096u

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
        n = c->tp->recv(c, c->rx_stage, c->rx_phase == RX_BHS ? RX_STAGE_AT_BHS
                                                              : sizeof(c->rx_stage));
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
            tgt_conn_fail(c, "additional header segments too long");
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
                tgt_conn_fail(c, "header digest mismatch");
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
                tgt_conn_fail(c, "data digest mismatch");
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

void tgt_conn_rx_start(struct tgt_conn *c)
{
    rx_enter(c, RX_BHS, ISCSI_BHS_LEN);
}

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
                tgt_conn_fail(c, "receive failed: %s", strerror((int)-n));
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
        tgt_conn_tx_kick(c);
    tgt_batch_end(srv);
}
