/* storage-small-tool: the L1's partial blocks (issue 27) in the datafile
 * store over a RAID-0 iRAID volume on real iSCSI targets, checked byte
 * for byte against an in-memory model.
 *
 *   storage-small-tool partial DIR URL...
 *   storage-small-tool place DIR URL...
 *
 * With a 1 MiB L1: writes inside one 64 KiB block at every sector offset
 * (0..127) to the block's end and, at every 8th offset, of 1, 3 and 64
 * sectors, into a block the L1 holds (read whole first); the same at every
 * 4th and 16th offset into a block it never saw; and at byte offsets and lengths that are no sector
 * multiples (the store's read-modify-write of the edge sectors).  Each
 * aligned write into an unseen block must be absorbed without a volume
 * read (writes_absorbed + 1, misses unchanged).  After each write the
 * written bytes are read back (a hit), the rest of the block (around the
 * cache: holes), and every fourth time the whole block (a merge of the
 * volume's bytes into the holes).  Then two writes queued at once that
 * overlap (two clients): the later one wins, in a cached block and in an
 * unseen one.  Then two writers' 8 KiB rows interleaved in 4 cached
 * blocks, each writer's in one 128 KiB write: every row absorbed, and
 * each writer's sync writes the 4 blocks back in one volume write (the
 * other writer's clean rows bridged).  Then 24 blocks of datafile 2 read
 * whole fill the cache with clean blocks, and two writers' rows into 4
 * blocks it does not hold are still all absorbed (clean victims) and go
 * back in one volume write.  Then a sync, everything checked, the store closed and
 * opened again (nothing cached: the volume's bytes), checked again: the
 * write-backs wrote the dirty sectors and never a hole's bytes.
 *
 * place (issue 27; targets that vouch for their room, so the store places
 * blocks by file offset: backend/dfstore/space.h): two "clients" write
 * the rows of a 3 x 3 tile pattern into datafile 1 (half blocks; the
 * first touches blocks 0, 2, 3, 5, 6, then datafile 2 takes a block, then
 * the second fills 1 and 4); after a sync the volume is read raw and each
 * block's bytes found: file blocks 0..6 must lie on consecutive volume
 * blocks from an aligned run (first touch put 1 and 4 after the others).
 * Reopened, a new block 8 must land in the same run (the runs are rebuilt
 * from the block map).  Truncated to 0 and synced, datafile 1's run must
 * be wholly free again: datafile 2's next region gets it.  Then datafile
 * 3 fills the volume to its last block (taking the blocks datafile 2's
 * runs hold in reserve); removed, datafile 2's next block still lands in
 * its run.
 * Exit 0 on success, 1 on failure. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"
#include "common/evloop.h"
#include "common/log.h"
#include "iraid/volume.h"

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define B DFSTORE_BLOCK
#define SECT 512u
#define NSECT (B / SECT)
#define CACHED_BLOCKS 48u           /* datafile 1: blocks read whole before a write */
#define FRESH_BLOCKS 320u           /* datafile 2: one unseen block per case */

struct ctx {
    struct evloop *loop;
    struct iraid_volume *vol;
    struct dfstore *ds;
    const char *dir;
    uint8_t *model[3];              /* datafiles 1 and 2 */
    uint64_t size[3];
    uint64_t next_fresh;            /* datafile 2's next unseen block */
    unsigned cases, absorbed_checked, merges;
};

struct wait {
    int pending;
    int status;
    uint64_t value;
};

static void wait_cb(int status, uint64_t value, void *user)
{
    struct wait *w = user;

    w->pending--;
    w->status = status;
    w->value = value;
}

static int finish(struct ctx *c, struct wait *w, int rc)
{
    if (rc < 0)
        return rc;
    while (w->pending > 0)
        evloop_run_once(c->loop, -1);
    return w->status;
}

static uint8_t pat(uint64_t h, uint64_t off, uint32_t seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ (h << 40) ^ ((uint64_t)seed << 20);

    return (uint8_t)((x >> 31 ^ x >> 11) | 1);
}

