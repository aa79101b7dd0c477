/* Strided read-ahead of the datafile store (backend/dfstore/readahead.h,
 * issue 27): a reader that reads runs and skips whole blocks between them
 * gets only its runs prefetched, never the skipped blocks.  The requests
 * are those a 2 x 2 tile of 1 MiB rows sends one I/O node (stripe unit
 * 64 KiB over two nodes): per datafile a file row is 1 MiB, reader A
 * reads [k M, k M + 512 K), reader B [k M + 512 K, (k + 1) M), each in
 * requests of two 256 KiB pieces that straddle its runs.  Every expected
 * range is worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "backend/dfstore/readahead.h"

#define K 1024ull
#define M (1024ull * K)

/* One read of up to two pieces; the wanted ranges are taken whole. */
static unsigned feed2(struct df_ra *ra, uint64_t a, uint64_t alen, uint64_t b, uint64_t blen,
                      struct df_ra_want *want)
{
    struct ipvfs_pair p[2] = { { a, alen }, { b, blen } };
    unsigned i = df_ra_feed(ra, p, blen ? 2 : 1, 4 * M, want);

    if (want->n)
        df_ra_advance(ra, i, want->r[want->n - 1].to);
    return i;
}

static void want_is(const struct df_ra_want *w, uint32_t n, const uint64_t *ranges)
{
    assert_int_equal(w->n, n);
    for (uint32_t r = 0; r < n; r++) {
        assert_int_equal(w->r[r].from, ranges[2 * r]);
        assert_int_equal(w->r[r].to, ranges[2 * r + 1]);
    }
}

/* Reader B alone, its first four requests. */
static void test_small_stride_learned_then_runs_only(void **state)
{
    struct df_ra ra;
    struct df_ra_want w;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    /* [512K, 768K): a new stream, nothing */
    feed2(&ra, 512 * K, 256 * K, 0, 0, &w);
    assert_int_equal(w.n, 0);
    /* [768K, 1M) continues it, [1.5M, 1.75M) jumps over 512 KiB (8 whole
     * blocks): stride 1.5M - 512K = 1M, run 1M - 512K = 512K, not yet
     * confirmed, so nothing (the old rule read each request as its span
     * and asked for 128 KiB past 1.75M here, and from the fourth request
     * on for A's blocks between B's runs as well) */
    feed2(&ra, 768 * K, 256 * K, 1536 * K, 256 * K, &w);
    assert_int_equal(w.n, 0);
    assert_int_equal(ra.s[0].stride, M);
    assert_int_equal(ra.s[0].len, 512 * K);
    assert_int_equal(ra.s[0].window, 128 * K);
    /* [1.75M, 2M) + [2.5M, 2.75M): the same jump, confirmed; window 256K of
     * the pattern past 2.75M: 256K left of the run [2.5M, 3M), so exactly
     * [2.75M, 3M) */
    feed2(&ra, 1792 * K, 256 * K, 2560 * K, 256 * K, &w);
    want_is(&w, 1, (const uint64_t[]){ 2816 * K, 3 * M });
    /* [2.75M, 3M) + [3.5M, 3.75M): window 512K past 3.75M: the run's rest
     * [3.75M, 4M) and the next run's first 256K [4.5M, 4.75M); the skip
     * [4M, 4.5M) is A's */
    feed2(&ra, 2816 * K, 256 * K, 3584 * K, 256 * K, &w);
    want_is(&w, 2, (const uint64_t[]){ 3840 * K, 4 * M, 4608 * K, 4864 * K });
}

/* Readers A and B take turns on one datafile for 32 rows: neither ever
 * asks for a byte of the other's runs, and each gets most of its own
 * bytes asked for before it reads them. */
