/* The full feature phase PDUs of one connection: SCSI Command and
 * Data-Out (with the R2Ts that solicit the data), NOP-Out, Task
 * Management, Logout, and login and text requests handed to login.c; the
 * CmdSN window they are checked against; and tgt_pdu_ops[], the table
 * through which conn_rx.c dispatches every received PDU by opcode.
 *
 * A SCSI write task goes: header (scsi_prepare(), buffer allocated)
 * -> immediate and unsolicited data (unsol_got, until the F bit:
 * unsol_done) -> R2Ts for the rest, up to MaxOutstandingR2T at once
 * (r2t[], each active until its burst is in) -> all data in (data_ready)
 * -> scsi_execute().  A task with an error status skips the data and
 * completes at once; Data-Out for it is read and dropped.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/conn.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

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

    tgt_task_hold(t);
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
        if (tgt_conn_queue_or_fail(c, h, NULL, 0, NULL, 0) < 0)
            break;
        t->r2t_next += len;
    }
    tgt_task_drop(t);
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
        tgt_conn_reject(c, h, ISCSI_REJECT_PROTOCOL_ERROR);
        return 0;
    }
    if (bhs_ahs_len(h) > 0) {
        tgt_conn_reject(c, h, ISCSI_REJECT_CMD_NOT_SUPPORTED);
        return 0;
    }
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return 0;
    if (dlen && (!c->p.immediate_data || dlen > c->p.first_burst)) {
        tgt_conn_fail(c, "%u bytes of immediate data not allowed", dlen);
        return -EPROTO;
    }
    if (!(h[1] & ISCSI_FLAG_FINAL) && c->p.initial_r2t) {
        tgt_conn_fail(c, "unsolicited Data-Out announced while InitialR2T=Yes");
        return -EPROTO;
    }
    t = tgt_task_new(c);
    if (!t) {
        tgt_conn_fail(c, "out of memory for a task");
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
            /* Page aligned, so that an L2's O_DIRECT store writes from it. */
            if (posix_memalign((void **)&t->buf, 4096, t->want ? t->want : 1) != 0)
                t->buf = NULL;
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

static int cmd_done(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    struct tgt_task *t = c->rx_task;

    c->rx_task = NULL;
    if (!t)
        return 0;
    t->got += c->rx_keep;
    c->srv->stats.bytes_written += dlen;
    task_advance(t);
    return 0;
}

static int dataout_header(struct tgt_conn *c, const uint8_t *h, uint32_t dlen)
{
    struct tgt_task *t = tgt_task_find(c, bhs_itt(h));
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
            tgt_conn_fail(c, "bad unsolicited Data-Out (offset %u, DataSN %u) for task 0x%08x",
                          off, datasn, t->itt);
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
            tgt_conn_fail(c, "bad Data-Out (TTT 0x%08x, offset %u, DataSN %u) for task 0x%08x",
                          ttt, off, datasn, t->itt);
            return -EPROTO;
        }
        r->datasn++;
    }
    c->rx_task = t;
    c->rx_dst = off < t->want ? t->buf + off : NULL;
    c->rx_keep = off < t->want ? (dlen < t->want - off ? dlen : t->want - off) : 0;
    return 0;
}

static int dataout_done(struct tgt_conn *c, const uint8_t *h, const uint8_t *data,
                        uint32_t dlen)
{
    struct tgt_task *t = c->rx_task;
    uint32_t ttt = get_be32(h + 20);

    c->rx_task = NULL;
    if (!t)
        return 0;
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
                tgt_conn_fail(c, "Data-Out burst ended %u bytes short", r->len - r->received);
                return 0;
            }
        }
    }
    task_advance(t);
    return 0;
}

/* ---- NOP, TMF, logout ---- */

static int nop_out(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    uint8_t r[ISCSI_BHS_LEN] = { 0 };

    if (bhs_itt(h) == ISCSI_RSVD_TAG)
        return 0;   /* answer to our ping, or a ping wanting no answer */
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return 0;
    r[0] = ISCSI_OP_NOP_IN;
    r[1] = ISCSI_FLAG_FINAL;
    memcpy(r + 8, h + 8, 8);
    put_be32(r + 16, bhs_itt(h));
    put_be32(r + 20, ISCSI_RSVD_TAG);
    tgt_conn_fill_sn(c, r, 1);
    tgt_conn_queue_or_fail(c, r, data, dlen, NULL, 1);
    return 0;
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
        t = tgt_task_find(c, rtt);
        if (t) {
            tgt_task_abort(t);
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

static int tmf_req(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    uint8_t r[ISCSI_BHS_LEN] = { 0 };
    uint8_t resp;

    if (c->discovery) {
        tgt_conn_reject(c, h, ISCSI_REJECT_PROTOCOL_ERROR);
        return 0;
    }
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return 0;
    resp = tmf_exec(c, h);
    r[0] = ISCSI_OP_TMF_RSP;
    r[1] = ISCSI_FLAG_FINAL;
    r[2] = resp;
    put_be32(r + 16, bhs_itt(h));
    tgt_conn_fill_sn(c, r, 1);
    tgt_conn_queue_or_fail(c, r, NULL, 0, NULL, 0);
    return 0;
}

static int logout_req(struct tgt_conn *c, const uint8_t *h, const uint8_t *data,
                      uint32_t dlen)
{
    uint8_t r[ISCSI_BHS_LEN] = { 0 };

    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return 0;
    r[0] = ISCSI_OP_LOGOUT_RSP;
    r[1] = ISCSI_FLAG_FINAL;
    r[2] = 0;   /* closed successfully */
    put_be32(r + 16, bhs_itt(h));
    tgt_conn_fill_sn(c, r, 1);
    if (tgt_conn_queue(c, r, NULL, 0, NULL, 0) < 0) {
        tgt_conn_fail(c, "out of memory queueing the logout response");
        return 0;
    }
    if (c->tx_tail)
        c->tx_tail->close_after = 1;
    c->state = CONN_LOGOUT;
    return 0;
}

/* ---- login, text, SNACK ---- */

static int login_req(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    if (c->state != CONN_LOGIN) {
        tgt_conn_fail(c, "login request in full feature phase");
        return 0;
    }
    return tgt_login_pdu(c, h, data, dlen);
}

static int text_req(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    if (!cmdsn_accept(c, get_be32(h + 24), bhs_immediate(h)))
        return 0;
    return tgt_text_pdu(c, h, data, dlen);
}

static int snack_req(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
    tgt_conn_reject(c, h, ISCSI_REJECT_SNACK);
    return 0;
}

/* ---- the table ---- */

const struct tgt_pdu_op tgt_pdu_ops[64] = {
    [ISCSI_OP_NOP_OUT] = { NULL, nop_out },
    [ISCSI_OP_SCSI_CMD] = { cmd_header, cmd_done },
    [ISCSI_OP_TMF_REQ] = { NULL, tmf_req },
    [ISCSI_OP_LOGIN_REQ] = { NULL, login_req },
    [ISCSI_OP_TEXT_REQ] = { NULL, text_req },
    [ISCSI_OP_DATA_OUT] = { dataout_header, dataout_done },
    [ISCSI_OP_LOGOUT_REQ] = { NULL, logout_req },
    [ISCSI_OP_SNACK_REQ] = { NULL, snack_req },
};
