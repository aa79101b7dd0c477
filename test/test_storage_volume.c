/* storage-volume-tool: exercises an iRAID volume over real iSCSI targets.
 *
 *   storage-volume-tool LEVEL CHUNK URL:FILE [URL:FILE ...]
 *
 * FILE is the member's backing file ("-" when it cannot be read directly);
 * URL is iscsi://host:port/iqn/lun.  Steps, each failing loudly:
 *  1. bad arguments are refused (unaligned, past the end, zero length);
 *  2. patterned writes at odd block offsets spanning chunks and members,
 *     through iovecs whose boundaries are not block-aligned, plus a burst
 *     of concurrent non-overlapping async writes;
 *  3. read back byte-exact through differently cut iovecs, also async;
 *  4. flush, then every written byte is found in the members' backing
 *     files where the layout (recomputed here independently) puts it;
 *  5. a sequential throughput figure for the volume.
 * Exit status 0 on success, 1 on a mismatch or error.
 *
 *   storage-volume-tool --dead LEVEL CHUNK URL:FILE...
 *
 * opens the volume, prints "ready", waits for a line on stdin (the caller
 * kills a target meanwhile), then expects a write to fail with an error
 * rather than hang or succeed; the caller bounds the time.
 *
 *   storage-volume-tool --slow LEVEL CHUNK URL:FILE...
 *
 * the same, but the caller makes a target slow (its backing store stalls)
 * and not dead: a 1 MiB write over every member must succeed, and read
 * back byte-exact; it prints how long the write took, "slow write
 * completed after N ms". */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/evloop.h"
#include "common/log.h"
#include "iraid/volume.h"

#define MAX_MEMBERS 8
#define BURST 64

static struct iraid_volume *vol;
static struct evloop *loop;
static uint8_t *shadow;      /* what the volume should hold */
static uint8_t *written;     /* 1 where the test wrote */
static uint64_t vsize;
static uint32_t bs;

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

struct wait {
    int pending;
    int errors;
    int status;
};

static void wait_cb(struct iraid_volume *v, int status, void *user)
{
    struct wait *w = user;

    w->pending--;
    if (status < 0) {
        fprintf(stderr, "request failed: %s\n", strerror(-status));
        w->errors++;
        w->status = status;
    }
}

static void refused_cb(struct iraid_volume *v, int status, void *user)
{
    FAIL("callback of a refused request");
}

static void wait_all(struct wait *w)
{
    while (w->pending > 0)
        evloop_run_once(loop, -1);
}

static uint8_t pattern(uint64_t off, uint32_t seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    return (uint8_t)(x >> 29 ^ x >> 7);
}

static void fill(uint8_t *buf, uint64_t off, uint64_t len, uint32_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = pattern(off + i, seed);
}

/* Cuts buf into iovecs of awkward sizes (7, 1000, 4099, ...). */
static int cut_iov(uint8_t *buf, uint64_t len, struct iovec *iov, int max)
{
    static const size_t sizes[] = { 7, 1000, 4099, 65536 + 13, 1 };
    int n = 0;

    for (uint64_t done = 0; done < len; n++) {
        size_t s = sizes[n % 5];
        if (n == max - 1 || s > len - done)
            s = len - done;
        iov[n] = (struct iovec){ .iov_base = buf + done, .iov_len = s };
        done += s;
    }
    return n;
}

