/* SCSI commands that move blocks: READ, WRITE, WRITE AND VERIFY, ORWRITE,
 * VERIFY (6/10/12/16-byte forms as the table lists them), SYNCHRONIZE
 * CACHE and PRE-FETCH.  Writes run through order.c so that an ORWRITE
 * holds its range alone.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <stdlib.h>

/* ---- READ / WRITE / VERIFY family ---- */

/* Decodes LBA and length for 6/10/12/16-byte block CDBs. */
static void decode_rw(struct tgt_task *t, uint64_t *lba, uint32_t *len)
{
    const uint8_t *c = t->cdb;

    switch (c[0] >> 5) {
    case 0:   /* 6-byte */
        *lba = (uint64_t)(c[1] & 0x1f) << 16 | get_be16(c + 2);
        *len = c[4] ? c[4] : 256;
        break;
    case 1:   /* 10-byte */
    case 2:
        *lba = get_be32(c + 2);
        *len = get_be16(c + 7);
        break;
    case 5:   /* 12-byte */
        *lba = get_be32(c + 2);
        *len = get_be32(c + 6);
        break;
    default:  /* 16-byte */
        *lba = get_be64(c + 2);
        *len = get_be32(c + 10);
        break;
    }
}

static int prep_block_range(struct tgt_task *t, enum tgt_dir dir)
{
    uint64_t lba;
    uint32_t len;

    decode_rw(t, &lba, &len);
    if (t->cdb[0] != 0x08 && t->cdb[0] != 0x0a && (t->cdb[1] & 0xe0))
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);   /* no protection info */
    if (scsi_check_range(t, lba, len) < 0)
        return -1;
    if (len > TGT_MAX_XFER_BLOCKS)
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->lba = lba;
    t->nblocks = len;
    t->xfer = dir == DIR_NONE ? 0 : len * t->lun->block_size;
    t->dir = t->xfer ? dir : DIR_NONE;
    t->fua = t->cdb[0] != 0x08 && t->cdb[0] != 0x0a && (t->cdb[1] & 0x08);
    /* DPO (SBC, byte 1 bit 4; none in the 6-byte forms): an L2 under an
     * exclusive policy need not keep what this command reads. */
    t->dpo = t->cdb[0] != 0x08 && t->cdb[0] != 0x0a && (t->cdb[1] & 0x10);
    return 0;
}

int scsi_prep_read(struct tgt_task *t)
{
    return prep_block_range(t, DIR_READ);
}

int scsi_prep_write(struct tgt_task *t)
{
    return prep_block_range(t, DIR_WRITE);
}

static void read_done(struct tgt_task *t)
{
    t->data_len = t->xfer;
    scsi_complete_good(t);
}

/* Whether the Data-In may be sent from the LUN's mapping: the whole range
 * is in the page cache, so sending does not wait for the disk (tgt.h). */
static int read_from_cache(struct tgt_task *t)
{
    return tgt_conn_send_mapped_ok(t->conn) &&
           tgt_lun_cached(t->lun, t->lba * t->lun->block_size, t->xfer);
}

