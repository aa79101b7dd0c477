/* storage-dfstore-tool: the datafile store over a RAID-0 iRAID volume on
 * real iSCSI targets, checked against an in-memory model.
 *
 *   storage-dfstore-tool basic DIR URL...   write/read/holes/truncate/
 *                                           prealloc/remove/order/reopen/ENOSPC
 *   storage-dfstore-tool crash DIR URL...   sync, then change more and die
 *                                           by SIGKILL before any commit
 *   storage-dfstore-tool verify DIR URL...  after crash: synced data intact,
 *                                           nothing foreign exposed
 *   storage-dfstore-tool zeroed DIR URL...  on targets that are all zeros:
 *                                           new blocks are written without
 *                                           zero-fill, reused ones with it
 *   storage-dfstore-tool lend DIR URL...    sequential reads with read-ahead
 *                                           take prefetched blocks as loans
 *                                           (no copy), given back after the
 *                                           store closed too
 *   storage-dfstore-tool dead DIR URL...    prints "ready", waits for a line
 *                                           (a target is killed meanwhile):
 *                                           write and sync fail, close returns
 * Exit 0 on success, 1 on failure (crash: killed by SIGKILL). */
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
#define MODEL_MAX (4u << 20)
#define B DFSTORE_BLOCK

static struct evloop *loop;
static struct iraid_volume *vol;
static struct dfstore *ds;
static const char *dir;
static int open_zeroed;          /* the "zeroed" mode: dfstore_open_zeroed() */

struct model {
    uint64_t size;
    uint8_t bytes[MODEL_MAX];
};
static struct model models[10];  /* handles 1..9; check_all() covers 1..3 */

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

static int finish(struct wait *w, int rc)
{
    if (rc < 0)
        return rc;
    while (w->pending > 0)
        evloop_run_once(loop, -1);
    return w->status;
}

static uint8_t pat(uint64_t h, uint64_t off, uint32_t seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ (h << 40) ^ seed;
    return (uint8_t)((x >> 31 ^ x >> 11) | 1);   /* never zero: zeros mean "hole" */
}

static int do_write(uint64_t h, const struct ipvfs_pair *pairs, uint32_t n, uint32_t seed)
{
    uint64_t total = 0, at = 0;
    uint8_t *data;
    struct wait w = { 1, 0, 0 };
    int rc;

    for (uint32_t i = 0; i < n; i++)
        total += pairs[i].len;
    if (!(data = malloc(total + 1)))
        FAIL("out of memory");
    for (uint32_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < pairs[i].len; j++)
            data[at++] = pat(h, pairs[i].offset + j, seed);
    rc = finish(&w, dfstore_write(ds, h, pairs, n, data, wait_cb, &w));
    if (rc == 0) {
        if (w.value != total)
            FAIL("write of %" PRIu64 " bytes reported %" PRIu64, total, w.value);
        at = 0;
        for (uint32_t i = 0; i < n; i++) {
            memcpy(models[h].bytes + pairs[i].offset, data + at, pairs[i].len);
            at += pairs[i].len;
            if (pairs[i].len && pairs[i].offset + pairs[i].len > models[h].size)
                models[h].size = pairs[i].offset + pairs[i].len;
        }
    }
    free(data);
    return rc;
}

static void write1(uint64_t h, uint64_t off, uint64_t len, uint32_t seed)
{
    struct ipvfs_pair p = { off, len };
    int rc = do_write(h, &p, 1, seed);

    if (rc < 0)
        FAIL("write %" PRIu64 " %" PRIu64 "+%" PRIu64 ": %s", h, off, len, strerror(-rc));
}

