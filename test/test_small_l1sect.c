/* The L1's sector tracking (issue 27; cache/smap.c's maps and the rules of
 * backend/dfstore/l1sect.c) on cases worked out by hand: 64 KiB blocks of
 * 128 sectors of 512 bytes.  Which writes may be absorbed into holes,
 * which sectors a write makes valid and dirty, how a read of a block with
 * holes is served, and which volume writes a write-back makes of the dirty
 * sectors of adjacent blocks; which blocks an "lru" cache evicts next. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cache/cache.h"

#define S 512u
#define N (CACHE_BLOCK_SIZE / S)

static struct cache_smap map(uint32_t lo, uint32_t hi)
{
    struct cache_smap m;

    memset(&m, 0, sizeof(m));
    cache_smap_set(&m, lo, hi);
    return m;
}

/* Set, clear, all, any and runs across the 64-bit word boundary. */
static void test_small_smap_bits(void **state)
{
    struct cache_smap m = map(60, 70);
    uint32_t lo, hi;

    (void)state;
    assert_int_equal(m.w[0], 0xF000000000000000ull);
    assert_int_equal(m.w[1], 0x3Full);
    assert_true(cache_smap_all(&m, 60, 70));
    assert_false(cache_smap_all(&m, 59, 70));
    assert_false(cache_smap_all(&m, 60, 71));
    assert_true(cache_smap_all(&m, 5, 5));          /* empty range */
    assert_true(cache_smap_any(&m, 69, 128));
    assert_false(cache_smap_any(&m, 70, 128));
    assert_false(cache_smap_any(&m, 0, 60));
    cache_smap_clear(&m, 63, 65);                   /* 60..62 and 65..69 left */
    assert_true(cache_smap_next_run(&m, N, 0, &lo, &hi));
    assert_int_equal(lo, 60);
    assert_int_equal(hi, 63);
    assert_true(cache_smap_next_run(&m, N, hi, &lo, &hi));
    assert_int_equal(lo, 65);
    assert_int_equal(hi, 70);
    assert_false(cache_smap_next_run(&m, N, hi, &lo, &hi));
    assert_true(cache_smap_next_run(&m, 67, 61, &lo, &hi));   /* cut at n */
    assert_int_equal(lo, 61);
    assert_int_equal(hi, 63);
    m = map(0, N);
    assert_int_equal(m.w[0], ~0ull);
    assert_int_equal(m.w[1], ~0ull);
    assert_true(cache_smap_next_run(&m, N, 0, &lo, &hi));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, N);
    {
        struct cache_smap h = map(1, 127);
        cache_smap_andnot(&m, &h);                  /* sectors 0 and 127 left */
        assert_int_equal(m.w[0], 1ull);
        assert_int_equal(m.w[1], 1ull << 63);
    }
}

/* A write may be absorbed unless it writes part of a sector that is a
 * hole (a block not cached: every sector is). */
static void test_small_fits(void **state)
{
    struct cache_smap holes = map(1, N);            /* sector 0 valid */

    (void)state;
    assert_true(cache_sect_fits(NULL, S, 0, 512));
    assert_true(cache_sect_fits(NULL, S, 512, 32768));
    assert_true(cache_sect_fits(NULL, S, 0, CACHE_BLOCK_SIZE));
    assert_false(cache_sect_fits(NULL, S, 0, 1000));    /* ends inside sector 1 */
    assert_false(cache_sect_fits(NULL, S, 3, 509));     /* starts inside sector 0 */
    assert_true(cache_sect_fits(&holes, S, 3, 509));    /* ... which is valid */
    assert_false(cache_sect_fits(&holes, S, 3, 600));   /* ends inside hole sector 1 */
    assert_true(cache_sect_fits(&holes, S, 3, 1021));   /* ends at sector 2's start */
    assert_true(cache_sect_fits(&holes, S, 1024, 0));
}

