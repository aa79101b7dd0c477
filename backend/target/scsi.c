/* SCSI block device emulation (SPC-4 / SBC-3 subset).
 *
 * scsi_ops[] is the operations table: each entry names an opcode (and
 * service action), its CDB length and usage mask (for REPORT SUPPORTED
 * OPERATION CODES), a prepare() that decodes and checks the CDB before
 * any data moves, and an exec() that runs once Data-Out has arrived.
 * Backing I/O is asynchronous: exec() submits a struct tgt_io whose
 * completion continues at task->cont or completes the task.
 * errno values from the stores become sense data in sense_from_errno()
 * only.
 */
#include "config.h"

#include "backend/target/tgt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

#include "backend/target/scsi_sense.h"

#define MAX_UNMAP_LBAS 0x100000u
#define MAX_UNMAP_DESCS 256u
/* WRITE SAME has no MAXIMUM WRITE SAME LENGTH (0 in the Block Limits
 * VPD): 0 blocks means "to the end of the LUN" (WSNZ=0), and initiators
 * size a WRITE of the reported maximum, so a limit would have to be both
 * at least the LUN and at most one transfer.  The data is written in
 * WS_CHUNK_BLOCKS steps, so the length bounds time, not memory; the count
 * fields bound it to 2^32-1 blocks. */
#define MAX_LBA_STATUS_DESCS 64u
#define WS_CHUNK_BLOCKS 2048u

#define OPF_NO_LUN 0x1      /* allowed without a logical unit */
#define OPF_NO_UA 0x2       /* not stopped by a unit attention */
#define OPF_NO_CONFLICT 0x4 /* allowed under another nexus's RESERVE(6) */
/* Class under a persistent reservation (SPC-4 5.13.1); neither: allowed */
#define OPF_PR_READ 0x8
#define OPF_PR_WRITE 0x10

struct scsi_op {
    uint8_t opcode;
    int sa;                 /* service action, or -1 */
    uint8_t cdb_len;
    uint8_t flags;
    const char *name;
    int (*prepare)(struct tgt_task *t);
    void (*exec)(struct tgt_task *t);
    uint8_t usage[16];
};

static const struct scsi_op scsi_ops[];
static const size_t scsi_nops;
static const struct scsi_op *op_lookup(const uint8_t *cdb);

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

static void sense_info(struct tgt_task *t, uint32_t info)
{
    t->sense[0] |= 0x80;          /* INFORMATION field valid */
    put_be32(t->sense + 3, info);
}

/* Sense-key specific field pointer to CDB byte `byte` (SPC-4 4.5.2.4.2):
 * for MAINTENANCE IN and SERVICE ACTION IN, an INVALID FIELD IN CDB
 * without it reads as "service action not supported" to initiators. */
static void sense_cdb_field(struct tgt_task *t, uint16_t byte)
{
    t->sense[15] = 0x80 | 0x40;   /* SKSV, C/D: the CDB */
    put_be16(t->sense + 16, byte);
}

static int fail(struct tgt_task *t, uint8_t key, uint16_t asc)
{
    scsi_set_sense(t, key, asc);
    return -1;
}

/* The one place store errors become SCSI: context goes to the log, the
 * initiator gets the nearest sense code. */
static void sense_from_errno(struct tgt_task *t, int err, const char *what)
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
        return fail(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
    return 0;
}

/* Reply with n bytes of buf, cut to the allocation length. */
static void reply(struct tgt_task *t, const void *data, uint32_t n, uint32_t alloc)
{
    uint32_t len = n < alloc ? n : alloc;

    if (alloc_buf(t, len) == 0) {
        memcpy(t->buf, data, len);
        t->data_len = len;
        t->status = ST_GOOD;
    }
    tgt_task_complete(t);
}

void scsi_reply(struct tgt_task *t, const void *data, uint32_t n, uint32_t alloc)
{
    reply(t, data, n, alloc);
}

void scsi_complete_status(struct tgt_task *t, uint8_t status)
{
    t->status = status;
    tgt_task_complete(t);
}

void scsi_complete_sense(struct tgt_task *t, uint8_t key, uint16_t asc)
{
    scsi_set_sense(t, key, asc);
    tgt_task_complete(t);
}

static int check_range(struct tgt_task *t, uint64_t lba, uint64_t nblocks)
{
    uint64_t cap = t->lun->nblocks;

    if (lba > cap || nblocks > cap - lba)
        return fail(t, KEY_ILLEGAL, ASC_LBA_OUT_OF_RANGE);
    return 0;
}

