/* iscsi_blockio: byte-exact block I/O through an iSCSI target, for shell
 * tests that need to see the data (libiscsi-bin has no dd).
 *
 *   iscsi_blockio URL read  LBA BLOCKS   READ(16), the data to stdout
 *   iscsi_blockio URL readdpo LBA BLOCKS the same with the DPO bit set
 *   iscsi_blockio URL write LBA BLOCKS   WRITE(16) of stdin, then
 *                                        SYNCHRONIZE CACHE(16)
 *   iscsi_blockio URL unmap LBA BLOCKS   UNMAP of the range
 *   iscsi_blockio URL demote LBA BLOCKS  ipvfs-target's vendor DEMOTE of
 *                                        stdin (backend/iscsi/target.h)
 *   iscsi_blockio URL vpdc0 0 0          byte 4 of VPD page 0xC0 (uCache
 *                                        flags: 1 = the L2 takes DEMOTE,
 *                                        2 = the backing room is given)
 *
 * Blocks are 512 bytes.  Exits 0 on success, 1 with a message on stderr
 * when a command fails or its status is not GOOD.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#define BLOCK 512u

/* Takes the task; 0 when it ended with GOOD status. */
static int task_ok(struct iscsi_context *ic, struct scsi_task *t, const char *what)
{
    int ok = t && t->status == SCSI_STATUS_GOOD;

    if (!ok)
        fprintf(stderr, "iscsi_blockio: %s failed: %s\n", what, iscsi_get_error(ic));
    if (t)
        scsi_free_scsi_task(t);
    return ok ? 0 : -1;
}

static int full_io(int fd, uint8_t *buf, size_t len, int out)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = out ? write(fd, buf + done, len - done) : read(fd, buf + done, len - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "iscsi_blockio: %s: %s\n", out ? "stdout" : "stdin",
                    n < 0 ? strerror(errno) : "short input");
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static int do_read(struct iscsi_context *ic, int lun, uint64_t lba, uint32_t n, int dpo)
{
    struct scsi_task *t = iscsi_read16_sync(ic, lun, lba, n * BLOCK, BLOCK, 0, dpo, 0, 0, 0);
    int rc = -1;

    if (!t || t->status != SCSI_STATUS_GOOD)
        return task_ok(ic, t, "READ(16)");
    if (t->datain.size != (int)(n * BLOCK))
        fprintf(stderr, "iscsi_blockio: READ(16) returned %d of %u bytes\n", t->datain.size,
                n * BLOCK);
    else
        rc = full_io(STDOUT_FILENO, t->datain.data, (size_t)n * BLOCK, 1);
    scsi_free_scsi_task(t);
    return rc;
}

static int do_write(struct iscsi_context *ic, int lun, uint64_t lba, uint32_t n)
{
    uint8_t *buf = malloc((size_t)n * BLOCK);
    int rc = -1;

    if (!buf) {
        fputs("iscsi_blockio: out of memory\n", stderr);
        return -1;
    }
    if (full_io(STDIN_FILENO, buf, (size_t)n * BLOCK, 0) == 0 &&
        task_ok(ic, iscsi_write16_sync(ic, lun, lba, buf, n * BLOCK, BLOCK, 0, 0, 0, 0, 0),
                "WRITE(16)") == 0)
        rc = task_ok(ic, iscsi_synchronizecache16_sync(ic, lun, lba, n, 0, 0),
                     "SYNCHRONIZE CACHE(16)");
    free(buf);
    return rc;
}

static int do_unmap(struct iscsi_context *ic, int lun, uint64_t lba, uint32_t n)
{
    struct unmap_list d = { .lba = lba, .num = n };

    return task_ok(ic, iscsi_unmap_sync(ic, lun, 0, 0, &d, 1), "UNMAP");
}