/* Reads [off, off+len) and compares with the model (zeros past its end). */
static void check(uint64_t h, uint64_t off, uint64_t len)
{
    struct ipvfs_pair p = { off, len };
    uint8_t *buf = malloc(len + 1);
    struct wait w = { 1, 0, 0 };
    int rc;

    if (!buf)
        FAIL("out of memory");
    memset(buf, 0xA5, len);
    if ((rc = finish(&w, dfstore_read(ds, h, &p, 1, buf, wait_cb, &w))) < 0)
        FAIL("read %" PRIu64 ": %s", h, strerror(-rc));
    for (uint64_t i = 0; i < len; i++) {
        uint8_t want = off + i < models[h].size ? models[h].bytes[off + i] : 0;
        if (buf[i] != want)
            FAIL("datafile %" PRIu64 " byte %" PRIu64 ": 0x%02x, expected 0x%02x", h, off + i,
                 buf[i], want);
    }
    if (dfstore_size(ds, h) != models[h].size)
        FAIL("datafile %" PRIu64 " size %" PRIu64 ", expected %" PRIu64, h, dfstore_size(ds, h),
             models[h].size);
    free(buf);
}

static void check_all(void)
{
    for (uint64_t h = 1; h <= 3; h++)
        check(h, 0, models[h].size + 3 * B);
}

static void truncate_to(uint64_t h, uint64_t size)
{
    struct wait w = { 1, 0, 0 };
    int rc = finish(&w, dfstore_truncate(ds, h, size, wait_cb, &w));

    if (rc < 0 || w.value != size)
        FAIL("truncate %" PRIu64 " to %" PRIu64 ": %d, size %" PRIu64, h, size, rc, w.value);
    if (size < models[h].size)
        memset(models[h].bytes + size, 0, models[h].size - size);
    models[h].size = size;
}

static void sync_all(void)
{
    struct wait w = { 1, 0, 0 };
    int rc = finish(&w, dfstore_sync(ds, 0, wait_cb, &w));

    if (rc < 0)
        FAIL("sync: %s", strerror(-rc));
}

static void remove_df(uint64_t h)
{
    struct wait w = { 1, 0, 0 };
    int rc = finish(&w, dfstore_remove(ds, h, wait_cb, &w));

    if (rc < 0)
        FAIL("remove %" PRIu64 ": %s", h, strerror(-rc));
    memset(models[h].bytes, 0, models[h].size);
    models[h].size = 0;
}

static void open_all(int argc, char **argv)
{
    struct iraid_config cfg = { .level = 0, .nmembers = (uint32_t)argc,
                                .urls = (const char *const *)argv, .timeout_ms = 5000 };
    int rc;

    if (!loop && !(loop = evloop_create()))
        FAIL("evloop_create");
    if ((rc = iraid_open(loop, &cfg, &vol)) < 0)
        FAIL("iraid_open: %s", strerror(-rc));
    rc = open_zeroed ? dfstore_open_zeroed(loop, vol, dir, &ds) : dfstore_open(loop, vol, dir, &ds);
    if (rc < 0)
        FAIL("dfstore_open: %s", strerror(-rc));
}

static void close_all(void)
{
    dfstore_close(ds);
    iraid_close(vol);
    ds = NULL;
    vol = NULL;
}

/* Several ops on two datafiles in flight; each datafile's callbacks must
 * come in submission order. */
static int order_log[64], order_n;

static void order_cb(int status, uint64_t value, void *user)
{
    if (status < 0)
        FAIL("queued op %d: %s", (int)(intptr_t)user, strerror(-status));
    order_log[order_n++] = (int)(intptr_t)user;
}