static void io_done(struct tgt_io *io, int err)
{
    struct tgt_task *t = (struct tgt_task *)((char *)io - offsetof(struct tgt_task, io));
    static const char *const names[] = { "read", "write", "flush", "unmap" };

    t->io_busy = 0;
    if (err < 0) {
        sense_from_errno(t, err, names[io->op]);
        tgt_task_complete(t);
        return;
    }
    if (t->aborted || !t->cont) {
        tgt_task_complete(t);
        return;
    }
    t->cont(t);
}

static void submit(struct tgt_task *t, enum tgt_io_op op, uint8_t *buf, uint64_t off, size_t len,
                   void (*cont)(struct tgt_task *))
{
    t->io = (struct tgt_io){ .op = op, .fua = t->fua, .buf = buf, .off = off, .len = len,
                             .lun = t->lun, .cb = io_done };
    t->cont = cont;
    t->io_busy = 1;
    tgt_io_submit(&t->io);
}

static void complete_good(struct tgt_task *t)
{
    t->status = ST_GOOD;
    tgt_task_complete(t);
}

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
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);   /* no protection info */
    if (check_range(t, lba, len) < 0)
        return -1;
    if (len > TGT_MAX_XFER_BLOCKS)
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->lba = lba;
    t->nblocks = len;
    t->xfer = dir == DIR_NONE ? 0 : len * t->lun->block_size;
    t->dir = t->xfer ? dir : DIR_NONE;
    t->fua = t->cdb[0] != 0x08 && t->cdb[0] != 0x0a && (t->cdb[1] & 0x08);
    return 0;
}

static int prep_read(struct tgt_task *t)
{
    return prep_block_range(t, DIR_READ);
}

static int prep_write(struct tgt_task *t)
{
    return prep_block_range(t, DIR_WRITE);
}

static void read_done(struct tgt_task *t)
{
    t->data_len = t->xfer;
    complete_good(t);
}

/* Whether the Data-In may be sent from the LUN's mapping: the whole range
 * is in the page cache, so sending does not wait for the disk (tgt.h). */
static int read_from_cache(struct tgt_task *t)
{
    return tgt_conn_send_mapped_ok(t->conn) &&
           tgt_lun_cached(t->lun, t->lba * t->lun->block_size, t->xfer);
}

static void exec_read(struct tgt_task *t)
{
    if (t->xfer == 0) {
        complete_good(t);
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
    t->buf = malloc(t->xfer);
    if (!t->buf) {
        fail(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        tgt_task_complete(t);
        return;
    }
    t->buf_len = t->xfer;
    submit(t, TGT_IO_READ, t->buf, t->lba * t->lun->block_size, t->xfer, read_done);
}

static void write_start(struct tgt_task *t)
{
    submit(t, TGT_IO_WRITE, t->buf, t->lba * t->lun->block_size,
           (size_t)t->nblocks * t->lun->block_size, complete_good);
}

static void exec_write(struct tgt_task *t)
{
    if (t->nblocks == 0) {
        complete_good(t);
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
    submit(t, TGT_IO_WRITE, t->aux, t->lba * t->lun->block_size, len, complete_good);
}

static void orwrite_start(struct tgt_task *t)
{
    size_t len = (size_t)t->nblocks * t->lun->block_size;

    t->aux = malloc(len);
    if (!t->aux) {
        scsi_complete_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        return;
    }
    submit(t, TGT_IO_READ, t->aux, t->lba * t->lun->block_size, len, orwrite_merge);
}

static void exec_orwrite(struct tgt_task *t)
{
    if (t->nblocks == 0) {
        complete_good(t);
        return;
    }
    tgt_order_run(t, t->lba, t->nblocks, 1, orwrite_start);
}

/* ---- GET LBA STATUS ---- */

static int prep_get_lba_status(struct tgt_task *t)
{
    uint64_t lba = get_be64(t->cdb + 2);

    if (lba >= t->lun->nblocks)
        return fail(t, KEY_ILLEGAL, ASC_LBA_OUT_OF_RANGE);
    t->lba = lba;
    t->dir = DIR_READ;
    return 0;
}

/* Descriptors from the requested LBA on, one per extent of the same
 * provisioning status, as many as the allocation length asks for. */
static void exec_get_lba_status(struct tgt_task *t)
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
            sense_from_errno(t, rc, "extent lookup");
            tgt_task_complete(t);
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
    reply(t, d, n, alloc);
}

int scsi_clip_write(struct tgt_task *t)
{
    const struct scsi_op *op = op_lookup(t->cdb);

    /* Only plain block writes can stop at the iSCSI expected length: the
     * initiator sends EDTL bytes, we write the whole blocks among them. */
    if (!op || op->exec != exec_write || !t->lun)
        return -1;
    t->nblocks = t->edtl / t->lun->block_size;
    return 0;
}

static int bytchk(const struct tgt_task *t)
{
    return (t->cdb[1] >> 1) & 3;
}

static int prep_verify(struct tgt_task *t)
{
    int chk = bytchk(t);

    if (chk == 2)
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
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
            sense_info(t, i);
            tgt_task_complete(t);
            return;
        }
    }
    complete_good(t);
}

