/* The datafile store's sequential stream detection (backend/dfstore/
 * readahead.h, df_ra_feed/df_ra_advance): when a read opens, grows,
 * tops up and resets a read-ahead window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "backend/dfstore/readahead.h"

#define K 1024ull
#define M (1024ull * K)

/* Feeds one read and asks for everything it wants (the L1 took it all). */
static uint64_t feed(struct df_ra *ra, uint64_t off, uint64_t len, uint64_t max,
                     uint64_t *out_from)
{
    struct ipvfs_pair pair = { off, len };
    struct df_ra_want want;
    unsigned i = df_ra_feed(ra, &pair, 1, max, &want);
    uint64_t total = 0;

    for (uint32_t r = 0; r < want.n; r++)
        total += want.r[r].to - want.r[r].from;
    if (want.n)
        df_ra_advance(ra, i, want.r[want.n - 1].to);
    if (out_from)
        *out_from = want.n ? want.r[0].from : 0;
    return total;
}

/* The stream one read of [off, end) goes to, asking for nothing. */
static unsigned stream_of(struct df_ra *ra, uint64_t off, uint64_t end, uint64_t max)
{
    struct ipvfs_pair pair = { off, end - off };
    struct df_ra_want want;

    return df_ra_feed(ra, &pair, 1, max, &want);
}

/* The first read is no stream; the second opens 128 KiB, then doubling. */
static void test_window_grows(void **state)
{
    struct df_ra ra;
    uint64_t from, asked = 0;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    assert_int_equal(feed(&ra, 0, 64 * K, 4 * M, NULL), 0);
    assert_int_equal(feed(&ra, 64 * K, 64 * K, 4 * M, &from), 128 * K);
    assert_int_equal(from, 128 * K);
    assert_int_equal(ra.s[0].window, 128 * K);
    for (uint64_t off = 128 * K; off < 64 * M; off += 64 * K)
        asked += feed(&ra, off, 64 * K, 4 * M, NULL);
    assert_int_equal(ra.s[0].window, 4 * M);           /* capped at the limit */
    /* at least half a window, at most a window past the last read was
     * asked for, each byte once */
    assert_true(ra.s[0].ahead >= 64 * M + 2 * M && ra.s[0].ahead <= 64 * M + 4 * M);
    assert_int_equal(asked + 128 * K, ra.s[0].ahead - 128 * K);
}

/* Top-ups come in runs of at least half a window, not a block a read. */
static void test_topup_in_runs(void **state)
{
    struct df_ra ra;
    unsigned small = 0;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (uint64_t off = 0; off < 32 * M; off += 64 * K) {
        uint64_t n = feed(&ra, off, 64 * K, 2 * M, NULL);
        if (n && ra.s[0].window == 2 * M && n < M)
            small++;
    }
    assert_int_equal(small, 0);
}

/* A seek starts a new stream with no window: nothing is asked for, and
 * the next sequential read opens the smallest window again. */
static void test_seek_resets(void **state)
{
    struct df_ra ra;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (uint64_t off = 0; off < 8 * M; off += M)
        feed(&ra, off, M, 4 * M, NULL);
    for (unsigned k = 0; k < 8; k++)             /* random reads */
        assert_int_equal(feed(&ra, 100 * M + k * 7 * M, 64 * K, 4 * M, NULL), 0);
    assert_int_equal(feed(&ra, 300 * M, M, 4 * M, NULL), 0);
    assert_int_equal(feed(&ra, 301 * M, M, 4 * M, NULL), 128 * K);
}

/* Several readers of one datafile each keep their stream; a read within
 * the gap (slightly out of order) continues it. */
static void test_streams_and_gap(void **state)
{
    struct df_ra ra;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (uint64_t off = 0; off < 4 * M; off += M)
        for (uint64_t r = 0; r < 3; r++)
            feed(&ra, r * 256 * M + off, M, 8 * M, NULL);
    for (unsigned i = 0; i < 3; i++)
        assert_true(ra.s[i].window >= 512 * K);
    /* 64 KiB past the expected offset, and 64 KiB before it: the same stream */
    assert_int_equal(stream_of(&ra, 4 * M + 64 * K, 4 * M + 128 * K, 8 * M), 0);
    assert_int_equal(stream_of(&ra, 256 * M + 4 * M - 64 * K, 256 * M + 4 * M, 8 * M), 1);
}

/* 4 KiB reads at random offsets of a 32 MiB datafile land within the gap
 * of one of the streams now and then (1.6-3% of reads): that is no
 * sequential reader, and opens no window unless a read starts exactly
 * where a stream's last one ended (4 streams in 8192 places).  A reader
 * of strictly sequential 4 KiB reads still opens one at its second read. */
static void test_random_small_reads(void **state)
{
    struct df_ra ra;
    uint64_t x = 88172645463325252ull, opened = 0;
    const unsigned nreads = 16384;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (unsigned k = 0; k < nreads; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;        /* xorshift64 */
        if (feed(&ra, (x % (32 * M / (4 * K))) * 4 * K, 4 * K, 4 * M, NULL))
            opened++;
    }
    assert_true(opened * 500 < nreads);                   /* under 0.2% */
    memset(&ra, 0, sizeof(ra));
    assert_int_equal(feed(&ra, 40 * M, 4 * K, 4 * M, NULL), 0);
    assert_int_equal(feed(&ra, 40 * M + 4 * K, 4 * K, 4 * M, NULL), 128 * K);
}

/* Limit 0 (hint 0): nothing asked, no stream touched. */
static void test_off(void **state)
{
    struct df_ra ra;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (uint64_t off = 0; off < 8 * M; off += M)
        assert_int_equal(feed(&ra, off, M, 0, NULL), 0);
    assert_int_equal(ra.tick, 0);
}

/* The L1 stopped short: the next read asks again from there. */
static void test_short_prefetch(void **state)
{
    struct df_ra ra;
    struct df_ra_want want;
    unsigned i;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    feed(&ra, 0, M, 4 * M, NULL);
    i = df_ra_feed(&ra, &(struct ipvfs_pair){ M, M }, 1, 4 * M, &want);
    assert_int_equal(want.n, 1);
    assert_int_equal(want.r[0].from, 2 * M);
    df_ra_advance(&ra, i, 2 * M);                 /* nothing taken */
    df_ra_feed(&ra, &(struct ipvfs_pair){ 2 * M, M }, 1, 4 * M, &want);
    assert_int_equal(want.n, 1);
    assert_int_equal(want.r[0].from, 3 * M);
    assert_true(want.r[0].to > want.r[0].from);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_grows),  cmocka_unit_test(test_topup_in_runs),
        cmocka_unit_test(test_seek_resets),   cmocka_unit_test(test_streams_and_gap),
        cmocka_unit_test(test_off),           cmocka_unit_test(test_short_prefetch),
        cmocka_unit_test(test_random_small_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