static void test_order(void)
{
    static uint8_t data[3 * B];
    static struct ipvfs_pair pairs[8];
    uint8_t out[B];
    int last[3] = { -1, -1, -1 };

    memset(data, 0x5A, sizeof(data));
    for (int i = 0; i < 8; i++) {
        uint64_t h = 1 + i % 2;
        pairs[i] = (struct ipvfs_pair){ (uint64_t)i * 1000 + 17, 2 * B + 100 };
        if (i == 5) {
            if (dfstore_read(ds, h, &pairs[i], 1, out, order_cb, (void *)(intptr_t)i) < 0)
                FAIL("queue read");
            pairs[i].len = 100;
            continue;
        }
        if (dfstore_write(ds, h, &pairs[i], 1, data, order_cb, (void *)(intptr_t)i) < 0)
            FAIL("queue write");
    }
    pairs[5].len = 100;
    if (dfstore_read(ds, 2, &pairs[5], 1, out, order_cb, (void *)(intptr_t)8) < 0)
        FAIL("queue read");
    while (order_n < 9)
        evloop_run_once(loop, -1);
    for (int i = 0; i < 9; i++) {
        int id = order_log[i], h = id == 8 ? 2 : 1 + id % 2;
        if (id <= last[h])
            FAIL("datafile %d: op %d completed after op %d", h, id, last[h]);
        last[h] = id;
    }
    for (int i = 0; i < 8; i++)
        if (i != 5) {
            uint64_t h = 1 + i % 2;
            memset(models[h].bytes + pairs[i].offset, 0x5A, 2 * B + 100);
            if (pairs[i].offset + 2 * B + 100 > models[h].size)
                models[h].size = pairs[i].offset + 2 * B + 100;
        }
    check_all();
}

/* Write gathering: two "clients" write alternate rows of the same blocks
 * (as tile list I/O does), queued at once: new blocks, then existing ones,
 * sector-aligned and not; an overlapping write queued among them must not
 * join and must win over the earlier rows.  Completion order, data and
 * the gathered count are checked. */
struct gq {
    struct ipvfs_pair pairs[8];
    uint8_t *data;
};

static void queue_rows(struct gq *q, uint64_t h, uint64_t first, uint32_t row, uint32_t nrows,
                       uint32_t seed, int id)
{
    uint64_t at = 0;

    if (!(q->data = malloc((size_t)row * nrows)))
        FAIL("out of memory");
    for (uint32_t i = 0; i < nrows; i++) {
        q->pairs[i] = (struct ipvfs_pair){ first + 2ull * i * row, row };
        for (uint32_t j = 0; j < row; j++)
            q->data[at++] = pat(h, q->pairs[i].offset + j, seed);
        memcpy(models[h].bytes + q->pairs[i].offset, q->data + at - row, row);
        if (q->pairs[i].offset + row > models[h].size)
            models[h].size = q->pairs[i].offset + row;
    }
    if (dfstore_write(ds, h, q->pairs, nrows, q->data, order_cb, (void *)(intptr_t)id) < 0)
        FAIL("queue rows %d", id);
}

static void test_gather(void)
{
    static const struct { uint32_t row; uint64_t base; } rounds[] = {
        { 18432, 20 * B },        /* new blocks, sector-aligned rows */
        { 18432, 20 * B },        /* the same blocks, now existing */
        { 5000, 20 * B + 3 },     /* existing, unaligned: read-modify-write */
    };
    struct dfstore_stats before, after;
    struct gq q[7];

    dfstore_stats(ds, &before);
    for (size_t r = 0; r < sizeof(rounds) / sizeof(rounds[0]); r++) {
        uint32_t row = rounds[r].row;
        order_n = 0;
        queue_rows(&q[0], 2, rounds[r].base, row, 8, 30 + (uint32_t)r, 0);
        queue_rows(&q[1], 2, rounds[r].base + row, row, 8, 40 + (uint32_t)r, 1);
        queue_rows(&q[2], 2, rounds[r].base + 16ull * row, row, 8, 50 + (uint32_t)r, 2);
        queue_rows(&q[3], 2, rounds[r].base + 17ull * row, row, 8, 60 + (uint32_t)r, 3);
        /* overlaps q[0]'s second row and q[1]'s first: not in q[1]'s group */
        queue_rows(&q[4], 2, rounds[r].base + row + 7, 100, 1, 70 + (uint32_t)r, 4);
        queue_rows(&q[5], 2, rounds[r].base + 32ull * row, row, 4, 80 + (uint32_t)r, 5);
        queue_rows(&q[6], 2, rounds[r].base + 33ull * row, row, 4, 90 + (uint32_t)r, 6);
        while (order_n < 7)
            evloop_run_once(loop, -1);
        for (int i = 0; i < 7; i++) {
            if (order_log[i] != i)
                FAIL("gathered writes: completion %d was op %d", i, order_log[i]);
            free(q[i].data);
        }
        check_all();
    }
    dfstore_stats(ds, &after);
    /* q[0] starts alone when queued; per round q[2..3] ride with q[1],
     * q[4] (apart from q[1]) leads q[5..6] */
    if (after.writes_gathered - before.writes_gathered != 3 * 4)
        FAIL("%" PRIu64 " writes gathered, expected 12",
             after.writes_gathered - before.writes_gathered);
}