static void exec_verify(struct tgt_task *t)
{
    uint32_t total = t->nblocks * t->lun->block_size;

    if (bytchk(t) == 0 || total == 0) {
        complete_good(t);
        return;
    }
    t->aux = malloc(total);
    if (!t->aux) {
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        tgt_task_complete(t);
        return;
    }
    submit(t, TGT_IO_READ, t->aux, t->lba * t->lun->block_size, total, verify_compare);
}

static int prep_write_verify(struct tgt_task *t)
{
    if (bytchk(t) & 1 && (t->cdb[1] & 0x04))   /* BYTCHK other than 0/1 */
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (prep_block_range(t, DIR_WRITE) < 0)
        return -1;
    /* Verify means "on the medium": write through. */
    t->fua = 1;
    return 0;
}

/* ---- SYNCHRONIZE CACHE, PRE-FETCH ---- */

static int prep_sync(struct tgt_task *t)
{
    int ten = t->cdb[0] < 0x80;
    uint64_t lba = ten ? get_be32(t->cdb + 2) : get_be64(t->cdb + 2);
    uint32_t n = ten ? get_be16(t->cdb + 7) : get_be32(t->cdb + 10);

    return check_range(t, lba, n);
}

static void exec_sync(struct tgt_task *t)
{
    submit(t, TGT_IO_FLUSH, NULL, 0, 0, complete_good);
}

static void exec_good(struct tgt_task *t)
{
    complete_good(t);
}

/* ---- WRITE SAME / UNMAP ---- */

static int prep_write_same(struct tgt_task *t)
{
    const uint8_t *c = t->cdb;
    int is16 = c[0] == 0x93;
    uint64_t lba = is16 ? get_be64(c + 2) : get_be32(c + 2);
    uint32_t n = is16 ? get_be32(c + 10) : get_be16(c + 7);
    int ndob = is16 && (c[1] & 0x01);

    if ((c[1] & 0xe0) || (c[1] & 0x10) || (ndob && !(c[1] & 0x08)))
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (check_range(t, lba, n) < 0)
        return -1;
    if (n == 0 && lba >= t->lun->nblocks)
        return fail(t, KEY_ILLEGAL, ASC_LBA_OUT_OF_RANGE);
    if (n == 0 && t->lun->nblocks - lba > UINT32_MAX)   /* to the end (WSNZ=0) */
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (n == 0)
        n = (uint32_t)(t->lun->nblocks - lba);
    if ((c[1] & 0x08) && !t->lun->can_punch)
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
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
        complete_good(t);
        return;
    }
    t->cur_lba += n;
    t->left -= n;
    submit(t, TGT_IO_WRITE, t->aux, lba * bs, (size_t)n * bs, write_same_step);
}

static void write_same_start(struct tgt_task *t)
{
    uint32_t bs = t->lun->block_size;
    uint32_t chunk = t->nblocks < WS_CHUNK_BLOCKS ? t->nblocks : WS_CHUNK_BLOCKS;

    /* UNMAP=1 deallocates whatever the data block holds, as LIO and tgtd
     * do; initiators (and libiscsi's UnmapUntilEnd) then expect the
     * LBPRZ zeros on read. */
    if (t->cdb[1] & 0x08) {
        submit(t, TGT_IO_PUNCH, NULL, t->lba * bs, (size_t)t->nblocks * bs, complete_good);
        return;
    }
    t->aux = malloc((size_t)chunk * bs);
    if (!t->aux) {
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        tgt_task_complete(t);
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

static void exec_write_same(struct tgt_task *t)
{
    tgt_order_run(t, t->lba, t->nblocks, 0, write_same_start);
}

static int prep_unmap(struct tgt_task *t)
{
    uint32_t len = get_be16(t->cdb + 7);

    if (t->cdb[1] & 0x01)   /* ANCHOR */
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (!t->lun->can_punch)
        return fail(t, KEY_ILLEGAL, ASC_INVALID_OPCODE);
    if (len > 0 && len < 8)
        return fail(t, KEY_ILLEGAL, ASC_PARAM_LIST_LENGTH);
    if (len > 8 + 16 * MAX_UNMAP_DESCS)
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
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
            return submit(t, TGT_IO_PUNCH, NULL, lba * bs, (size_t)n * bs, unmap_step);
    }
    complete_good(t);
}

static void exec_unmap(struct tgt_task *t)
{
    uint32_t have = t->xfer < t->edtl ? t->xfer : t->edtl, ndesc;

    if (t->xfer == 0) {
        complete_good(t);
        return;
    }
    if (have < 8) {
        scsi_set_sense(t, KEY_ILLEGAL, ASC_PARAM_LIST_LENGTH);
        tgt_task_complete(t);
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
            tgt_task_complete(t);
            return;
        }
        if (check_range(t, lba, n) < 0) {
            tgt_task_complete(t);
            return;
        }
    }
    t->stage = 0;
    t->left = ndesc;
    /* Descriptors may go anywhere: the whole LUN is the range. */
    tgt_order_run(t, 0, t->lun->nblocks, 0, unmap_step);
}

