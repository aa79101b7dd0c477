/* SCSI block device emulation (SPC-4 / SBC-3 subset): the entry every
 * command goes through, the top of the SCSI layer.
 *
 * scsi_prepare() looks the CDB up in scsi_ops[] (scsi_ops.c), applies what
 * the table says of it (LUN required, unit attentions, reservations) and
 * calls its prepare(), which decodes and checks the CDB before any data
 * moves; scsi_execute() calls its exec() once Data-Out has arrived.  The
 * commands themselves are by family: scsi_rw.c (READ, WRITE, ORWRITE,
 * VERIFY, SYNCHRONIZE CACHE), scsi_provision.c (WRITE SAME, UNMAP, GET LBA
 * STATUS), scsi_info.c (INQUIRY and VPD, MODE SENSE, READ CAPACITY, REPORT
 * LUNS, RESERVE/RELEASE, REQUEST SENSE), scsi_pr.c (persistent
 * reservations), scsi_ops.c (REPORT SUPPORTED OPERATION CODES, from the
 * table); what they share is scsi_task.c.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <stdint.h>
#include <stdio.h>

int scsi_prepare(struct tgt_task *t)
{
    const struct scsi_op *op = scsi_op_lookup(t->cdb);
    struct tgt_lun *l = t->lun;

    t->status = ST_GOOD;
    t->dir = DIR_NONE;
    t->xfer = 0;
    if (!op)
        return scsi_fail(t, KEY_ILLEGAL, l ? ASC_INVALID_OPCODE : ASC_LUN_NOT_SUPPORTED);
    if (!l && !(op->flags & OPF_NO_LUN))
        return scsi_fail(t, KEY_ILLEGAL, ASC_LUN_NOT_SUPPORTED);
    if (l && !(op->flags & OPF_NO_UA) && (t->conn->ua_reset & (1ull << l->index))) {
        t->conn->ua_reset &= ~(1ull << l->index);
        return scsi_fail(t, KEY_UNIT_ATTENTION, ASC_RESET_OCCURRED);
    }
    if (l && !(op->flags & OPF_NO_UA) && t->conn->ua_pr[l->index]) {
        uint16_t asc = t->conn->ua_pr[l->index];

        t->conn->ua_pr[l->index] = 0;
        return scsi_fail(t, KEY_UNIT_ATTENTION, asc);
    }
    if (l && l->reserved_by && l->reserved_by != t->conn && !(op->flags & OPF_NO_CONFLICT)) {
        t->status = ST_CONFLICT;
        return -1;
    }
    if (l && l->pr && (op->flags & (OPF_PR_READ | OPF_PR_WRITE)) &&
        scsi_pr_conflict(t, op->flags & OPF_PR_WRITE ? PR_WRITES : PR_READS)) {
        t->status = ST_CONFLICT;
        return -1;
    }
    if (op->prepare(t) < 0)
        return -1;
    /* Commands that return data size their reply at execution. */
    if (t->dir == DIR_READ && t->xfer == 0)
        t->xfer = t->edtl;
    return 0;
}

void scsi_execute(struct tgt_task *t)
{
    const struct scsi_op *op = scsi_op_lookup(t->cdb);

    op->exec(t);
}

int scsi_clip_write(struct tgt_task *t)
{
    const struct scsi_op *op = scsi_op_lookup(t->cdb);

    /* Only plain block writes can stop at the iSCSI expected length: the
     * initiator sends EDTL bytes, we write the whole blocks among them. */
    if (!op || op->exec != scsi_exec_write || !t->lun)
        return -1;
    t->nblocks = t->edtl / t->lun->block_size;
    return 0;
}

int scsi_lun_init(struct tgt_lun *lun)
{
    const char *iqn = lun->srv->iqn;
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a over IQN and LUN */

    for (const char *p = iqn; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    h = (h ^ (uint64_t)lun->index) * 0x100000001b3ull;
    snprintf(lun->serial, sizeof(lun->serial), "%016llx", (unsigned long long)h);
    /* NAA 6 (IEEE registered extended), company id 0 (locally made). */
    lun->naa[0] = 0x60;
    for (int i = 0; i < 8; i++)
        lun->naa[8 + i] = (uint8_t)(h >> (56 - 8 * i));
    lun->naa[4] = (uint8_t)(lun->index >> 8);
    lun->naa[5] = (uint8_t)lun->index;
    return 0;
}