/* Overlapping reads: reads of one datafile queued behind a running read
 * run with it (reads_overlapped counts them), yet every operation still
 * completes in submission order; a write queued among them waits for the
 * reads before it (they see the old bytes) and the read behind it sees
 * the new ones. */
static void test_read_overlap(void)
{
    enum { NR = 4, LEN = 3 * B + 1000 };
    static uint8_t out[NR + 1][LEN], wdata[LEN];
    struct ipvfs_pair rp = { 7 * B + 300, LEN }, wp = rp;
    struct dfstore_stats before, after;
    uint8_t old[LEN];

    write1(1, rp.offset, LEN, 51);
    memcpy(old, models[1].bytes + rp.offset, LEN);
    for (uint32_t j = 0; j < LEN; j++)
        wdata[j] = pat(1, rp.offset + j, 52);
    dfstore_stats(ds, &before);
    order_n = 0;
    for (int i = 0; i < NR; i++)
        if (dfstore_read(ds, 1, &rp, 1, out[i], order_cb, (void *)(intptr_t)i) < 0)
            FAIL("queue read %d", i);
    if (dfstore_write(ds, 1, &wp, 1, wdata, order_cb, (void *)(intptr_t)NR) < 0)
        FAIL("queue write");
    if (dfstore_read(ds, 1, &rp, 1, out[NR], order_cb, (void *)(intptr_t)(NR + 1)) < 0)
        FAIL("queue read behind the write");
    dfstore_stats(ds, &after);
    /* the reads behind the first started at once; the last waits */
    if (after.reads_overlapped - before.reads_overlapped != NR - 1)
        FAIL("%" PRIu64 " reads overlapped, expected %d",
             after.reads_overlapped - before.reads_overlapped, NR - 1);
    while (order_n < NR + 2)
        evloop_run_once(loop, -1);
    for (int i = 0; i < NR + 2; i++)
        if (order_log[i] != i)
            FAIL("overlapping reads: completion %d was op %d", i, order_log[i]);
    for (int i = 0; i < NR; i++)
        if (memcmp(out[i], old, LEN) != 0)
            FAIL("read %d queued before the write saw other bytes", i);
    if (memcmp(out[NR], wdata, LEN) != 0)
        FAIL("the read behind the write missed its bytes");
    memcpy(models[1].bytes + rp.offset, wdata, LEN);
    check_all();
}

static void test_enospc(void)
{
    struct dfstore_stats st;
    uint64_t off = 0, chunk = 4u << 20;
    static uint8_t big[4u << 20];
    struct ipvfs_pair p;
    struct wait w;
    int rc = 0;

    memset(big, 0x77, sizeof(big));
    /* Handle 9 is outside the model; fill the volume with it. */
    while (rc == 0) {
        w = (struct wait){ 1, 0, 0 };
        p = (struct ipvfs_pair){ off, chunk };
        rc = finish(&w, dfstore_write(ds, 9, &p, 1, big, wait_cb, &w));
        off += chunk;
        if (off > (1ull << 34))
            FAIL("the volume never filled up");
    }
    if (rc != -ENOSPC)
        FAIL("writing past full: %s, expected ENOSPC", strerror(-rc));
    dfstore_stats(ds, &st);
    printf("ENOSPC after %" PRIu64 " MiB; %" PRIu64 "/%" PRIu64 " blocks used\n", off >> 20,
           st.blocks_used, st.blocks_total);
    /* Existing data survived, writes that fit into existing blocks work. */
    check_all();
    write1(1, 5, 100, 41);
    check_all();
    /* Freed space is reusable once the removal is committed. */
    w = (struct wait){ 1, 0, 0 };
    if (finish(&w, dfstore_remove(ds, 9, wait_cb, &w)) < 0)
        FAIL("remove the filler");
    sync_all();
    write1(3, 0, 3 * B, 42);
    check_all();
}