/* ---- informational commands ---- */

static int prep_none(struct tgt_task *t)
{
    return 0;
}

static void exec_inquiry_std(struct tgt_task *t, uint32_t alloc)
{
    uint8_t d[96] = { 0 };
    static const uint16_t versions[] = { 0x00a0, 0x0960, 0x0460, 0x04c0 };

    d[0] = t->lun ? 0x00 : 0x7f;
    d[2] = 0x06;          /* SPC-4 */
    d[3] = 0x12;          /* HISUP, response data format 2 */
    d[4] = sizeof(d) - 5;
    d[7] = 0x02;          /* CMDQUE */
    memcpy(d + 8, "IPVFS   ", 8);
    memcpy(d + 16, "ipvfs-target    ", 16);
    memcpy(d + 32, "0001", 4);
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        put_be16(d + 58 + 2 * i, versions[i]);
    reply(t, d, sizeof(d), alloc);
}

static uint32_t vpd_ids(struct tgt_task *t, uint8_t *d)
{
    struct tgt_lun *l = t->lun;
    const char *iqn = l->srv->iqn;
    uint32_t n = 4, len;

    d[n++] = 0x01; d[n++] = 0x03; d[n++] = 0; d[n++] = 16;        /* NAA, LU */
    memcpy(d + n, l->naa, 16);
    n += 16;
    len = 8 + (uint32_t)strlen(l->serial);
    d[n++] = 0x02; d[n++] = 0x01; d[n++] = 0; d[n++] = (uint8_t)len; /* T10 vendor, LU */
    memcpy(d + n, "IPVFS   ", 8);
    memcpy(d + n + 8, l->serial, len - 8);
    n += len;
    d[n++] = 0x51; d[n++] = 0x94; d[n++] = 0; d[n++] = 4;          /* relative target port */
    d[n++] = 0; d[n++] = 0; d[n++] = 0; d[n++] = 1;
    len = (uint32_t)strlen(iqn) + 1;
    len = (len + 3) & ~3u;
    if (len > 252)
        len = 252;
    d[n++] = 0x53; d[n++] = 0xa8; d[n++] = 0; d[n++] = (uint8_t)len; /* SCSI name, device */
    memset(d + n, 0, len);
    memcpy(d + n, iqn, strlen(iqn) < len ? strlen(iqn) : len - 1);
    n += len;
    return n;
}

static void exec_inquiry(struct tgt_task *t)
{
    uint8_t d[512] = { 0 };
    uint32_t alloc = get_be16(t->cdb + 3), n = 4;
    uint8_t page = t->cdb[2];

    if (!(t->cdb[1] & 0x01)) {
        exec_inquiry_std(t, alloc);
        return;
    }
    d[0] = 0x00;
    d[1] = page;
    switch (page) {
    case 0x00: {
        static const uint8_t pages[] = { 0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2 };
        memcpy(d + 4, pages, sizeof(pages));
        n = 4 + sizeof(pages);
        break;
    }
    case 0x80:
        n = 4 + (uint32_t)strlen(t->lun->serial);
        memcpy(d + 4, t->lun->serial, n - 4);
        break;
    case 0x83:
        n = vpd_ids(t, d);
        break;
    case 0xb0:
        n = 64;
        /* WSNZ=0: WRITE SAME of 0 blocks goes to the end of the LUN */
        put_be16(d + 6, 8);                           /* optimal granularity: 4 KiB */
        put_be32(d + 8, TGT_MAX_XFER_BLOCKS);
        put_be32(d + 12, 2048);                       /* optimal: 1 MiB */
        if (t->lun->can_punch) {
            put_be32(d + 20, MAX_UNMAP_LBAS);
            put_be32(d + 24, MAX_UNMAP_DESCS);
            put_be32(d + 28, 8);                      /* unmap granularity 4 KiB */
        }
        /* MAXIMUM WRITE SAME LENGTH 0: no limit (see WS_CHUNK_BLOCKS) */
        break;
    case 0xb1:
        n = 64;
        put_be16(d + 4, 1);                           /* non-rotating medium */
        break;
    case 0xb2:
        n = 8;
        if (t->lun->can_punch) {
            d[5] = 0x80 | 0x40 | 0x20 | 0x04;         /* LBPU LBPWS LBPWS10 LBPRZ */
            d[6] = 0x02;                              /* thin provisioned */
        }
        break;
    default:
        scsi_set_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
        tgt_task_complete(t);
        return;
    }
    put_be16(d + 2, (uint16_t)(n - 4));
    reply(t, d, n, alloc);
}