/* Valid and dirty sectors after writes, then how reads are served. */
static void test_small_write_read(void **state)
{
    struct cache_smap holes = map(0, N), dmap = map(0, 0);
    struct cache_smap want_holes, want_dmap;

    (void)state;
    /* An absorbed write of bytes 1024..3071 into a new slot: sectors 2..5. */
    cache_sect_write(&holes, &dmap, S, 1024, 2048, 1);
    want_holes = map(0, N);
    cache_smap_clear(&want_holes, 2, 6);
    want_dmap = map(2, 6);
    assert_memory_equal(&holes, &want_holes, sizeof(holes));
    assert_memory_equal(&dmap, &want_dmap, sizeof(dmap));
    /* Bytes 3000..3099: sector 5 (valid) and part of hole sector 6, which
     * stays a hole and is not dirty. */
    cache_sect_write(&holes, &dmap, S, 3000, 100, 1);
    assert_memory_equal(&holes, &want_holes, sizeof(holes));
    assert_memory_equal(&dmap, &want_dmap, sizeof(dmap));
    /* A write that went to the volume (not dirty): sectors 10..11 valid. */
    cache_sect_write(&holes, &dmap, S, 5120, 1024, 0);
    cache_smap_clear(&want_holes, 10, 12);
    assert_memory_equal(&holes, &want_holes, sizeof(holes));
    assert_memory_equal(&dmap, &want_dmap, sizeof(dmap));

    assert_int_equal(cache_sect_read(&holes, &dmap, S, 2048, 1024), CACHE_READ_HIT);
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 2600, 400), CACHE_READ_HIT);   /* sector 5 */
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 5120, 1024), CACHE_READ_HIT);
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 0, 4096), CACHE_READ_MERGE);
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 3000, 100), CACHE_READ_MERGE);  /* 5 and 6 */
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 4096, 512), CACHE_READ_AROUND);
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 5000, 1200), CACHE_READ_AROUND);
    assert_int_equal(cache_sect_read(&holes, &dmap, S, 0, CACHE_BLOCK_SIZE), CACHE_READ_MERGE);
}

/* Write-back: runs of dirty sectors join across adjacent blocks. */
static void test_small_runs(void **state)
{
    struct cache_smap a = map(120, N), b = map(0, N), c = map(0, 4), d = map(0, 1), e = map(127, N);
    const struct cache_smap *three[3] = { &a, &b, &c }, *two[2] = { &d, &e };
    struct cache_run runs[8];

    (void)state;
    cache_smap_set(&c, 10, 12);
    assert_int_equal(cache_sect_runs(three, 3, N, S, runs, 8), 2);
    assert_int_equal(runs[0].start, 120 * 512);
    assert_int_equal(runs[0].end, 2 * 65536 + 4 * 512);
    assert_int_equal(runs[1].start, 2 * 65536 + 10 * 512);
    assert_int_equal(runs[1].end, 2 * 65536 + 12 * 512);
    assert_int_equal(cache_sect_runs(three, 3, N, S, runs, 1), UINT32_MAX);
    assert_int_equal(cache_sect_runs(two, 2, N, S, runs, 8), 2);
    assert_int_equal(runs[0].start, 0);
    assert_int_equal(runs[0].end, 512);
    assert_int_equal(runs[1].start, 65536 + 127 * 512);
    assert_int_equal(runs[1].end, 2 * 65536);
    /* Whole blocks: one write of all of them (RAID-5's whole stripes). */
    three[0] = three[1] = three[2] = &b;
    assert_int_equal(cache_sect_runs(three, 3, N, S, runs, 8), 1);
    assert_int_equal(runs[0].start, 0);
    assert_int_equal(runs[0].end, 3 * 65536);
    /* 4 KiB sectors: 16 per block. */
    a = map(15, 16);
    d = map(0, 2);
    two[0] = &a;
    two[1] = &d;
    assert_int_equal(cache_sect_runs(two, 2, 16, 4096, runs, 8), 1);
    assert_int_equal(runs[0].start, 15 * 4096);
    assert_int_equal(runs[0].end, 65536 + 2 * 4096);
}

/* Write-back runs joined across clean gaps (cache_sect_bridge; 512-byte
 * sectors, 128 a block, K = 1024 bytes). */
