/* storage-small-wait: a write of interleaved rows waits for the writes of
 * its datafile on their way (dfstore_set_arrivals, issue 27), in the
 * datafile store over a RAID-0 iRAID volume on real iSCSI targets, every
 * byte checked against an in-memory model.
 *
 *   storage-small-wait DIR URL...
 *
 * The test plays the I/O node: its arrivals function answers, per
 * datafile, what the test says is on its way.  Rows are half blocks
 * (32 KiB): writer A the first half of each of 16 blocks, writer B the
 * second half, each in one write of 16 pairs.  Cases, each checked by the
 * store's counters (writes_waited, waits_timed_out, writes_gathered) and
 * the bytes read back:
 *   partner   A with one write on its way waits; B arrives with none
 *             left: both go in one group, no timer.
 *   more      A waits; C (rows elsewhere) arrives with another still on
 *             its way: A waits on; B arrives last: a group of three.
 *   timer     A waits and nothing comes: the timer starts it.
 *   read      A waits; a read of the datafile arrives: A starts at once
 *             and the read returns A's bytes.
 *   sync      A waits; a sync of every datafile starts it.
 *   whole     a write of whole blocks never waits;
 *   range     nor one range that starts and ends inside blocks (what a
 *             two-phase aggregator writes).
 *   other     a write on its way for another datafile: A does not wait.
 *   behind    A queued behind a running write of whole blocks, with a
 *             write on its way once that one is done: A, then alone at
 *             the head, waits, and B joins it.
 *   none      no arrivals function set: never waits.
 * Then a sync, the store closed and opened again, and every byte checked
 * from the volume.  Exit 0 on success, 1 on failure. */
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
#define ROWS 16u                    /* blocks a writer's rows cover */
#define FILE_BLOCKS 64u
#define NFILES 3u                   /* datafiles 1 and 2 (0 unused) */

struct ctx {
    struct evloop *loop;
    struct iraid_volume *vol;
    struct dfstore *ds;
    const char *dir;
    uint32_t arriving[NFILES];      /* what the arrivals function answers */
    uint8_t *model[NFILES];
    uint64_t size[NFILES];
    uint32_t seed;
};

/* One write or read in flight: its pairs and bytes live until it is done. */
struct io {
    struct ipvfs_pair pairs[ROWS];
    uint32_t npairs;
    uint8_t *data;
    int pending;
    int status;
};

static uint32_t arrivals(void *user, uint64_t handle)
{
    const struct ctx *c = user;

    return handle < NFILES ? c->arriving[handle] : 0;
}

static void io_cb(int status, uint64_t value, void *user)
{
    struct io *io = user;

    (void)value;
    io->pending = 0;
    io->status = status;
}

static uint8_t pat(uint64_t h, uint64_t off, uint32_t seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ (h << 40) ^ ((uint64_t)seed << 20);

    return (uint8_t)((x >> 31 ^ x >> 11) | 1);
}

/* Rows of ROWS blocks from block `first`: the half `half` (0, 1) of each;
 * or ROWS whole blocks (half 2); or one range as long, from the middle of
 * block `first` (half 3). */
static void rows(struct io *io, uint64_t first, int half)
{
    io->npairs = half >= 2 ? 1 : ROWS;
    for (uint32_t i = 0; i < io->npairs; i++)
        io->pairs[i] = half >= 2 ? (struct ipvfs_pair){ first * B + (half == 3) * (B / 2),
                                                        (uint64_t)ROWS * B }
                                 : (struct ipvfs_pair){ (first + i) * B + half * (B / 2), B / 2 };
}

/* Queues io's write to datafile h; the model takes the bytes now (the
 * operations of one datafile complete in order). */
static void start_write(struct ctx *c, uint64_t h, struct io *io)
{
    uint64_t total = 0, done = 0;
    int rc;

    for (uint32_t i = 0; i < io->npairs; i++)
        total += io->pairs[i].len;
    if (!(io->data = malloc(total)))
        FAIL("out of memory");
    c->seed++;
    for (uint32_t i = 0; i < io->npairs; i++) {
        const struct ipvfs_pair *p = &io->pairs[i];
        for (uint64_t k = 0; k < p->len; k++)
            io->data[done + k] = c->model[h][p->offset + k] = pat(h, p->offset + k, c->seed);
        done += p->len;
        if (p->offset + p->len > c->size[h])
            c->size[h] = p->offset + p->len;
    }
    io->pending = 1;
    if ((rc = dfstore_write(c->ds, h, io->pairs, io->npairs, io->data, io_cb, io)) < 0)
        FAIL("write: %s", strerror(-rc));
}

