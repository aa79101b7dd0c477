/* Shared by the SCSI files only (scsi_task.c, scsi_rw.c,
 * scsi_provision.c, scsi_info.c, scsi_pr.c, scsi_ops.c, scsi.c): the
 * operations table's entry, the helpers every command uses, and each
 * command's prepare() and exec(), listed bottom-up (a file calls only
 * what is declared above its own section).  What the rest of the target
 * calls is in tgt.h.
 *
 * A command's task goes: scsi_prepare() (table checks, prepare(): sets
 * dir, xfer, lba, nblocks, or a CHECK CONDITION) -> Data-Out, if any, in
 * t->buf (conn side) -> exec() -> backing I/O through scsi_submit(), whose
 * completion runs t->cont (a multi-step command chains several) -> a
 * completion helper below, which hands the task back with scsi_done()
 * (through srv->scsi_up, tgt.h).  A failing store ends the task with
 * sense data.
 */
#ifndef IPVFS_TGT_SCSI_H
#define IPVFS_TGT_SCSI_H

#include <stddef.h>
#include <stdint.h>

#include "backend/iscsi/tgt.h"

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

/* ---- scsi_task.c ---- */

/* The command is over: hands t to the connection layer (srv->scsi_up). */
void scsi_done(struct tgt_task *t);
/* scsi_set_sense() and -1, for prepare() functions. */
int scsi_fail(struct tgt_task *t, uint8_t key, uint16_t asc);
/* Sets the INFORMATION field of the sense data. */
void scsi_sense_info(struct tgt_task *t, uint32_t info);
/* Sense-key specific field pointing at CDB byte `byte`. */
void scsi_sense_cdb_field(struct tgt_task *t, uint16_t byte);
/* Sense data for a store's errno (logged with what and t->io's range). */
void scsi_sense_from_errno(struct tgt_task *t, int err, const char *what);
/* LBA OUT OF RANGE (and -1) unless [lba, lba + nblocks) is on the LUN. */
int scsi_check_range(struct tgt_task *t, uint64_t lba, uint64_t nblocks);
/* Starts backing I/O on t->lun; cont(t) runs when it succeeds (the task
 * completes at once when it fails, or when t was aborted meanwhile). */
void scsi_submit(struct tgt_task *t, enum tgt_io_op op, uint8_t *buf, uint64_t off, size_t len,
                 void (*cont)(struct tgt_task *));
void scsi_complete_good(struct tgt_task *t);
void scsi_complete_status(struct tgt_task *t, uint8_t status);
void scsi_complete_sense(struct tgt_task *t, uint8_t key, uint16_t asc);
/* Reply with n bytes of data, cut to the allocation length. */
void scsi_reply(struct tgt_task *t, const void *data, uint32_t n, uint32_t alloc);
int scsi_prep_none(struct tgt_task *t);        /* no CDB field to check */
int scsi_prep_read_data(struct tgt_task *t);   /* returns data, sized at execution */
void scsi_exec_good(struct tgt_task *t);       /* GOOD status, nothing else */

/* ---- scsi_rw.c ---- */

int scsi_prep_read(struct tgt_task *t);
void scsi_exec_read(struct tgt_task *t);
int scsi_prep_write(struct tgt_task *t);
void scsi_exec_write(struct tgt_task *t);
void scsi_exec_orwrite(struct tgt_task *t);
int scsi_prep_verify(struct tgt_task *t);
void scsi_exec_verify(struct tgt_task *t);
int scsi_prep_write_verify(struct tgt_task *t);
int scsi_prep_sync(struct tgt_task *t);
void scsi_exec_sync(struct tgt_task *t);
int scsi_prep_demote(struct tgt_task *t);
void scsi_exec_demote(struct tgt_task *t);

/* ---- scsi_provision.c ---- */

int scsi_prep_write_same(struct tgt_task *t);
void scsi_exec_write_same(struct tgt_task *t);
int scsi_prep_unmap(struct tgt_task *t);
void scsi_exec_unmap(struct tgt_task *t);
int scsi_prep_get_lba_status(struct tgt_task *t);
void scsi_exec_get_lba_status(struct tgt_task *t);

/* ---- scsi_info.c ---- */

int scsi_prep_inquiry(struct tgt_task *t);
void scsi_exec_inquiry(struct tgt_task *t);
int scsi_prep_read_capacity10(struct tgt_task *t);
void scsi_exec_read_capacity10(struct tgt_task *t);
void scsi_exec_read_capacity16(struct tgt_task *t);
void scsi_exec_mode_sense(struct tgt_task *t);
void scsi_exec_request_sense(struct tgt_task *t);
int scsi_prep_report_luns(struct tgt_task *t);
void scsi_exec_report_luns(struct tgt_task *t);
void scsi_exec_reserve(struct tgt_task *t);
void scsi_exec_release(struct tgt_task *t);

/* ---- scsi_pr.c: persistent reservations (PERSISTENT RESERVE IN/OUT) ---- */

enum tgt_pr_access { PR_ALLOWED, PR_READS, PR_WRITES };
/* Whether a command of class acc from t's I_T nexus conflicts with the
 * persistent reservation of t->lun. */
int scsi_pr_conflict(const struct tgt_task *t, enum tgt_pr_access acc);
/* Whether any persistent registration exists (RESERVE(6) then conflicts). */
int scsi_pr_active(const struct tgt_lun *lun);
int scsi_pr_prep_in(struct tgt_task *t);
void scsi_pr_exec_in(struct tgt_task *t);
int scsi_pr_prep_out(struct tgt_task *t);
void scsi_pr_exec_out(struct tgt_task *t);

/* ---- scsi_ops.c ---- */

extern const struct scsi_op scsi_ops[];
extern const size_t scsi_nops;
/* The table entry of a CDB, or NULL. */
const struct scsi_op *scsi_op_lookup(const uint8_t *cdb);
void scsi_exec_rsoc(struct tgt_task *t);

#endif