static int prep_inquiry(struct tgt_task *t)
{
    if ((t->cdb[1] & 0x02) || (!(t->cdb[1] & 0x01) && t->cdb[2]))
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (!t->lun && (t->cdb[1] & 0x01))
        return fail(t, KEY_ILLEGAL, ASC_LUN_NOT_SUPPORTED);
    t->dir = DIR_READ;
    return 0;
}

static void exec_read_capacity10(struct tgt_task *t)
{
    uint8_t d[8];
    uint64_t last = t->lun->nblocks - 1;

    put_be32(d, last > 0xfffffffeull ? 0xffffffffu : (uint32_t)last);
    put_be32(d + 4, t->lun->block_size);
    reply(t, d, sizeof(d), sizeof(d));
}

static int prep_read_capacity10(struct tgt_task *t)
{
    if (!(t->cdb[8] & 0x01) && get_be32(t->cdb + 2))
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->dir = DIR_READ;
    return 0;
}

static void exec_read_capacity16(struct tgt_task *t)
{
    uint8_t d[32] = { 0 };

    put_be64(d, t->lun->nblocks - 1);
    put_be32(d + 8, t->lun->block_size);
    if (t->lun->can_punch)
        d[14] = 0x80 | 0x40;   /* LBPME, LBPRZ */
    reply(t, d, sizeof(d), get_be32(t->cdb + 10));
}

static int prep_read_data(struct tgt_task *t)
{
    t->dir = DIR_READ;
    return 0;
}

/* Mode pages: caching (write cache on, honoured by SYNCHRONIZE CACHE and
 * FUA), control, informational exceptions. */
static uint32_t mode_page(uint8_t code, int changeable, uint8_t *p)
{
    switch (code) {
    case 0x08:
        memset(p, 0, 20);
        p[0] = 0x08;
        p[1] = 18;
        if (!changeable)
            p[2] = 0x04;   /* WCE */
        return 20;
    case 0x0a:
        memset(p, 0, 12);
        p[0] = 0x0a;
        p[1] = 10;
        if (!changeable) {
            p[3] = 0x10;   /* unrestricted reordering */
            put_be16(p + 8, 0xffff);
        }
        return 12;
    case 0x1c:
        memset(p, 0, 12);
        p[0] = 0x1c;
        p[1] = 10;
        return 12;
    }
    return 0;
}

static void exec_mode_sense(struct tgt_task *t)
{
    const uint8_t *c = t->cdb;
    int ten = c[0] == 0x5a, dbd = (c[1] & 0x08) != 0, llba = ten && (c[1] & 0x10);
    uint8_t pc = c[2] >> 6, page = c[2] & 0x3f, sub = c[3];
    uint32_t hdr = ten ? 8 : 4, bdlen = dbd ? 0 : llba ? 16 : 8, n, alloc;
    uint8_t d[256] = { 0 };
    static const uint8_t all[] = { 0x08, 0x0a, 0x1c };

    alloc = ten ? get_be16(c + 7) : c[4];
    if (pc == 3) {
        scsi_set_sense(t, KEY_ILLEGAL, ASC_SAVING_NOT_SUPPORTED);
        tgt_task_complete(t);
        return;
    }
    n = hdr;
    if (bdlen == 8) {
        put_be32(d + n, t->lun->nblocks > 0xffffffffull ? 0xffffffffu : (uint32_t)t->lun->nblocks);
        put_be32(d + n + 4, t->lun->block_size);
    } else if (bdlen == 16) {
        put_be64(d + n, t->lun->nblocks);
        put_be32(d + n + 12, t->lun->block_size);
    }
    n += bdlen;
    if (page == 0x3f && (sub == 0 || sub == 0xff)) {
        for (size_t i = 0; i < sizeof(all); i++)
            n += mode_page(all[i], pc == 1, d + n);
    } else {
        uint32_t m = sub ? 0 : mode_page(page, pc == 1, d + n);
        if (!m) {
            scsi_set_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
            tgt_task_complete(t);
            return;
        }
        n += m;
    }
    if (ten) {
        put_be16(d, (uint16_t)(n - 2));
        d[3] = 0x10;   /* DPOFUA */
        d[4] = llba ? 1 : 0;
        put_be16(d + 6, (uint16_t)bdlen);
    } else {
        d[0] = (uint8_t)(n - 1);
        d[2] = 0x10;
        d[3] = (uint8_t)bdlen;
    }
    reply(t, d, n, alloc);
}