/* Fills buf with datafile h's bytes [off, off + len) of seed. */
static void fill(uint8_t *buf, uint64_t h, uint64_t off, uint64_t len, uint32_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = pat(h, off + i, seed);
}

static void model_put(struct ctx *c, uint64_t h, uint64_t off, const uint8_t *data, uint64_t len)
{
    memcpy(c->model[h] + off, data, len);
    if (off + len > c->size[h])
        c->size[h] = off + len;
}

/* Queues a write of seed's bytes at *p; the model takes them now (ops of
 * one datafile complete in order).  *p, like the data, must live until
 * the write completes (the store reads the pairs when the write starts). */
static int queue_write(struct ctx *c, uint64_t h, const struct ipvfs_pair *p, uint32_t seed,
                       struct wait *w, uint8_t **out_data)
{
    uint8_t *data = malloc(p->len);

    if (!data)
        FAIL("out of memory");
    fill(data, h, p->offset, p->len, seed);
    model_put(c, h, p->offset, data, p->len);
    *out_data = data;
    return dfstore_write(c->ds, h, p, 1, data, wait_cb, w);
}

static void write1(struct ctx *c, uint64_t h, uint64_t off, uint64_t len, uint32_t seed)
{
    struct wait w = { 1, 0, 0 };
    uint8_t *data;
    struct ipvfs_pair p = { off, len };
    int rc = finish(c, &w, queue_write(c, h, &p, seed, &w, &data));

    free(data);
    if (rc < 0)
        FAIL("write %" PRIu64 " %" PRIu64 "+%" PRIu64 ": %s", h, off, len, strerror(-rc));
}

/* Reads [off, off + len) of h and compares with the model. */
static void check(struct ctx *c, uint64_t h, uint64_t off, uint64_t len)
{
    struct ipvfs_pair p = { off, len };
    uint8_t *buf = malloc(len + 1);
    struct wait w = { 1, 0, 0 };
    int rc;

    if (!buf)
        FAIL("out of memory");
    if (len == 0) {
        free(buf);
        return;
    }
    memset(buf, 0xA5, len);
    if ((rc = finish(c, &w, dfstore_read(c->ds, h, &p, 1, buf, wait_cb, &w))) < 0)
        FAIL("read %" PRIu64 " %" PRIu64 "+%" PRIu64 ": %s", h, off, len, strerror(-rc));
    for (uint64_t i = 0; i < len; i++) {
        uint8_t want = off + i < c->size[h] ? c->model[h][off + i] : 0;
        if (buf[i] != want)
            FAIL("datafile %" PRIu64 " byte %" PRIu64 " (block %" PRIu64 " + %" PRIu64
                 "): 0x%02x, expected 0x%02x", h, off + i, (off + i) / B, (off + i) % B, buf[i],
                 want);
    }
    free(buf);
}

/* Both datafiles, in 1 MiB reads. */
static void check_all(struct ctx *c)
{
    for (uint64_t h = 1; h <= 2; h++)
        for (uint64_t off = 0; off < c->size[h]; off += 1u << 20)
            check(c, h, off, c->size[h] - off < (1u << 20) ? c->size[h] - off : 1u << 20);
}

static void sync_all(struct ctx *c)
{
    struct wait w = { 1, 0, 0 };
    int rc = finish(c, &w, dfstore_sync(c->ds, 0, wait_cb, &w));

    if (rc < 0)
        FAIL("sync: %s", strerror(-rc));
}

static void open_all(struct ctx *c, int argc, char **argv, uint64_t l1)
{
    struct iraid_config cfg = { .level = 0, .nmembers = (uint32_t)argc,
                                .urls = (const char *const *)argv, .timeout_ms = 5000 };
    int rc;

    if ((rc = iraid_open(c->loop, &cfg, &c->vol)) < 0)
        FAIL("iraid_open: %s", strerror(-rc));
    if ((rc = dfstore_open(c->loop, c->vol, c->dir, &c->ds)) < 0)
        FAIL("dfstore_open: %s", strerror(-rc));
    if (l1 && (rc = dfstore_set_l1(c->ds, l1)) < 0)
        FAIL("dfstore_set_l1: %s", strerror(-rc));
}

