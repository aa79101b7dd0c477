/* iraid-model-tool: RAID-1/5 volumes over real targets, checked against a
 * brute-force model.  Driven by test/t_iraid_*.sh.
 *
 *   iraid-model-tool model SEED LEVEL CHUNK URL:FILE...
 *     random writes (odd block offsets and lengths, many in flight, some
 *     on the same stripe), byte-exact read back, then every member's
 *     backing file against the model: data chunk k of stripe s on member
 *     (P + 1 + k) % n with P = n - 1 - s % n, parity the byte-wise XOR
 *     (computed here, without ISA-L), all after the 64 KiB metadata area;
 *     RAID-1: every member a copy.  Scrub must report 0.
 *   iraid-model-tool degraded LEVEL CHUNK URL:FILE...
 *     fills the volume, prints "streaming", streams partial writes for
 *     STREAM_MS (the caller kills a target meanwhile), checks every byte
 *     (degraded reads), prints "degraded-ok" and waits for a line on stdin
 *     (the caller restarts the target), then streams writes until the
 *     rebuild is done, checks every byte, the model and a clean scrub.
 *   iraid-model-tool crash LEVEL CHUNK URL:FILE...
 *     partial-stripe writes into disjoint slots forever; after every 8 it
 *     flushes and prints "synced N" (slots below N are durable).  The
 *     caller kills it with SIGKILL.
 *   iraid-model-tool verify SYNCED LEVEL CHUNK URL:FILE...
 *     reopens (resync), scrub must be 0, slots below SYNCED read back;
 *     with a member unreachable, the slots are read back degraded.
 *     IRAID_MODEL_START_DIRTY_DEGRADED=1 in the environment sets
 *     cfg.start_dirty_degraded (a RAID-5 volume that is dirty and degraded
 *     is refused without it).
 *   iraid-model-tool twofail LEVEL CHUNK URL:FILE...
 *     fills the volume, prints "ready" and waits for a line on stdin (the
 *     caller kills two targets); then every chunk is read: each read must
 *     either fail with EIO or return exactly the bytes written (never
 *     anything else), at least one must fail, and a write must fail with
 *     EIO.
 *   iraid-model-tool flushlose LEVEL CHUNK URL:FILE...
 *     writes the volume, prints "ready" and waits for a line on stdin (the
 *     caller stops member 1's target: SIGSTOP); the flush that follows
 *     loses member 1 (timeout) and must still succeed, and by the time it
 *     returns member 0's backing file must already hold the superblock
 *     that marks member 1 stale.
 *   iraid-model-tool ahead LEVEL CHUNK URL:FILE...
 *     RAID-5: a stream of whole-stripe writes sets the next write-intent
 *     region's bit ahead before it gets there; then the model and scrub.
 *   iraid-model-tool overlap LEVEL CHUNK URL:FILE...
 *     overlapping writes in flight (one of whole stripes) end in the order
 *     they were submitted; then the model and scrub.
 * Exit 0 on success, 1 on a failure. */
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
#include "test/iraid_pattern.h"

#define MAX_MEMBERS 8
#define META 65536u
#define INFLIGHT 8
#define STREAM_MS 4000

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static struct iraid_volume *vol;
static struct evloop *loop;
static struct iraid_config cfg;
static const char *urls[MAX_MEMBERS];
static char *files[MAX_MEMBERS];
static uint32_t nm, bs;
static uint64_t vsize, chunk;
static uint8_t *shadow;

struct slot {
    int busy;
    uint8_t *buf;
    uint64_t off, len;
    int status;
};

static int outstanding;

static void slot_done(struct iraid_volume *v, int status, void *user)
{
    struct slot *s = user;

    s->busy = 0;
    s->status = status;
    outstanding--;
    if (status < 0)
        FAIL("write %" PRIu64 "+%" PRIu64 ": %s", s->off, s->len, strerror(-status));
}