static void test_small_bridge(void **state)
{
    struct cache_smap d0 = map(0, 16), d1 = map(0, 0), none = map(0, 0), h = map(20, 21);
    const struct cache_smap *dm[3] = { &d0, &d1, &d1 }, *ho[3] = { &none, &none, &none };
    struct cache_run runs[16];
    uint32_t n;

    (void)state;
    /* One writer's 8 KiB rows of a block, 8 KiB apart (sectors 0-15,
     * 32-47, 64-79, 96-111), the other writer's rows clean between: four
     * runs, one write [0, 56K) bridged. */
    cache_smap_set(&d0, 32, 48);
    cache_smap_set(&d0, 64, 80);
    cache_smap_set(&d0, 96, 112);
    n = cache_sect_runs(dm, 1, N, S, runs, 16);
    assert_int_equal(n, 4);
    assert_int_equal(cache_sect_bridge(runs, n, ho, 1, S, 0), 4);      /* bridge 0: as is */
    n = cache_sect_bridge(runs, n, ho, 1, S, 64 * 1024);
    assert_int_equal(n, 1);
    assert_int_equal(runs[0].start, 0);
    assert_int_equal(runs[0].end, 56 * 1024);
    /* A hole at sector 20 (in the first gap, [8K, 16K)): that gap stays,
     * the other two are bridged: [0, 8K) and [16K, 56K). */
    ho[0] = &h;
    n = cache_sect_runs(dm, 1, N, S, runs, 16);
    n = cache_sect_bridge(runs, n, ho, 1, S, 64 * 1024);
    assert_int_equal(n, 2);
    assert_int_equal(runs[0].end, 8 * 1024);
    assert_int_equal(runs[1].start, 16 * 1024);
    assert_int_equal(runs[1].end, 56 * 1024);
    /* Across blocks: block 0's last 8K (sectors 112-127) and block 1's
     * [8K, 16K) (sectors 16-31) with block 1's first 8K clean: one write
     * [56K, 80K).  Block 2's dirty sector 127 starts at 128K + 63.5K,
     * 111.5K past that run's end: more than a block, not bridged. */
    ho[0] = &none;
    d0 = map(112, 128);
    d1 = map(16, 32);
    {
        struct cache_smap d2 = map(127, 128);
        dm[1] = &d1;
        dm[2] = &d2;
        n = cache_sect_runs(dm, 3, N, S, runs, 16);
        assert_int_equal(n, 3);
        n = cache_sect_bridge(runs, n, ho, 3, S, 64 * 1024);
        assert_int_equal(n, 2);
        assert_int_equal(runs[0].start, 56 * 1024);
        assert_int_equal(runs[0].end, 64 * 1024 + 16 * 1024);
        assert_int_equal(runs[1].start, 2 * 64 * 1024 + 127 * 512);
        /* a hole in block 1's first sector breaks the cross-block gap */
        h = map(0, 1);
        ho[1] = &h;
        n = cache_sect_runs(dm, 3, N, S, runs, 16);
        assert_int_equal(cache_sect_bridge(runs, n, ho, 3, S, 64 * 1024), 3);
    }
}

/* The L1's next victims (cache_lru_oldest, which the absorbing of a
 * stream's small pieces checks for dirty blocks): an "lru" cache of 4
 * blocks given 10, 11, 12, 13, then 11 again, evicts 10, 12, 13, 11 in
 * that order; adding 14 evicts 10 and leaves 12, 13, 11, 14. */
static void test_small_lru_oldest(void **state)
{
    struct cache c;
    struct cache_victim v;
    uint64_t k[6];

    (void)state;
    assert_int_equal(cache_init(&c, cache_policy_find("lru"), 4), 0);
    assert_int_equal(cache_lru_oldest(&c, 2, k), 0);
    for (uint64_t key = 10; key < 14; key++) {
        (void)cache_access(&c, key, 0, &v);
        assert_false(v.valid);
    }
    (void)cache_access(&c, 11, 0, &v);
    assert_int_equal(cache_lru_oldest(&c, 6, k), 4);
    assert_int_equal(k[0], 10);
    assert_int_equal(k[1], 12);
    assert_int_equal(k[2], 13);
    assert_int_equal(k[3], 11);
    assert_int_equal(cache_lru_oldest(&c, 1, k), 1);
    assert_int_equal(k[0], 10);
    (void)cache_access(&c, 14, 0, &v);
    assert_true(v.valid);
    assert_int_equal(v.key, 10);
    assert_int_equal(cache_lru_oldest(&c, 2, k), 2);
    assert_int_equal(k[0], 12);
    assert_int_equal(k[1], 13);
    cache_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_smap_bits),
        cmocka_unit_test(test_small_fits),
        cmocka_unit_test(test_small_write_read),
        cmocka_unit_test(test_small_runs),
        cmocka_unit_test(test_small_bridge),
        cmocka_unit_test(test_small_lru_oldest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