static void close_all(struct ctx *c)
{
    dfstore_close(c->ds);
    iraid_close(c->vol);
    c->ds = NULL;
    c->vol = NULL;
}

/* One case: bytes [in, in + len) of a block, cached (datafile 1, read
 * whole first) or unseen (datafile 2's next fresh block). */
static void one_case(struct ctx *c, int cached, uint64_t in, uint64_t len)
{
    uint64_t h = cached ? 1 : 2;
    uint64_t base = cached ? (uint64_t)(c->cases % CACHED_BLOCKS) * B : c->next_fresh++ * B;
    struct dfstore_stats a, b;
    int aligned = in % SECT == 0 && len % SECT == 0;

    if (!cached && c->next_fresh > FRESH_BLOCKS)
        FAIL("more cases than fresh blocks");
    if (cached)
        check(c, h, base, B);
    dfstore_stats(c->ds, &a);
    write1(c, h, base + in, len, 1000 + c->cases);
    dfstore_stats(c->ds, &b);
    if (!cached && aligned) {
        /* absorbed into a slot of holes, no fill: never read first */
        if (b.l1.writes_absorbed != a.l1.writes_absorbed + 1 || b.l1.misses != a.l1.misses)
            FAIL("a write of %" PRIu64 "+%" PRIu64 " into an unseen block: %" PRIu64
                 " absorbed, %" PRIu64 " misses (want 1, 0)", in, len,
                 b.l1.writes_absorbed - a.l1.writes_absorbed, b.l1.misses - a.l1.misses);
        c->absorbed_checked++;
    }
    check(c, h, base + in, len);                           /* the bytes written */
    check(c, h, base, in / SECT * SECT);                   /* before them */
    check(c, h, base + (in + len + SECT - 1) / SECT * SECT,
          B - (in + len + SECT - 1) / SECT * SECT);        /* after them */
    if (c->cases % 4 == 0) {
        check(c, h, base, B);                              /* the whole block */
        c->merges++;
    }
    c->cases++;
}

/* Two writes queued at once that overlap, the later one wins. */
static void overlap(struct ctx *c, int cached, uint64_t in1, uint64_t len1, uint64_t in2,
                    uint64_t len2)
{
    uint64_t h = cached ? 1 : 2;
    uint64_t base = cached ? (uint64_t)(c->cases % CACHED_BLOCKS) * B : c->next_fresh++ * B;
    struct ipvfs_pair p1 = { base + in1, len1 }, p2 = { base + in2, len2 };
    struct wait w1 = { 1, 0, 0 }, w2 = { 1, 0, 0 };
    uint8_t *d1, *d2;
    int rc1, rc2;

    if (cached)
        check(c, h, base, B);
    rc1 = queue_write(c, h, &p1, 5000 + c->cases, &w1, &d1);
    rc2 = queue_write(c, h, &p2, 6000 + c->cases, &w2, &d2);
    if ((rc1 = finish(c, &w1, rc1)) < 0 || (rc2 = finish(c, &w2, rc2)) < 0)
        FAIL("overlapping writes: %s", strerror(-(rc1 < 0 ? rc1 : rc2)));
    free(d1);
    free(d2);
    check(c, h, base + (in1 < in2 ? in1 : in2), len1 + len2);
    check(c, h, base, B);
    c->cases++;
}

/* Writes data as datafile h's bytes from 0 in 1 MiB calls: streams,
 * which on RAID-0 go past the L1 and leave it none of their blocks. */
static void stream_write(struct ctx *c, uint64_t h, const uint8_t *data, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += 1u << 20) {
        struct ipvfs_pair p = { off, len - off < (1u << 20) ? len - off : 1u << 20 };
        struct wait w = { 1, 0, 0 };
        int rc = finish(c, &w, dfstore_write(c->ds, h, &p, 1, data + off, wait_cb, &w));
        if (rc < 0)
            FAIL("the first write of datafile %" PRIu64 ": %s", h, strerror(-rc));
    }
    model_put(c, h, 0, data, len);
}