static void test_small_stride_two_readers(void **state)
{
    struct df_ra ra;
    struct df_ra_want w;
    uint64_t asked[2] = { 0, 0 }, read[2] = { 0, 0 };

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (uint64_t q = 0; q < 64; q++) {         /* request q of each reader */
        for (unsigned r = 0; r < 2; r++) {
            /* the request's first piece: the second half of run q / 2 when
             * q is odd, else the first half; the second piece, if any,
             * the first half of the next run */
            uint64_t base = r * 512 * K, row = q / 2;
            uint64_t a = base + row * M + (q % 2) * 256 * K;
            if (q % 2)
                feed2(&ra, a, 256 * K, base + (row + 1) * M, 256 * K, &w);
            else if (q == 0)
                feed2(&ra, a, 256 * K, 0, 0, &w);
            else
                continue;                       /* covered by the odd one */
            read[r] += q % 2 ? 512 * K : 256 * K;
            for (uint32_t k = 0; k < w.n; k++) {
                /* inside reader r's runs only */
                uint64_t lo = w.r[k].from, hi = w.r[k].to;
                assert_true(lo < hi);
                assert_int_equal((lo / (512 * K)) % 2, r);
                assert_int_equal(((hi - 1) / (512 * K)) % 2, r);
                assert_int_equal(lo / (512 * K), (hi - 1) / (512 * K));
                asked[r] += hi - lo;
            }
        }
    }
    /* 32 runs of 512K each; the first three requests of each ask nothing */
    for (unsigned r = 0; r < 2; r++) {
        assert_true(asked[r] >= read[r] * 3 / 4);
        assert_true(asked[r] <= read[r] + 4 * M);
    }
}

/* A's last request ended where B's next run starts: B's request there
 * goes to B's stream (its pattern expects it), not to A's, whose run only
 * ended there. */
static void test_small_stride_expected_beats_adjacent(void **state)
{
    struct df_ra ra;
    struct df_ra_want w;
    unsigned a, b;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    /* A [0, 512K) + [1M, 1.25M): stream 0, stride 1M, run 512K learned */
    a = feed2(&ra, 0, 512 * K, M, 256 * K, &w);
    /* B [512K, 1M) + [1.5M, 1.75M): 256K from A's end 1.25M: stream 1 */
    b = feed2(&ra, 512 * K, 512 * K, 1536 * K, 256 * K, &w);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    /* A [1.25M, 1.5M) + [2M, 2.25M), B [1.75M, 2M) + [2.5M, 3M): both
     * confirmed; A's end 2.25M (mid-run), B's 3M (its run done: it expects
     * 3.5M next) */
    assert_int_equal(feed2(&ra, 1280 * K, 256 * K, 2 * M, 256 * K, &w), a);
    assert_int_equal(feed2(&ra, 1792 * K, 256 * K, 2560 * K, 512 * K, &w), b);
    /* A [2.25M, 2.5M) + [3M, 3.5M): A's end 3.5M, its run done too */
    assert_int_equal(feed2(&ra, 2304 * K, 256 * K, 3 * M, 512 * K, &w), a);
    /* B [3.5M, 3.75M): where A's last read ended and where B's pattern
     * expects it: B's; window 256K (B's third read) past 3.75M: the rest of
     * B's run [3.75M, 4M), not A's [4M, 4.5M) */
    assert_int_equal(feed2(&ra, 3584 * K, 256 * K, 0, 0, &w), b);
    assert_int_equal(ra.s[a].next, 3584 * K);
    want_is(&w, 1, (const uint64_t[]){ 3840 * K, 4 * M });
}

/* A stride that changes is learned again: the jump that breaks the pattern
 * asks for nothing, the one that repeats the new one asks for its runs. */