static void basic(int argc, char **argv)
{
    struct ipvfs_pair lst[5];
    struct dfstore_stats st;

    open_all(argc, argv);
    /* odd offsets across block boundaries; a hole before a far write */
    write1(1, 3, 1000, 1);
    write1(1, B - 7, 2 * B + 20, 2);
    write1(2, 3 * B + 511, 513, 3);
    write1(2, 0, 512, 4);                     /* sector-exact, existing block later */
    check_all();
    /* list I/O: several pairs in one block, overlapping (later wins) */
    lst[0] = (struct ipvfs_pair){ 100, 50 };
    lst[1] = (struct ipvfs_pair){ 120, 300 };
    lst[2] = (struct ipvfs_pair){ 7 * B + 9, 10 };
    lst[3] = (struct ipvfs_pair){ 7 * B + 600, 1 };
    lst[4] = (struct ipvfs_pair){ 110, 0 };
    if (do_write(3, lst, 5, 5) < 0)
        FAIL("list write");
    if (do_write(1, lst, 4, 6) < 0)           /* into existing blocks: RMW */
        FAIL("list write into existing blocks");
    check_all();
    /* list I/O, pieces in order: into a new block at odd offsets (written
     * whole from the request, zeros in the gaps), then into that existing
     * block sector-aligned (written run by run, the gaps keep old bytes;
     * two adjacent pieces make one run) and one crossing into the next */
    lst[0] = (struct ipvfs_pair){ 12 * B + 5, 100 };
    lst[1] = (struct ipvfs_pair){ 12 * B + 300, 1000 };
    lst[2] = (struct ipvfs_pair){ 12 * B + 5000, 20 };
    if (do_write(2, lst, 3, 10) < 0)
        FAIL("ordered list write into a new block");
    check_all();
    lst[0] = (struct ipvfs_pair){ 12 * B + 512, 1024 };
    lst[1] = (struct ipvfs_pair){ 12 * B + 4096, 512 };
    lst[2] = (struct ipvfs_pair){ 12 * B + 4608, 1024 };
    lst[3] = (struct ipvfs_pair){ 13 * B - 1024, 2048 };
    if (do_write(2, lst, 4, 11) < 0)
        FAIL("sector-aligned list write into an existing block");
    check_all();
    /* truncate: shrink to an odd size, then extend past it by a write */
    truncate_to(1, B + 333);
    check_all();
    write1(1, 2 * B + 5, 10, 7);
    check_all();
    truncate_to(2, 10 * B + 1);               /* grow: a hole */
    check_all();
    truncate_to(2, 0);
    check_all();
    write1(2, 700, 4000, 8);
    /* prealloc: size grows, content stays zero */
    {
        struct wait w = { 1, 0, 0 };
        if (finish(&w, dfstore_prealloc(ds, 3, 9 * B + 5, wait_cb, &w)) < 0 || w.value != 9 * B + 5)
            FAIL("prealloc");
        models[3].size = 9 * B + 5;
    }
    check_all();
    test_order();
    test_gather();
    test_read_overlap();
    /* remove */
    write1(9, 0, B, 9);
    remove_df(9);
    dfstore_stats(ds, &st);
    if (st.datafiles != 3 || dfstore_size(ds, 9) != 0)
        FAIL("after remove: %" PRIu64 " datafiles", st.datafiles);
    /* bad arguments */
    {
        struct ipvfs_pair bad = { UINT64_MAX - 5, 10 };
        uint8_t x[16];
        if (dfstore_write(ds, 1, &bad, 1, x, wait_cb, NULL) >= 0 ||
            dfstore_write(ds, 0, lst, 1, x, wait_cb, NULL) != -EINVAL ||
            dfstore_read(ds, 1, lst, 1, NULL, wait_cb, NULL) != -EINVAL)
            FAIL("bad arguments accepted");
    }
    sync_all();
    close_all();
    printf("reopen after close\n");
    open_all(argc, argv);
    check_all();
    test_enospc();
    close_all();
    open_all(argc, argv);
    check_all();
    close_all();
    printf("dfstore basic test passed\n");
}