/* DEMOTE: opcode 0xC0, LBA and block count as in WRITE(16), Data-Out. */
static int do_demote(struct iscsi_context *ic, int lun, uint64_t lba, uint32_t n)
{
    uint8_t cdb[16] = { 0xc0 };
    struct iscsi_data d = { .size = (size_t)n * BLOCK };
    struct scsi_task *t;
    int rc = -1;

    for (int i = 0; i < 8; i++)
        cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
    for (int i = 0; i < 4; i++)
        cdb[10 + i] = (uint8_t)(n >> (24 - 8 * i));
    d.data = malloc(d.size);
    t = scsi_create_task(16, cdb, SCSI_XFER_WRITE, (int)d.size);
    if (d.data && t && full_io(STDIN_FILENO, d.data, d.size, 0) == 0)
        rc = task_ok(ic, iscsi_scsi_command_sync(ic, lun, t, &d), "DEMOTE");
    else if (t)
        scsi_free_scsi_task(t);
    free(d.data);
    return rc;
}

static int do_vpd_c0(struct iscsi_context *ic, int lun)
{
    struct scsi_task *t = iscsi_inquiry_sync(ic, lun, 1, 0xc0, 255);

    if (!t || t->status != SCSI_STATUS_GOOD)
        return task_ok(ic, t, "INQUIRY VPD 0xC0");
    if (t->datain.size < 5) {
        fprintf(stderr, "iscsi_blockio: VPD page 0xC0 of %d bytes\n", t->datain.size);
        scsi_free_scsi_task(t);
        return -1;
    }
    printf("%u\n", t->datain.data[4]);
    scsi_free_scsi_task(t);
    return 0;
}

int main(int argc, char **argv)
{
    struct iscsi_context *ic;
    struct iscsi_url *url;
    uint64_t lba;
    uint32_t n;
    int rc = -1;

    if (argc != 5) {
        fputs("usage: iscsi_blockio URL read|readdpo|write|unmap|demote|vpdc0 LBA BLOCKS\n", stderr);
        return 2;
    }
    lba = strtoull(argv[3], NULL, 0);
    n = (uint32_t)strtoul(argv[4], NULL, 0);
    ic = iscsi_create_context("iqn.2026-01.org.ipvfs:blockio");
    if (!ic) {
        fputs("iscsi_blockio: no libiscsi context\n", stderr);
        return 1;
    }
    url = iscsi_parse_full_url(ic, argv[1]);
    if (!url) {
        fprintf(stderr, "iscsi_blockio: %s\n", iscsi_get_error(ic));
        goto undo_context;
    }
    iscsi_set_session_type(ic, ISCSI_SESSION_NORMAL);
    if (iscsi_set_targetname(ic, url->target) != 0 ||
        iscsi_full_connect_sync(ic, url->portal, url->lun) != 0) {
        fprintf(stderr, "iscsi_blockio: login: %s\n", iscsi_get_error(ic));
        goto undo_url;
    }
    if (strcmp(argv[2], "read") == 0)
        rc = do_read(ic, url->lun, lba, n, 0);
    else if (strcmp(argv[2], "readdpo") == 0)
        rc = do_read(ic, url->lun, lba, n, 1);
    else if (strcmp(argv[2], "write") == 0)
        rc = do_write(ic, url->lun, lba, n);
    else if (strcmp(argv[2], "unmap") == 0)
        rc = do_unmap(ic, url->lun, lba, n);
    else if (strcmp(argv[2], "demote") == 0)
        rc = do_demote(ic, url->lun, lba, n);
    else if (strcmp(argv[2], "vpdc0") == 0)
        rc = do_vpd_c0(ic, url->lun);
    else
        fprintf(stderr, "iscsi_blockio: unknown operation %s\n", argv[2]);
    if (iscsi_logout_sync(ic) != 0)
        fprintf(stderr, "iscsi_blockio: logout: %s\n", iscsi_get_error(ic));
undo_url:
    iscsi_destroy_url(url);
undo_context:
    iscsi_destroy_context(ic);
    return rc == 0 ? 0 : 1;
}
