/* What every SCSI command does with its task, the bottom of the SCSI
 * layer: sense data, replies, completion and backing I/O.  The command
 * files (scsi_rw.c, scsi_provision.c, scsi_info.c, scsi_pr.c) sit on this
 * file; the table (scsi_ops.c) and the entry (scsi.c) sit on them.
 *
 * Backing I/O is asynchronous: exec() submits a struct tgt_io through
 * scsi_submit(), whose completion continues at task->cont or completes
 * the task.  errno values from the stores become sense data in
 * scsi_sense_from_errno() only.  A command ends in scsi_done(), which
 * hands the task back to the connection layer above through
 * srv->scsi_up (the SCSI files never call that layer directly).
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

void scsi_done(struct tgt_task *t)
{
    t->conn->srv->scsi_up->task_complete(t);
}

/* ---- sense ---- */

void scsi_set_sense(struct tgt_task *t, uint8_t key, uint16_t asc)
{
    memset(t->sense, 0, 18);
    t->sense[0] = 0x70;           /* current error, fixed format */
    t->sense[2] = key;
    t->sense[7] = 10;
    t->sense[12] = (uint8_t)(asc >> 8);
    t->sense[13] = (uint8_t)asc;
    t->sense_len = 18;
    t->status = ST_CHECK;
    t->data_len = 0;
}

void scsi_sense_info(struct tgt_task *t, uint32_t info)
{
    t->sense[0] |= 0x80;          /* INFORMATION field valid */
    put_be32(t->sense + 3, info);
}

/* Sense-key specific field pointer to CDB byte `byte` (SPC-4 4.5.2.4.2):
 * for MAINTENANCE IN and SERVICE ACTION IN, an INVALID FIELD IN CDB
 * without it reads as "service action not supported" to initiators. */
void scsi_sense_cdb_field(struct tgt_task *t, uint16_t byte)
{
    t->sense[15] = 0x80 | 0x40;   /* SKSV, C/D: the CDB */
    put_be16(t->sense + 16, byte);
}

int scsi_fail(struct tgt_task *t, uint8_t key, uint16_t asc)
{
    scsi_set_sense(t, key, asc);
    return -1;
}

/* The one place store errors become SCSI: context goes to the log, the
 * initiator gets the nearest sense code. */
void scsi_sense_from_errno(struct tgt_task *t, int err, const char *what)
{
    int write = t->io.op != TGT_IO_READ;

    log_error("target: LUN %d: %s of %zu bytes at offset %llu failed: %s",
              t->lun ? t->lun->index : -1, what, t->io.len, (unsigned long long)t->io.off,
              strerror(-err));
    switch (-err) {
    case EIO:
    case EBADMSG:
        scsi_set_sense(t, KEY_MEDIUM, write ? ASC_WRITE_ERROR : ASC_READ_ERROR);
        break;
    case ENOSPC:
    case EDQUOT:
        scsi_set_sense(t, KEY_DATA_PROTECT, ASC_SPACE_ALLOC_FAILED);
        break;
    case ENOMEM:
    case EAGAIN:
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        break;
    default:
        scsi_set_sense(t, KEY_HARDWARE, ASC_INTERNAL_FAILURE);
        break;
    }
}

/* ---- helpers ---- */

static int alloc_buf(struct tgt_task *t, uint32_t len)
{
    free(t->buf);
    t->buf = calloc(1, len ? len : 1);
    t->buf_len = len;
    if (!t->buf)
        return scsi_fail(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
    return 0;
}

/* Reply with n bytes of data, cut to the allocation length. */
void scsi_reply(struct tgt_task *t, const void *data, uint32_t n, uint32_t alloc)
{
    uint32_t len = n < alloc ? n : alloc;

    if (alloc_buf(t, len) == 0) {
        memcpy(t->buf, data, len);
        t->data_len = len;
        t->status = ST_GOOD;
    }
    scsi_done(t);
}

void scsi_complete_status(struct tgt_task *t, uint8_t status)
{
    t->status = status;
    scsi_done(t);
}

void scsi_complete_sense(struct tgt_task *t, uint8_t key, uint16_t asc)
{
    scsi_set_sense(t, key, asc);
    scsi_done(t);
}

int scsi_check_range(struct tgt_task *t, uint64_t lba, uint64_t nblocks)
{
    uint64_t cap = t->lun->nblocks;

    if (lba > cap || nblocks > cap - lba)
        return scsi_fail(t, KEY_ILLEGAL, ASC_LBA_OUT_OF_RANGE);
    return 0;
}

static void io_done(struct tgt_io *io, int err)
{
    struct tgt_task *t = (struct tgt_task *)((char *)io - offsetof(struct tgt_task, io));
    static const char *const names[] = { "read", "write", "flush", "unmap" };

    t->io_busy = 0;
    if (err < 0) {
        scsi_sense_from_errno(t, err, names[io->op]);
        scsi_done(t);
        return;
    }
    if (t->aborted || !t->cont) {
        scsi_done(t);
        return;
    }
    t->cont(t);
}

void scsi_submit(struct tgt_task *t, enum tgt_io_op op, uint8_t *buf, uint64_t off, size_t len,
                 void (*cont)(struct tgt_task *))
{
    t->io = (struct tgt_io){ .op = op, .fua = t->fua, .dpo = t->dpo, .buf = buf, .off = off,
                             .len = len,
                             .lun = t->lun, .cb = io_done };
    t->cont = cont;
    t->io_busy = 1;
    tgt_io_submit(&t->io);
}

void scsi_complete_good(struct tgt_task *t)
{
    t->status = ST_GOOD;
    scsi_done(t);
}

/* ---- handlers shared by several commands ---- */

int scsi_prep_none(struct tgt_task *t)
{
    return 0;
}

int scsi_prep_read_data(struct tgt_task *t)
{
    t->dir = DIR_READ;
    return 0;
}

void scsi_exec_good(struct tgt_task *t)
{
    scsi_complete_good(t);
}