/* Synced: datafile 1 (pattern seed 11), 2, and a filler (4) that leaves
 * two blocks free.  Then, unsynced: truncate 1 to zero, whose blocks must
 * stay reserved until a commit, so the 8-block write of datafile 3 must
 * fail with ENOSPC rather than take them; overwrite part of 2; and die
 * before any commit. */
static void crash(int argc, char **argv)
{
    struct dfstore_stats st;
    struct ipvfs_pair p = { 0, 8 * B };
    uint64_t left;
    int rc;

    open_all(argc, argv);
    write1(1, 0, 6 * B + 123, 11);
    write1(2, 1000, 3 * B, 12);
    dfstore_stats(ds, &st);
    for (left = st.blocks_total - st.blocks_used - 2; left > 0;) {
        uint64_t n = left < 64 ? left : 64;
        write1(4, (st.blocks_total - st.blocks_used - 2 - left) * B, n * B, 15);
        left -= n;
    }
    sync_all();
    truncate_to(1, 0);
    if ((rc = do_write(3, &p, 1, 13)) != -ENOSPC)
        FAIL("write into blocks freed but not committed: %s, expected ENOSPC", strerror(-rc));
    write1(3, 0, 2 * B, 13);
    write1(2, 1000, 100, 14);
    fflush(stdout);
    raise(SIGKILL);
}

static void verify(int argc, char **argv)
{
    uint64_t sz[4];
    static uint8_t buf[16 * B];

    open_all(argc, argv);
    for (uint64_t h = 1; h <= 3; h++) {
        struct ipvfs_pair p = { 0, sizeof(buf) };
        struct wait w = { 1, 0, 0 };
        sz[h] = dfstore_size(ds, h);
        if (finish(&w, dfstore_read(ds, h, &p, 1, buf, wait_cb, &w)) < 0)
            FAIL("read %" PRIu64, h);
        for (uint64_t i = 0; i < sizeof(buf); i++) {
            int ok = buf[i] == 0;
            if (h == 1)     /* synced content, or the committed truncate */
                ok = i < sz[1] ? buf[i] == pat(1, i, 11) : ok;
            else if (h == 2) /* synced content, or the unsynced overwrite */
                ok = i >= 1000 && i < 1000 + 3 * B
                         ? buf[i] == pat(2, i, 12) || (i < 1100 && buf[i] == pat(2, i, 14))
                         : ok;
            else            /* absent, or its own bytes: never datafile 1's */
                ok = ok || (i < sz[3] && buf[i] == pat(3, i, 13));
            if (!ok)
                FAIL("after crash: datafile %" PRIu64 " byte %" PRIu64 " = 0x%02x (size %" PRIu64
                     ")", h, i, buf[i], sz[h]);
        }
    }
    if (sz[1] != 6 * B + 123 && sz[1] != 0)
        FAIL("datafile 1 size %" PRIu64 " after crash", sz[1]);
    if (sz[2] != 1000 + 3 * B)
        FAIL("synced datafile 2 has size %" PRIu64, sz[2]);
    printf("after crash: sizes %" PRIu64 " %" PRIu64 " %" PRIu64 "; synced data intact\n", sz[1],
           sz[2], sz[3]);
    close_all();
}