static void exec_request_sense(struct tgt_task *t)
{
    uint8_t d[18] = { 0 };
    uint32_t n = 18;

    if (t->cdb[1] & 0x01) {   /* descriptor format */
        d[0] = 0x72;
        n = 8;
    } else {
        d[0] = 0x70;
        d[7] = 10;
    }
    if (!t->lun) {
        if (n == 8) {
            d[1] = KEY_ILLEGAL;
            d[2] = 0x25;
        } else {
            d[2] = KEY_ILLEGAL;
            d[12] = 0x25;
        }
    }
    reply(t, d, n, t->cdb[4]);
}

static int prep_report_luns(struct tgt_task *t)
{
    uint32_t alloc = get_be32(t->cdb + 6);

    if (alloc < 16 || t->cdb[2] > 2)
        return fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->dir = DIR_READ;
    return 0;
}

static void exec_report_luns(struct tgt_task *t)
{
    struct tgt_server *srv = t->conn->srv;
    uint8_t d[8 + 8 * TGT_MAX_LUNS] = { 0 };

    put_be32(d, 8u * (uint32_t)srv->nluns);
    for (int i = 0; i < srv->nluns; i++) {
        uint8_t *e = d + 8 + 8 * i;
        if (i < 256) {
            e[1] = (uint8_t)i;
        } else {
            e[0] = (uint8_t)(0x40 | (i >> 8));
            e[1] = (uint8_t)i;
        }
    }
    reply(t, d, 8 + 8u * (uint32_t)srv->nluns, get_be32(t->cdb + 6));
}

static void exec_reserve(struct tgt_task *t)
{
    struct tgt_lun *l = t->lun;

    /* SPC-4 5.13.3: RESERVE(6) conflicts with persistent reservations. */
    if ((l->reserved_by && l->reserved_by != t->conn) || scsi_pr_active(l)) {
        t->status = ST_CONFLICT;
        tgt_task_complete(t);
        return;
    }
    l->reserved_by = t->conn;
    complete_good(t);
}

static void exec_release(struct tgt_task *t)
{
    if (t->lun->reserved_by == t->conn)
        t->lun->reserved_by = NULL;
    complete_good(t);
}

/* ---- REPORT SUPPORTED OPERATION CODES ---- */

static uint32_t rsoc_timeouts(uint8_t *p)
{
    memset(p, 0, 12);
    put_be16(p, 10);
    put_be32(p + 4, 30);
    put_be32(p + 8, 60);
    return 12;
}

static void exec_rsoc(struct tgt_task *t)
{
    const uint8_t *c = t->cdb;
    int rctd = (c[2] & 0x80) != 0, opt = c[2] & 7;
    uint32_t alloc = get_be32(c + 6), n = 0;
    uint16_t want_sa = get_be16(c + 4);
    const struct scsi_op *op = NULL;
    uint8_t *d = calloc(1, 4 + scsi_nops * 20 + 64);

    if (!d) {
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        tgt_task_complete(t);
        return;
    }
    if (opt == 0) {
        n = 4;
        for (size_t i = 0; i < scsi_nops; i++) {
            const struct scsi_op *o = &scsi_ops[i];
            uint8_t *e = d + n;
            e[0] = o->opcode;
            if (o->sa >= 0) {
                put_be16(e + 2, (uint16_t)o->sa);
                e[5] |= 0x01;
            }
            if (rctd)
                e[5] |= 0x02;
            put_be16(e + 6, o->cdb_len);
            n += 8;
            if (rctd)
                n += rsoc_timeouts(d + n);
        }
        put_be32(d, n - 4);
    } else if (opt <= 3) {
        int has_sa = 0;
        for (size_t i = 0; i < scsi_nops; i++) {
            if (scsi_ops[i].opcode != c[3])
                continue;
            has_sa |= scsi_ops[i].sa >= 0;
            if (scsi_ops[i].sa < 0 || scsi_ops[i].sa == want_sa)
                op = &scsi_ops[i];
        }
        if ((opt == 1 && has_sa) || (opt == 2 && !has_sa && op)) {
            free(d);
            scsi_set_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
            sense_cdb_field(t, 2);   /* REPORTING OPTIONS */
            tgt_task_complete(t);
            return;
        }
        if (op) {
            d[1] = (uint8_t)((rctd ? 0x80 : 0) | 0x03);
            put_be16(d + 2, op->cdb_len);
            memcpy(d + 4, op->usage, op->cdb_len);
            n = 4u + op->cdb_len;
            if (rctd)
                n += rsoc_timeouts(d + n);
        } else {
            d[1] = 0x01;   /* not supported */
            n = 4;
        }
    } else {
        free(d);
        scsi_set_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
        sense_cdb_field(t, 2);
        tgt_task_complete(t);
        return;
    }
    reply(t, d, n, alloc);
    free(d);
}