static void finish(struct ctx *c, struct io *io, const char *what)
{
    while (io->pending)
        evloop_run_once(c->loop, -1);
    free(io->data);
    io->data = NULL;
    if (io->status < 0)
        FAIL("%s: %s", what, strerror(-io->status));
}

/* Reads [off, off + len) of h and compares it with the model. */
static void check(struct ctx *c, uint64_t h, uint64_t off, uint64_t len)
{
    struct io io = { .pairs = { { off, len } }, .npairs = 1, .pending = 1 };
    int rc;

    if (!(io.data = malloc(len)))
        FAIL("out of memory");
    if ((rc = dfstore_read(c->ds, h, io.pairs, 1, io.data, io_cb, &io)) < 0)
        FAIL("read: %s", strerror(-rc));
    while (io.pending)
        evloop_run_once(c->loop, -1);
    if (io.status < 0)
        FAIL("read %" PRIu64 " %" PRIu64 "+%" PRIu64 ": %s", h, off, len, strerror(-io.status));
    for (uint64_t i = 0; i < len; i++) {
        uint8_t want = off + i < c->size[h] ? c->model[h][off + i] : 0;
        if (io.data[i] != want)
            FAIL("datafile %" PRIu64 " byte %" PRIu64 ": 0x%02x, expected 0x%02x", h, off + i,
                 io.data[i], want);
    }
    free(io.data);
}

static void check_all(struct ctx *c)
{
    for (uint64_t h = 1; h < NFILES; h++)
        check(c, h, 0, (uint64_t)FILE_BLOCKS * B);
}

static void sync_all(struct ctx *c)
{
    struct io io = { .pending = 1 };
    int rc;

    if ((rc = dfstore_sync(c->ds, 0, io_cb, &io)) < 0)
        FAIL("sync: %s", strerror(-rc));
    finish(c, &io, "sync");
}

/* The store's counters moved by (waited, timed out, gathered) since *was,
 * which then takes the new ones. */
static void expect(struct ctx *c, const char *name, struct dfstore_stats *was, uint64_t waited,
                   uint64_t timed_out, uint64_t gathered)
{
    struct dfstore_stats now;

    dfstore_stats(c->ds, &now);
    if (now.writes_waited - was->writes_waited != waited ||
        now.waits_timed_out - was->waits_timed_out != timed_out ||
        now.writes_gathered - was->writes_gathered != gathered)
        FAIL("%s: %" PRIu64 " waited, %" PRIu64 " timed out, %" PRIu64 " gathered (want %"
             PRIu64 ", %" PRIu64 ", %" PRIu64 ")", name, now.writes_waited - was->writes_waited,
             now.waits_timed_out - was->waits_timed_out,
             now.writes_gathered - was->writes_gathered, waited, timed_out, gathered);
    *was = now;
    printf("%s: ok\n", name);
}

static void open_all(struct ctx *c, int argc, char **argv)
{
    struct iraid_config cfg = { .level = 0, .nmembers = (uint32_t)argc,
                                .urls = (const char *const *)argv, .timeout_ms = 5000 };
    int rc;

    if ((rc = iraid_open(c->loop, &cfg, &c->vol)) < 0)
        FAIL("iraid_open: %s", strerror(-rc));
    if ((rc = dfstore_open(c->loop, c->vol, c->dir, &c->ds)) < 0)
        FAIL("dfstore_open: %s", strerror(-rc));
}

static void close_all(struct ctx *c)
{
    dfstore_close(c->ds);
    iraid_close(c->vol);
    c->ds = NULL;
    c->vol = NULL;
}

/* A writes, waits; B (the other halves) arrives with nothing left on its
 * way (the arrivals as set by the caller): both in one group. */
static void partner(struct ctx *c, struct dfstore_stats *st)
{
    struct io a, b;

    c->arriving[1] = 1;
    rows(&a, 0, 0);
    start_write(c, 1, &a);
    evloop_run_once(c->loop, 0);
    if (!a.pending)
        FAIL("partner: A completed while it should wait");
    c->arriving[1] = 0;
    rows(&b, 0, 1);
    start_write(c, 1, &b);
    finish(c, &a, "partner A");
    finish(c, &b, "partner B");
    expect(c, "partner", st, 1, 0, 1);
}