static void dead(int argc, char **argv)
{
    struct ipvfs_pair p = { 0, 4 * B };
    struct wait w = { 1, 0, 0 };
    char line[16];
    int rc;

    open_all(argc, argv);
    write1(1, 0, B, 21);
    sync_all();
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof(line), stdin))
        FAIL("no go-ahead on stdin");
    if ((rc = do_write(1, &p, 1, 22)) >= 0)
        FAIL("write with a dead member succeeded");
    printf("write with a dead member: %s\n", strerror(-rc));
    if ((rc = finish(&w, dfstore_sync(ds, 0, wait_cb, &w))) >= 0)
        FAIL("sync with a dead member succeeded");
    printf("sync with a dead member: %s\n", strerror(-rc));
    close_all();
    printf("closed\n");
}

/* dfstore_open_zeroed() on members that are all zeros: a partial write to
 * a never used block writes its sectors only (zero_fill_bytes grows by
 * less than a block), gathered rows too; once a remove freed the blocks,
 * a new write to a reused block zero-fills it again, and the old bytes
 * never show through. */
static void zeroed(int argc, char **argv)
{
    struct dfstore_stats a, b;
    struct gq q[2];

    open_zeroed = 1;
    open_all(argc, argv);
    dfstore_stats(ds, &a);
    write1(1, 1000, 5000, 61);                  /* block 0 of datafile 1, partly */
    order_n = 0;
    queue_rows(&q[0], 1, 2 * B + 512, 18432, 3, 62, 0);   /* rows of two "clients" */
    queue_rows(&q[1], 1, 2 * B + 512 + 18432, 18432, 3, 63, 1);
    while (order_n < 2)
        evloop_run_once(loop, -1);
    free(q[0].data);
    free(q[1].data);
    dfstore_stats(ds, &b);
    if (b.zero_fill_bytes - a.zero_fill_bytes >= 4 * 4096)
        FAIL("new blocks of a zero volume: %" PRIu64 " bytes of zero-fill",
             b.zero_fill_bytes - a.zero_fill_bytes);
    printf("new blocks: %" PRIu64 " bytes of zero-fill\n", b.zero_fill_bytes - a.zero_fill_bytes);
    check_all();
    sync_all();
    remove_df(1);
    sync_all();                                 /* the freed blocks are free now */
    dfstore_stats(ds, &a);
    write1(2, 3000, 100, 64);                   /* reuses a block datafile 1 wrote */
    dfstore_stats(ds, &b);
    if (b.zero_fill_bytes - a.zero_fill_bytes < B - 4096)
        FAIL("a reused block: only %" PRIu64 " bytes of zero-fill",
             b.zero_fill_bytes - a.zero_fill_bytes);
    check_all();                                /* zeros, not datafile 1's bytes */
    close_all();
    open_zeroed = 0;                            /* not new any more: plain open */
    open_all(argc, argv);
    check_all();
    close_all();
    printf("zeroed: all passed\n");
}

/* Checks a read of [off, off + len) into out (filled with 0xEE before):
 * each loan's block holds the model's bytes and its place in out was left
 * alone (no copy); the rest of out holds the model's bytes. */
static void check_lent(const uint8_t *out, uint64_t off, uint64_t len,
                       const struct df_l1_loans *loans)
{
    static uint8_t lent_at[MODEL_MAX / B];

    memset(lent_at, 0, sizeof(lent_at));
    for (uint32_t i = 0; i < loans->n; i++) {
        uint64_t at = (uint64_t)(loans->v[i].dst - out);
        if (at % B || at + B > len || lent_at[at / B]++)
            FAIL("loan %u at %" PRIu64 " of a %" PRIu64 "-byte read", i, at, len);
        if (memcmp(loans->v[i].src, models[4].bytes + off + at, B) != 0)
            FAIL("lent block at %" PRIu64 ": wrong bytes", off + at);
        for (uint64_t j = 0; j < B; j++)
            if (out[at + j] != 0xEE)
                FAIL("lent block at %" PRIu64 " was copied as well", off + at);
    }
    for (uint64_t at = 0; at < len; at += B)
        if (!lent_at[at / B] && memcmp(out + at, models[4].bytes + off + at, B) != 0)
            FAIL("copied block at %" PRIu64 ": wrong bytes", off + at);
}