static void submit_write(struct slot *s, uint64_t off, uint64_t len, uint32_t seed)
{
    struct iovec iov[2];
    uint64_t first = len / bs / 2 | 1;
    int rc;

    s->off = off;
    s->len = len;
    iraid_pattern_fill(s->buf, off, len, seed);
    /* The shadow takes the bytes now: writes in flight never overlap. */
    memcpy(shadow + off, s->buf, len);
    /* Two pieces cut at an odd block: a chunk split across them, chunks
     * aligned inside the second (both ways a RAID-5 whole-stripe write
     * takes the caller's bytes). */
    iov[0] = (struct iovec){ s->buf, first * bs };
    iov[1] = (struct iovec){ s->buf + first * bs, len - first * bs };
    if ((rc = iraid_writev(vol, off, iov, len > first * bs ? 2 : 1, slot_done, s)) < 0)
        FAIL("writev %" PRIu64 ": %s", off, strerror(-rc));
    s->busy = 1;
    outstanding++;
}

static int overlaps_busy(struct slot *slots, uint64_t off, uint64_t len)
{
    for (int i = 0; i < INFLIGHT; i++)
        if (slots[i].busy && off < slots[i].off + slots[i].len && slots[i].off < off + len)
            return 1;
    return 0;
}

/* Random block-aligned writes up to 3 stripes long, INFLIGHT at a time,
 * never two overlapping in flight (they may share stripes). */
static void random_writes(unsigned *seed, int count, uint64_t until_ms, int (*more)(void))
{
    static struct slot slots[INFLIGHT];
    uint64_t maxlen = 3 * chunk * nm;
    int done = 0;

    for (int i = 0; i < INFLIGHT; i++)
        if (!slots[i].buf && posix_memalign((void **)&slots[i].buf, 64, maxlen) != 0)
            FAIL("out of memory");
    while ((count ? done < count : evloop_now_ms() < until_ms) || (more && more())) {
        for (int i = 0; i < INFLIGHT; i++) {
            uint64_t len = ((uint64_t)rand_r(seed) % (maxlen / bs) + 1) * bs, off;
            if (slots[i].busy)
                continue;
            uint64_t align = bs, sb = chunk * (nm - 1);
            if (rand_r(seed) % 4 == 0)
                len = ((uint64_t)rand_r(seed) % 3 + 1) * bs;   /* tiny: read-modify-write */
            else if (rand_r(seed) % 3 == 0 && 2 * sb <= maxlen && 3 * sb <= vsize) {
                /* whole stripes: RAID-5 sends them as one multi-stripe op */
                len = ((uint64_t)rand_r(seed) % (maxlen / sb - 1) + 2) * sb;
                align = sb;
            }
            if (len > vsize)
                len = vsize;
            off = (uint64_t)rand_r(seed) % ((vsize - len) / align + 1) * align;
            if (overlaps_busy(slots, off, len))
                continue;
            submit_write(&slots[i], off, len, (uint32_t)rand_r(seed));
            done++;
        }
        evloop_run_once(loop, -1);
    }
    while (outstanding > 0)
        evloop_run_once(loop, -1);
}

static void check_volume(const char *when)
{
    uint64_t step = 4u << 20;
    uint8_t *buf = malloc(step);
    int rc;

    if (!buf)
        FAIL("out of memory");
    for (uint64_t off = 0; off < vsize; off += step) {
        uint64_t len = vsize - off < step ? vsize - off : step;
        if ((rc = iraid_read_sync(vol, off, buf, len)) < 0)
            FAIL("%s: read %" PRIu64 ": %s", when, off, strerror(-rc));
        for (uint64_t i = 0; i < len; i++)
            if (buf[i] != shadow[off + i])
                FAIL("%s: volume byte %" PRIu64 " reads 0x%02x, expected 0x%02x", when, off + i,
                     buf[i], shadow[off + i]);
    }
    free(buf);
    printf("%s: %" PRIu64 " bytes read back exactly\n", when, vsize);
}

