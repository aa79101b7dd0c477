/* iraid-bench: throughput of one iRAID volume.
 *
 *   iraid-bench LEVEL CHUNK SECONDS URL...
 *
 * Prints one line: level, members, sequential full-stripe write and read
 * (MiB/s, 1 MiB-aligned stripes of whole rows, 8 in flight), 4 KiB random
 * write (IOPS-derived MiB/s, 16 in flight) and, for RAID-1/5, the
 * sequential read with the last member failed (iraid_replace_member to an
 * address nobody answers, so reads reconstruct). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/evloop.h"
#include "common/log.h"
#include "iraid/volume.h"

#define DEPTH 16

static struct evloop *loop;
static struct iraid_volume *vol;
static int inflight, failed;

static void done(struct iraid_volume *v, int status, void *user)
{
    inflight--;
    failed |= status < 0;
}

/* Runs ops of len bytes (sequential or random offsets) for ms, depth
 * at a time; returns MiB/s. */
static double run(int write, uint64_t len, int random, int depth, uint64_t ms, uint8_t *buf)
{
    uint64_t size = iraid_size(vol) / len * len, off = 0, bytes = 0, t0 = evloop_now_ms();
    unsigned seed = 1;

    while (evloop_now_ms() - t0 < ms) {
        while (inflight < depth) {
            struct iovec iov = { buf, len };
            uint64_t o = random ? (uint64_t)rand_r(&seed) % (size / len) * len : off;
            int rc = write ? iraid_writev(vol, o, &iov, 1, done, NULL)
                           : iraid_readv(vol, o, &iov, 1, done, NULL);
            if (rc < 0) {
                fprintf(stderr, "submit: %s\n", strerror(-rc));
                exit(1);
            }
            inflight++;
            bytes += len;
            off = (off + len) % size;
        }
        evloop_run_once(loop, -1);
    }
    while (inflight > 0)
        evloop_run_once(loop, -1);
    if (failed) {
        fprintf(stderr, "I/O failed\n");
        exit(1);
    }
    return (double)bytes / 1048576.0 / ((double)(evloop_now_ms() - t0) / 1000.0);
}

int main(int argc, char **argv)
{
    struct iraid_config cfg = { 0 };
    uint64_t ms, stripe;
    uint8_t *buf;
    double sw, sr, rw, dr = -1;
    int rc;

    if (argc < 5) {
        fprintf(stderr, "usage: %s LEVEL CHUNK SECONDS URL...\n", argv[0]);
        return 2;
    }
    ipvfs_log_set_ident("iraid-bench");
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)  /* iraid/volume.h: libiscsi writes with writev() */
        return 2;
    cfg = (struct iraid_config){ .level = atoi(argv[1]), .chunk_size = strtoull(argv[2], NULL, 0),
                                 .nmembers = (uint32_t)(argc - 4),
                                 .urls = (const char *const *)argv + 4, .timeout_ms = 3000 };
    ms = (uint64_t)(atof(argv[3]) * 1000);
    if (!(loop = evloop_create()) || (rc = iraid_open(loop, &cfg, &vol)) < 0) {
        fprintf(stderr, "open failed\n");
        return 1;
    }
    stripe = cfg.chunk_size * (cfg.level == 5 ? cfg.nmembers - 1 : cfg.level == 1 ? 1 : cfg.nmembers);
    if (stripe < (1u << 20))
        stripe = (1u << 20) / stripe * stripe;
    if (!(buf = aligned_alloc(4096, stripe)))
        return 1;
    memset(buf, 0x5a, stripe);
    sw = run(1, stripe, 0, 8, ms, buf);
    sr = run(0, stripe, 0, 8, ms, buf);
    rw = run(1, 4096, 1, DEPTH, ms, buf);
    if (cfg.level != 0 &&
        iraid_replace_member(vol, cfg.nmembers - 1, "iscsi://127.0.0.1:13999/iqn.2024-01.org.ipvfs:none/1",
                             NULL) == 0)
        dr = run(0, stripe, 0, 8, ms, buf);
    printf("RAID-%d  Nt=%u  %8.1f  %8.1f  %8.1f  ", cfg.level, cfg.nmembers, sw, sr, rw);
    if (dr >= 0)
        printf("%8.1f\n", dr);
    else
        printf("%8s\n", "-");
    iraid_close(vol);
    evloop_destroy(loop);
    free(buf);
    return 0;
}