void scsi_exec_read(struct tgt_task *t)
{
    if (t->xfer == 0) {
        scsi_complete_good(t);
        return;
    }
    if (read_from_cache(t)) {
        t->data_in_mapped = 1;
        read_done(t);
        return;
    }
    /* Not calloc: the store fills every byte, so clearing up to 8 MiB
     * first would be a wasted pass over memory. */
    free(t->buf);
    /* Page aligned, so that an L2's O_DIRECT store reads into it. */
    if (posix_memalign((void **)&t->buf, 4096, t->xfer) != 0)
        t->buf = NULL;
    if (!t->buf) {
        scsi_fail(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        scsi_done(t);
        return;
    }
    t->buf_len = t->xfer;
    scsi_submit(t, TGT_IO_READ, t->buf, t->lba * t->lun->block_size, t->xfer, read_done);
}

static void write_start(struct tgt_task *t)
{
    scsi_submit(t, TGT_IO_WRITE, t->buf, t->lba * t->lun->block_size,
                (size_t)t->nblocks * t->lun->block_size, scsi_complete_good);
}

void scsi_exec_write(struct tgt_task *t)
{
    if (t->nblocks == 0) {
        scsi_complete_good(t);
        return;
    }
    tgt_order_run(t, t->lba, t->nblocks, 0, write_start);
}

/* ---- ORWRITE ---- */

/* The blocks are read, ORed with the Data-Out and written back while the
 * range is held exclusively (order.c), so no other write lands between. */
static void orwrite_merge(struct tgt_task *t)
{
    size_t len = (size_t)t->nblocks * t->lun->block_size;

    for (size_t i = 0; i < len; i++)
        t->aux[i] |= t->buf[i];
    scsi_submit(t, TGT_IO_WRITE, t->aux, t->lba * t->lun->block_size, len, scsi_complete_good);
}

static void orwrite_start(struct tgt_task *t)
{
    size_t len = (size_t)t->nblocks * t->lun->block_size;

    t->aux = malloc(len);
    if (!t->aux) {
        scsi_complete_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        return;
    }
    scsi_submit(t, TGT_IO_READ, t->aux, t->lba * t->lun->block_size, len, orwrite_merge);
}

void scsi_exec_orwrite(struct tgt_task *t)
{
    if (t->nblocks == 0) {
        scsi_complete_good(t);
        return;
    }
    tgt_order_run(t, t->lba, t->nblocks, 1, orwrite_start);
}

/* ---- VERIFY, WRITE AND VERIFY ---- */

static int bytchk(const struct tgt_task *t)
{
    return (t->cdb[1] >> 1) & 3;
}

int scsi_prep_verify(struct tgt_task *t)
{
    int chk = bytchk(t);

    if (chk == 2)
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (prep_block_range(t, chk ? DIR_WRITE : DIR_NONE) < 0)
        return -1;
    if (chk == 3)   /* one block compared with every block of the range */
        t->xfer = t->nblocks ? t->lun->block_size : 0;
    t->dir = t->xfer ? DIR_WRITE : DIR_NONE;
    t->fua = 0;
    return 0;
}

static void verify_compare(struct tgt_task *t)
{
    uint32_t bs = t->lun->block_size, total = t->nblocks * bs;

    for (uint32_t i = 0; i < total; i++) {
        uint8_t want = bytchk(t) == 3 ? t->buf[i % bs] : t->buf[i];
        if (t->aux[i] != want) {
            scsi_set_sense(t, KEY_MISCOMPARE, ASC_MISCOMPARE_VERIFY);
            scsi_sense_info(t, i);
            scsi_done(t);
            return;
        }
    }
    scsi_complete_good(t);
}

void scsi_exec_verify(struct tgt_task *t)
{
    uint32_t total = t->nblocks * t->lun->block_size;

    if (bytchk(t) == 0 || total == 0) {
        scsi_complete_good(t);
        return;
    }
    t->aux = malloc(total);
    if (!t->aux) {
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        scsi_done(t);
        return;
    }
    scsi_submit(t, TGT_IO_READ, t->aux, t->lba * t->lun->block_size, total, verify_compare);
}

int scsi_prep_write_verify(struct tgt_task *t)
{
    if (bytchk(t) & 1 && (t->cdb[1] & 0x04))   /* BYTCHK other than 0/1 */
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (prep_block_range(t, DIR_WRITE) < 0)
        return -1;
    /* Verify means "on the medium": write through. */
    t->fua = 1;
    return 0;
}

/* ---- DEMOTE (target.h) ---- */

/* Decoded as a WRITE(16): the Data-Out is the blocks.  The L2's write
 * generation is taken now, as the command arrives, before its Data-Out:
 * a write that runs in between makes the demotion stale. */
int scsi_prep_demote(struct tgt_task *t)
{
    t->l2_gen = tgt_l2_gen(t->lun->srv);
    return prep_block_range(t, DIR_WRITE);
}

void scsi_exec_demote(struct tgt_task *t)
{
    if (t->nblocks)
        tgt_l2_demote(t->lun, t->lba * t->lun->block_size, t->buf,
                      (size_t)t->nblocks * t->lun->block_size, t->l2_gen);
    scsi_complete_good(t);
}

/* ---- SYNCHRONIZE CACHE, PRE-FETCH ---- */

int scsi_prep_sync(struct tgt_task *t)
{
    int ten = t->cdb[0] < 0x80;
    uint64_t lba = ten ? get_be32(t->cdb + 2) : get_be64(t->cdb + 2);
    uint32_t n = ten ? get_be16(t->cdb + 7) : get_be32(t->cdb + 10);

    return scsi_check_range(t, lba, n);
}

void scsi_exec_sync(struct tgt_task *t)
{
    scsi_submit(t, TGT_IO_FLUSH, NULL, 0, 0, scsi_complete_good);
}
