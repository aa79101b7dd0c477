/* The SCSI operations table: one entry per opcode (and service action)
 * the target serves, with its CDB length, the flags scsi_prepare() acts on
 * (scsi.h), its prepare() and exec(), and the usage mask that REPORT
 * SUPPORTED OPERATION CODES returns; the lookup in it, and that command,
 * which reports the table (so the table's file, not a command file below
 * it, is the one that reads it).
 */
#include "config.h"

#include "backend/iscsi/tgt.h"
#include "backend/iscsi/scsi.h"
#include "backend/iscsi/scsi_sense.h"

#include <stdlib.h>
#include <string.h>

/* The CDB usage data of REPORT SUPPORTED OPERATION CODES, from byte 0 on. */
#define U(...) { __VA_ARGS__ }
const struct scsi_op scsi_ops[] = {
    { 0x00, -1, 6, 0, "TEST UNIT READY", scsi_prep_none, scsi_exec_good,
      U(0x00, 0, 0, 0, 0, 0x04) },
    { 0x03, -1, 6, OPF_NO_LUN | OPF_NO_UA | OPF_NO_CONFLICT, "REQUEST SENSE",
      scsi_prep_read_data, scsi_exec_request_sense,
      U(0x03, 0x01, 0, 0, 0xff, 0x04) },
    { 0x08, -1, 6, OPF_PR_READ, "READ(6)", scsi_prep_read, scsi_exec_read,
      U(0x08, 0x1f, 0xff, 0xff, 0xff, 0x04) },
    { 0x0a, -1, 6, OPF_PR_WRITE, "WRITE(6)", scsi_prep_write, scsi_exec_write,
      U(0x0a, 0x1f, 0xff, 0xff, 0xff, 0x04) },
    { 0x12, -1, 6, OPF_NO_LUN | OPF_NO_UA | OPF_NO_CONFLICT, "INQUIRY",
      scsi_prep_inquiry, scsi_exec_inquiry,
      U(0x12, 0x01, 0xff, 0xff, 0xff, 0x04) },
    { 0x16, -1, 6, 0, "RESERVE(6)", scsi_prep_none, scsi_exec_reserve,
      U(0x16, 0, 0, 0, 0, 0x04) },
    { 0x17, -1, 6, OPF_NO_CONFLICT, "RELEASE(6)", scsi_prep_none, scsi_exec_release,
      U(0x17, 0, 0, 0, 0, 0x04) },
    { 0x1a, -1, 6, OPF_PR_READ, "MODE SENSE(6)", scsi_prep_read_data, scsi_exec_mode_sense,
      U(0x1a, 0x08, 0xff, 0xff, 0xff, 0x04) },
    { 0x1b, -1, 6, OPF_PR_WRITE, "START STOP UNIT", scsi_prep_none, scsi_exec_good,
      U(0x1b, 0x01, 0, 0x0f, 0xf7, 0x04) },
    { 0x1e, -1, 6, OPF_PR_WRITE, "PREVENT ALLOW MEDIUM REMOVAL", scsi_prep_none, scsi_exec_good,
      U(0x1e, 0, 0, 0, 0x03, 0x04) },
    { 0x25, -1, 10, 0, "READ CAPACITY(10)", scsi_prep_read_capacity10, scsi_exec_read_capacity10,
      U(0x25, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0x04) },
    { 0x28, -1, 10, OPF_PR_READ, "READ(10)", scsi_prep_read, scsi_exec_read,
      U(0x28, 0x18, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x2a, -1, 10, OPF_PR_WRITE, "WRITE(10)", scsi_prep_write, scsi_exec_write,
      U(0x2a, 0x18, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x2e, -1, 10, OPF_PR_WRITE, "WRITE AND VERIFY(10)", scsi_prep_write_verify, scsi_exec_write,
      U(0x2e, 0x12, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x2f, -1, 10, OPF_PR_READ, "VERIFY(10)", scsi_prep_verify, scsi_exec_verify,
      U(0x2f, 0x16, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x34, -1, 10, OPF_PR_READ, "PRE-FETCH(10)", scsi_prep_sync, scsi_exec_good,
      U(0x34, 0x02, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x35, -1, 10, OPF_PR_WRITE, "SYNCHRONIZE CACHE(10)", scsi_prep_sync, scsi_exec_sync,
      U(0x35, 0x02, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x41, -1, 10, OPF_PR_WRITE, "WRITE SAME(10)", scsi_prep_write_same, scsi_exec_write_same,
      U(0x41, 0x08, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04) },
    { 0x42, -1, 10, OPF_PR_WRITE, "UNMAP", scsi_prep_unmap, scsi_exec_unmap,
      U(0x42, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04) },
    { 0x5a, -1, 10, OPF_PR_READ, "MODE SENSE(10)", scsi_prep_read_data, scsi_exec_mode_sense,
      U(0x5a, 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0x04) },
    { 0x5e, -1, 10, 0, "PERSISTENT RESERVE IN", scsi_pr_prep_in, scsi_pr_exec_in,
      U(0x5e, 0x1f, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04) },
    { 0x5f, -1, 10, 0, "PERSISTENT RESERVE OUT", scsi_pr_prep_out, scsi_pr_exec_out,
      U(0x5f, 0x1f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x04) },
    { 0x88, -1, 16, OPF_PR_READ, "READ(16)", scsi_prep_read, scsi_exec_read,
      U(0x88, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8a, -1, 16, OPF_PR_WRITE, "WRITE(16)", scsi_prep_write, scsi_exec_write,
      U(0x8a, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8b, -1, 16, OPF_PR_WRITE, "ORWRITE(16)", scsi_prep_write, scsi_exec_orwrite,
      U(0x8b, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8e, -1, 16, OPF_PR_WRITE, "WRITE AND VERIFY(16)", scsi_prep_write_verify, scsi_exec_write,
      U(0x8e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x8f, -1, 16, OPF_PR_READ, "VERIFY(16)", scsi_prep_verify, scsi_exec_verify,
      U(0x8f, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x90, -1, 16, OPF_PR_READ, "PRE-FETCH(16)", scsi_prep_sync, scsi_exec_good,
      U(0x90, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x91, -1, 16, OPF_PR_WRITE, "SYNCHRONIZE CACHE(16)", scsi_prep_sync, scsi_exec_sync,
      U(0x91, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x93, -1, 16, OPF_PR_WRITE, "WRITE SAME(16)", scsi_prep_write_same, scsi_exec_write_same,
      U(0x93, 0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x9e, 0x10, 16, 0, "READ CAPACITY(16)", scsi_prep_read_data, scsi_exec_read_capacity16,
      U(0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0x9e, 0x12, 16, OPF_PR_READ, "GET LBA STATUS",
      scsi_prep_get_lba_status, scsi_exec_get_lba_status,
      U(0x9e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xa0, -1, 12, OPF_NO_LUN | OPF_NO_UA | OPF_NO_CONFLICT, "REPORT LUNS",
      scsi_prep_report_luns, scsi_exec_report_luns,
      U(0xa0, 0, 0xff, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xa3, 0x0c, 12, OPF_NO_CONFLICT, "REPORT SUPPORTED OPERATION CODES",
      scsi_prep_read_data, scsi_exec_rsoc,
      U(0xa3, 0x0c, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xa8, -1, 12, OPF_PR_READ, "READ(12)", scsi_prep_read, scsi_exec_read,
      U(0xa8, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xaa, -1, 12, OPF_PR_WRITE, "WRITE(12)", scsi_prep_write, scsi_exec_write,
      U(0xaa, 0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xae, -1, 12, OPF_PR_WRITE, "WRITE AND VERIFY(12)", scsi_prep_write_verify, scsi_exec_write,
      U(0xae, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    { 0xaf, -1, 12, OPF_PR_READ, "VERIFY(12)", scsi_prep_verify, scsi_exec_verify,
      U(0xaf, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04) },
    /* Vendor-specific: uCache's DEMOTE (target.h). */
    { TGT_OP_DEMOTE, -1, 16, OPF_PR_READ, "DEMOTE (iPVFS)", scsi_prep_demote, scsi_exec_demote,
      U(TGT_OP_DEMOTE, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
        0, 0x04) },
};
const size_t scsi_nops = sizeof(scsi_ops) / sizeof(scsi_ops[0]);

const struct scsi_op *scsi_op_lookup(const uint8_t *cdb)
{
    for (size_t i = 0; i < scsi_nops; i++) {
        const struct scsi_op *o = &scsi_ops[i];
        if (o->opcode == cdb[0] && (o->sa < 0 || o->sa == (cdb[1] & 0x1f)))
            return o;
    }
    return NULL;
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

void scsi_exec_rsoc(struct tgt_task *t)
{
    const uint8_t *c = t->cdb;
    int rctd = (c[2] & 0x80) != 0, opt = c[2] & 7;
    uint32_t alloc = get_be32(c + 6), n = 0;
    uint16_t want_sa = get_be16(c + 4);
    const struct scsi_op *op = NULL;
    uint8_t *d = calloc(1, 4 + scsi_nops * 20 + 64);

    if (!d) {
        scsi_set_sense(t, KEY_ABORTED, ASC_INSUFFICIENT_RESOURCES);
        scsi_done(t);
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
            scsi_sense_cdb_field(t, 2);   /* REPORTING OPTIONS */
            scsi_done(t);
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
        scsi_sense_cdb_field(t, 2);
        scsi_done(t);
        return;
    }
    scsi_reply(t, d, n, alloc);
    free(d);
}