/* ---- the table ---- */

#define U(...) { __VA_ARGS__ }
static const struct scsi_op scsi_ops[] = {
    { 0x00, -1, 6, 0, "TEST UNIT READY", prep_none, exec_good, U(0x00, 0, 0, 0, 0, 0x04) },
    { 0x03, -1, 6, OPF_NO_LUN | OPF_NO_UA | OPF_NO_CONFLICT, "REQUEST SENSE", prep_read_data,
      exec_request_sense, U(0x03, 0x01, 0, 0, 0xff, 0x04) },
    { 0x08, -1, 6, OPF_PR_READ, "READ(6)", prep_read, exec_read, U(0x08, 0x1f, 0xff, 0xff, 0xff, 0x04) },
    { 0x0a, -1, 6, OPF_PR_WRITE, "WRITE(6)", prep_write, exec_write, U(0x0a, 0x1f, 0xff, 0xff, 0xff, 0x04) },
    { 0x12, -1, 6, OPF_NO_LUN | OPF_NO_UA | OPF_NO_CONFLICT, "INQUIRY", prep_inquiry, exec_inquiry,
      U(0x12, 0x01, 0xff, 0xff, 0xff, 0x04) },
    { 0x16, -1, 6, 0, "RESERVE(6)", prep_none, exec_reserve, U(0x16, 0, 0, 0, 0, 0x04) },
    { 0x17, -1, 6, OPF_NO_CONFLICT, "RELEASE(6)", prep_none, exec_release,
      U(0x17, 0, 0, 0, 0, 0x04) },
    { 0x1a, -1, 6, OPF_PR_READ, "MODE SENSE(6)", prep_read_data, exec_mode_sense,
      U(0x1a, 0x08, 0xff, 0xff, 0xff, 0x04) },
    { 0x1b, -1, 6, OPF_PR_WRITE, "START STOP UNIT", prep_none, exec_good, U(0x1b, 0x01, 0, 0x0f, 0xf7, 0x04) },
    { 0x1e, -1, 6, OPF_PR_WRITE, "PREVENT ALLOW MEDIUM REMOVAL", prep_none, exec_good,
      U(0x1e, 0, 0, 0, 0x03, 0x04) },
    { 0x25, -1, 10, 0, "READ CAPACITY(10)", prep_read_capacity10, exec_read_capacity10,
      U(0x25, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0x04) },
    { 0x28, -1, 10, OPF_PR_READ, "READ(10)", prep_read, exec_read,
      U(0x28, 0x18, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x2a, -1, 10, OPF_PR_WRITE, "WRITE(10)", prep_write, exec_write,
      U(0x2a, 0x18, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x2e, -1, 10, OPF_PR_WRITE, "WRITE AND VERIFY(10)", prep_write_verify, exec_write,
      U(0x2e, 0x12, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x2f, -1, 10, OPF_PR_READ, "VERIFY(10)", prep_verify, exec_verify,
      U(0x2f, 0x16, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x34, -1, 10, OPF_PR_READ, "PRE-FETCH(10)", prep_sync, exec_good,
      U(0x34, 0x02, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x35, -1, 10, OPF_PR_WRITE, "SYNCHRONIZE CACHE(10)", prep_sync, exec_sync,
      U(0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x41, -1, 10, OPF_PR_WRITE, "WRITE SAME(10)", prep_write_same, exec_write_same,
      U(0x41, 0x08, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x42, -1, 10, OPF_PR_WRITE, "UNMAP", prep_unmap, exec_unmap,
      U(0x42, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04) },
    { 0x5a, -1, 10, OPF_PR_READ, "MODE SENSE(10)", prep_read_data, exec_mode_sense,
      U(0x5a, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0x04) },
    { 0x5e, -1, 10, 0, "PERSISTENT RESERVE IN", scsi_pr_prep_in, scsi_pr_exec_in,
      U(0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04) },
    { 0x5f, -1, 10, 0, "PERSISTENT RESERVE OUT", scsi_pr_prep_out, scsi_pr_exec_out,
      U(0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x04) },
    { 0x88, -1, 16, OPF_PR_READ, "READ(16)", prep_read, exec_read,
      U(0x88, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8a, -1, 16, OPF_PR_WRITE, "WRITE(16)", prep_write, exec_write,
      U(0x8a, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8b, -1, 16, OPF_PR_WRITE, "ORWRITE(16)", prep_write, exec_orwrite,
      U(0x8b, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8e, -1, 16, OPF_PR_WRITE, "WRITE AND VERIFY(16)", prep_write_verify, exec_write,
      U(0x8e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8f, -1, 16, OPF_PR_READ, "VERIFY(16)", prep_verify, exec_verify,
      U(0x8f, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x90, -1, 16, OPF_PR_READ, "PRE-FETCH(16)", prep_sync, exec_good,
      U(0x90, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x91, -1, 16, OPF_PR_WRITE, "SYNCHRONIZE CACHE(16)", prep_sync, exec_sync,
      U(0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x93, -1, 16, OPF_PR_WRITE, "WRITE SAME(16)", prep_write_same, exec_write_same,
      U(0x93, 0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x9e, 0x10, 16, 0, "READ CAPACITY(16)", prep_read_data, exec_read_capacity16,
      U(0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x9e, 0x12, 16, OPF_PR_READ, "GET LBA STATUS", prep_get_lba_status, exec_get_lba_status,
      U(0x9e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xa0, -1, 12, OPF_NO_LUN | OPF_NO_UA | OPF_NO_CONFLICT, "REPORT LUNS", prep_report_luns,
      exec_report_luns, U(0xa0, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xa3, 0x0c, 12, OPF_NO_CONFLICT, "REPORT SUPPORTED OPERATION CODES", prep_read_data,
      exec_rsoc, U(0xa3, 0x0c, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xa8, -1, 12, OPF_PR_READ, "READ(12)", prep_read, exec_read,
      U(0xa8, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xaa, -1, 12, OPF_PR_WRITE, "WRITE(12)", prep_write, exec_write,
      U(0xaa, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xae, -1, 12, OPF_PR_WRITE, "WRITE AND VERIFY(12)", prep_write_verify, exec_write,
      U(0xae, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xaf, -1, 12, OPF_PR_READ, "VERIFY(12)", prep_verify, exec_verify,
      U(0xaf, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
};
static const size_t scsi_nops = sizeof(scsi_ops) / sizeof(scsi_ops[0]);

static const struct scsi_op *op_lookup(const uint8_t *cdb)
{
    for (size_t i = 0; i < scsi_nops; i++) {
        const struct scsi_op *o = &scsi_ops[i];
        if (o->opcode == cdb[0] && (o->sa < 0 || o->sa == (cdb[1] & 0x1f)))
            return o;
    }
    return NULL;
}

int scsi_prepare(struct tgt_task *t)
{
    const struct scsi_op *op = op_lookup(t->cdb);
    struct tgt_lun *l = t->lun;

    t->status = ST_GOOD;
    t->dir = DIR_NONE;
    t->xfer = 0;
    if (!op)
        return fail(t, KEY_ILLEGAL, l ? ASC_INVALID_OPCODE : ASC_LUN_NOT_SUPPORTED);
    if (!l && !(op->flags & OPF_NO_LUN))
        return fail(t, KEY_ILLEGAL, ASC_LUN_NOT_SUPPORTED);
    if (l && !(op->flags & OPF_NO_UA) && (t->conn->ua_reset & (1ull << l->index))) {
        t->conn->ua_reset &= ~(1ull << l->index);
        return fail(t, KEY_UNIT_ATTENTION, ASC_RESET_OCCURRED);
    }
    if (l && !(op->flags & OPF_NO_UA) && t->conn->ua_pr[l->index]) {
        uint16_t asc = t->conn->ua_pr[l->index];

        t->conn->ua_pr[l->index] = 0;
        return fail(t, KEY_UNIT_ATTENTION, asc);
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
    const struct scsi_op *op = op_lookup(t->cdb);

    op->exec(t);
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