static void write_region(uint64_t off, uint64_t len, uint32_t seed)
{
    struct iovec iov[64];
    int n, rc;

    fill(shadow + off, off, len, seed);
    n = cut_iov(shadow + off, len, iov, 64);
    struct wait w = { 1, 0, 0 };
    if ((rc = iraid_writev(vol, off, iov, n, wait_cb, &w)) < 0)
        FAIL("writev %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(-rc));
    wait_all(&w);
    if (w.status < 0)
        FAIL("write %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(-w.status));
    memset(written + off, 1, len);
}

static void check_region(uint64_t off, uint64_t len)
{
    uint8_t *buf = malloc(len);
    struct iovec iov[64];
    int n, rc;
    struct wait w = { 1, 0, 0 };

    if (!buf)
        FAIL("out of memory");
    memset(buf, 0xEE, len);
    n = cut_iov(buf, len, iov, 64);
    if ((rc = iraid_readv(vol, off, iov, n, wait_cb, &w)) < 0)
        FAIL("readv %" PRIu64 ": %s", off, strerror(-rc));
    wait_all(&w);
    if (w.status < 0)
        FAIL("read %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(-w.status));
    for (uint64_t i = 0; i < len; i++)
        if (written[off + i] && buf[i] != shadow[off + i])
            FAIL("volume byte %" PRIu64 " reads 0x%02x, wrote 0x%02x", off + i, buf[i],
                 shadow[off + i]);
    free(buf);
}

static void check_bad_args(void)
{
    uint8_t buf[4096];
    struct iovec iov = { buf, bs };

    if (iraid_readv(vol, 1, &iov, 1, refused_cb, NULL) != -EINVAL)
        FAIL("unaligned offset accepted");
    iov.iov_len = bs + 1;
    if (iraid_writev(vol, 0, &iov, 1, refused_cb, NULL) != -EINVAL)
        FAIL("unaligned length accepted");
    iov.iov_len = bs;
    if (iraid_readv(vol, vsize, &iov, 1, refused_cb, NULL) != -EINVAL)
        FAIL("read past the end accepted");
    iov.iov_len = 0;
    if (iraid_writev(vol, 0, &iov, 1, refused_cb, NULL) != -EINVAL)
        FAIL("zero length accepted");
}

/* BURST writes in flight at once, each in its own slot of the volume's
 * upper half, then BURST reads in flight at once. */
static void burst(uint32_t seed)
{
    uint64_t slot = (vsize / 2 / BURST) / bs * bs, lens[BURST], offs[BURST];
    uint8_t *rbuf[BURST];
    struct wait w = { 0, 0, 0 };

    srand(seed);
    for (int i = 0; i < BURST; i++) {
        struct iovec iov;
        offs[i] = vsize / 2 + i * slot + (uint64_t)(rand() % 8) * bs;
        lens[i] = ((uint64_t)rand() % (slot / bs - 8) + 1) * bs;
        fill(shadow + offs[i], offs[i], lens[i], seed + i);
        memset(written + offs[i], 1, lens[i]);
        iov = (struct iovec){ shadow + offs[i], lens[i] };
        if (iraid_writev(vol, offs[i], &iov, 1, wait_cb, &w) < 0)
            FAIL("burst write %d refused", i);
        w.pending++;
    }
    wait_all(&w);
    for (int i = 0; i < BURST; i++) {
        struct iovec iov;
        if (!(rbuf[i] = malloc(lens[i])))
            FAIL("out of memory");
        iov = (struct iovec){ rbuf[i], lens[i] };
        if (iraid_readv(vol, offs[i], &iov, 1, wait_cb, &w) < 0)
            FAIL("burst read %d refused", i);
        w.pending++;
    }
    wait_all(&w);
    if (w.errors)
        FAIL("%d burst requests failed", w.errors);
    for (int i = 0; i < BURST; i++) {
        if (memcmp(rbuf[i], shadow + offs[i], lens[i]) != 0)
            FAIL("burst region %d (%" PRIu64 "+%" PRIu64 ") reads back wrong", i, offs[i],
                 lens[i]);
        free(rbuf[i]);
    }
}

/* Independent placement: RAID-0 chunk d on member d % n at stripe d / n;
 * RAID-1 every member at the volume offset plus the 64 KiB metadata area
 * (iraid/meta.h) at the start of each member. */
static void check_placement(int level, uint64_t chunk, uint32_t n, char **files)
{
    int fds[MAX_MEMBERS];
    uint64_t checked = 0;

    for (uint32_t m = 0; m < n; m++)
        fds[m] = strcmp(files[m], "-") ? open(files[m], O_RDONLY) : -1;
    for (uint64_t c = 0; c * chunk < vsize; c++) {
        uint8_t buf[65536];
        uint64_t off = c * chunk, len = chunk < sizeof(buf) ? chunk : sizeof(buf);
        int any = 0;

        for (uint64_t i = 0; i < len && !any; i++)
            any = written[off + i];
        if (!any)
            continue;
        for (uint32_t m = 0; m < n; m++) {
            uint64_t moff;
            if (level == 0 && m != c % n)
                continue;
            moff = level == 0 ? (c / n) * chunk : off + (64u << 10);
            if (fds[m] < 0)
                continue;
            if (pread(fds[m], buf, len, (off_t)moff) != (ssize_t)len)
                FAIL("cannot read member %u backing file %s", m, files[m]);
            for (uint64_t i = 0; i < len; i++)
                if (written[off + i] && buf[i] != shadow[off + i])
                    FAIL("volume byte %" PRIu64 " not at member %u offset %" PRIu64, off + i, m,
                         moff + i);
            checked += len;
        }
    }
    for (uint32_t m = 0; m < n; m++)
        if (fds[m] >= 0)
            close(fds[m]);
    printf("placement: %" PRIu64 " bytes found on the members where the layout puts them\n",
           checked);
}

static void throughput(void)
{
    uint64_t len = vsize / 2 < (64u << 20) ? vsize / 2 : (64u << 20);
    uint8_t *buf = malloc(len);
    uint64_t t0, t1, t2;

    if (!buf)
        FAIL("out of memory");
    fill(buf, 0, len, 99);
    t0 = evloop_now_ms();
    if (iraid_write_sync(vol, 0, buf, len) < 0)
        FAIL("sequential write");
    t1 = evloop_now_ms();
    if (iraid_read_sync(vol, 0, buf, len) < 0)
        FAIL("sequential read");
    t2 = evloop_now_ms();
    printf("sequential %" PRIu64 " MiB: write %.1f MiB/s, read %.1f MiB/s\n", len >> 20,
           (double)len / 1048576.0 / ((double)(t1 - t0 + 1) / 1000.0),
           (double)len / 1048576.0 / ((double)(t2 - t1 + 1) / 1000.0));
    free(buf);
}

/* Says "ready" and waits for the caller's line: it changes a target
 * meanwhile (kills it, stalls its store). */
static void wait_go(void)
{
    char line[16];

    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        FAIL("no go-ahead on stdin");
}

static int dead_member(void)
{
    static uint8_t buf[1 << 20];
    uint64_t t0;
    int rc;

    wait_go();
    t0 = evloop_now_ms();
    rc = iraid_write_sync(vol, 0, buf, sizeof(buf));
    if (rc == 0)
        FAIL("write to a volume with a dead member succeeded");
    printf("write with a dead member failed after %" PRIu64 " ms: %s\n", evloop_now_ms() - t0,
           strerror(-rc));
    iraid_close(vol);
    evloop_destroy(loop);
    return 0;
}

static int slow_member(void)
{
    static uint8_t buf[1 << 20], back[1 << 20];
    uint64_t t0;
    int rc;

    fill(buf, 0, sizeof(buf), 42);
    wait_go();
    t0 = evloop_now_ms();
    if ((rc = iraid_write_sync(vol, 0, buf, sizeof(buf))) < 0)
        FAIL("write to a volume with a slow member: %s", strerror(-rc));
    printf("slow write completed after %" PRIu64 " ms\n", evloop_now_ms() - t0);
    if ((rc = iraid_read_sync(vol, 0, back, sizeof(back))) < 0)
        FAIL("read back: %s", strerror(-rc));
    if (memcmp(buf, back, sizeof(buf)) != 0)
        FAIL("the slow write read back different bytes");
    printf("read back byte-exact\n");
    fflush(stdout);
    iraid_close(vol);
    evloop_destroy(loop);
    return 0;
}

int main(int argc, char **argv)
{
    const char *urls[MAX_MEMBERS];
    char *files[MAX_MEMBERS];
    struct iraid_config cfg = { 0 };
    uint32_t n = 0;
    int rc, dead = argc > 1 && strcmp(argv[1], "--dead") == 0;
    int slow = argc > 1 && strcmp(argv[1], "--slow") == 0;

    if (dead || slow) {
        argc--;
        argv++;
    }
    if (argc < 4 || argc - 3 > MAX_MEMBERS) {
        fprintf(stderr, "usage: %s LEVEL CHUNK URL:FILE...\n", argv[0]);
        return 2;
    }
    ipvfs_log_set_ident("volume-test");
    /* A target dying under a write must fail its member, not end this
     * process with SIGPIPE (libiscsi writes with writev(); volume.h). */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        FAIL("signal: %s", strerror(errno));
    for (int i = 3; i < argc; i++, n++) {
        char *sep = strrchr(argv[i], ':');
        if (!sep)
            FAIL("argument %s is not URL:FILE", argv[i]);
        *sep = '\0';
        urls[n] = argv[i];
        files[n] = sep + 1;
    }
    cfg = (struct iraid_config){ .level = atoi(argv[1]), .nmembers = n, .urls = urls,
                                 .chunk_size = strtoull(argv[2], NULL, 0), .timeout_ms = 5000 };
    if (!(loop = evloop_create()))
        FAIL("evloop_create");
    if ((rc = iraid_open(loop, &cfg, &vol)) < 0)
        FAIL("iraid_open: %s", strerror(-rc));
    vsize = iraid_size(vol);
    bs = iraid_block_size(vol);
    if (dead)
        return dead_member();
    if (slow)
        return slow_member();
    printf("volume: RAID-%d, %u members, %" PRIu64 " bytes, block %u\n", cfg.level, n, vsize, bs);
    if (!(shadow = calloc(1, vsize)) || !(written = calloc(1, vsize)))
        FAIL("out of memory");

    check_bad_args();
    write_region(7 * (uint64_t)bs, 3 * cfg.chunk_size + 5 * (uint64_t)bs, 1);
    write_region(cfg.chunk_size - bs, 2 * (uint64_t)bs, 2);  /* straddles two members */
    write_region(vsize / 2 - 4 * cfg.chunk_size * n - 3 * (uint64_t)bs,
                 4 * cfg.chunk_size * n + 3 * (uint64_t)bs, 3);
    write_region(vsize - bs, bs, 4);                           /* the last block */
    burst(5);
    check_region(0, vsize / 2);
    check_region(3 * (uint64_t)bs, 5 * cfg.chunk_size + (uint64_t)bs);
    check_region(vsize / 2, vsize / 2);
    if ((rc = iraid_flush_sync(vol)) < 0)
        FAIL("flush: %s", strerror(-rc));
    check_placement(cfg.level, cfg.chunk_size, n, files);
    throughput();
    iraid_close(vol);
    evloop_destroy(loop);
    free(shadow);
    free(written);
    printf("volume test passed\n");
    return 0;
}