static void test_small_stride_changes(void **state)
{
    struct df_ra ra;
    struct df_ra_want w;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    feed2(&ra, 0, 256 * K, 0, 0, &w);
    feed2(&ra, 256 * K, 256 * K, M, 256 * K, &w);               /* stride 1M */
    feed2(&ra, 1280 * K, 256 * K, 2 * M, 256 * K, &w);          /* confirmed */
    assert_true(w.n > 0);
    /* [2.25M, 2.5M) + [4M, 4.25M): stride 2M now, 512K runs */
    feed2(&ra, 2304 * K, 256 * K, 4 * M, 256 * K, &w);
    assert_int_equal(w.n, 0);
    assert_int_equal(ra.s[0].stride, 2 * M);
    /* [4.25M, 4.5M) + [6M, 6.25M): confirmed; window 1M (doubled from 512K
     * at each read: 128K, 256K, 512K, 1M) past 6.25M: [6.25M, 6.5M), then
     * [8M, 8.5M), then [10M, 10.25M) */
    feed2(&ra, 4352 * K, 256 * K, 6 * M, 256 * K, &w);
    want_is(&w, 3, (const uint64_t[]){ 6400 * K, 6656 * K, 8 * M, 8704 * K, 10 * M, 10496 * K });
}

/* Skips inside a block are no jump (the block is read anyway): 32 KiB
 * read, 32 KiB skipped reads as one contiguous stream, and the window
 * covers the skips. */
static void test_small_stride_within_block_is_contiguous(void **state)
{
    struct df_ra ra;
    struct df_ra_want w;
    struct ipvfs_pair p[8];
    uint64_t off = 0;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (unsigned r = 0; r < 3; r++) {
        for (unsigned k = 0; k < 8; k++, off += 64 * K)
            p[k] = (struct ipvfs_pair){ off, 32 * K };
        df_ra_feed(&ra, p, 8, 4 * M, &w);
    }
    assert_int_equal(ra.s[0].stride, 0);
    /* third read: window 256K past its end 1.5M - 32K */
    want_is(&w, 1, (const uint64_t[]){ 1504 * K, 1760 * K });
}

/* Runs of one block every two (B = 64 KiB), requests of two runs: a 4 MiB
 * window is 64 runs; a read asks for DF_RA_RANGES of them at most, and a
 * later read goes on where that stopped.  Worked out: request j reads
 * blocks 4j and 4j + 2; the window doubles from 128K at j = 1 to 4M at
 * j = 6; asked so far: up to block 11 (j = 1), 19, 31, 51, then 16 of the
 * 18 runs 52..86 (j = 5, to block 83), then j = 6 (end block 27, 28 runs
 * ahead, less than half of 64): blocks 84, 86, ... 114. */
static void test_small_stride_ranges_capped(void **state)
{
    const uint64_t B = 64 * K;
    struct df_ra ra;
    struct df_ra_want w;
    unsigned i = 0;
    uint64_t j;

    (void)state;
    memset(&ra, 0, sizeof(ra));
    for (j = 0; j <= 6; j++)
        i = feed2(&ra, 4 * j * B, B, (4 * j + 2) * B, B, &w);
    assert_int_equal(ra.s[i].window, 4 * M);
    assert_int_equal(w.n, DF_RA_RANGES);
    assert_int_equal(w.r[0].from, 84 * B);
    assert_int_equal(w.r[0].to, 85 * B);
    assert_int_equal(w.r[DF_RA_RANGES - 1].from, 114 * B);
    assert_int_equal(w.r[DF_RA_RANGES - 1].to, 115 * B);
    /* the next requests find half a window ahead until the reader nears
     * it; the first that asks again starts at block 116 */
    for (j = 7; j < 40; j++) {
        feed2(&ra, 4 * j * B, B, (4 * j + 2) * B, B, &w);
        if (w.n)
            break;
    }
    assert_true(w.n > 0);
    assert_int_equal(w.r[0].from, 116 * B);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_stride_learned_then_runs_only),
        cmocka_unit_test(test_small_stride_two_readers),
        cmocka_unit_test(test_small_stride_expected_beats_adjacent),
        cmocka_unit_test(test_small_stride_changes),
        cmocka_unit_test(test_small_stride_within_block_is_contiguous),
        cmocka_unit_test(test_small_stride_ranges_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
