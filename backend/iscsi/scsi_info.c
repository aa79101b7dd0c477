/* SCSI commands that describe the device and move no blocks: INQUIRY and
 * its VPD pages, READ CAPACITY, MODE SENSE, REQUEST SENSE, REPORT LUNS,
 * and RESERVE/RELEASE(6).  REPORT SUPPORTED OPERATION CODES, which reads
 * the table, is in scsi_ops.c beside it.
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/* ---- informational commands ---- */

/* The room part of the uCache page (target.h): whether every block of
 * the LUN not yet allocated on its backing store fits there now.  Known
 * for memory (all allocated) and regular files (fstat, fstatvfs); not for
 * block devices, which may be thin below us. */
static int lun_room(const struct tgt_lun *lun, uint64_t *out_free, uint64_t *out_unalloc)
{
    struct statvfs vs;
    struct stat st;

    *out_free = *out_unalloc = 0;
    if (lun->mem)
        return 1;
    if (lun->fd < 0 || fstat(lun->fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        fstatvfs(lun->fd, &vs) < 0)
        return 0;
    *out_free = (uint64_t)vs.f_bavail * vs.f_frsize;
    if ((uint64_t)st.st_blocks * 512 < lun->size)
        *out_unalloc = lun->size - (uint64_t)st.st_blocks * 512;
    return 1;
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
    scsi_reply(t, d, sizeof(d), alloc);
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

void scsi_exec_inquiry(struct tgt_task *t)
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
        static const uint8_t pages[] = { 0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2, TGT_VPD_UCACHE };
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
    case TGT_VPD_UCACHE: {                            /* target.h */
        uint64_t room_free, unalloc;
        n = 24;
        d[4] = tgt_l2_takes_demotes(t->lun->srv) ? 0x01 : 0x00;
        if (lun_room(t->lun, &room_free, &unalloc)) {
            d[4] |= 0x02;
            put_be64(d + 8, room_free);
            put_be64(d + 16, unalloc);
        }
        break;
    }
    default:
        scsi_set_sense(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
        scsi_done(t);
        return;
    }
    put_be16(d + 2, (uint16_t)(n - 4));
    scsi_reply(t, d, n, alloc);
}

int scsi_prep_inquiry(struct tgt_task *t)
{
    if ((t->cdb[1] & 0x02) || (!(t->cdb[1] & 0x01) && t->cdb[2]))
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    if (!t->lun && (t->cdb[1] & 0x01))
        return scsi_fail(t, KEY_ILLEGAL, ASC_LUN_NOT_SUPPORTED);
    t->dir = DIR_READ;
    return 0;
}

void scsi_exec_read_capacity10(struct tgt_task *t)
{
    uint8_t d[8];
    uint64_t last = t->lun->nblocks - 1;

    put_be32(d, last > 0xfffffffeull ? 0xffffffffu : (uint32_t)last);
    put_be32(d + 4, t->lun->block_size);
    scsi_reply(t, d, sizeof(d), sizeof(d));
}

int scsi_prep_read_capacity10(struct tgt_task *t)
{
    if (!(t->cdb[8] & 0x01) && get_be32(t->cdb + 2))
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->dir = DIR_READ;
    return 0;
}

void scsi_exec_read_capacity16(struct tgt_task *t)
{
    uint8_t d[32] = { 0 };

    put_be64(d, t->lun->nblocks - 1);
    put_be32(d + 8, t->lun->block_size);
    if (t->lun->can_punch)
        d[14] = 0x80 | 0x40;   /* LBPME, LBPRZ */
    scsi_reply(t, d, sizeof(d), get_be32(t->cdb + 10));
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

void scsi_exec_mode_sense(struct tgt_task *t)
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
        scsi_done(t);
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
            scsi_done(t);
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
    scsi_reply(t, d, n, alloc);
}

void scsi_exec_request_sense(struct tgt_task *t)
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
    scsi_reply(t, d, n, t->cdb[4]);
}

int scsi_prep_report_luns(struct tgt_task *t)
{
    uint32_t alloc = get_be32(t->cdb + 6);

    if (alloc < 16 || t->cdb[2] > 2)
        return scsi_fail(t, KEY_ILLEGAL, ASC_INVALID_FIELD_CDB);
    t->dir = DIR_READ;
    return 0;
}

void scsi_exec_report_luns(struct tgt_task *t)
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
    scsi_reply(t, d, 8 + 8u * (uint32_t)srv->nluns, get_be32(t->cdb + 6));
}

void scsi_exec_reserve(struct tgt_task *t)
{
    struct tgt_lun *l = t->lun;

    /* SPC-4 5.13.3: RESERVE(6) conflicts with persistent reservations. */
    if ((l->reserved_by && l->reserved_by != t->conn) || scsi_pr_active(l)) {
        t->status = ST_CONFLICT;
        scsi_done(t);
        return;
    }
    l->reserved_by = t->conn;
    scsi_complete_good(t);
}

void scsi_exec_release(struct tgt_task *t)
{
    if (t->lun->reserved_by == t->conn)
        t->lun->reserved_by = NULL;
    scsi_complete_good(t);
}