/* The members' backing files against the model built from the shadow. */
static void check_model(void)
{
    uint64_t stripes, per = cfg.level == 5 ? nm - 1 : 1;
    uint8_t *got = malloc(chunk), *want = malloc(chunk);
    int fds[MAX_MEMBERS];

    if (!got || !want)
        FAIL("out of memory");
    stripes = vsize / (per * chunk);
    for (uint32_t m = 0; m < nm; m++)
        if ((fds[m] = open(files[m], O_RDONLY)) < 0)
            FAIL("open %s: %s", files[m], strerror(errno));
    for (uint64_t s = 0; s < stripes; s++) {
        uint32_t p = nm - 1 - (uint32_t)(s % nm);
        for (uint32_t m = 0; m < nm; m++) {
            if (cfg.level == 1) {
                memcpy(want, shadow + s * chunk, chunk);
            } else if (m == p) {
                memset(want, 0, chunk);
                for (uint32_t k = 0; k < per; k++)
                    for (uint64_t i = 0; i < chunk; i++)
                        want[i] ^= shadow[(s * per + k) * chunk + i];
            } else {
                uint32_t k = (m + nm - p - 1) % nm;
                memcpy(want, shadow + (s * per + k) * chunk, chunk);
            }
            if (pread(fds[m], got, chunk, (off_t)(META + s * chunk)) != (ssize_t)chunk)
                FAIL("short read of %s", files[m]);
            if (memcmp(got, want, chunk) != 0)
                FAIL("stripe %" PRIu64 " member %u (%s) differs from the model", s, m,
                     m == p && cfg.level == 5 ? "parity" : "data");
        }
    }
    for (uint32_t m = 0; m < nm; m++)
        close(fds[m]);
    free(got);
    free(want);
    printf("model: %" PRIu64 " stripes x %u members match the model\n", stripes, nm);
}

static void scrub_clean(void)
{
    uint64_t mism = 0, skipped = 0;
    int rc = iraid_scrub_sync(vol, &mism, &skipped);

    if (rc < 0)
        FAIL("scrub: %s", strerror(-rc));
    printf("scrub: %" PRIu64 " mismatches, %" PRIu64 " skipped\n", mism, skipped);
    if (mism || skipped)
        FAIL("scrub not clean");
}

static void open_volume(void)
{
    int rc;

    if ((rc = iraid_open(loop, &cfg, &vol)) < 0)
        FAIL("iraid_open: %s", strerror(-rc));
    vsize = iraid_size(vol);
    bs = iraid_block_size(vol);
}

static void fill_volume(uint32_t seed)
{
    int rc;

    iraid_pattern_fill(shadow, 0, vsize, seed);
    if ((rc = iraid_write_sync(vol, 0, shadow, vsize)) < 0)
        FAIL("fill: %s", strerror(-rc));
}

static int cmd_model(unsigned seed)
{
    fill_volume(seed);
    random_writes(&seed, 400, 0, NULL);
    check_volume("random writes");
    if (iraid_flush_sync(vol) < 0)
        FAIL("flush");
    check_model();
    scrub_clean();
    return 0;
}

static int rebuilding(void)
{
    struct iraid_status st;

    if (iraid_get_status(vol, &st) < 0)
        FAIL("status");
    return st.missing > 0;
}

static void print_status(void)
{
    struct iraid_status st;

    iraid_get_status(vol, &st);
    for (uint32_t m = 0; m < st.nmembers; m++)
        printf("member %u: %s %" PRIu64 "/%" PRIu64 "\n", m,
               iraid_member_state_name(st.member[m].state), st.member[m].rebuilt,
               st.member[m].total);
}