/* One write of several pairs of seed's bytes into datafile h. */
static void write_pairs(struct ctx *c, uint64_t h, const struct ipvfs_pair *pairs, uint32_t n,
                        uint32_t seed)
{
    uint64_t total = 0, at = 0;
    struct wait w = { 1, 0, 0 };
    uint8_t *data;
    int rc;

    for (uint32_t i = 0; i < n; i++)
        total += pairs[i].len;
    if (!(data = malloc(total)))
        FAIL("out of memory");
    for (uint32_t i = 0; i < n; i++) {
        fill(data + at, h, pairs[i].offset, pairs[i].len, seed);
        model_put(c, h, pairs[i].offset, data + at, pairs[i].len);
        at += pairs[i].len;
    }
    rc = finish(c, &w, dfstore_write(c->ds, h, pairs, n, data, wait_cb, &w));
    free(data);
    if (rc < 0)
        FAIL("write of %u pairs into datafile %" PRIu64 ": %s", n, h, strerror(-rc));
}

/* The volume block that holds datafile h's block fb (its bytes, as the
 * model has them, are unique), read raw from the volume after a sync. */
static uint64_t where(struct ctx *c, uint64_t h, uint64_t fb)
{
    uint64_t nvb = iraid_size(c->vol) / B;
    uint8_t *buf = malloc(B);
    int rc;

    if (!buf)
        FAIL("out of memory");
    for (uint64_t vb = 0; vb < nvb; vb++) {
        if ((rc = iraid_read_sync(c->vol, vb * B, buf, B)) < 0)
            FAIL("raw read of volume block %" PRIu64 ": %s", vb, strerror(-rc));
        if (memcmp(buf, c->model[h] + fb * B, B) == 0) {
            free(buf);
            return vb;
        }
    }
    FAIL("datafile %" PRIu64 " block %" PRIu64 " is nowhere on the volume", h, fb);
}

/* Runs the loop until the store has n blocks in use (freed blocks come
 * back after the commit and their discard), at most 10 s. */
static void wait_used(struct ctx *c, uint64_t n)
{
    uint64_t deadline = evloop_now_ms() + 10000;
    struct dfstore_stats st;

    for (dfstore_stats(c->ds, &st); st.blocks_used != n; dfstore_stats(c->ds, &st)) {
        if (evloop_now_ms() > deadline)
            FAIL("%" PRIu64 " blocks in use after 10 s, expected %" PRIu64, st.blocks_used, n);
        evloop_run_once(c->loop, 100);
    }
}

/* Seeds whose bytes differ from each other's at every offset (pat()
 * mixes a seed's bits from 11 up into the byte): where() tells the blocks
 * of two datafiles at the same offset apart. */
#define SEED(k) ((uint32_t)(k) << 11)

/* Writes datafile h (outside the model) until the volume is full: 1 MiB
 * calls, then single blocks, each until ENOSPC; then every block must be
 * in use (reserved ones given up). */
static void fill_up(struct ctx *c, uint64_t h)
{
    static uint8_t big[1u << 20];
    struct dfstore_stats st;
    uint64_t off = 0;

    memset(big, 0x77, sizeof(big));
    for (uint64_t chunk = sizeof(big); chunk >= B; chunk = chunk == B ? 0 : B) {
        for (;;) {
            struct ipvfs_pair p = { off, chunk };
            struct wait w = { 1, 0, 0 };
            int rc = finish(c, &w, dfstore_write(c->ds, h, &p, 1, big, wait_cb, &w));
            if (rc == -ENOSPC)
                break;
            if (rc < 0)
                FAIL("filling the volume at %" PRIu64 ": %s", off, strerror(-rc));
            off += chunk;
        }
    }
    dfstore_stats(c->ds, &st);
    if (st.blocks_used != st.blocks_total)
        FAIL("full at %" PRIu64 " of %" PRIu64 " blocks", st.blocks_used, st.blocks_total);
}