static void more(struct ctx *c, struct dfstore_stats *st)
{
    struct io a, b, m;

    c->arriving[1] = 2;
    rows(&a, ROWS, 0);
    start_write(c, 1, &a);
    c->arriving[1] = 1;
    rows(&m, 3 * ROWS, 0);
    start_write(c, 1, &m);
    evloop_run_once(c->loop, 0);
    if (!a.pending || !m.pending)
        FAIL("more: a write completed while A should wait");
    c->arriving[1] = 0;
    rows(&b, ROWS, 1);
    start_write(c, 1, &b);
    finish(c, &a, "more A");
    finish(c, &m, "more C");
    finish(c, &b, "more B");
    expect(c, "more", st, 1, 0, 2);
}

/* One write of rows (first, half) to h, with a write on its way for
 * datafile `coming`: it waits until the timer when waited is 1 (nothing
 * else arrives), else not at all. */
static void one_write(struct ctx *c, struct dfstore_stats *st, const char *name, uint64_t coming,
                      uint64_t h, uint64_t first, int half, uint64_t waited)
{
    struct io a;

    c->arriving[coming] = 1;
    rows(&a, first, half);
    start_write(c, h, &a);
    finish(c, &a, name);
    c->arriving[coming] = 0;
    expect(c, name, st, waited, waited, 0);
}

static void read_ends(struct ctx *c, struct dfstore_stats *st)
{
    struct io a;

    c->arriving[1] = 1;
    rows(&a, 2 * ROWS, 1);
    start_write(c, 1, &a);
    check(c, 1, 2 * ROWS * (uint64_t)B, (uint64_t)ROWS * B);   /* after A, in order */
    if (a.pending)
        FAIL("read: A not done before the read queued behind it");
    finish(c, &a, "read A");
    c->arriving[1] = 0;
    expect(c, "read", st, 1, 0, 0);
}

static void sync_ends(struct ctx *c, struct dfstore_stats *st)
{
    struct io a;

    c->arriving[1] = 1;
    rows(&a, 3 * ROWS, 1);
    start_write(c, 1, &a);
    sync_all(c);
    if (a.pending)
        FAIL("sync: A not done before the sync of everything");
    finish(c, &a, "sync A");
    c->arriving[1] = 0;
    expect(c, "sync", st, 1, 0, 0);
}

static void behind(struct ctx *c, struct dfstore_stats *st)
{
    struct io w, a, b;

    rows(&w, ROWS, 2);
    start_write(c, 2, &w);
    rows(&a, 2 * ROWS, 0);
    start_write(c, 2, &a);
    c->arriving[2] = 1;
    while (w.pending)
        evloop_run_once(c->loop, -1);
    evloop_run_once(c->loop, 0);
    if (!a.pending)
        FAIL("behind: A completed while it should wait");
    c->arriving[2] = 0;
    rows(&b, 2 * ROWS, 1);
    start_write(c, 2, &b);
    finish(c, &w, "behind W");
    finish(c, &a, "behind A");
    finish(c, &b, "behind B");
    expect(c, "behind", st, 1, 0, 1);
}

int main(int argc, char **argv)
{
    struct ctx c = { 0 };
    struct dfstore_stats st;

    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR URL...\n", argv[0]);
        return 2;
    }
    ipvfs_log_set_ident("small-wait");
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return 2;
    c.dir = argv[1];
    for (uint32_t h = 1; h < NFILES; h++)
        if (!(c.model[h] = calloc(FILE_BLOCKS, B)))
            FAIL("out of memory");
    if (!(c.loop = evloop_create()))
        FAIL("out of memory");
    open_all(&c, argc - 2, argv + 2);
    dfstore_set_arrivals(c.ds, arrivals, &c);
    dfstore_stats(c.ds, &st);
    partner(&c, &st);
    more(&c, &st);
    one_write(&c, &st, "timer", 1, 1, 2 * ROWS, 0, 1);
    read_ends(&c, &st);
    sync_ends(&c, &st);
    one_write(&c, &st, "whole", 2, 2, 0, 2, 0);
    one_write(&c, &st, "range", 2, 2, 2 * ROWS, 3, 0);
    one_write(&c, &st, "other", 2, 1, ROWS, 0, 0);
    behind(&c, &st);
    dfstore_set_arrivals(c.ds, NULL, NULL);
    one_write(&c, &st, "none", 2, 2, 3 * ROWS, 0, 0);
    dfstore_set_arrivals(c.ds, arrivals, &c);
    check_all(&c);
    sync_all(&c);
    close_all(&c);
    open_all(&c, argc - 2, argv + 2);
    check_all(&c);
    close_all(&c);
    printf("storage-small-wait: all passed\n");
    evloop_destroy(c.loop);
    for (uint32_t h = 1; h < NFILES; h++)
        free(c.model[h]);
    return 0;
}
