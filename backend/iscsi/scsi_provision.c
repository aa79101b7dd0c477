/* SCSI commands of logical block provisioning: WRITE SAME (with or
 * without UNMAP), UNMAP and GET LBA STATUS.  Punching holes needs a store
 * that can (lun->can_punch); GET LBA STATUS asks the store's lba_status().
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <stdlib.h>
#include <string.h>

/* ---- GET LBA STATUS ---- */

int scsi_prep_get_lba_status(struct tgt_task *t)
{
    uint64_t lba = get_be64(t->cdb + 2);

    if (lba >= t->lun->nblocks)
        return scsi_fail(t, KEY_ILLEGAL, ASC_LBA_OUT_OF_RANGE);
    t->lba = lba;
    t->dir = DIR_READ;
    return 0;
}

/* Descriptors from the requested LBA on, one per extent of the same
 * provisioning status, as many as the allocation length asks for. */
void scsi_exec_get_lba_status(struct tgt_task *t)
{
    struct tgt_lun *l = t->lun;
    uint32_t alloc = get_be32(t->cdb + 10), n = 8, max;
    uint8_t d[8 + 16 * MAX_LBA_STATUS_DESCS] = { 0 };
    uint64_t lba = t->lba;

    max = alloc < 24 ? 1 : (alloc - 8) / 16;
    if (max > MAX_LBA_STATUS_DESCS)
        max = MAX_LBA_STATUS_DESCS;
    for (uint32_t i = 0; i < max && lba < l->nblocks; i++) {
        uint64_t cnt = l->nblocks - lba;
        int mapped = 1, rc = 0;
        if (l->ops->lba_status)
            rc = l->ops->lba_status(l, lba, &cnt, &mapped);
        if (rc < 0) {
            t->io.op = TGT_IO_READ;
            t->io.off = lba * l->block_size;
            t->io.len = 0;
            scsi_sense_from_errno(t, rc, "extent lookup");
            scsi_done(t);
            return;
        }
        if (cnt > 0xffffffffull)
            cnt = 0xffffffffull;
        put_be64(d + n, lba);
        put_be32(d + n + 8, (uint32_t)cnt);
        d[n + 12] = mapped ? 0x0 : 0x1;   /* mapped / deallocated */
        n += 16;
        lba += cnt;
    }
    put_be32(d, n - 4);
    scsi_reply(t, d, n, alloc);
}

/* ---- WRITE SAME / UNMAP ---- */

int scsi_prep_write_same(struct tgt_task *t)
{
    const uint8_t *c = t->cdb;
    int is16 = c[0] == 0x93;
    uint64_t lba = is16 ? get_be64(c + 2) : get_be32(c + 2);
    uint32_t n = is16 ? get_be32(c + 10) : get_be16(c + 7);
    int ndob = is16 && (c[1] & 0x01);

    if ((c[1] & 0xe0) || (c[1] & 0x10) || (ndob && !(c[1] & 0x08)))
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (scsi_check_range(t, lba, n) < 0)
        return -1;
    if (n == 0 && lba >= t->lun->nblocks)
        return scsi_fail(t, KEY_ILLEGAL, ASC_LBA_OUT_OF_RANGE);
    if (n == 0 && t->lun->nblocks - lba > UINT32_MAX)   /* to the end (WSNZ=0) */
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (n == 0)
        n = (uint32_t)(t->lun->nblocks - lba);
    if ((c[1] & 0x08) && !t->lun->can_punch)
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->lba = lba;
    t->nblocks = n;
    t->xfer = ndob ? 0 : t->lun->block_size;
    t->dir = t->xfer ? DIR_WRITE : DIR_NONE;
    return 0;
}

static void write_same_step(struct tgt_task *t)
{
    uint32_t bs = t->lun->block_size, n = t->left < WS_CHUNK_BLOCKS ? t->left : WS_CHUNK_BLOCKS;
    uint64_t lba = t->cur_lba;

    if (t->left == 0) {
        scsi_complete_good(t);
        return;
    }
    t->cur_lba += n;
    t->left -= n;
    scsi_submit(t, TGT_IO_WRITE, t->aux, lba * bs, (size_t)n * bs, write_same_step);
}