static void place(int argc, char **argv, struct ctx *c)
{
    enum { H = B / 2 };
    /* a file row is three 32 KiB tile rows: client A's rows lie in blocks
     * 0, 2, 3, 5, 6 (half of each), client B's fill the rest */
    static const struct ipvfs_pair a[] = {
        { 0, H }, { 2 * B + H, H }, { 3 * B, H }, { 5 * B + H, H }, { 6 * B, H },
    };
    static const struct ipvfs_pair b[] = {
        { H, H }, { B, B }, { 2 * B, H }, { 3 * B + H, H }, { 4 * B, B }, { 5 * B, H },
        { 6 * B + H, H },
    };
    struct wait w = { 1, 0, 0 };
    uint64_t v0, v2, vb;
    int rc;

    open_all(c, argc, argv, 0);
    if (!iraid_room_for_new_blocks(c->vol))
        FAIL("the targets do not vouch for their room: blocks are placed lowest free first, "
             "not by offset (run this on ipvfs-target LUNs with room)");
    write_pairs(c, 1, a, sizeof(a) / sizeof(a[0]), SEED(1));
    write1(c, 2, 0, B, SEED(2));
    write_pairs(c, 1, b, sizeof(b) / sizeof(b[0]), SEED(3));
    sync_all(c);
    check_all(c);
    v0 = where(c, 1, 0);
    if (v0 % 32)
        FAIL("datafile 1's block 0 on volume block %" PRIu64 ": not the start of a run", v0);
    for (uint64_t fb = 1; fb <= 6; fb++)
        if ((vb = where(c, 1, fb)) != v0 + fb)
            FAIL("datafile 1's block %" PRIu64 " on volume block %" PRIu64 ", expected %" PRIu64
                 " (next to block %" PRIu64 ")", fb, vb, v0 + fb, fb - 1);
    if ((vb = where(c, 2, 0)) >= v0 && vb < v0 + 32)
        FAIL("datafile 2's block on volume block %" PRIu64 ", inside datafile 1's run", vb);
    close_all(c);

    open_all(c, argc, argv, 0);
    write1(c, 2, B, B, SEED(4));
    write1(c, 1, 8 * B, B, SEED(5));
    sync_all(c);
    if ((vb = where(c, 1, 8)) != v0 + 8)
        FAIL("after a reopen, datafile 1's block 8 on volume block %" PRIu64 ", expected %" PRIu64
             " (its region's run)", vb, v0 + 8);

    /* truncate: the run goes back whole once the freed blocks are free */
    if ((rc = finish(c, &w, dfstore_truncate(c->ds, 1, 0, wait_cb, &w))) < 0)
        FAIL("truncate: %s", strerror(-rc));
    memset(c->model[1], 0, c->size[1]);
    c->size[1] = 0;
    sync_all(c);
    wait_used(c, 2);
    write1(c, 2, 32 * B + 5 * B, B, SEED(6));        /* datafile 2's region 1 */
    sync_all(c);
    if ((vb = where(c, 2, 37)) != v0 + 5)
        FAIL("datafile 2's new region on volume block %" PRIu64 ", expected %" PRIu64
             " (the run datafile 1 gave back)", vb, v0 + 5);

    /* the reserve gives way: datafile 3 fills every block, reserved ones too */
    fill_up(c, 3);
    check_all(c);
    w = (struct wait){ 1, 0, 0 };
    if ((rc = finish(c, &w, dfstore_remove(c->ds, 3, wait_cb, &w))) < 0)
        FAIL("remove datafile 3: %s", strerror(-rc));
    sync_all(c);
    wait_used(c, 3);
    v2 = where(c, 2, 0);
    write1(c, 2, 2 * B, B, SEED(7));
    sync_all(c);
    if ((vb = where(c, 2, 2)) != v2 + 2)
        FAIL("after the fill, datafile 2's block 2 on volume block %" PRIu64 ", expected %" PRIu64
             " (its run, given up and free again)", vb, v2 + 2);
    check_all(c);
    close_all(c);
    printf("place: datafile 1's blocks 0-8 on volume blocks %" PRIu64 "-%" PRIu64
           ", its run reused after truncate, the volume filled to its last block, all passed\n",
           v0, v0 + 8);
}

