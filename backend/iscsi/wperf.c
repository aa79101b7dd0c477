/* ipvfs-iscsi-wperf: the write workload of benchmarks/target-perf.sh.
 * Sequential WRITE(16)s of a fixed size through libiscsi (the initiator the
 * I/O nodes use), a fixed number in flight, for a fixed time; prints
 * "iops N MiB/s M".
 *
 *   ipvfs-iscsi-wperf HOST:PORT IQN LUN BYTES_PER_WRITE IN_FLIGHT SECONDS
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

struct run {
    struct iscsi_context *ic;
    int lun;
    uint32_t len;
    uint64_t blocks, next_lba;
    unsigned char *buf;
    uint64_t done;
    int inflight, failed, stop;
};

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_done(struct iscsi_context *ic, int status, void *data, void *priv);

static int issue(struct run *r)
{
    uint64_t lba = r->next_lba;

    r->next_lba += r->len / 512;
    if (r->next_lba + r->len / 512 > r->blocks)
        r->next_lba = 0;
    if (!iscsi_write16_task(r->ic, r->lun, lba, r->buf, r->len, 512, 0, 0, 0, 0, 0, write_done, r))
        return -1;
    r->inflight++;
    return 0;
}

static void write_done(struct iscsi_context *ic, int status, void *data, void *priv)
{
    struct run *r = priv;

    r->inflight--;
    if (status != SCSI_STATUS_GOOD)
        r->failed++;
    else
        r->done++;
    scsi_free_scsi_task(data);
    if (!r->stop && !r->failed && issue(r) < 0)
        r->failed++;
}

int main(int argc, char **argv)
{
    struct run r = { 0 };
    struct scsi_task *t;
    struct scsi_readcapacity16 *rc16;
    int depth, secs;
    double start, end;

    if (argc != 7) {
        fprintf(stderr, "usage: %s HOST:PORT IQN LUN BYTES IN_FLIGHT SECONDS\n", argv[0]);
        return 2;
    }
    r.lun = atoi(argv[3]);
    r.len = (uint32_t)strtoul(argv[4], NULL, 0);
    depth = atoi(argv[5]);
    secs = atoi(argv[6]);
    if (r.len < 512 || r.len % 512 || depth < 1 || secs < 1) {
        fprintf(stderr, "wperf: bad arguments\n");
        return 2;
    }
    r.ic = iscsi_create_context("iqn.2026-01.org.ipvfs:wperf");
    if (!r.ic)
        return 1;
    iscsi_set_targetname(r.ic, argv[2]);
    iscsi_set_session_type(r.ic, ISCSI_SESSION_NORMAL);
    if (iscsi_full_connect_sync(r.ic, argv[1], r.lun) != 0) {
        fprintf(stderr, "wperf: login failed: %s\n", iscsi_get_error(r.ic));
        return 1;
    }
    t = iscsi_readcapacity16_sync(r.ic, r.lun);
    if (!t || t->status != SCSI_STATUS_GOOD || !(rc16 = scsi_datain_unmarshall(t))) {
        fprintf(stderr, "wperf: READ CAPACITY failed\n");
        return 1;
    }
    r.blocks = rc16->returned_lba + 1;
    scsi_free_scsi_task(t);
    r.buf = malloc(r.len);
    if (!r.buf)
        return 1;
    memset(r.buf, 0x5a, r.len);
    start = now();
    for (int i = 0; i < depth; i++)
        if (issue(&r) < 0)
            return 1;
    while (r.inflight > 0) {
        struct pollfd p = { .fd = iscsi_get_fd(r.ic), .events = (short)iscsi_which_events(r.ic) };
        if (poll(&p, 1, 1000) < 0 || iscsi_service(r.ic, p.revents) < 0) {
            fprintf(stderr, "wperf: %s\n", iscsi_get_error(r.ic));
            return 1;
        }
        if (now() - start >= secs)
            r.stop = 1;
    }
    end = now();
    if (r.failed) {
        fprintf(stderr, "wperf: %d writes failed\n", r.failed);
        return 1;
    }
    printf("iops %.0f MiB/s %.1f\n", (double)r.done / (end - start),
           (double)r.done * r.len / (end - start) / 1048576.0);
    iscsi_logout_sync(r.ic);
    iscsi_destroy_context(r.ic);
    free(r.buf);
    return 0;
}