/* Loans (l1cache.h): a stream of 256 KiB reads through the L1 with
 * read-ahead.  The reads after the first ones find their blocks prefetched
 * and take them as loans; one read's loans are kept across dfstore_close
 * and must still hold the bytes (the slots' memory outlives the store). */
static void lend(int argc, char **argv)
{
    enum { RD = 4 * B };
    static uint8_t out[RD];
    struct df_l1_loans keep = { 0 };
    struct dfstore_stats st;
    uint64_t keep_off = 0, lent = 0;
    int rc;

    open_all(argc, argv);
    if ((rc = dfstore_set_l1(ds, 16u << 20)) < 0 || (rc = dfstore_set_readahead(ds, 1u << 20)) < 0)
        FAIL("L1 with read-ahead: %s", strerror(-rc));
    write1(4, 0, MODEL_MAX, 61);
    sync_all();
    for (uint64_t off = 0; off < MODEL_MAX; off += RD) {
        struct ipvfs_pair p = { off, RD };
        struct df_l1_loans loans = { 0 };
        struct wait w = { 1, 0, 0 };
        memset(out, 0xEE, sizeof(out));
        rc = finish(&w, dfstore_read_lend(ds, 4, &p, 1, DFSTORE_RA_DEFAULT, out, &loans,
                                          wait_cb, &w));
        if (rc < 0)
            FAIL("read at %" PRIu64 ": %s", off, strerror(-rc));
        check_lent(out, off, RD, &loans);
        lent += loans.n;
        if (keep.n == 0 && loans.n > 0 && off >= MODEL_MAX / 2) {
            keep = loans;
            keep_off = off;
        } else {
            df_l1_loans_settle(&loans);
            if (memcmp(out, models[4].bytes + off, RD) != 0)
                FAIL("read at %" PRIu64 ": wrong bytes once its loans were copied", off);
        }
    }
    dfstore_stats(ds, &st);
    if (lent == 0 || keep.n == 0 || st.l1.readahead_lent != lent)
        FAIL("%" PRIu64 " blocks lent (the L1 counted %" PRIu64 "), %u kept", lent,
             st.l1.readahead_lent, keep.n);
    close_all();
    memset(out, 0xEE, sizeof(out));
    check_lent(out, keep_off, RD, &keep);    /* the store is closed: still valid */
    df_l1_loans_return(&keep);
    printf("lend: %" PRIu64 " of %u blocks lent, all passed\n", lent, MODEL_MAX / B);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s basic|crash|verify|zeroed|lend|dead DIR URL...\n", argv[0]);
        return 2;
    }
    ipvfs_log_set_ident("dfstore-test");
    /* iraid/volume.h: libiscsi writes with writev(), so a write to a
     * member that died would end this process with SIGPIPE instead of
     * failing the member ("dead" kills one). */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return 2;
    dir = argv[2];
    if (strcmp(argv[1], "basic") == 0)
        basic(argc - 3, argv + 3);
    else if (strcmp(argv[1], "crash") == 0)
        crash(argc - 3, argv + 3);
    else if (strcmp(argv[1], "verify") == 0)
        verify(argc - 3, argv + 3);
    else if (strcmp(argv[1], "zeroed") == 0)
        zeroed(argc - 3, argv + 3);
    else if (strcmp(argv[1], "lend") == 0)
        lend(argc - 3, argv + 3);
    else if (strcmp(argv[1], "dead") == 0)
        dead(argc - 3, argv + 3);
    else
        FAIL("unknown mode %s", argv[1]);
    evloop_destroy(loop);
    return 0;
}