/* Two writers' 8 KiB rows interleaved in 4 cached blocks (16 KiB apart),
 * each writer's rows in one write of 128 KiB (a stream, the store's
 * DF_L1_STREAM_MIN): every row is absorbed (it went through to the volume
 * as a write each), and after each writer's sync the blocks go back in
 * one volume write, the other writer's clean rows bridged. */
static void rows(struct ctx *c)
{
    const uint64_t base = 40 * (uint64_t)B, row = 8192;
    struct ipvfs_pair p[16];
    struct dfstore_stats a, b;

    for (uint32_t i = 0; i < 4; i++)
        check(c, 1, base + i * (uint64_t)B, B);         /* cached whole */
    sync_all(c);                                        /* nothing else dirty */
    for (uint32_t w = 0; w < 2; w++) {
        for (uint32_t k = 0; k < 16; k++)
            p[k] = (struct ipvfs_pair){ base + k * 2 * row + w * row, row };
        dfstore_stats(c->ds, &a);
        write_pairs(c, 1, p, 16, 7000 + w);
        sync_all(c);
        dfstore_stats(c->ds, &b);
        if (b.l1.writes_absorbed - a.l1.writes_absorbed != 16)
            FAIL("writer %u's 16 rows in one write: %" PRIu64 " absorbed, want 16", w,
                 b.l1.writes_absorbed - a.l1.writes_absorbed);
        if (b.l1.writebacks - a.l1.writebacks != 4 || b.l1.writeback_ios - a.l1.writeback_ios != 1)
            FAIL("writer %u's rows went back as %" PRIu64 " volume writes of %" PRIu64
                 " blocks, want 1 of 4", w, b.l1.writeback_ios - a.l1.writeback_ios,
                 b.l1.writebacks - a.l1.writebacks);
        check(c, 1, base, 4 * (uint64_t)B);
    }
}

/* A cache full of another datafile's clean blocks (read whole, one by
 * one, then synced) takes two writers' 16 rows of 8 KiB each, every
 * writer's in one 128 KiB write, interleaved in 4 blocks it does not
 * hold: the rows evict clean blocks, all 32 are absorbed, and the sync
 * writes the 4 blocks back in one volume write (with free room alone as
 * the rule: 0 absorbed, each row a volume write). */
static void rows_clean_victims(struct ctx *c)
{
    const uint64_t base = 44 * (uint64_t)B, row = 8192;
    struct ipvfs_pair p[16];
    struct dfstore_stats a, b;

    for (uint32_t i = 0; i < 24; i++)
        check(c, 2, (FRESH_BLOCKS - 24 + i) * (uint64_t)B, B);
    sync_all(c);
    dfstore_stats(c->ds, &a);
    if (a.l1.resident < a.l1.capacity - a.l1.capacity / 4)
        FAIL("the L1 holds %" PRIu64 " of %" PRIu64 " blocks after 24 block reads", a.l1.resident,
             a.l1.capacity);
    for (uint32_t w = 0; w < 2; w++) {
        for (uint32_t k = 0; k < 16; k++)
            p[k] = (struct ipvfs_pair){ base + k * 2 * row + w * row, row };
        write_pairs(c, 1, p, 16, 7100 + w);
    }
    sync_all(c);
    dfstore_stats(c->ds, &b);
    if (b.l1.writes_absorbed - a.l1.writes_absorbed != 32)
        FAIL("2 writers' 16 rows into a cache full of clean blocks: %" PRIu64
             " absorbed, want 32", b.l1.writes_absorbed - a.l1.writes_absorbed);
    if (b.l1.writeback_ios - a.l1.writeback_ios != 1)
        FAIL("2 writers' 16 rows into a cache full of clean blocks went back as %" PRIu64
             " volume writes, want 1", b.l1.writeback_ios - a.l1.writeback_ios);
    check(c, 1, base, 4 * (uint64_t)B);
}