static void write_same_start(struct tgt_task *t)
{
    uint32_t bs = t->lun->block_size;
    uint32_t chunk = t->nblocks < WS_CHUNK_BLOCKS ? t->nblocks : WS_CHUNK_BLOCKS;

    /* UNMAP=1 deallocates whatever the data block holds, as LIO and tgtd
     * do; initiators (and libiscsi's UnmapUntilEnd) then expect the
     * LBPRZ zeros on read. */
    if (t->cdb[1] & 0x08) {
        scsi_submit(t, TGT_IO_PUNCH, NULL, t->lba * bs, (size_t)t->nblocks * bs,
                    scsi_complete_good);
        return;
    }
    t->aux = malloc((size_t)chunk * bs);
    if (!t->aux) {
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        scsi_done(t);
        return;
    }
    for (uint32_t i = 0; i < chunk; i++) {
        if (t->xfer)
            memcpy(t->aux + (size_t)i * bs, t->buf, bs);
        else
            memset(t->aux + (size_t)i * bs, 0, bs);
    }
    t->cur_lba = t->lba;
    t->left = t->nblocks;
    write_same_step(t);
}

void scsi_exec_write_same(struct tgt_task *t)
{
    tgt_order_run(t, t->lba, t->nblocks, 0, write_same_start);
}

int scsi_prep_unmap(struct tgt_task *t)
{
    uint32_t len = get_be16(t->cdb + 7);

    if (t->cdb[1] & 0x01)   /* ANCHOR */
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (!t->lun->can_punch)
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_OPCODE);
    if (len > 0 && len < 8)
        return scsi_fail(t, KEY_ILLEGAL, ASC_PARAM_LIST_LENGTH);
    if (len > 8 + 16 * MAX_UNMAP_DESCS)
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->xfer = len;
    t->dir = len ? DIR_WRITE : DIR_NONE;
    return 0;
}

/* Punch the next descriptor's range; t->stage indexes descriptors. */
static void unmap_step(struct tgt_task *t)
{
    uint32_t bs = t->lun->block_size;

    while ((uint32_t)t->stage < t->left) {
        const uint8_t *d = t->buf + 8 + 16 * t->stage++;
        uint64_t lba = get_be64(d);
        uint32_t n = get_be32(d + 8);
        if (n)
            return scsi_submit(t, TGT_IO_PUNCH, NULL, lba * bs, (size_t)n * bs, unmap_step);
    }
    scsi_complete_good(t);
}

void scsi_exec_unmap(struct tgt_task *t)
{
    uint32_t have = t->xfer < t->edtl ? t->xfer : t->edtl, ndesc;

    if (t->xfer == 0) {
        scsi_complete_good(t);
        return;
    }
    if (have < 8) {
        scsi_set_sense(t, KEY_ILLEGAL, ASC_PARAM_LIST_LENGTH);
        scsi_done(t);
        return;
    }
    ndesc = get_be16(t->buf + 2) / 16;
    if (8 + 16 * ndesc > have)
        ndesc = (have - 8) / 16;
    for (uint32_t i = 0; i < ndesc; i++) {
        const uint8_t *d = t->buf + 8 + 16 * i;
        uint64_t lba = get_be64(d);
        uint32_t n = get_be32(d + 8);
        if (n > MAX_UNMAP_LBAS) {
            scsi_set_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_PARAM);
            scsi_done(t);
            return;
        }
        if (scsi_check_range(t, lba, n) < 0) {
            scsi_done(t);
            return;
        }
    }
    t->stage = 0;
    t->left = ndesc;
    /* Descriptors may go anywhere: the whole LUN is the range. */
    tgt_order_run(t, 0, t->lun->nblocks, 0, unmap_step);
}