static int cmd_degraded(void)
{
    unsigned seed = 7;
    char line[32];
    uint64_t t0;

    fill_volume(3);
    printf("streaming\n");
    fflush(stdout);
    random_writes(&seed, 0, evloop_now_ms() + STREAM_MS, NULL);
    print_status();
    if (!rebuilding())
        FAIL("no member failed during the stream");
    check_volume("degraded");
    printf("degraded-ok\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        FAIL("no go-ahead");
    t0 = evloop_now_ms();
    /* Writes go on while the member returns and is rebuilt. */
    random_writes(&seed, 50, 0, rebuilding);
    if (evloop_now_ms() - t0 > 60000)
        FAIL("rebuild took too long");
    printf("rebuild done after %" PRIu64 " ms\n", evloop_now_ms() - t0);
    print_status();
    check_volume("rebuilt");
    if (iraid_flush_sync(vol) < 0)
        FAIL("flush");
    check_model();
    scrub_clean();
    return 0;
}

/* Slot i: 3 blocks starting 5 blocks into chunk-sized cell i, so every
 * write is a partial-stripe write. */
static void slot_of(uint64_t i, uint64_t *off, uint64_t *len)
{
    *off = i * chunk + 5 * (uint64_t)bs;
    *len = 3 * (uint64_t)bs;
}

static int cmd_crash(void)
{
    uint64_t off, len, nslots = vsize / chunk;
    uint8_t *buf = malloc(chunk);
    int rc;

    if (!buf)
        FAIL("out of memory");
    for (uint64_t i = 0;; i++) {
        slot_of(i % nslots, &off, &len);
        iraid_pattern_fill(buf, off, len, (uint32_t)(i / nslots) + 1);
        if ((rc = iraid_write_sync(vol, off, buf, len)) < 0)
            FAIL("write: %s", strerror(-rc));
        if (i % 8 == 7) {
            if ((rc = iraid_flush_sync(vol)) < 0)
                FAIL("flush: %s", strerror(-rc));
            if (i + 1 >= nslots)
                return 0;
            printf("synced %" PRIu64 "\n", i + 1);
            fflush(stdout);
        }
    }
}

static int cmd_verify(uint64_t synced)
{
    uint64_t off, len;
    uint8_t *buf = malloc(chunk), *want = malloc(chunk);
    int rc;

    struct iraid_status st;

    if (!buf || !want)
        FAIL("out of memory");
    if (iraid_get_status(vol, &st) < 0)
        FAIL("status");
    if (st.missing == 0)
        scrub_clean();
    else
        printf("verify: %u member(s) missing: reading degraded\n", st.missing);
    for (uint64_t i = 0; i < synced; i++) {
        slot_of(i, &off, &len);
        iraid_pattern_fill(want, off, len, 1);
        if ((rc = iraid_read_sync(vol, off, buf, len)) < 0)
            FAIL("read slot %" PRIu64 ": %s", i, strerror(-rc));
        if (memcmp(buf, want, len) != 0)
            FAIL("synced slot %" PRIu64 " lost", i);
    }
    printf("verify: %" PRIu64 " synced slots intact\n", synced);
    return 0;
}

/* Reads chunk by chunk: EIO or the right bytes, never anything else. */
static int cmd_twofail(void)
{
    uint8_t *buf = malloc(chunk);
    uint64_t eio = 0, good = 0;
    char line[32];
    int rc;

    if (!buf)
        FAIL("out of memory");
    fill_volume(5);
    if (iraid_flush_sync(vol) < 0)
        FAIL("flush");
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        FAIL("no go-ahead");
    for (uint64_t off = 0; off < vsize; off += chunk) {
        uint64_t len = vsize - off < chunk ? vsize - off : chunk;
        rc = iraid_read_sync(vol, off, buf, len);
        if (rc == -EIO) {
            eio++;
            continue;
        }
        if (rc < 0)
            FAIL("read %" PRIu64 ": %s, not EIO", off, strerror(-rc));
        if (memcmp(buf, shadow + off, len) != 0)
            FAIL("read %" PRIu64 " returned wrong data with two members down", off);
        good++;
    }
    print_status();
    printf("twofail: %" PRIu64 " chunk reads failed with EIO, %" PRIu64 " read back exactly\n",
           eio, good);
    if (eio == 0)
        FAIL("no read failed with two members down");
    memset(buf, 0xA5, chunk);
    if ((rc = iraid_write_sync(vol, 0, buf, chunk)) != -EIO)
        FAIL("a write with two members down returned %s, not EIO", rc < 0 ? strerror(-rc) : "0");
    free(buf);
    return 0;
}

/* The superblock's stale mask (meta.h: u64 at byte 56) in a member's file. */
static uint64_t file_stale_mask(const char *file)
{
    uint8_t sb[64];
    uint64_t mask = 0;
    int fd = open(file, O_RDONLY);

    if (fd < 0)
        FAIL("open %s: %s", file, strerror(errno));
    if (pread(fd, sb, sizeof(sb), 0) != (ssize_t)sizeof(sb))
        FAIL("short read of %s", file);
    close(fd);
    for (int i = 7; i >= 0; i--)
        mask = mask << 8 | sb[56 + i];
    return mask;
}

static int cmd_flushlose(void)
{
    char line[32];
    int rc;

    fill_volume(9);
    if (iraid_flush_sync(vol) < 0)
        FAIL("flush");
    if (file_stale_mask(files[0]) != 0)
        FAIL("a member is stale before the test");
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        FAIL("no go-ahead");
    if ((rc = iraid_flush_sync(vol)) < 0)
        FAIL("flush losing member 1: %s", strerror(-rc));
    if (!(file_stale_mask(files[0]) >> 1 & 1))
        FAIL("the flush returned before member 1 was recorded stale on member 0");
    print_status();
    printf("flushlose: member 1 recorded stale before the flush returned\n");
    return 0;
}

/* RAID-5: a stream of whole-stripe writes through the first write-intent
 * region (4 MiB per member) sets the second region's bit ahead once past
 * the first's middle, before it writes there; then the stream goes on
 * into it, and every byte, the members and scrub match the model. */
static int cmd_ahead(void)
{
    uint64_t sb = chunk * (nm - 1), step = 8 * sb, region = (4u << 20) / chunk * sb, off;
    struct iraid_status st;
    int rc;

    if (region + step > vsize)
        FAIL("volume of %" PRIu64 " bytes too small for the stream", vsize);
    /* Known contents everywhere (earlier runs left another geometry),
     * then every bit cleared by the tick before the stream starts. */
    fill_volume(4);
    for (uint64_t t0 = evloop_now_ms(); iraid_get_status(vol, &st) == 0 && st.dirty_regions;)
        if (evloop_now_ms() - t0 > 30000 || evloop_run_once(loop, 100) < 0)
            FAIL("write-intent bits still set 30 s after the fill");
    for (off = 0; off < region; off += step) {
        iraid_pattern_fill(shadow + off, off, step, 5);
        if ((rc = iraid_write_sync(vol, off, shadow + off, step)) < 0)
            FAIL("write %" PRIu64 ": %s", off, strerror(-rc));
        if (iraid_get_status(vol, &st) < 0)
            FAIL("status");
        if (st.dirty_regions >= 2)
            break;
    }
    if (off >= region)
        FAIL("the stream reached the second region with its bit not set ahead");
    if (off + step < region / 2)
        FAIL("bit set ahead at %" PRIu64 ", before the region's middle", off);
    printf("ahead: the next region's bit set by the write at %" PRIu64 " of %" PRIu64 "\n",
           off, region);
    for (off += step; off + step <= region + step; off += step) {
        iraid_pattern_fill(shadow + off, off, step, 5);
        if ((rc = iraid_write_sync(vol, off, shadow + off, step)) < 0)
            FAIL("write %" PRIu64 ": %s", off, strerror(-rc));
    }
    check_volume("stream");
    if (iraid_flush_sync(vol) < 0)
        FAIL("flush");
    check_model();
    scrub_clean();
    return 0;
}

/* Overlapping writes in flight end in the order they were submitted,
 * whatever their stripe ranges: a small write holds stripe 3's lock, a
 * whole-stripe write of stripes 0-7 waits behind it, and a later small
 * write to stripe 5 must wait behind that one rather than pass it (else
 * the older whole-stripe write would overwrite it).  Rounds of the three
 * at growing offsets; the shadow takes each write's bytes in order. */
static int cmd_overlap(void)
{
    static struct slot slots[3];
    uint64_t sb = chunk * (nm - 1);

    for (int i = 0; i < 3; i++)
        if (posix_memalign((void **)&slots[i].buf, 64, 8 * sb) != 0)
            FAIL("out of memory");
    fill_volume(6);
    for (uint64_t base = 0; base + 8 * sb <= vsize; base += 8 * sb) {
        submit_write(&slots[0], base + 3 * sb, bs, (uint32_t)base + 1);
        submit_write(&slots[1], base, 8 * sb, (uint32_t)base + 2);
        submit_write(&slots[2], base + 5 * sb + bs, 2 * bs, (uint32_t)base + 3);
        while (outstanding > 0)
            evloop_run_once(loop, -1);
    }
    for (int i = 0; i < 3; i++)
        free(slots[i].buf);
    check_volume("overlapping writes");
    if (iraid_flush_sync(vol) < 0)
        FAIL("flush");
    check_model();
    scrub_clean();
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "";
    uint64_t arg = 0;
    int a = 2, rc;

    if (!strcmp(cmd, "model") || !strcmp(cmd, "verify"))
        arg = strtoull(argv[a++], NULL, 0);
    if (argc - a < 3 || argc - a - 2 > MAX_MEMBERS) {
        fprintf(stderr,
                "usage: %s model SEED|degraded|crash|verify N|twofail|flushlose|ahead|overlap "
                "LEVEL CHUNK "
                "URL:FILE...\n",
                argv[0]);
        return 2;
    }
    ipvfs_log_set_ident("iraid-model");
    /* libiscsi writes with writev(): a target killed under a write would
     * otherwise end this process with SIGPIPE instead of failing a member
     * (volume.h; ipvfs-server ignores it the same way). */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        FAIL("signal: %s", strerror(errno));
    cfg.level = atoi(argv[a]);
    chunk = strtoull(argv[a + 1], NULL, 0);
    for (int i = a + 2; i < argc; i++, nm++) {
        char *sep = strrchr(argv[i], ':');
        if (!sep)
            FAIL("argument %s is not URL:FILE", argv[i]);
        *sep = '\0';
        urls[nm] = argv[i];
        files[nm] = sep + 1;
    }
    cfg.nmembers = nm;
    cfg.urls = urls;
    cfg.chunk_size = chunk;
    cfg.timeout_ms = 2000;
    cfg.start_dirty_degraded = getenv("IRAID_MODEL_START_DIRTY_DEGRADED") != NULL;
    if (!(loop = evloop_create()))
        FAIL("evloop_create");
    open_volume();
    if (!(shadow = calloc(1, vsize)))
        FAIL("out of memory");
    if (!strcmp(cmd, "model"))
        rc = cmd_model((unsigned)arg);
    else if (!strcmp(cmd, "degraded"))
        rc = cmd_degraded();
    else if (!strcmp(cmd, "crash"))
        rc = cmd_crash();
    else if (!strcmp(cmd, "verify"))
        rc = cmd_verify(arg);
    else if (!strcmp(cmd, "twofail"))
        rc = cmd_twofail();
    else if (!strcmp(cmd, "flushlose"))
        rc = cmd_flushlose();
    else if (!strcmp(cmd, "ahead"))
        rc = cmd_ahead();
    else if (!strcmp(cmd, "overlap"))
        rc = cmd_overlap();
    else
        FAIL("unknown command %s", cmd);
    iraid_close(vol);
    evloop_destroy(loop);
    free(shadow);
    if (rc == 0)
        printf("%s passed\n", cmd);
    return rc;
}