static void partial(int argc, char **argv, struct ctx *c)
{
    static const uint32_t lens[] = { 1, 3, 64 };
    static const struct { uint32_t in, len; } odd[] = {
        { 7, 300 }, { 7, 1000 }, { 512 + 100, 512 }, { 4096 - 1, 2 }, { 32768 + 5, 32763 },
        { B - 300, 300 }, { 1, B - 2 }, { 20000, 1 },
    };
    uint64_t fresh = FRESH_BLOCKS * (uint64_t)B;
    uint8_t *all = malloc(fresh);

    if (!all)
        FAIL("out of memory");
    open_all(c, argc, argv, 1u << 20);
    /* old bytes under every block */
    fill(all, 1, 0, CACHED_BLOCKS * (uint64_t)B, 1);
    stream_write(c, 1, all, CACHED_BLOCKS * (uint64_t)B);
    fill(all, 2, 0, fresh, 2);
    stream_write(c, 2, all, fresh);
    free(all);
    sync_all(c);
    for (uint32_t o = 0; o < NSECT; o++) {
        for (int cached = 0; cached < 2; cached++) {
            for (size_t k = 0; k <= sizeof(lens) / sizeof(lens[0]); k++) {
                uint32_t n = k < sizeof(lens) / sizeof(lens[0]) ? lens[k] : NSECT - o;
                if (o + n > NSECT || (k < sizeof(lens) / sizeof(lens[0]) && n == NSECT - o))
                    continue;
                /* The sample: to the block's end at every offset into a
                 * cached block, every 4th into an unseen one; the other
                 * lengths at every 8th and 16th (each case costs a few
                 * volume round trips: the test stays near a minute). */
                int last = k == sizeof(lens) / sizeof(lens[0]);
                if (o % (cached ? (last ? 1 : 8) : (last ? 4 : 16)))
                    continue;
                one_case(c, cached, (uint64_t)o * SECT, (uint64_t)n * SECT);
            }
        }
    }
    for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
        one_case(c, 0, odd[k].in, odd[k].len);
        one_case(c, 1, odd[k].in, odd[k].len);
    }
    overlap(c, 1, 1024, 8192, 4096, 8192);
    overlap(c, 0, 1024, 8192, 4096, 8192);
    overlap(c, 0, 30000, 5000, 28000, 4000);
    rows(c);
    rows_clean_victims(c);
    check_all(c);
    sync_all(c);
    check_all(c);
    close_all(c);
    open_all(c, argc, argv, 0);
    check_all(c);
    close_all(c);
    printf("partial: %u cases (%u absorbed into unseen blocks without a read, %u whole-block "
           "reads), %" PRIu64 " fresh blocks, all passed\n", c->cases, c->absorbed_checked,
           c->merges, c->next_fresh);
}

int main(int argc, char **argv)
{
    struct ctx c = { 0 };
    int rc = 0;

    if (argc < 4 || (strcmp(argv[1], "partial") != 0 && strcmp(argv[1], "place") != 0)) {
        fprintf(stderr, "usage: %s partial|place DIR URL...\n", argv[0]);
        return 2;
    }
    ipvfs_log_set_ident("small-test");
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return 2;
    c.dir = argv[2];
    c.model[1] = calloc(CACHED_BLOCKS, B);
    c.model[2] = calloc(FRESH_BLOCKS, B);
    if (!c.model[1] || !c.model[2] || !(c.loop = evloop_create()))
        FAIL("out of memory");
    if (strcmp(argv[1], "place") == 0)
        place(argc - 3, argv + 3, &c);
    else
        partial(argc - 3, argv + 3, &c);
    evloop_destroy(c.loop);
    free(c.model[1]);
    free(c.model[2]);
    return rc;
}
